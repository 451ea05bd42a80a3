use std::time::Duration;

/// How a browser node connects directly to other browsers over WebRTC.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DirectWebRtcConfig {
    /// Try direct WebRTC with room members that offer it; without, every byte between two
    /// browsers crosses the relay.
    pub enabled: bool,
    /// STUN or TURN server URLs for ICE (`stun:stun.example.org:3478`). None by default: host
    /// candidates suffice on one machine or one network, and a peer behind NAT needs a STUN
    /// server the relay names (`--ice-server`).
    pub ice_servers: Vec<String>,
    /// Only relay (TURN) candidates (`iceTransportPolicy: "relay"`). With no TURN server ICE
    /// then fails: the way to see the fall-back to the circuit on one machine.
    pub relay_candidates_only: bool,
    /// A direct connection not made by then is given up, and the circuit stays. Keep it under
    /// libp2p's own 10 s limit on making a connection, which would end the attempt first and
    /// say only "Timeout has been reached".
    pub connect_timeout: Duration,
}

impl Default for DirectWebRtcConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            ice_servers: Vec::new(),
            relay_candidates_only: false,
            connect_timeout: Duration::from_secs(8),
        }
    }
}
