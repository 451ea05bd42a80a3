//! Room members that reach each other through a relay circuit upgrade to direct WebRTC on their
//! own. The member that dialled the circuit (the smaller peer id, see the driver) dials the
//! other's `/p2p-circuit/webrtc` address once identify shows that it takes the signalling
//! protocol. Once the direct connection is up the circuit's dialler closes it, so every byte goes
//! direct; if ICE fails the dial fails, and the pair stays on the circuit. A circuit the peer
//! dialled is the peer's to close: closed from this side as the direct connection opens on the
//! other, it can reach the peer first, and js-libp2p then takes the peer for gone.

use std::collections::HashMap;

use libp2p::swarm::{dial_opts::DialOpts, dial_opts::PeerCondition, ConnectionId};
use libp2p::{core::ConnectedPoint, Multiaddr, PeerId, StreamProtocol};

use super::events::TransportKind;
use crate::net::webrtc;

#[derive(Debug, Default)]
pub(super) struct DirectUpgrades {
    enabled: bool,
    /// Circuits this node dialled, until their peer is identified.
    dialled: HashMap<PeerId, Multiaddr>,
    /// Each peer's circuit connections that this node dialled, to close once a direct one is up.
    circuits: HashMap<PeerId, Vec<ConnectionId>>,
}

impl DirectUpgrades {
    pub fn new(enabled: bool) -> Self {
        Self { enabled, ..Self::default() }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Returns the connections to close: a peer's circuits, once it is reached directly.
    pub fn on_established(
        &mut self,
        peer: PeerId,
        id: ConnectionId,
        endpoint: &ConnectedPoint,
    ) -> Vec<ConnectionId> {
        match TransportKind::of_connection(endpoint) {
            TransportKind::Circuit => {
                if let ConnectedPoint::Dialer { address, .. } = endpoint {
                    self.circuits.entry(peer).or_default().push(id);
                    self.dialled.insert(peer, address.clone());
                }
                Vec::new()
            }
            TransportKind::WebRtc => {
                self.dialled.remove(&peer);
                self.circuits.remove(&peer).unwrap_or_default()
            }
            _ => Vec::new(),
        }
    }

    /// The dial to `peer`'s `/webrtc` address, if this node dialled a circuit to it and it takes
    /// the signalling protocol.
    pub fn on_identified(
        &mut self,
        peer: PeerId,
        protocols: &[StreamProtocol],
    ) -> Option<DialOpts> {
        let circuit = self.dialled.remove(&peer)?;
        if !self.enabled || !protocols.contains(&webrtc::SIGNALING_PROTOCOL) {
            return None;
        }
        let addr = webrtc::dial_addr(&circuit, peer)?;
        tracing::info!(%peer, %addr, "dialling the room member over direct WebRTC");
        Some(DialOpts::peer_id(peer).condition(PeerCondition::Always).addresses(vec![addr]).build())
    }

    pub fn on_closed(&mut self, peer: PeerId, id: ConnectionId, remaining: u32) {
        if let Some(circuits) = self.circuits.get_mut(&peer) {
            circuits.retain(|c| *c != id);
        }
        if remaining == 0 {
            self.dialled.remove(&peer);
            self.circuits.remove(&peer);
        }
    }
}

#[cfg(test)]
mod tests {
    use libp2p::core::{transport::PortUse, Endpoint};

    use super::*;

    const RELAY: &str =
        "/ip4/127.0.0.1/tcp/9001/ws/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN";

    fn dialer(address: Multiaddr) -> ConnectedPoint {
        ConnectedPoint::Dialer { address, role_override: Endpoint::Dialer, port_use: PortUse::New }
    }

    fn circuit_to(peer: PeerId) -> Multiaddr {
        format!("{RELAY}/p2p-circuit/p2p/{peer}").parse().unwrap()
    }

    #[test]
    fn the_dialler_of_a_circuit_dials_webrtc_and_closes_the_circuit_once_direct() {
        let (peer, circuit, direct) =
            (PeerId::random(), ConnectionId::new_unchecked(1), ConnectionId::new_unchecked(2));
        let mut upgrades = DirectUpgrades::new(true);
        assert!(upgrades.on_established(peer, circuit, &dialer(circuit_to(peer))).is_empty());
        let dial = upgrades.on_identified(peer, &[webrtc::SIGNALING_PROTOCOL]).unwrap();
        assert_eq!(dial.get_peer_id(), Some(peer));
        let webrtc_addr = webrtc::dial_addr(&circuit_to(peer), peer).unwrap();
        assert_eq!(upgrades.on_established(peer, direct, &dialer(webrtc_addr)), vec![circuit]);
        assert!(upgrades.on_identified(peer, &[webrtc::SIGNALING_PROTOCOL]).is_none());
    }

    #[test]
    fn no_webrtc_dial_without_signalling_an_own_circuit_or_the_setting() {
        let peer = PeerId::random();
        let id = ConnectionId::new_unchecked(1);
        let mut upgrades = DirectUpgrades::new(true);
        upgrades.on_established(peer, id, &dialer(circuit_to(peer)));
        assert!(upgrades
            .on_identified(peer, &[StreamProtocol::new("/ipfs/bitswap/1.2.0")])
            .is_none());

        let mut upgrades = DirectUpgrades::new(true);
        let inbound = ConnectedPoint::Listener {
            local_addr: format!("{RELAY}/p2p-circuit").parse().unwrap(),
            send_back_addr: circuit_to(peer),
        };
        upgrades.on_established(peer, id, &inbound);
        assert!(upgrades.on_identified(peer, &[webrtc::SIGNALING_PROTOCOL]).is_none());
        let direct = ConnectedPoint::Listener {
            local_addr: format!("{RELAY}/p2p-circuit/webrtc").parse().unwrap(),
            send_back_addr: format!("{RELAY}/p2p-circuit/webrtc/p2p/{peer}").parse().unwrap(),
        };
        let to_close = upgrades.on_established(peer, ConnectionId::new_unchecked(2), &direct);
        assert!(to_close.is_empty(), "the peer's own circuit is left to the peer");

        let mut upgrades = DirectUpgrades::new(false);
        upgrades.on_established(peer, id, &dialer(circuit_to(peer)));
        assert!(upgrades.on_identified(peer, &[webrtc::SIGNALING_PROTOCOL]).is_none());
    }

    #[test]
    fn a_peer_that_left_is_forgotten() {
        let peer = PeerId::random();
        let id = ConnectionId::new_unchecked(1);
        let mut upgrades = DirectUpgrades::new(true);
        upgrades.on_established(peer, id, &dialer(circuit_to(peer)));
        upgrades.on_closed(peer, id, 0);
        assert!(upgrades.on_identified(peer, &[webrtc::SIGNALING_PROTOCOL]).is_none());
    }
}
