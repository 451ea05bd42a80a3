//! The serving side: answers cursor requests, offers pages of a bin, long-polls for live chunks,
//! and delivers the wanted chunks in offer order, streamed or batched, optionally rate limited.

use super::config::Config;
use super::message::MAX_MESSAGE_SIZE;
use super::message::{self, Ack, Delivery, DeliveryBatch, Get, Offer, Syn, Want, MAX_BATCH};
use super::rate_limit::RateLimiter;
use super::reserve::{BinEntry, ReserveIndex};
use super::stream::{Protocol, StreamAction, StreamId, StreamKey, Transmit};
use super::want::{decode_want, WantError};
use crate::framing::{encode_frame_into, framed_len, FrameDecoder, FrameError};
use crate::swarm::{Chunk, ChunkRef, MAX_BINS};
use bytes::{Bytes, BytesMut};
use std::collections::{HashMap, VecDeque};
use std::fmt::Debug;
use std::hash::Hash;
use thiserror::Error;
use web_time::Instant;

/// Why the server dropped a peer's stream. Each is the peer's fault.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServeError {
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error(transparent)]
    Want(#[from] WantError),
    #[error("request for bin {0}, outside 0..32")]
    BadBin(i32),
    #[error("message not expected at this point of the exchange")]
    Unexpected,
    #[error("too many open streams")]
    TooManyStreams,
}

