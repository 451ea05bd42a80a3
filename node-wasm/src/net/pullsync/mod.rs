//! Swarm pull-sync over libp2p: the glue around the sans-IO cores of
//! [`syncscope_proto::pullsync`], in rust-libp2p's shape.
//!
//! - [`Behaviour`] (a `NetworkBehaviour`) owns the [`Server`](syncscope_proto::pullsync::Server)
//!   and [`Puller`](syncscope_proto::pullsync::Puller) cores, the [`ChunkStore`] and the interval
//!   store; it adds and removes peers as connections come and go, routes stream actions, drives
//!   the cores' timers, stores verified chunks, answers wants, and disconnects peers that break
//!   the protocol.
//! - [`Handler`] (a `ConnectionHandler`) owns one connection's streams: it opens the streams the
//!   puller asks for, accepts the server's, writes frames and reports bytes read, end of stream
//!   and failures. It never parses; the cores enforce sizes, order and truncation.
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
//! Nothing else: connections, streams, timers and storage calls are the behaviour's own. Chunk
//! reads for wants are synchronous ([`ChunkStore::get`]), as the memory store allows.
//!
//! Back-pressure: the server encodes deliveries only while less than
//! [`Config::max_queued_bytes`] wait to be written across all connections, so a slow socket
//! holds whole pages in the store, not in memory as frames.

mod behaviour;
mod handler;
mod overlay;
mod protocol;

pub use behaviour::{Behaviour, Config, Event, Stats};
pub use handler::{Command, Handler, HandlerEvent};
pub use overlay::overlay_of;
pub use protocol::Upgrade;
pub use syncscope_proto::pullsync::{Misbehaviour, StreamKey};

pub use crate::store::ChunkStore;
