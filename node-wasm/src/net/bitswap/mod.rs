//! Bitswap over libp2p: the [`adapter`](crate::net::adapter) driving the sans-IO
//! [`Node`](syncscope_proto::bitswap::Node), with Bitswap's own parts.
//!
//! - [`Behaviour`] is the adapter's behaviour for Bitswap, with the node's commands and
//!   [`Stats`].
//! - `glue` ([`BitswapGlue`]) tells the adapter which peers speak Bitswap and at which version,
//!   routes messages to connections, answers the core's block loads from the [`BlockStore`],
//!   keeps the server's index in step with the store, stores verified blocks and tracks fetches.
//! - `streams` ([`BitswapStreams`]) is the codec on one connection: one long-lived outbound
//!   stream for our messages, reopened on failure, and every inbound stream read until EOF, with
//!   frames capped at the configured message size.
//!
//! # What the node driver does
//!
//! Compose the behaviour into the node's swarm (`#[derive(NetworkBehaviour)]`) and build it with
//! [`Behaviour::new`] from a [`Config`] and a [`BlockStore`]. Then:
//! - [`Behaviour::fetch`] to fetch blocks in a new session, [`Behaviour::fetch_more`] to add to
//!   it, [`Behaviour::close`] to stop it (cancelling what is left) and free it once done;
//! - [`Behaviour::add_block`] for the node's own blocks;
//! - handle the [`Event`]s: [`Event::Block`] and [`Event::FetchDone`] for fetches,
//!   [`Event::BlockAdded`], [`Event::PeerConnected`]/[`Event::PeerDisconnected`] for views,
//!   [`Event::Misbehaved`] (the peer is already being disconnected; block it if wanted) and
//!   [`Event::StoreFailed`];
//! - sample [`Behaviour::stats`] and [`Behaviour::peer_stats`] for the UI's plots.
//!
//! Nothing else: connections, streams, the timer and store calls are the adapter's and the
//! glue's own.
//!
//! # Block access
//! The core's [`Event::Load`](syncscope_proto::bitswap::Event::Load) is answered inside the
//! behaviour: each load is a store future held in the behaviour and polled with it, so an async
//! store (IndexedDB) needs no help from the driver and several loads run at once (the server
//! bounds them by its outstanding bytes per peer). Received blocks are verified by the core,
//! put into the store, then added to the server's index and reported; a fetch's blocks that the
//! index already holds are read from the store instead of the network.
//!
//! # Flow control
//! The core's fetch window bounds the wants out at once (see `syncscope_proto::bitswap`'s
//! `window` module); the behaviour hands it every want its store cannot answer.
//!
//! # Peers and connections
//! A peer speaks Bitswap once one of its connections negotiated an outbound stream; messages go
//! on its oldest such connection. When a connection closes and others remain, answers in flight
//! on it are lost both ways, so the peer is started afresh on the rest
//! ([`Event::PeerDisconnected`] then [`Event::PeerConnected`]): its wants with our server are
//! dropped and our sessions may ask it again; the other end, seeing the same close, does the
//! same. Connections are kept alive while the node fetches; otherwise the swarm's idle timeout
//! applies (the long-lived streams do not count as activity).
//!
//! # Misbehaviour
//! An oversized frame, an invalid length prefix, a stream ending inside a frame, a message that
//! does not decode, a block that does not match its CID, or more than
//! [`max_unsolicited_blocks`](syncscope_proto::bitswap::Config::max_unsolicited_blocks) blocks
//! nobody asked for: the stream is reset (where there is one), the connection that carried it is
//! counted in [`Stats::peers_disconnected`] and closed, [`Event::Misbehaved`] says why, and
//! fetches go on with the other peers. Over the wire, a block sent for a CID its data does not hash to is addressed by its data
//! (the block prefix carries no digest), so it arrives as an unsolicited block.
//!
//! # Interoperability
//! The wire is that of boxo, kubo and Helia: `/ipfs/bitswap/1.2.0` (then 1.1.0, 1.0.0 and bare
//! `/ipfs/bitswap`), varint-prefixed protobuf up to 4 MiB. Responses are never expected on the
//! request stream: each side writes on its own outbound stream, and inbound streams are read until
//! EOF whether a peer keeps one (boxo) or opens one per message (Helia).

mod behaviour;
mod config;
mod event;
mod glue;
mod streams;

pub use behaviour::{Behaviour, FetchError, Stats};
pub use config::Config;
pub use event::{Event, Misbehaviour};
pub use glue::BitswapGlue;
pub use streams::{BitswapStreams, StreamError, MAX_OPEN_ATTEMPTS};

pub use crate::store::BlockStore;
