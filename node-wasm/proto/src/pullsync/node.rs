//! The puller and the server behind one front: what the libp2p glue and the simulator drive.

use std::collections::VecDeque;
use std::fmt::Debug;
use std::hash::Hash;

use web_time::Instant;

use super::{
    ChunkPresence, Config, IntervalStore, IntervalStoreError, ProvideError, PullError, Puller,
    PullerEvent, PullerStats, ReserveIndex, ServeError, Server, ServerEvent, ServerStats,
    StreamAction, StreamEvent, StreamId, StreamKey, Transmit,
};
use crate::swarm::{Address, Chunk, ChunkRef};
use crate::Core;

/// How a peer broke the protocol.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Misbehaviour {
    /// As a server to our puller.
    #[error("as a server: {0}")]
    Serving(PullError),
    /// As a puller of our server.
    #[error("as a puller: {0}")]
    Pulling(ServeError),
}

impl Misbehaviour {
    /// Whether the peer should be disconnected for it. Opening more streams than allowed is not
    /// worth it: a peer that reconnects before its old connection is seen closed briefly has both
    /// connections' streams open. That stream is reset, and the peer retries it later.
    pub fn disconnects(&self) -> bool {
        !matches!(self, Misbehaviour::Pulling(ServeError::TooManyStreams))
    }
}

/// Everything the node reports, in one stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<P> {
    /// A verified chunk to store; then tell the server with [`Node::handle_reserve_changed`]
    /// (once per batch of stored chunks is enough). Emitted before the interval that covers it
    /// is recorded.
    Chunk { peer: P, bin: u8, chunk: Chunk },
    /// A page completed and `start..=end` of `bin` is recorded as synced from `peer`.
    IntervalSynced { peer: P, bin: u8, start: u64, end: u64, live: bool },
    /// Read these chunks from storage and hand them, in this order, to [`Node::provide_chunks`]
    /// (`None` for one that is gone).
    ChunksWanted { peer: P, stream: StreamId, chunks: Vec<ChunkRef> },
    /// The peer broke the protocol; the stream that carried it is reset. Disconnect the peer if
    /// [`Misbehaviour::disconnects`] says so.
    Misbehaved { peer: P, error: Misbehaviour },
    /// The interval store failed; the bin retries later.
    IntervalStoreFailed { peer: P, bin: u8, error: IntervalStoreError },
}

/// Pull-sync in both directions for one node: a [`Puller`] syncing from peers and a [`Server`]
/// serving this node's reserve, with the reserve's index (`R`) and the synced intervals (`I`).
///
/// The glue stores [`Event::Chunk`]s in its chunk store and the reserve index (which may be the
/// same thing, as [`MemoryReserve`](super::MemoryReserve) is), and answers
/// [`Event::ChunksWanted`] from the store.
pub struct Node<P, I, R> {
    puller: Puller<P, I>,
    server: Server<P>,
    reserve: R,
    /// Bytes the glue has not yet written to sockets; deliveries wait while it is over
    /// `max_backlog`.
    backlog: usize,
    max_backlog: usize,
    /// Stream actions the node itself decided on, sent before the cores' own.
    transmits: VecDeque<Transmit<P>>,
}

