//! The application node: the protocols' libp2p glue (`crate::net`) composed into one swarm with
//! identify, ping, the relay client and rooms, driven by a task of its own, steered through a
//! [`NodeHandle`] and observed through [`NodeEvent`]s.
//!
//! - [`config`]: how a node is set up; [`events`]: what it reports;
//! - [`handle`]: [`start`] and the caller's side of a running node;
//! - `driver`: the task that owns the swarm, runs commands and turns swarm events into
//!   [`NodeEvent`]s; `fetches`, `membership` and `stored_content` are the parts of its state for
//!   fetches, rooms and the content it holds;
//! - `behaviour`: every behaviour a node runs, composed; `transport`: the transports of each
//!   target.

mod behaviour;
pub mod config;
mod direct_upgrade;
mod driver;
pub mod events;
mod fetches;
pub mod handle;
mod membership;
mod redial;
mod stored_content;
mod transport;

pub use behaviour::{
    NodeBehaviour, NodeBehaviourEvent, ProtocolSettings, IDENTIFY_PROTOCOL, PING_INTERVAL,
};
pub use config::{NodeConfig, RelayAddress, DEFAULT_STATS_EVERY};
pub use events::{
    ContentAdded, Misbehaviour, NodeError, NodeEvent, NodeStats, ReadFileError, ReservationError,
    StoredChange, TransportKind,
};
pub use fetches::{BlockSources, FetchUpdate};
pub use handle::{start, CommandError, NodeControl, NodeHandle, StartError, StoredBlocks};
pub use membership::{RoomMember, RoomUpdate};
pub use transport::{build_swarm, BuildError};
