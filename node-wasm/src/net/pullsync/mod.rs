//! Swarm pull-sync over libp2p: the [`adapter`](crate::net::adapter) driving the sans-IO
//! [`Node`](syncscope_proto::pullsync::Node) (puller and server), with pull-sync's own parts.
//!
//! - [`Behaviour`] is the adapter's behaviour for pull-sync, with the node's commands and
//!   [`Stats`].
//! - `glue` ([`PullsyncGlue`]) routes each stream action to the connection that carries the
//!   stream, stores verified chunks in the [`ChunkStore`], answers wants from it, and tells the
//!   core how many bytes wait for sockets.
//! - `streams` ([`PullsyncStreams`]) is one connection's streams: it opens the streams the
//!   puller asks for, takes the server's, writes frames and reports bytes read, end of stream
//!   and failures. It never parses; the core enforces sizes, order and truncation.
//!
//! # What the node driver does
//!
//! Compose the behaviour into the node's swarm (`#[derive(NetworkBehaviour)]`) and build it with
//! [`Behaviour::new`]: this node's overlay, a [`ChunkStore`], an
//! [`IntervalStore`](syncscope_proto::pullsync::IntervalStore) and a [`Config`]. Then:
//! - before a peer connects, [`Behaviour::set_peer_overlay`] if its overlay is not the one derived
//!   from its peer ID ([`overlay_of`]);
//! - [`Behaviour::store_chunk`] for chunks uploaded to this node, so that they are offered;
//! - [`Behaviour::set_storage_radius`] when the radius changes;
//! - handle the [`Event`]s: [`Event::ChunkStored`] (already stored; update views),
//!   [`Event::Misbehaved`] (the connection that carried the offence is already being closed;
//!   block the peer if wanted),
//!   [`Event::StoreFailed`] and [`Event::IntervalStoreFailed`] (storage trouble);
//! - sample [`Behaviour::stats`] and [`Behaviour::delivery_rate`] for the UI.
//!
//! Nothing else: connections, streams, timers and storage calls are the adapter's and the glue's
//! own. Chunk reads for wants are synchronous ([`ChunkStore::get`]), as the memory store allows.
//!
//! Back-pressure: the server encodes deliveries only while less than
//! [`max_backlog`](syncscope_proto::pullsync::Config::max_backlog) bytes wait to be written
//! across all connections, so a slow socket holds whole pages in the store, not in memory as
//! frames.

mod behaviour;
mod config;
mod event;
mod glue;
mod overlay;
mod streams;

pub use behaviour::{Behaviour, Stats};
pub use config::Config;
pub use event::Event;
pub use glue::PullsyncGlue;
pub use overlay::overlay_of;
pub use streams::{PullsyncStreams, StreamCommand, StreamsReport};
pub use syncscope_proto::pullsync::{Misbehaviour, StreamKey};

pub use crate::store::ChunkStore;