impl<P, I, R> Node<P, I, R>
where
    P: Copy + Ord + Hash + Debug,
    I: IntervalStore,
    R: ReserveIndex + ChunkPresence,
{
    /// The node at `overlay`, keeping synced intervals in `intervals` and serving `reserve`.
    pub fn new(config: Config, overlay: Address, intervals: I, reserve: R) -> Self {
        Node {
            puller: Puller::new(config.clone(), overlay, intervals),
            max_backlog: config.max_backlog,
            server: Server::new(config),
            reserve,
            backlog: 0,
            transmits: VecDeque::new(),
        }
    }

    pub fn puller(&self) -> &Puller<P, I> {
        &self.puller
    }

    pub fn server(&self) -> &Server<P> {
        &self.server
    }

    pub fn puller_stats(&self) -> PullerStats {
        self.puller.stats()
    }

    pub fn server_stats(&self) -> ServerStats {
        self.server.stats()
    }

    pub fn reserve(&self) -> &R {
        &self.reserve
    }

    /// The reserve, to store chunks in. Tell the server with
    /// [`Node::handle_reserve_changed`] afterwards.
    pub fn reserve_mut(&mut self) -> &mut R {
        &mut self.reserve
    }

    pub fn intervals(&self) -> &I {
        self.puller.store()
    }

    pub fn intervals_mut(&mut self) -> &mut I {
        self.puller.store_mut()
    }

    pub fn storage_radius(&self) -> u8 {
        self.puller.storage_radius()
    }

    /// Changes which bins are synced from whom and which offered chunks are wanted.
    pub fn set_storage_radius(&mut self, now: Instant, radius: u8) {
        self.puller.set_storage_radius(now, radius);
    }

    /// Pauses or resumes the puller's page requests (serving goes on); see [`Puller::set_paused`].
    pub fn set_paused(&mut self, now: Instant, paused: bool) {
        self.puller.set_paused(now, paused);
    }

    /// Pauses the puller and resets its pages under way (serving goes on); see
    /// [`Puller::yield_now`].
    pub fn yield_now(&mut self, now: Instant) {
        self.puller.yield_now(now);
    }

    /// Bins currently synced from `peer`.
    pub fn syncing_bins(&self, peer: &P) -> Vec<u8> {
        self.puller.syncing_bins(peer)
    }

    /// New chunks are in the reserve: live long polls in their bins may now offer them.
    pub fn handle_reserve_changed(&mut self, now: Instant) {
        self.server.handle_reserve_changed(now, &self.reserve);
    }

    /// The chunks asked for by [`Event::ChunksWanted`], in the order asked.
    pub fn provide_chunks(
        &mut self,
        peer: P,
        stream: StreamId,
        chunks: Vec<Option<Chunk>>,
    ) -> Result<(), ProvideError> {
        self.server.provide_chunks(peer, stream, chunks)
    }

    /// How many bytes the glue holds that sockets have not taken yet. Above
    /// [`Config::max_backlog`] no more deliveries are encoded, so that a slow socket keeps whole
    /// pages in the store rather than in memory as frames.
    pub fn set_backlog(&mut self, bytes: usize) {
        self.backlog = bytes;
    }

    /// The backlog last given with [`Node::set_backlog`].
    pub fn backlog(&self) -> usize {
        self.backlog
    }

    fn inbound(&mut self, now: Instant, peer: P, id: StreamId, event: StreamEvent) {
        match event {
            StreamEvent::Opened(protocol) => self.server.handle_stream_opened(peer, id, protocol),
            StreamEvent::Data(data) => self.server.handle_bytes(now, peer, id, data, &self.reserve),
            StreamEvent::Finished => {
                self.server.handle_stream_finished(peer, id);
                // A request the peer abandoned gets no answer: close our side too.
                if !self.server.has_stream(peer, id) {
                    let (stream, action) = (StreamKey::Inbound(id), StreamAction::Finish);
                    self.transmits.push_back(Transmit { peer, stream, action });
                }
            }
            StreamEvent::Reset => self.server.handle_stream_reset(peer, id),
        }
    }

    fn outbound(&mut self, now: Instant, id: StreamId, event: StreamEvent) {
        match event {
            StreamEvent::Opened(_) => {}
            StreamEvent::Data(data) => self.puller.handle_bytes(now, id, data, &self.reserve),
            StreamEvent::Finished => self.puller.handle_stream_finished(now, id),
            StreamEvent::Reset => self.puller.handle_stream_failed(now, id),
        }
    }
}

impl<P, I, R> Core for Node<P, I, R>
where
    P: Copy + Ord + Hash + Debug,
    I: IntervalStore,
    R: ReserveIndex + ChunkPresence,
{
    type Peer = P;
    type PeerInfo = Address;
    type Input = (StreamKey, StreamEvent);
    type Transmit = Transmit<P>;
    type Event = Event<P>;

    /// Starts syncing from the peer at `overlay`.
    fn peer_connected(&mut self, now: Instant, peer: P, overlay: Address) {
        self.puller.add_peer(now, peer, overlay);
    }

    fn peer_disconnected(&mut self, now: Instant, peer: P) {
        self.puller.remove_peer(now, peer);
        self.server.handle_peer_disconnected(peer);
    }

    fn handle_input(&mut self, now: Instant, peer: P, (stream, event): (StreamKey, StreamEvent)) {
        match stream {
            StreamKey::Inbound(id) => self.inbound(now, peer, id, event),
            StreamKey::Outbound(id) => self.outbound(now, id, event),
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.puller.handle_timeout(now);
        self.server.handle_timeout(now, &self.reserve);
    }

    /// The puller's requests first, then the server's answers; deliveries only while the
    /// backlog allows.
    fn poll_transmit(&mut self, now: Instant) -> Option<Transmit<P>> {
        if let Some(t) = self.transmits.pop_front() {
            return Some(t);
        }
        if let Some(t) = self.puller.poll_transmit() {
            return Some(t);
        }
        if self.backlog >= self.max_backlog {
            return None;
        }
        self.server.poll_transmit(now)
    }

    fn poll_event(&mut self) -> Option<Event<P>> {
        if let Some(event) = self.puller.poll_event() {
            return Some(match event {
                PullerEvent::Chunk { peer, bin, chunk } => Event::Chunk { peer, bin, chunk },
                PullerEvent::IntervalSynced { peer, bin, start, end, live } => {
                    Event::IntervalSynced { peer, bin, start, end, live }
                }
                PullerEvent::Misbehaved { peer, error } => {
                    Event::Misbehaved { peer, error: Misbehaviour::Serving(error) }
                }
                PullerEvent::StoreFailed { peer, bin, error } => {
                    Event::IntervalStoreFailed { peer, bin, error }
                }
            });
        }
        self.server.poll_event().map(|event| match event {
            ServerEvent::ChunksWanted { peer, stream, chunks } => {
                Event::ChunksWanted { peer, stream, chunks }
            }
            ServerEvent::Misbehaved { peer, error, .. } => {
                Event::Misbehaved { peer, error: Misbehaviour::Pulling(error) }
            }
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        [self.puller.poll_timeout(), self.server.poll_timeout()].into_iter().flatten().min()
    }
}
