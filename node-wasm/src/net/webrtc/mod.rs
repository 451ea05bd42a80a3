//! Direct WebRTC between browsers (libp2p spec `webrtc/webrtc.md`): a browser that holds a relay
//! reservation listens on `<relayed addr>/webrtc`, and a browser that dials such an address
//! signals through the relayed connection ([`syncscope_proto::webrtc_signaling`]) to a direct
//! `RTCPeerConnection`. Streams then run over its data channels, framed as for WebRTC-direct.
//!
//! The transport lives in the browser only (`browser`); the settings and addresses are read
//! everywhere.

pub mod answering;
#[cfg(target_arch = "wasm32")]
mod browser;
mod config;

#[cfg(target_arch = "wasm32")]
pub use browser::{Transport, WebRtcError};
pub use config::DirectWebRtcConfig;

/// Whether this target has the transport: only a browser has `RTCPeerConnection`.
pub const SUPPORTED: bool = cfg!(target_arch = "wasm32");

use libp2p::{multiaddr::Protocol, Multiaddr, PeerId, StreamProtocol};

pub const SIGNALING_PROTOCOL: StreamProtocol =
    StreamProtocol::new(syncscope_proto::webrtc_signaling::PROTOCOL);

/// The address to listen on for direct WebRTC through the relay reached at `circuit`
/// (`<relay addr>/p2p-circuit`).
pub fn listen_addr(circuit: Multiaddr) -> Multiaddr {
    circuit.with(Protocol::WebRTC)
}

/// The `/webrtc` address of `peer` behind the circuit address `circuit`
/// (`<relay addr>/p2p-circuit/p2p/<peer>`), or `None` if `circuit` is not one.
pub fn dial_addr(circuit: &Multiaddr, peer: PeerId) -> Option<Multiaddr> {
    let mut addr = circuit.clone();
    if addr.pop() != Some(Protocol::P2p(peer)) || addr.iter().last() != Some(Protocol::P2pCircuit) {
        return None;
    }
    Some(addr.with(Protocol::WebRTC).with(Protocol::P2p(peer)))
}

/// The circuit address behind the `/webrtc` address `addr`
/// (`<relay addr>/p2p-circuit/webrtc/p2p/<peer>` gives `<relay addr>/p2p-circuit/p2p/<peer>`), or
/// `None` if `addr` is not one. A dial goes there first: the signalling needs that connection.
pub fn circuit_of(addr: &Multiaddr) -> Option<Multiaddr> {
    let peer = peer_of(addr)?;
    let mut circuit = addr.clone();
    circuit.pop();
    circuit.pop();
    (circuit.iter().last() == Some(Protocol::P2pCircuit)).then(|| circuit.with(Protocol::P2p(peer)))
}

/// The peer a `/webrtc/p2p/<peer>` address leads to: usually behind a circuit
/// (`<relay addr>/p2p-circuit/webrtc/p2p/<peer>`), though any connection to the peer can carry
/// the signalling.
pub fn peer_of(addr: &Multiaddr) -> Option<PeerId> {
    let mut addr = addr.clone();
    match (addr.pop(), addr.pop()) {
        (Some(Protocol::P2p(peer)), Some(Protocol::WebRTC)) => Some(peer),
        _ => None,
    }
}

/// Whether `addr` is a `/p2p-circuit/webrtc` address to listen on.
pub fn is_listen_addr(addr: &Multiaddr) -> bool {
    let mut rest = addr.iter().skip_while(|p| *p != Protocol::P2pCircuit).skip(1);
    matches!((rest.next(), rest.next()), (Some(Protocol::WebRTC), None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn circuit(peer: PeerId) -> Multiaddr {
        let relay = PeerId::random();
        format!("/ip4/127.0.0.1/tcp/9001/ws/p2p/{relay}/p2p-circuit/p2p/{peer}").parse().unwrap()
    }

    #[test]
    fn a_circuit_address_turns_into_the_peers_webrtc_address() {
        let peer = PeerId::random();
        let through = circuit(peer);
        let addr = dial_addr(&through, peer).unwrap();
        assert!(addr.to_string().ends_with(&format!("/p2p-circuit/webrtc/p2p/{peer}")), "{addr}");
        assert_eq!(peer_of(&addr), Some(peer));
        assert_eq!(circuit_of(&addr), Some(through));
        let bare: Multiaddr = format!("/webrtc/p2p/{peer}").parse().unwrap();
        assert_eq!(peer_of(&bare), Some(peer));
        assert_eq!(circuit_of(&bare), None);
        assert_eq!(dial_addr(&circuit(peer), PeerId::random()), None);
        assert_eq!(dial_addr(&"/ip4/127.0.0.1/tcp/1".parse().unwrap(), peer), None);
    }

    #[test]
    fn only_webrtc_behind_a_circuit_is_ours() {
        let peer = PeerId::random();
        assert_eq!(peer_of(&circuit(peer)), None);
        let mut listen = circuit(peer);
        listen.pop();
        assert!(!is_listen_addr(&listen));
        let listen = listen_addr(listen);
        assert!(is_listen_addr(&listen));
        assert_eq!(peer_of(&listen), None);
    }
}
