//! libp2p glue: the behaviours a node runs, the transports of each target, and the task that
//! drives the swarm.

mod behaviour;
pub mod bitswap;
pub mod framed;
mod node;
mod transport;

pub use behaviour::{NodeBehaviour, NodeBehaviourEvent, IDENTIFY_PROTOCOL, PING_INTERVAL};
pub use node::{start, NodeConfig, NodeEvent, NodeHandle, RelayAddress, StartError, TransportKind};
pub use transport::{build_swarm, BuildError};
