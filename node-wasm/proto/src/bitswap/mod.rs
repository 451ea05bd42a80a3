//! Bitswap 1.2.0 (and 1.1.0, 1.0.0, bare `/ipfs/bitswap`) as a sans-IO client and server.
//!
//! # Contract
//! Nothing here does I/O, reads a clock or draws OS randomness: time comes in as
//! `web_time::Instant` arguments and the RNG is seeded from [`Config::rng_seed`]. Peers are an
//! opaque `P: Copy + Ord + Hash + Debug` key. The same code runs in `syncscope-sim`, natively and in
//! the browser.
//!
//! [`Node`] is the front the glue and the simulator drive, through the [`Core`](crate::Core)
//! contract; [`Client`] and [`Server`] can be driven on their own. The node also keeps the
//! policy between sessions and the network: the fetch window, the memory of closed sessions'
//! wants and the unsolicited-block limit (the `window` module).
//!
//! - Inputs: [`peer_connected`](crate::Core::peer_connected) (with the negotiated [`ProtocolVersion`]) and
//!   [`peer_disconnected`](crate::Core::peer_disconnected); [`Node::handle_message`] for each decoded frame
//!   ([`Message::decode`] after a [`crate::framing::FrameDecoder`] capped at
//!   [`MAX_MESSAGE_SIZE`]); [`Node::handle_progress`] after a read that leaves a frame
//!   incomplete (a large message on a slow link is still arriving); [`Node::handle_sent`] when a server message was written;
//!   [`handle_timeout`](crate::Core::handle_timeout) when the time from `poll_timeout` has come; [`Node::add_block`]
//!   and [`Node::block_loaded`] from the store.
//! - Commands: [`Node::new_session`], [`Node::want`], [`Node::cancel`], [`Node::close_session`].
//! - Outputs, drained in this order after every input: [`poll_transmit`](crate::Core::poll_transmit) until `None`
//!   (encode with [`Message::encode_frame`] for the peer's version), then [`poll_event`](crate::Core::poll_event)
//!   until `None` (answering [`Event::Load`] may happen later, from an async store), then
//!   [`poll_timeout`](crate::Core::poll_timeout) to arm the single timer.
//! - [`Node::stats`] and [`Node::peer_stats`] return plain counters.
//!
//! Misbehaviour never surfaces as an error from `handle_*`: bad blocks become
//! [`Event::Misbehaved`] and counters; decoding errors are typed ([`DecodeError`]).
//!
//! # Block access
//! The server never touches a store. It keeps an index of the CIDs the node holds and their
//! sizes ([`Node::add_block`] / [`Node::remove_stored`]), which answers HAVE/DONT_HAVE at once,
//! and asks for block data only when a response is packed ([`Event::Load`], answered by
//! [`Node::block_loaded`] whenever the store is done). That works the same over a synchronous
//! map, a tokio store and IndexedDB in a single-threaded browser, and bounds the data held per
//! peer by `max_outstanding_bytes_per_peer`.
//!
//! # Versions
//! [`ProtocolVersion`] lists the four protocol ids. Encoding drops what a version cannot carry
//! (want-have entries, presences and pending bytes before 1.2.0) and sends raw block data to
//! 1.0.0 and bare `/ipfs/bitswap` peers, whose receivers address it as CIDv0: only dag-pb
//! sha2-256 blocks can be exchanged with them. The client never sends want-have to such peers.
//!
//! # Client strategy
//! See the `session` module: want-have to session peers plus optimistic want-blocks whose
//! number is learned, a per-peer presence model, latency- and load-aware peer choice, adaptive
//! silent-peer timeouts that never fire while a peer's bytes are arriving, and decisions taken at the end of the send debounce with every answer
//! received meanwhile. [`ClientMode::Legacy`] is the pre-1.2 behaviour in the same code.

mod client;
mod config;
mod message;
mod node;
mod peer;
mod predictor;
mod server;
mod session;
mod stats;
mod verify;
mod version;
mod wantlist;
mod window;

pub use client::{Client, Event as ClientEvent};
pub use config::{ClientMode, Config};
pub use message::{
    pb, prefix_of, Block, BlockPresence, DecodeError, Message, Presence, WantEntry, WantType,
    WireBlock, MAX_MESSAGE_SIZE,
};
pub use node::{Event, Misbehaviour, Node, Transmit};
pub use server::{Server, ServerEvent};
pub use session::SessionId;
pub use stats::{Counters, Stats};
pub use verify::{raw_cid, verify, VerifyError};
pub use version::ProtocolVersion;