/// A mistake by the glue when answering [`ServerEvent::ChunksWanted`].
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProvideError {
    #[error("stream is not waiting for chunks")]
    NotWaiting,
    #[error("{given} chunks given for {wanted} wanted")]
    Count { given: usize, wanted: usize },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEvent<P> {
    /// Read these chunks from storage and hand them, in this order, to [`Server::provide_chunks`]
    /// (`None` for one that is gone).
    ChunksWanted { peer: P, stream: StreamId, chunks: Vec<ChunkRef> },
    /// The peer broke the protocol; its stream was reset. The glue may disconnect it.
    Misbehaved { peer: P, stream: StreamId, error: ServeError },
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerStats {
    pub cursor_requests: u64,
    pub pages: u64,
    pub chunks_offered: u64,
    pub chunks_wanted: u64,
    pub chunks_sent: u64,
    /// Wanted chunks that were no longer in storage (sent as bee's zero-address delivery).
    pub chunks_missing: u64,
    pub messages_sent: u64,
    pub bytes_sent: u64,
    /// Requests that had to wait for the rate limiter.
    pub throttled: u64,
    pub misbehaviours: u64,
}

struct Inbound {
    protocol: Protocol,
    decoder: FrameDecoder,
    state: State,
}

enum State {
    AwaitSyn,
    AwaitGet,
    Throttled {
        bin: u8,
        start: u64,
    },
    /// Gathering a page; `close_at` is `None` until the first chunk arrives (the long poll).
    Collecting {
        bin: u8,
        next: u64,
        entries: Vec<BinEntry>,
        close_at: Option<Instant>,
    },
    AwaitWant {
        offered: Vec<ChunkRef>,
    },
    AwaitChunks {
        wanted: Vec<ChunkRef>,
    },
    Delivering {
        chunks: VecDeque<(ChunkRef, Option<Chunk>)>,
        page: usize,
    },
    Done,
}

type Key<P> = (P, StreamId);

/// The pull-sync server core for peers of type `P`. See the module docs of `pullsync` for the
/// calling contract.
pub struct Server<P> {
    config: Config,
    streams: HashMap<Key<P>, Inbound>,
    stream_counts: HashMap<P, usize>,
    limiters: HashMap<P, RateLimiter>,
    sending: VecDeque<Key<P>>,
    transmits: VecDeque<Transmit<P>>,
    events: VecDeque<ServerEvent<P>>,
    out: BytesMut,
    /// Reused for every batch so its vector is allocated once.
    batch: DeliveryBatch,
    stats: ServerStats,
}

impl<P: Copy + Eq + Hash + Debug> Server<P> {
    pub fn new(config: Config) -> Self {
        Server {
            config,
            streams: HashMap::new(),
            stream_counts: HashMap::new(),
            limiters: HashMap::new(),
            sending: VecDeque::new(),
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            out: BytesMut::new(),
            batch: DeliveryBatch::default(),
            stats: ServerStats::default(),
        }
    }

    pub fn stats(&self) -> ServerStats {
        self.stats
    }

    /// Whether the server still has `stream` open: once it does not, it will send nothing more on
    /// it, so a glue that saw the peer finish writing may close its side.
    pub fn has_stream(&self, peer: P, stream: StreamId) -> bool {
        self.streams.contains_key(&(peer, stream))
    }

    /// A peer opened `stream` on `protocol`.
    pub fn handle_stream_opened(&mut self, peer: P, stream: StreamId, protocol: Protocol) {
        let count = self.stream_counts.entry(peer).or_default();
        if *count >= self.config.max_inbound_streams {
            self.stats.misbehaviours += 1;
            self.transmits.push_back(Transmit {
                peer,
                stream: StreamKey::Inbound(stream),
                action: StreamAction::Reset,
            });
            self.events.push_back(ServerEvent::Misbehaved {
                peer,
                stream,
                error: ServeError::TooManyStreams,
            });
            return;
        }
        *count += 1;
        let state = match protocol {
            Protocol::Cursors => State::AwaitSyn,
            Protocol::Pullsync | Protocol::PullsyncBatched => State::AwaitGet,
        };
        let decoder = FrameDecoder::new(MAX_MESSAGE_SIZE);
        self.streams.insert((peer, stream), Inbound { protocol, decoder, state });
    }

    /// Bytes read from `stream`.
    pub fn handle_data(
        &mut self,
        now: Instant,
        peer: P,
        stream: StreamId,
        data: &[u8],
        reserve: &impl ReserveIndex,
    ) {
        self.handle_bytes(now, peer, stream, Bytes::copy_from_slice(data), reserve);
    }

    /// As [`Server::handle_data`], keeping `data` instead of copying it.
    pub fn handle_bytes(
        &mut self,
        now: Instant,
        peer: P,
        stream: StreamId,
        data: Bytes,
        reserve: &impl ReserveIndex,
    ) {
        let key = (peer, stream);
        let Some(inbound) = self.streams.get_mut(&key) else { return };
        inbound.decoder.extend_bytes(data);
        loop {
            let Some(inbound) = self.streams.get_mut(&key) else { return };
            match inbound.decoder.next_frame() {
                Ok(Some(frame)) => self.handle_frame(now, key, frame, reserve),
                Ok(None) => return,
                Err(e) => return self.fail(key, e.into()),
            }
        }
    }

    /// The peer finished writing `stream`. Requests it abandoned (a long poll it gave up on) are
    /// dropped; a half-written message is a truncation.
    pub fn handle_stream_finished(&mut self, peer: P, stream: StreamId) {
        let key = (peer, stream);
        let Some(inbound) = self.streams.get(&key) else { return };
        if let Err(e) = inbound.decoder.finish() {
            return self.fail(key, e.into());
        }
        match inbound.state {
            State::AwaitChunks { .. } | State::Delivering { .. } => {}
            _ => self.remove(key),
        }
    }

    /// `stream` is gone (reset by the peer or the connection closed).
    pub fn handle_stream_reset(&mut self, peer: P, stream: StreamId) {
        self.remove((peer, stream));
    }

    pub fn handle_peer_disconnected(&mut self, peer: P) {
        self.streams.retain(|(p, _), _| *p != peer);
        self.sending.retain(|(p, _)| *p != peer);
        self.stream_counts.remove(&peer);
        self.limiters.remove(&peer);
    }

    /// New chunks were added to the reserve: long polls in their bins may now offer.
    pub fn handle_reserve_changed(&mut self, now: Instant, reserve: &impl ReserveIndex) {
        let max_page = self.config.max_page;
        let quiet = self.config.page_quiet_period;
        let mut full = Vec::new();
        for (key, inbound) in &mut self.streams {
            if let State::Collecting { bin, next, entries, close_at } = &mut inbound.state {
                let before = entries.len();
                reserve.collect(*bin, *next, max_page - before, entries);
                if let Some(last) = entries.last().filter(|_| entries.len() > before) {
                    *next = last.bin_id + 1;
                    *close_at = Some(now + quiet);
                }
                if entries.len() >= max_page {
                    full.push(*key);
                }
            }
        }
        for key in full {
            self.send_offer(key);
        }
    }

    /// The chunks asked for by [`ServerEvent::ChunksWanted`], in the order asked.
    pub fn provide_chunks(
        &mut self,
        peer: P,
        stream: StreamId,
        chunks: Vec<Option<Chunk>>,
    ) -> Result<(), ProvideError> {
        let key = (peer, stream);
        let inbound = self.streams.get_mut(&key).ok_or(ProvideError::NotWaiting)?;
        let State::AwaitChunks { wanted } = &inbound.state else {
            return Err(ProvideError::NotWaiting);
        };
        if wanted.len() != chunks.len() {
            return Err(ProvideError::Count { given: chunks.len(), wanted: wanted.len() });
        }
        // A chunk that is not the one asked for would get us penalised: send it as missing.
        let page = chunks.len();
        let chunks = wanted
            .iter()
            .zip(chunks)
            .map(|(r, c)| (*r, c.filter(|c| c.chunk_ref() == *r)))
            .collect();
        inbound.state = State::Delivering { chunks, page };
        self.sending.push_back(key);
        Ok(())
    }

    pub fn handle_timeout(&mut self, now: Instant, reserve: &impl ReserveIndex) {
        let mut due = Vec::new();
        for (key, inbound) in &self.streams {
            let ready = match &inbound.state {
                State::Throttled { .. } => {
                    self.limiters.get(&key.0).is_none_or(|l| l.is_ready(now))
                }
                State::Collecting { close_at: Some(at), .. } => *at <= now,
                _ => false,
            };
            if ready {
                due.push(*key);
            }
        }
        for key in due {
            match self.streams.get(&key).map(|s| &s.state) {
                Some(State::Throttled { bin, start }) => {
                    let (bin, start) = (*bin, *start);
                    self.start_page(key, bin, start, reserve);
                }
                Some(State::Collecting { .. }) => self.send_offer(key),
                _ => {}
            }
        }
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        self.streams
            .iter()
            .filter_map(|(key, inbound)| match &inbound.state {
                State::Throttled { .. } => {
                    self.limiters.get(&key.0).and_then(RateLimiter::ready_at)
                }
                State::Collecting { close_at, .. } => *close_at,
                _ => None,
            })
            .min()
    }

    /// The next stream action. Deliveries are encoded here, one message at a time, round-robin
    /// across streams, so output is only built as fast as the glue takes it.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit<P>> {
        if let Some(t) = self.transmits.pop_front() {
            return Some(t);
        }
        while let Some(key) = self.sending.pop_front() {
            if let Some(t) = self.next_delivery(now, key) {
                return Some(t);
            }
        }
        None
    }

    pub fn poll_event(&mut self) -> Option<ServerEvent<P>> {
        self.events.pop_front()
    }

    fn handle_frame(
        &mut self,
        now: Instant,
        key: Key<P>,
        frame: Bytes,
        reserve: &impl ReserveIndex,
    ) {
        let Some(inbound) = self.streams.get_mut(&key) else { return };
        let result = match &inbound.state {
            State::AwaitSyn => {
                message::decode::<Syn>(frame).map(|_| self.send_cursors(key, reserve))
            }
            State::AwaitGet => match message::decode::<Get>(frame) {
                Ok(get) => match u8::try_from(get.bin).ok().filter(|b| *b < MAX_BINS) {
                    Some(bin) => {
                        self.request_page(now, key, bin, get.start, reserve);
                        Ok(())
                    }
                    None => return self.fail(key, ServeError::BadBin(get.bin)),
                },
                Err(e) => Err(e),
            },
            State::AwaitWant { .. } => match message::decode::<Want>(frame) {
                Ok(want) => return self.handle_want(key, want),
                Err(e) => Err(e),
            },
            _ => return self.fail(key, ServeError::Unexpected),
        };
        if let Err(e) = result {
            self.fail(key, e.into());
        }
    }

    fn send_cursors(&mut self, key: Key<P>, reserve: &impl ReserveIndex) {
        self.stats.cursor_requests += 1;
        let ack = Ack { cursors: reserve.cursors().to_vec(), epoch: reserve.epoch() };
        self.send(key, &ack);
        self.finish(key);
    }

    fn request_page(
        &mut self,
        now: Instant,
        key: Key<P>,
        bin: u8,
        start: u64,
        reserve: &impl ReserveIndex,
    ) {
        let limiter = self.config.rate_limit.map(|limit| {
            self.limiters.entry(key.0).or_insert_with(|| RateLimiter::new(limit)).is_ready(now)
        });
        if limiter == Some(false) {
            self.stats.throttled += 1;
            self.set_state(key, State::Throttled { bin, start });
        } else {
            self.start_page(key, bin, start, reserve);
        }
    }

    /// Offers what the reserve holds from `start` at once; with nothing there yet, waits (the
    /// long poll) and closes the page after a quiet period once chunks arrive.
    fn start_page(&mut self, key: Key<P>, bin: u8, start: u64, reserve: &impl ReserveIndex) {
        let mut entries = Vec::new();
        reserve.collect(bin, start, self.config.max_page, &mut entries);
        let found = !entries.is_empty();
        let next = entries.last().map_or(start, |e| e.bin_id + 1);
        self.set_state(key, State::Collecting { bin, next, entries, close_at: None });
        if found {
            self.send_offer(key);
        }
    }

    fn send_offer(&mut self, key: Key<P>) {
        let Some(inbound) = self.streams.get_mut(&key) else { return };
        let State::Collecting { entries, .. } = std::mem::replace(&mut inbound.state, State::Done)
        else {
            return;
        };
        let offer = offer_message(&entries);
        self.stats.pages += 1;
        self.stats.chunks_offered += entries.len() as u64;
        let offered = entries.iter().map(|e| e.chunk).collect();
        self.set_state(key, State::AwaitWant { offered });
        self.send(key, &offer);
    }

    fn handle_want(&mut self, key: Key<P>, want: Want) {
        let Some(State::AwaitWant { offered }) = self.streams.get(&key).map(|s| &s.state) else {
            return;
        };
        match decode_want(&want.bit_vector, offered.len()) {
            Err(e) => self.fail(key, e.into()),
            Ok(indices) if indices.is_empty() => {
                self.set_state(key, State::Done);
                self.finish(key);
            }
            Ok(indices) => {
                let wanted: Vec<ChunkRef> = indices.iter().map(|&i| offered[i]).collect();
                self.stats.chunks_wanted += wanted.len() as u64;
                let (peer, stream) = key;
                self.events.push_back(ServerEvent::ChunksWanted {
                    peer,
                    stream,
                    chunks: wanted.clone(),
                });
                self.set_state(key, State::AwaitChunks { wanted });
            }
        }
    }

    /// Encodes the next Delivery (or DeliveryBatch) of `key`, requeueing the stream if more remain.
    fn next_delivery(&mut self, now: Instant, key: Key<P>) -> Option<Transmit<P>> {
        let inbound = self.streams.get_mut(&key)?;
        let State::Delivering { chunks, page } = &mut inbound.state else { return None };
        let page = *page;
        let (encoded, sent, missing) = match inbound.protocol {
            Protocol::PullsyncBatched => {
                let take = MAX_BATCH.min(chunks.len());
                let batch = &mut self.batch.deliveries;
                batch.extend(chunks.drain(..take).map(|(r, c)| delivery_message(&r, c.as_ref())));
                let missing = batch.iter().filter(|d| d.data.is_empty()).count();
                let encoded = encode(&mut self.out, &self.batch);
                self.batch.deliveries.clear();
                (encoded, take, missing)
            }
            _ => {
                let (r, c) = chunks.pop_front()?;
                let delivery = delivery_message(&r, c.as_ref());
                (encode(&mut self.out, &delivery), 1, usize::from(c.is_none()))
            }
        };
        let finished = chunks.is_empty();
        self.stats.chunks_sent += sent as u64;
        self.stats.chunks_missing += missing as u64;
        if finished {
            self.set_state(key, State::Done);
            self.finish(key);
            self.charge(now, key.0, page);
        } else {
            self.sending.push_back(key);
        }
        match encoded {
            Ok(frame) => Some(self.counted(key, frame)),
            Err(e) => {
                self.fail(key, e.into());
                None
            }
        }
    }

    /// Charges a delivered page to the peer's rate limiter. bee waits after delivering; charging
    /// here and waiting before the next offer gives the same sustained rate.
    fn charge(&mut self, now: Instant, peer: P, chunks: usize) {
        if let Some(limiter) = self.limiters.get_mut(&peer) {
            limiter.consume(now, chunks);
        }
    }

    fn send<M: prost::Message>(&mut self, key: Key<P>, msg: &M) {
        match encode(&mut self.out, msg) {
            Ok(frame) => {
                let t = self.counted(key, frame);
                self.transmits.push_back(t);
            }
            Err(e) => self.fail(key, e.into()),
        }
    }

    fn counted(&mut self, (peer, stream): Key<P>, frame: Bytes) -> Transmit<P> {
        self.stats.messages_sent += 1;
        self.stats.bytes_sent += frame.len() as u64;
        Transmit { peer, stream: StreamKey::Inbound(stream), action: StreamAction::Send(frame) }
    }

    fn finish(&mut self, (peer, stream): Key<P>) {
        self.transmits.push_back(Transmit {
            peer,
            stream: StreamKey::Inbound(stream),
            action: StreamAction::Finish,
        });
    }

    fn set_state(&mut self, key: Key<P>, state: State) {
        if let Some(inbound) = self.streams.get_mut(&key) {
            inbound.state = state;
        }
    }

    fn fail(&mut self, key: Key<P>, error: ServeError) {
        let (peer, stream) = key;
        self.remove(key);
        self.stats.misbehaviours += 1;
        self.transmits.push_back(Transmit {
            peer,
            stream: StreamKey::Inbound(stream),
            action: StreamAction::Reset,
        });
        self.events.push_back(ServerEvent::Misbehaved { peer, stream, error });
    }

    fn remove(&mut self, key: Key<P>) {
        if self.streams.remove(&key).is_some() {
            if let Some(count) = self.stream_counts.get_mut(&key.0) {
                *count = count.saturating_sub(1);
            }
        }
    }
}

/// Frames are encoded into blocks at least this large and split off, so that a page's small
/// deliveries share a few allocations instead of one each.
const ENCODE_BLOCK: usize = 64 * 1024;

fn encode<M: prost::Message>(out: &mut BytesMut, msg: &M) -> Result<Bytes, FrameError> {
    let needed = framed_len(msg);
    if out.capacity() < needed {
        out.reserve(needed.max(ENCODE_BLOCK));
    }
    encode_frame_into(msg, MAX_MESSAGE_SIZE, out)?;
    Ok(out.split().freeze())
}

/// The Offer for a page. All its byte fields share one buffer.
fn offer_message(entries: &[BinEntry]) -> Offer {
    let mut buf = BytesMut::with_capacity(entries.len() * 96);
    for e in entries {
        buf.extend_from_slice(e.chunk.address.as_bytes());
        buf.extend_from_slice(&e.chunk.batch_id);
        buf.extend_from_slice(&e.chunk.stamp_hash);
    }
    let buf = buf.freeze();
    let chunks = (0..entries.len())
        .map(|i| message::Chunk {
            address: buf.slice(i * 96..i * 96 + 32),
            batch_id: buf.slice(i * 96 + 32..i * 96 + 64),
            stamp_hash: buf.slice(i * 96 + 64..i * 96 + 96),
        })
        .collect();
    Offer { topmost: entries.iter().map(|e| e.bin_id).max().unwrap_or(0), chunks }
}

/// A Delivery of `chunk`, or bee's zero-address delivery for a chunk that is gone.
fn delivery_message(wanted: &ChunkRef, chunk: Option<&Chunk>) -> Delivery {
    match chunk {
        Some(c) => Delivery {
            address: Bytes::copy_from_slice(wanted.address.as_bytes()),
            data: c.data().clone(),
            stamp: c.stamp().as_bytes().clone(),
        },
        None => Delivery {
            address: Bytes::from_static(&[0; 32]),
            data: Bytes::new(),
            stamp: Bytes::new(),
        },
    }
}
