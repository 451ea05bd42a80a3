//! The one libp2p adapter for protocol cores, in rust-libp2p's shape: a [`Behaviour`] (the
//! `NetworkBehaviour`) owns a core and drives it through [`syncscope_proto::Core`]; a [`Handler`]
//! (the `ConnectionHandler`) owns one connection.
//!
//! What every protocol needs is here, once:
//! - the connections of each peer (oldest first), and telling the core when a peer becomes usable
//!   and stops being so ([`Glue::peer_info`]);
//! - the drain loop in the contract's order, the core's timer (bounded rounds per poll), the
//!   waker and the queue of swarm actions;
//! - store work as futures polled with the behaviour ([`Ctx::spawn`]);
//! - the inbound-stream cap per connection, and keep-alive while the node is busy;
//! - misbehaviour: the connection that carried the offence is closed, counted in
//!   [`LinkStats::peers_disconnected`] and reported, and its further reports are ignored.
//!
//! What is a protocol's own is its [`Glue`] (routing, store tasks, the node's API) and its
//! [`Streams`] (the codec on one connection's streams).

mod behaviour;
mod glue;
mod handler;
mod timer;
mod upgrade;

pub use behaviour::Behaviour;
pub use glue::{Ctx, Glue, LinkStats, Origin};
pub use handler::{Command, Handler, HandlerEvent, Streams, StreamsEvent};
pub use upgrade::{Name, ProtocolId, Upgrade};
