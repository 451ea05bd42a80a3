//! The pulling side: asks each peer for its cursors, picks the bins to sync from the peer's
//! proximity and the storage radius, and runs historical and live syncing per bin, one stream per
//! page. Every delivered chunk is checked against the offer and its address before it is handed
//! on; every completed page is recorded in the [`IntervalStore`].
//!
//! An offered chunk already wanted on another stream (usually another peer's) is not wanted
//! again; the page that skipped it is recorded only once it arrived there, and is fetched again
//! if it did not. The pull-sync module docs explain why this loses nothing.

use super::config::{Config, DeliveryMode};
use super::in_flight::InFlight;
use super::interval::{IntervalStore, IntervalStoreError};
use super::message::{self, Ack, Delivery, DeliveryBatch, Get, Offer, Syn};
use super::reserve::ChunkPresence;
use super::stream::{Protocol, StreamAction, StreamId, Transmit};
use crate::framing::{FrameDecoder, FrameError};
use crate::swarm::MAX_BINS;
use crate::swarm::{Address, AddressError, Chunk, ChunkError, ChunkRef, StampError};
use bytes::{Bytes, BytesMut};
use std::collections::{HashMap, VecDeque};
use std::fmt::Debug;
use std::hash::Hash;
use thiserror::Error;
use web_time::Instant;

mod page;
mod streams;

/// How far below the storage radius a peer's proximity may be for its own bin to be synced
/// (bee `pkg/puller`, `maxPODelta`).
pub const MAX_PO_DELTA: u8 = 2;

