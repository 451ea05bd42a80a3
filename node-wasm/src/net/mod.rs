//! libp2p glue for the protocol cores: a `NetworkBehaviour` and `ConnectionHandler` per protocol,
//! framing over libp2p streams, and the timer the behaviours keep for their cores. The node that
//! composes them is `crate::node`.

pub mod bitswap;
mod core_timer;
pub mod framed;
pub mod pullsync;
mod rooms;

pub use libp2p::{Multiaddr, PeerId};
pub use rooms::{
    rooms_behaviour, RoomTopics, RoomsBehaviour, RoomsConfigError, MAX_ROOMS_PER_PEER,
};
