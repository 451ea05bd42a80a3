//! The contract every protocol core keeps, so that one libp2p adapter and one simulator adapter
//! drive any of them.
//!
//! A core is a state machine with four kinds of methods, after quinn-proto's `Connection`:
//! - inputs: [`Core::peer_connected`], [`Core::peer_disconnected`], [`Core::handle_input`] for
//!   each unit of what a peer sent, and [`Core::handle_timeout`] once the instant from
//!   [`Core::poll_timeout`] has come;
//! - commands, which are each core's own (fetch a block, store a chunk);
//! - outputs, drained after every input or command in this order: [`Core::poll_transmit`] until
//!   `None`, then [`Core::poll_event`] until `None` (an event may be answered at once, with a
//!   command, and that may queue more transmits: drain again until both are dry), then
//!   [`Core::poll_timeout`] to arm the one timer;
//! - getters, such as `stats()`.
//!
//! Time is always passed in and only ever compared; a core never reads a clock, sleeps, spawns or
//! does I/O. A peer's misbehaviour is an event, never an `Err` from an input.

use std::fmt::Debug;
use std::hash::Hash;

use web_time::Instant;

/// A sans-IO protocol core. See the module docs for the drain order.
pub trait Core {
    /// An opaque peer key: a libp2p `PeerId` in a node, a simulator node ID, a small integer in a
    /// unit test.
    type Peer: Copy + Ord + Hash + Debug;
    /// What the glue learned of a peer when it connected (Bitswap: the negotiated version;
    /// pull-sync: the peer's overlay address).
    type PeerInfo;
    /// One unit of what a peer sent (Bitswap: a decoded message; pull-sync: bytes or the end of
    /// one of its streams).
    type Input;
    /// One thing to send to a peer.
    type Transmit;
    /// What the core reports to the node: data to store, data to load, misbehaviour.
    type Event;

    fn peer_connected(&mut self, now: Instant, peer: Self::Peer, info: Self::PeerInfo);
    fn peer_disconnected(&mut self, now: Instant, peer: Self::Peer);
    fn handle_input(&mut self, now: Instant, peer: Self::Peer, input: Self::Input);
    fn handle_timeout(&mut self, now: Instant);
    fn poll_transmit(&mut self, now: Instant) -> Option<Self::Transmit>;
    fn poll_event(&mut self) -> Option<Self::Event>;
    fn poll_timeout(&self) -> Option<Instant>;
}
