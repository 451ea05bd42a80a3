//! A deterministic discrete-event network in virtual time, and the Bitswap scenarios run on it.
//!
//! [`Network`] is generic over any sans-IO core that implements [`SimNode`]; it knows nothing of
//! Bitswap. The model of one message from `a` to `b`:
//! - it is serialised on the directed link `a -> b` at that link's bandwidth, after whatever the
//!   link is still sending (one FIFO per directed pair, no shared uplink);
//! - it then travels the link's one-way latency and is delivered whole;
//! - its size is the node's own figure, for Bitswap the framed protobuf length;
//! - with no bandwidth limit, serialisation takes no time and only latency counts.
//!
//! Latency and bandwidth are drawn once per directed pair from a seeded ChaCha RNG ([`Links`]).
//! Events at the same instant run in the order they were scheduled, so a seed gives bit-identical
//! runs. Nothing sleeps: the clock jumps from event to event.

pub mod bitswap;
mod link;
mod network;

pub use link::{LinkModel, LinkParams, Links, SlowPairs};
pub use network::{NetStats, Network, NodeId, Outgoing, SimNode};
