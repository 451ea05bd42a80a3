//! A deterministic discrete-event network in virtual time, and the Bitswap scenarios run on it.
//!
//! [`Network`] is generic over any sans-IO core that implements [`SimNode`]; it knows nothing of
//! Bitswap. The model of one message from `a` to `b`:
//! - it is serialised on the directed link `a -> b` at that link's bandwidth, after whatever the
//!   link is still sending (one FIFO per directed pair, no shared uplink);
//! - it then travels the link's one-way latency and is delivered whole;
//! - its size is the node's own figure, for Bitswap the framed protobuf length;
//! - with no bandwidth limit, serialisation takes no time and only latency counts;
//! - a node may also have a shared downlink ([`Network::set_downlink`]): after its link, every
//!   message to the node crosses it, the senders sharing its bandwidth equally. That models one
//!   connection carrying every peer's traffic, such as a browser's WebSocket to a relay. A
//!   sender learns that a message was sent when it left the sender's link, not when it crossed
//!   the downlink: the buffers on the way take it (the pessimistic case, a bloated relay);
//! - while a message is part way through (its bytes arrive over a limited link, or cross a
//!   downlink), the receiver is told so ([`SimNode::handle_progress`]) when its timer fires, as
//!   a real node's glue reports reads that leave a frame incomplete.
//!
//! Failures are injected between two nodes at the current instant: [`Network::disconnect`] loses
//! everything in transit between them and tells both ends; [`Network::reset_streams`] loses it
//! with the streams it travelled on, and tells both ends which ([`Wire::reset`]). A pull-sync
//! node's store can also lose its chunk data ([`pullsync::Reserve::lose_data`]).
//!
//! Latency and bandwidth are drawn once per directed pair from a seeded ChaCha RNG ([`Links`]).
//! Events at the same instant run in the order they were scheduled, so a seed gives bit-identical
//! runs. Nothing sleeps: the clock jumps from event to event.

pub mod bitswap;
mod downlink;
mod link;
mod network;
mod node_id;
mod peer;
pub mod pullsync;

pub use link::{LinkModel, LinkParams, Links, SlowPairs};
pub use network::{Carried, NetStats, Network, Outgoing, SimNode};
pub use node_id::NodeId;
pub use peer::{App, Peer, Wire};
