//! libp2p glue: the behaviours a node runs, the transports of each target, and the task that
//! drives the swarm.

mod behaviour;
pub mod bitswap;
mod core_timer;
mod driver;
mod fetches;
pub mod framed;
mod membership;
mod node;
pub mod pullsync;
mod rooms;
mod transport;

pub use behaviour::{
    NodeBehaviour, NodeBehaviourEvent, ProtocolSettings, IDENTIFY_PROTOCOL, PING_INTERVAL,
};
pub use fetches::FetchUpdate;
pub use libp2p::{Multiaddr, PeerId};
pub use membership::{RoomMember, RoomUpdate};
pub use node::{
    start, CommandError, ContentAdded, NodeConfig, NodeControl, NodeEvent, NodeHandle, NodeStats,
    RelayAddress, StartError, TransportKind,
};
pub use rooms::{
    rooms_behaviour, RoomTopics, RoomsBehaviour, RoomsConfigError, MAX_ROOMS_PER_PEER,
};
pub use transport::{build_swarm, BuildError};
