//! Overlay addresses of peers. bee exchanges overlays in its handshake, which syncscope does not
//! speak; instead a node's overlay is derived from its peer ID, so every node computes the same
//! overlay for a peer without asking it. A node can be given other overlays explicitly
//! ([`super::Behaviour::set_peer_overlay`]), as tests and experiments with chosen neighbourhoods do.

use libp2p::PeerId;

use syncscope_proto::swarm::{keccak256, Address};

/// The default overlay of `peer`: keccak256 of its peer ID's bytes (the multihash of its key).
pub fn overlay_of(peer: &PeerId) -> Address {
    Address(keccak256(&[&peer.to_bytes()]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlay_is_a_stable_function_of_the_peer_id() {
        let peer: PeerId = "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN".parse().unwrap();
        assert_eq!(overlay_of(&peer), overlay_of(&peer));
        assert_eq!(overlay_of(&peer), Address(keccak256(&[&peer.to_bytes()])));
        assert_ne!(overlay_of(&peer), overlay_of(&PeerId::random()));
    }
}