/// Why a peer's stream was dropped. Each is the peer's fault and comes with a penalty event.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PullError {
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("{0} cursors, expected 32")]
    CursorCount(usize),
    #[error("offer of {offered} chunks exceeds the page size {max}")]
    OfferTooLarge { offered: usize, max: usize },
    #[error("offered chunk field: {0}")]
    OfferedAddress(#[from] AddressError),
    #[error("offered batch ID or stamp hash of {0} bytes, expected 32")]
    OfferedStampRef(usize),
    #[error("offer topmost {topmost} is below the requested start {start}")]
    Topmost { start: u64, topmost: u64 },
    #[error("delivery of {0}, which was not offered and wanted")]
    NotWanted(Address),
    #[error("delivery of {0} out of offer order")]
    OutOfOrder(Address),
    #[error("delivered stamp: {0}")]
    Stamp(#[from] StampError),
    #[error("delivered stamp of {0} differs from the offered one")]
    StampMismatch(Address),
    #[error("delivered chunk: {0}")]
    InvalidChunk(#[from] ChunkError),
    #[error("message not expected at this point of the exchange")]
    Unexpected,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullerEvent<P> {
    /// A verified chunk to store. Emitted before the interval that covers it is recorded.
    Chunk { peer: P, bin: u8, chunk: Chunk },
    /// A page completed and `start..=end` of `bin` is recorded as synced from `peer`.
    IntervalSynced { peer: P, bin: u8, start: u64, end: u64, live: bool },
    /// The peer broke the protocol; its stream was reset and the bin retries later. The glue may
    /// disconnect it.
    Misbehaved { peer: P, error: PullError },
    /// The interval store failed; the bin retries later.
    StoreFailed { peer: P, bin: u8, error: IntervalStoreError },
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PullerStats {
    pub pages: u64,
    pub chunks_offered: u64,
    pub chunks_wanted: u64,
    /// Offered chunks not wanted because they were already wanted from another peer (or another
    /// page) and their delivery was still in flight.
    pub chunks_skipped_in_flight: u64,
    /// Pages fetched again because a chunk they skipped was not delivered where it was wanted.
    pub pages_refetched: u64,
    /// Pages under way reset because a foreground transfer wanted the link
    /// ([`Puller::yield_now`]).
    pub pages_yielded: u64,
    /// Chunks that arrived, matched the offer and verified.
    pub chunks_delivered: u64,
    /// Chunks that failed verification or did not match what was wanted.
    pub chunks_rejected: u64,
    /// Wanted chunks the server no longer had (zero-address deliveries).
    pub chunks_missing: u64,
    /// Bytes of chunk data (span and payload) delivered and verified.
    pub chunk_bytes: u64,
    pub messages_received: u64,
    pub bytes_received: u64,
    pub misbehaviours: u64,
    pub timeouts: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Worker {
    Idle,
    Streaming(StreamId),
    /// The page on this stream is delivered but skipped chunks that are still in flight elsewhere;
    /// its interval and the next page wait for them.
    Held(StreamId),
    RetryAt(Instant),
    Done,
}

#[derive(Clone, Copy, Debug)]
struct BinSync {
    active: bool,
    cursor: u64,
    historical: Worker,
    live: Worker,
    live_start: u64,
}

const IDLE_BIN: BinSync = BinSync {
    active: false,
    cursor: 0,
    historical: Worker::Idle,
    live: Worker::Idle,
    live_start: 1,
};

struct PeerSync {
    overlay: Address,
    po: u8,
    cursors: Worker,
    known: Option<Vec<u64>>,
    bins: [BinSync; MAX_BINS as usize],
}

struct Outbound<P> {
    peer: P,
    protocol: Protocol,
    decoder: FrameDecoder,
    deadline: Option<Instant>,
    task: Task,
}

enum Task {
    Cursors,
    /// `refetch`: how many times in a row this page has been fetched again because a chunk it
    /// skipped was lost.
    Page {
        bin: u8,
        live: bool,
        start: u64,
        refetch: u8,
        state: PageState,
    },
}

/// Refetches of a page that still skip chunks in flight elsewhere. A lost chunk is usually a
/// stream that failed, and another peer may be delivering it by now; a page lost again after
/// that wants every chunk it lacks, so that a peer that keeps losing a chunk it offers cannot
/// hold back another peer's page.
const SKIPPING_REFETCHES: u8 = 1;

enum PageState {
    AwaitOffer,
    AwaitDeliveries { topmost: u64, wanted: Vec<ChunkRef>, next: usize },
}

/// A page whose own deliveries are done: what recording it takes.
#[derive(Clone, Copy, Debug)]
struct DeliveredPage<P> {
    peer: P,
    bin: u8,
    live: bool,
    start: u64,
    refetch: u8,
    topmost: u64,
}

/// The pull-sync puller core for peers of type `P`, recording intervals in `S`. See the module
/// docs of `pullsync` for the calling contract.
pub struct Puller<P, S> {
    config: Config,
    overlay: Address,
    radius: u8,
    /// No new page is requested while paused; pages under way finish unless
    /// [`Self::yield_now`] reset them.
    paused: bool,
    store: S,
    peers: HashMap<P, PeerSync>,
    streams: HashMap<StreamId, Outbound<P>>,
    next_stream: u64,
    spare_decoders: Vec<FrameDecoder>,
    in_flight: InFlight,
    /// Delivered pages held back until the chunks they skipped arrive, by their stream ID; at most
    /// one per worker.
    held: HashMap<StreamId, DeliveredPage<P>>,
    /// Reused for every received batch so its vector is allocated once.
    batch: DeliveryBatch,
    transmits: VecDeque<Transmit<P>>,
    events: VecDeque<PullerEvent<P>>,
    out: BytesMut,
    stats: PullerStats,
}

impl<P: Copy + Eq + Hash + Debug, S: IntervalStore> Puller<P, S> {
    /// A puller for the node at `overlay`, with storage radius 0 until told otherwise.
    pub fn new(config: Config, overlay: Address, store: S) -> Self {
        Puller {
            config,
            overlay,
            radius: 0,
            paused: false,
            store,
            peers: HashMap::new(),
            streams: HashMap::new(),
            next_stream: 0,
            spare_decoders: Vec::new(),
            in_flight: InFlight::default(),
            held: HashMap::new(),
            batch: DeliveryBatch::default(),
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            out: BytesMut::new(),
            stats: PullerStats::default(),
        }
    }

    pub fn stats(&self) -> PullerStats {
        self.stats
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    /// The interval store, e.g. to reset a peer by hand.
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }

    pub fn into_store(self) -> S {
        self.store
    }

    pub fn storage_radius(&self) -> u8 {
        self.radius
    }

    /// Bins currently synced from `peer`.
    pub fn syncing_bins(&self, peer: &P) -> Vec<u8> {
        self.peers.get(peer).map_or_else(Vec::new, |p| {
            (0..MAX_BINS).filter(|&b| p.bins[usize::from(b)].active).collect()
        })
    }

    /// A peer connected: ask for its cursors, then start syncing the bins it should serve.
    pub fn add_peer(&mut self, now: Instant, peer: P, overlay: Address) {
        let po = self.overlay.proximity(&overlay);
        let sync =
            PeerSync { overlay, po, cursors: Worker::Idle, known: None, bins: [IDLE_BIN; 32] };
        self.peers.insert(peer, sync);
        self.request_cursors(now, peer);
    }

    /// The peer is gone: its streams and held pages are dropped without recording anything, and
    /// pages of other peers that skipped chunks wanted from it are fetched again.
    pub fn remove_peer(&mut self, now: Instant, peer: P) {
        self.peers.remove(&peer);
        let in_flight = &mut self.in_flight;
        self.held.retain(|page, held| {
            let keep = held.peer != peer;
            if !keep {
                in_flight.forget(*page);
            }
            keep
        });
        let gone: Vec<StreamId> =
            self.streams.iter().filter(|(_, s)| s.peer == peer).map(|(id, _)| *id).collect();
        self.streams.retain(|_, s| s.peer != peer);
        self.in_flight.release(&gone);
        self.settle_held(now);
    }

    /// Recomputes which bins to sync from whom for a new storage radius.
    pub fn set_storage_radius(&mut self, now: Instant, radius: u8) {
        self.radius = radius;
        let peers: Vec<P> = self.peers.keys().copied().collect();
        for peer in peers {
            self.recalc(now, peer);
        }
    }

    /// Pauses or resumes requesting pages, e.g. while a foreground transfer wants the link.
    /// Pages under way finish; their bins then wait, idle, and resume where they stopped.
    pub fn set_paused(&mut self, now: Instant, paused: bool) {
        let resumed = self.paused && !paused;
        self.paused = paused;
        if !resumed {
            return;
        }
        let mut idle = Vec::new();
        for (peer, sync) in &self.peers {
            for (bin, b) in (0u8..).zip(&sync.bins).filter(|(_, b)| b.active) {
                for (worker, live) in [(b.historical, false), (b.live, true)] {
                    if worker == Worker::Idle {
                        idle.push((*peer, bin, live));
                    }
                }
            }
        }
        for (peer, bin, live) in idle {
            self.next_page(now, peer, bin, live, 0);
        }
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Pauses and resets every page under way, for a foreground transfer that wants the link
    /// now: a page is up to [`Config::max_page`] chunks per worker, two workers per bin and
    /// peer, so pages left to finish go on competing with it for megabytes. [`Self::set_paused`]
    /// with `false` asks them again from where their intervals stop.
    pub fn yield_now(&mut self, now: Instant) {
        self.set_paused(now, true);
        let pages: Vec<StreamId> = self
            .streams
            .iter()
            .filter(|(_, out)| matches!(out.task, Task::Page { .. }))
            .map(|(id, _)| *id)
            .collect();
        self.stats.pages_yielded += pages.len() as u64;
        for stream in pages {
            self.drop_stream(now, stream, Worker::Idle);
        }
    }

    /// Bytes read from an outbound `stream`. `have` says which offered chunks are already stored.
    pub fn handle_data(
        &mut self,
        now: Instant,
        stream: StreamId,
        data: &[u8],
        have: &impl ChunkPresence,
    ) {
        self.handle_bytes(now, stream, Bytes::copy_from_slice(data), have);
    }

    /// As [`Puller::handle_data`], keeping `data`: delivered chunks share its buffer instead of a
    /// copy.
    pub fn handle_bytes(
        &mut self,
        now: Instant,
        stream: StreamId,
        data: Bytes,
        have: &impl ChunkPresence,
    ) {
        let Some(out) = self.streams.get_mut(&stream) else { return };
        out.decoder.extend_bytes(data);
        loop {
            let Some(out) = self.streams.get_mut(&stream) else { return };
            match out.decoder.next_frame() {
                Ok(Some(frame)) => {
                    self.stats.messages_received += 1;
                    self.stats.bytes_received += frame.len() as u64;
                    self.handle_frame(now, stream, frame, have);
                }
                Ok(None) => return,
                Err(e) => return self.fail(now, stream, Some(e.into())),
            }
        }
    }

    /// The server finished writing `stream` before the exchange was over.
    pub fn handle_stream_finished(&mut self, now: Instant, stream: StreamId) {
        let Some(out) = self.streams.get(&stream) else { return };
        let error = out.decoder.finish().err().map(PullError::from);
        self.fail(now, stream, error);
    }

    /// `stream` could not be opened, was reset, or its connection closed.
    pub fn handle_stream_failed(&mut self, now: Instant, stream: StreamId) {
        self.fail(now, stream, None);
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        let expired: Vec<StreamId> = self
            .streams
            .iter()
            .filter(|(_, s)| s.deadline.is_some_and(|d| d <= now))
            .map(|(id, _)| *id)
            .collect();
        for stream in expired {
            self.stats.timeouts += 1;
            self.fail(now, stream, None);
        }
        let peers: Vec<P> = self.peers.keys().copied().collect();
        for peer in peers {
            self.retry_due(now, peer);
        }
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        let deadlines = self.streams.values().filter_map(|s| s.deadline);
        let retries = self.peers.values().flat_map(|p| {
            let bins = p.bins.iter().flat_map(|b| [b.historical, b.live]);
            std::iter::once(p.cursors).chain(bins).filter_map(|w| match w {
                Worker::RetryAt(at) => Some(at),
                _ => None,
            })
        });
        deadlines.chain(retries).min()
    }

    pub fn poll_transmit(&mut self) -> Option<Transmit<P>> {
        self.transmits.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<PullerEvent<P>> {
        self.events.pop_front()
    }

    fn request_cursors(&mut self, now: Instant, peer: P) {
        let stream = self.open(peer, Protocol::Cursors, Task::Cursors);
        if let Some(out) = self.streams.get_mut(&stream) {
            out.deadline = Some(now + self.config.stream_timeout);
        }
        if let Some(p) = self.peers.get_mut(&peer) {
            p.cursors = Worker::Streaming(stream);
        }
        self.send(now, stream, &Syn {});
        self.push(peer, stream, StreamAction::Finish);
    }

    fn handle_frame(
        &mut self,
        now: Instant,
        stream: StreamId,
        frame: Bytes,
        have: &impl ChunkPresence,
    ) {
        let Some(out) = self.streams.get(&stream) else { return };
        let result = match &out.task {
            Task::Cursors => message::decode::<Ack>(frame)
                .map_err(PullError::from)
                .and_then(|ack| self.handle_ack(now, stream, ack)),
            Task::Page { state: PageState::AwaitOffer, .. } => message::decode::<Offer>(frame)
                .map_err(PullError::from)
                .and_then(|offer| self.handle_offer(now, stream, offer, have)),
            Task::Page { state: PageState::AwaitDeliveries { .. }, .. } => match out.protocol {
                Protocol::PullsyncBatched => self.handle_batch(stream, frame),
                _ => message::decode::<Delivery>(frame)
                    .map_err(PullError::from)
                    .and_then(|d| self.handle_delivery(stream, d)),
            }
            .map(|()| self.after_deliveries(now, stream)),
        };
        if let Err(e) = result {
            self.fail(now, stream, Some(e));
        }
    }

    fn handle_ack(&mut self, now: Instant, stream: StreamId, ack: Ack) -> Result<(), PullError> {
        if ack.cursors.len() != usize::from(MAX_BINS) {
            return Err(PullError::CursorCount(ack.cursors.len()));
        }
        let Some(peer) = self.close(stream) else { return Ok(()) };
        let Some(sync) = self.peers.get_mut(&peer) else { return Ok(()) };
        sync.cursors = Worker::Done;
        sync.known = Some(ack.cursors);
        let overlay = sync.overlay;
        let reset = match self.store.epoch(&overlay) {
            Ok(epoch) if epoch == Some(ack.epoch) => Ok(()),
            Ok(_) => self.store.reset_peer(&overlay, ack.epoch),
            Err(e) => Err(e),
        };
        match reset {
            Ok(()) => self.recalc(now, peer),
            Err(error) => {
                self.events.push_back(PullerEvent::StoreFailed { peer, bin: 0, error });
                self.retry_cursors_later(now, peer);
            }
        }
        Ok(())
    }

    /// Starts and stops bins: a neighbour (proximity at least the radius) serves every bin from
    /// the radius up; a peer at most [`MAX_PO_DELTA`] below the radius serves only its own bin.
    fn recalc(&mut self, now: Instant, peer: P) {
        let radius = self.radius;
        let Some(sync) = self.peers.get(&peer) else { return };
        let Some(cursors) = sync.known.clone() else { return };
        let po = sync.po;
        let wanted = |bin: u8| {
            if po >= radius {
                bin >= radius
            } else {
                radius - po <= MAX_PO_DELTA && bin == po
            }
        };
        for bin in 0..MAX_BINS {
            let active = sync_bin(&self.peers, &peer, bin).active;
            match (wanted(bin), active) {
                (true, false) => self.start_bin(now, peer, bin, cursors[usize::from(bin)]),
                (false, true) => self.stop_bin(now, peer, bin),
                _ => {}
            }
        }
    }

    fn start_bin(&mut self, now: Instant, peer: P, bin: u8, cursor: u64) {
        let Some(b) = self.bin_mut(peer, bin) else { return };
        *b = BinSync {
            active: true,
            cursor,
            historical: if cursor > 0 { Worker::Idle } else { Worker::Done },
            live: Worker::Idle,
            live_start: cursor + 1,
        };
        self.next_historical(now, peer, bin, 0);
        self.next_live(now, peer, bin, 0);
    }

    fn stop_bin(&mut self, now: Instant, peer: P, bin: u8) {
        let Some(b) = self.bin_mut(peer, bin) else { return };
        let workers = [b.historical, b.live];
        *b = IDLE_BIN;
        let mut gone = Vec::new();
        for w in workers {
            match w {
                Worker::Streaming(stream) => {
                    self.streams.remove(&stream);
                    self.push(peer, stream, StreamAction::Reset);
                    gone.push(stream);
                }
                Worker::Held(page) => {
                    self.held.remove(&page);
                    self.in_flight.forget(page);
                }
                _ => {}
            }
        }
        self.in_flight.release(&gone);
        self.settle_held(now);
    }

    /// Requests the first gap in the intervals, until historical sync reaches the cursor.
    fn next_historical(&mut self, now: Instant, peer: P, bin: u8, refetch: u8) {
        let Some(sync) = self.peers.get(&peer) else { return };
        let b = sync.bins[usize::from(bin)];
        if !b.active || b.historical == Worker::Done {
            return;
        }
        match self.store.next_missing(&sync.overlay, bin) {
            Ok(start) if start > b.cursor => self.set_worker(peer, bin, false, Worker::Done),
            Ok(start) => self.open_page(now, peer, bin, false, start, refetch),
            Err(error) => {
                self.events.push_back(PullerEvent::StoreFailed { peer, bin, error });
                self.set_worker(peer, bin, false, Worker::RetryAt(now + self.config.retry_delay));
            }
        }
    }

    fn next_live(&mut self, now: Instant, peer: P, bin: u8, refetch: u8) {
        let Some(b) = self.bin_mut(peer, bin) else { return };
        if !b.active {
            return;
        }
        let start = b.live_start;
        self.open_page(now, peer, bin, true, start, refetch);
    }

    /// Opens a page stream and makes it the worker's; a Get that cannot be sent retries later.
    /// While paused the worker stays idle instead, until [`Puller::set_paused`] resumes it.
    fn open_page(&mut self, now: Instant, peer: P, bin: u8, live: bool, start: u64, refetch: u8) {
        if self.paused {
            return self.set_worker(peer, bin, live, Worker::Idle);
        }
        let protocol = match self.config.delivery {
            DeliveryMode::Streamed => Protocol::Pullsync,
            DeliveryMode::Batched => Protocol::PullsyncBatched,
        };
        let task = Task::Page { bin, live, start, refetch, state: PageState::AwaitOffer };
        let stream = self.open(peer, protocol, task);
        self.set_worker(peer, bin, live, Worker::Streaming(stream));
        self.send(now, stream, &Get { bin: i32::from(bin), start });
    }

    /// Starts the worker's next page: the live worker from its start, the historical one from
    /// the first gap in the intervals.
    fn next_page(&mut self, now: Instant, peer: P, bin: u8, live: bool, refetch: u8) {
        self.set_worker(peer, bin, live, Worker::Idle);
        match live {
            true => self.next_live(now, peer, bin, refetch),
            false => self.next_historical(now, peer, bin, refetch),
        }
    }

    /// Drops `stream`; a protocol `error` is reported as misbehaviour. The stream's bin retries
    /// after the retry delay; pages that skipped chunks wanted on it are fetched again now.
    fn fail(&mut self, now: Instant, stream: StreamId, error: Option<PullError>) {
        let Some(out) = self.streams.get(&stream) else { return };
        let peer = out.peer;
        if let Some(error) = error {
            self.stats.misbehaviours += 1;
            self.events.push_back(PullerEvent::Misbehaved { peer, error });
        }
        self.drop_stream(now, stream, Worker::RetryAt(now + self.config.retry_delay));
    }

    /// Resets `stream`; its page's worker becomes `then`. Chunks it delivered are stored, and
    /// its interval is not recorded, so the page asked again later wants only what is missing.
    fn drop_stream(&mut self, now: Instant, stream: StreamId, then: Worker) {
        let Some(out) = self.streams.remove(&stream) else { return };
        let peer = out.peer;
        self.push(peer, stream, StreamAction::Reset);
        match out.task {
            Task::Cursors => self.retry_cursors_later(now, peer),
            Task::Page { bin, live, .. } => self.set_worker(peer, bin, live, then),
        }
        self.in_flight.release(&[stream]);
        self.settle_held(now);
    }

    fn retry_cursors_later(&mut self, now: Instant, peer: P) {
        let retry = now + self.config.retry_delay;
        if let Some(p) = self.peers.get_mut(&peer) {
            p.cursors = Worker::RetryAt(retry);
        }
    }

    fn retry_due(&mut self, now: Instant, peer: P) {
        let Some(sync) = self.peers.get(&peer) else { return };
        let due = |w: Worker| matches!(w, Worker::RetryAt(at) if at <= now);
        if due(sync.cursors) {
            return self.request_cursors(now, peer);
        }
        let bins: Vec<(u8, bool, bool)> = (0..MAX_BINS)
            .map(|bin| (bin, sync.bins[usize::from(bin)]))
            .filter(|(_, b)| due(b.historical) || due(b.live))
            .map(|(bin, b)| (bin, due(b.historical), due(b.live)))
            .collect();
        for (bin, historical, live) in bins {
            if historical {
                self.next_page(now, peer, bin, false, 0);
            }
            if live {
                self.next_page(now, peer, bin, true, 0);
            }
        }
    }

    fn page_of(&self, stream: StreamId) -> (u64, u8) {
        match self.streams.get(&stream).map(|s| &s.task) {
            Some(Task::Page { start, refetch, .. }) => (*start, *refetch),
            _ => (0, 0),
        }
    }

    fn bin_mut(&mut self, peer: P, bin: u8) -> Option<&mut BinSync> {
        self.peers.get_mut(&peer).and_then(|p| p.bins.get_mut(usize::from(bin)))
    }

    fn set_worker(&mut self, peer: P, bin: u8, live: bool, worker: Worker) {
        if let Some(b) = self.bin_mut(peer, bin) {
            match live {
                true => b.live = worker,
                false => b.historical = worker,
            }
        }
    }
}

fn sync_bin<P: Eq + Hash>(peers: &HashMap<P, PeerSync>, peer: &P, bin: u8) -> BinSync {
    peers.get(peer).map_or(IDLE_BIN, |p| p.bins[usize::from(bin)])
}
