//! Bitswap 1.2.0 (and 1.1.0, 1.0.0, bare `/ipfs/bitswap`) as a sans-IO client and server.
//!
//! # Contract
//! Nothing here does I/O, reads a clock or draws OS randomness: time comes in as
//! `web_time::Instant` arguments and the RNG is seeded from [`Config::rng_seed`]. Peers are an
//! opaque `P: Copy + Ord + Hash + Debug` key. The same code runs in `crate::sim`, natively and in
//! the browser.
//!
//! [`Node`] is the front the glue drives; [`Client`] and [`Server`] can be driven on their own.
//! - Inputs: [`Node::peer_connected`] (with the negotiated [`ProtocolVersion`]) and
//!   [`Node::peer_disconnected`]; [`Node::handle_message`] for each decoded frame
//!   ([`Message::decode`] after a [`crate::proto::framing::FrameDecoder`] capped at
//!   [`MAX_MESSAGE_SIZE`]); [`Node::handle_sent`] when a server message was written;
//!   [`Node::handle_timeout`] when the time from `poll_timeout` has come; [`Node::add_block`]
//!   and [`Node::block_loaded`] from the store.
//! - Commands: [`Node::new_session`], [`Node::want`], [`Node::cancel`], [`Node::close_session`].
//! - Outputs, drained in this order after every input: [`Node::poll_transmit`] until `None`
//!   (encode with [`Message::encode_frame`] for the peer's version), then [`Node::poll_event`]
//!   until `None` (answering [`Event::Load`] may happen later, from an async store), then
//!   [`Node::poll_timeout`] to arm the single timer.
//! - [`Node::stats`] and [`Node::peer_stats`] return plain counters.
//!
//! Misbehaviour never surfaces as an error from `handle_*`: bad blocks become
//! [`Event::Misbehaved`] and counters; decoding errors are typed ([`DecodeError`]).

mod client;
mod config;
mod message;
mod node;
mod predictor;
mod server;
mod session;
mod stats;
mod verify;
mod version;
mod wantlist;

pub use client::{Client, Event as ClientEvent};
pub use config::{ClientMode, Config};
pub use message::{
    pb, prefix_of, Block, BlockPresence, DecodeError, Message, Presence, WantEntry, WantType,
    MAX_MESSAGE_SIZE,
};
pub use node::{Event, Node, Transmit};
pub use server::{Server, ServerEvent};
pub use session::SessionId;
pub use stats::{Counters, Stats};
pub use verify::{raw_cid, verify, VerifyError};
pub use version::ProtocolVersion;
