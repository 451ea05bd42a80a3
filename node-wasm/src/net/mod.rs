//! libp2p glue for the protocol cores: one [`adapter`] that drives any core, each protocol's part
//! of the glue (its codec, store tasks and routing), and framing over libp2p streams. The node
//! that composes them is `crate::node`.

pub mod adapter;
pub mod bitswap;
pub mod framed;
pub mod link_probe;
pub mod pullsync;
mod rooms;
pub mod webrtc;

pub use libp2p::{Multiaddr, PeerId};
pub use rooms::{
    rooms_behaviour, RoomTopics, RoomsBehaviour, RoomsConfigError, MAX_ROOMS_PER_PEER,
};
