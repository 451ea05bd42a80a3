//! Swarm pull-sync (ethersphere/bee `pkg/pullsync` and `pkg/puller`, protocol 1.4.0) as two
//! sans-IO cores: a [`Server`] that serves this node's reserve and a [`Puller`] that syncs from
//! peers. Neither performs I/O or reads a clock; time is passed in.
//!
//! # Streams
//!
//! Every exchange runs on its own stream, as in bee: a cursors stream carries Syn then Ack; a
//! pull-sync stream carries one page: Get, Offer, Want, then the deliveries. The cores name
//! streams with a [`StreamId`] and speak to the glue in raw bytes, so that they, not the glue,
//! enforce the 128 KiB message cap, detect truncation and decode each message as what the
//! exchange expects next (protobuf messages carry no type tag).
//!
//! Batched delivery uses its own protocol name ([`BATCHED_PROTOCOL_NAME`]): a puller configured
//! for [`DeliveryMode::Batched`] opens it, one configured for streamed delivery opens bee's
//! [`PROTOCOL_NAME`]. A server answers both, so bee pullers keep working against a batched node.
//!
//! # What the glue does
//!
//! The glue drives one [`Node`], which owns the puller, the server and the reserve's index
//! behind one stream namespace ([`StreamKey`]: outbound streams are the puller's, inbound ones
//! the server's), through the [`Core`](crate::Core) contract:
//!
//! - per node: register [`PROTOCOL_NAME`], [`BATCHED_PROTOCOL_NAME`] and
//!   [`CURSORS_PROTOCOL_NAME`] as inbound protocols;
//! - per peer: `peer_connected` with the peer's overlay, `peer_disconnected` when its last
//!   connection closes; [`Node::set_storage_radius`] when the radius changes;
//! - per stream: every [`StreamEvent`] as `handle_input(now, peer, (key, event))`: an inbound
//!   stream opened ([`StreamEvent::Opened`], with a key unique for the peer), bytes read, the end
//!   of the peer's writing, a reset or a lost connection. [`Transmit`]s say what to do on a
//!   stream: [`StreamAction::Open`] opens an outbound stream for that key on the protocol
//!   given, the `Send`s that follow are written to it in order, `Finish` closes the writing
//!   side, `Reset` aborts it;
//! - storage: store every [`Event::Chunk`] (they are verified), then call
//!   [`Node::handle_reserve_changed`] so that live long polls see the new chunks (once per
//!   batch of stored chunks is enough); answer every [`Event::ChunksWanted`] with
//!   [`Node::provide_chunks`], reading the chunks in the order given; tell the node how many
//!   bytes wait in sockets with [`Node::set_backlog`];
//! - misbehaviour events are penalties: the stream is already reset, and the glue disconnects
//!   the peer when [`Misbehaviour::disconnects`] says so.
//!
//! # Drain order
//!
//! After every input or command, drain the node: `poll_transmit` until `None` (write or queue
//! what it returns), then `poll_event` until `None`, then re-arm the timer from `poll_timeout`. The server encodes deliveries lazily inside `poll_transmit`, one message per
//! call and round-robin across streams, so a glue that stops polling while its socket is full
//! exerts back-pressure without the server buffering whole pages.
//!
//! # Several peers offering the same chunks
//!
//! Neighbours hold much the same chunks, and a puller syncs each bin from all of them at once. bee
//! wants every offered chunk it has not stored, so a chunk offered by three peers while its first
//! delivery is still on the way is delivered three times. The puller here also leaves unwanted
//! any chunk it has already wanted on another stream whose delivery is still in flight, and counts
//! it in [`PullerStats::chunks_skipped_in_flight`].
//!
//! A page's interval says "everything offered here is stored", so a page that skipped such a
//! chunk is not recorded when its own deliveries are done. It is *held* (no stream open, the
//! worker waiting) until every chunk it skipped has resolved where it was wanted:
//!
//! - all arrived verified: the page is recorded and the worker moves on;
//! - one did not (that stream was reset or timed out, the peer left or sent a bad chunk, the
//!   server answered that it no longer has the chunk, or that bin stopped syncing): the page is
//!   not recorded and its worker asks for the same page again at once. The chunks that did arrive
//!   are now stored and not wanted again; the lost ones are wanted from this peer
//!   ([`PullerStats::pages_refetched`]), unless by then they are in flight from yet another
//!   peer. A page lost a second time in a row wants every chunk it lacks, so that a peer that
//!   keeps offering a chunk and answering that it lost it cannot hold back another's page.
//!
//! A held page never waits on anything but an open stream with deliveries outstanding, which
//! completes, fails or times out, so nothing waits forever. Memory stays bounded: one entry per
//! chunk wanted and not yet delivered (at most a page per open stream), and at most one held page
//! per bin worker. Whichever peer's offer of a page comes first delivers it; the others' workers
//! wait only while the chunks they need are arriving from it, instead of fetching them again.
//!
//! # Where this differs from bee
//!
//! - A page that can be filled from the reserve at once is offered at once; bee's real reserve
//!   subscription keeps the page open for the 1 s quiet period, its benchmark's mock does not. A
//!   page that had to wait for its first chunk (the live long poll) closes after the quiet period.
//! - The rate limiter charges a delivered page and delays the peer's next offer until the bucket
//!   is out of debt; bee delays closing the stream instead. The sustained rate is the same.
//! - Deliveries must come in offer order; the Want bit vector must be exactly `len / 8 + 1` bytes
//!   with no bits past the offer. A page with any bad delivery is not recorded as synced.

mod config;
mod in_flight;
mod interval;
mod message;
mod node;
mod puller;
mod rate_limit;
mod reserve;
mod server;
mod stream;
mod want;

#[cfg(test)]
mod tests;

pub use config::{Config, DeliveryMode, RateLimit};
pub use interval::{IntervalStore, IntervalStoreError, Intervals, MemoryIntervalStore};
pub use message::{
    Ack, Chunk, Delivery, DeliveryBatch, Get, Offer, Syn, Want, BATCHED_PROTOCOL_NAME,
    CURSORS_PROTOCOL_NAME, MAX_BATCH, MAX_MESSAGE_SIZE, PROTOCOL_NAME,
};
pub use node::{Event, Misbehaviour, Node};
pub use puller::{PullError, Puller, PullerEvent, PullerStats, MAX_PO_DELTA};
pub use reserve::{BinEntry, ChunkPresence, MemoryReserve, Reserve, ReserveIndex};
pub use server::{ProvideError, ServeError, Server, ServerEvent, ServerStats};
pub use stream::{Protocol, StreamAction, StreamEvent, StreamId, StreamKey, Transmit};
pub use want::{decode_want, encode_want, want_len, WantError};
