//! Pull-sync's part of the adapter: routes each stream action to the connection that carries the
//! stream, stores delivered chunks, serves wanted ones, and tells the core how full the sockets
//! are.

use std::collections::HashMap;
use std::sync::Arc;
use std::task::Waker;

use libp2p::swarm::ConnectionId;
use libp2p::PeerId;

use super::config::Config;
use super::event::Event;
use super::overlay::overlay_of;
use super::streams::{PullsyncStreams, Shared, StreamCommand, StreamsReport, WriteQueue};
use crate::metrics::PullsyncMetrics;
use crate::net::adapter::{Ctx, Glue, Origin};
use crate::store::ChunkStore;
use syncscope_proto::pullsync::{
    self, IntervalStore, Misbehaviour, Node, StreamAction, StreamEvent, StreamId, StreamKey,
    Transmit,
};
use syncscope_proto::swarm::{Address, Chunk, ChunkRef};
use syncscope_proto::Core;

pub struct PullsyncGlue<S, I> {
    pub(super) config: Config,
    pub(super) overlay: Address,
    pub(super) overlays: HashMap<PeerId, Address>,
    /// Which connection carries each stream.
    routes: HashMap<StreamKey, ConnectionId>,
    shared: Arc<Shared>,
    /// Wakes the behaviour (through `shared`) when the store has written some chunks.
    store_waker: Waker,
    /// Pulling was paused by the node ([`super::Behaviour::set_paused`]).
    pub(super) paused: bool,
    /// Pulling waits for the store to write what it holds ([`ChunkStore::accepts_more`]).
    store_behind: bool,
    /// A chunk was stored since the server last looked at the reserve.
    pub(super) reserve_changed: bool,
    pub(super) metrics: PullsyncMetrics,
    pub(super) chunks_stored: u64,
    pub(super) chunks_duplicate: u64,
    pub(super) store_failures: u64,
    _stores: std::marker::PhantomData<fn() -> (S, I)>,
}

impl<S: ChunkStore + 'static, I: IntervalStore + 'static> PullsyncGlue<S, I> {
    pub(super) fn new(config: Config, overlay: Address, metrics: PullsyncMetrics) -> Self {
        let shared = Arc::new(Shared::default());
        Self {
            config,
            overlay,
            overlays: HashMap::new(),
            routes: HashMap::new(),
            store_waker: futures::task::waker(shared.clone()),
            shared,
            paused: false,
            store_behind: false,
            reserve_changed: false,
            metrics,
            chunks_stored: 0,
            chunks_duplicate: 0,
            store_failures: 0,
            _stores: std::marker::PhantomData,
        }
    }

    /// The overlay address this node uses for `peer`.
    pub(super) fn peer_overlay(&self, peer: &PeerId) -> Address {
        self.overlays.get(peer).copied().unwrap_or_else(|| overlay_of(peer))
    }

    /// The puller pulls while neither the node nor the store holds it back.
    pub(super) fn apply_pause(&self, ctx: &mut Ctx<Self>) {
        ctx.core.set_paused(ctx.now, self.paused || self.store_behind);
    }

    /// Pauses pulling while the store's write queue is full, and resumes it once it drained.
    fn follow_store(&mut self, ctx: &mut Ctx<Self>) -> bool {
        let behind = !ctx.core.reserve().accepts_more(&self.store_waker);
        if behind == self.store_behind {
            return false;
        }
        self.store_behind = behind;
        match behind {
            true => tracing::debug!("pull-sync waits for the store to write what it pulled"),
            false => tracing::debug!("pull-sync pulls again: the store caught up"),
        }
        self.apply_pause(ctx);
        true
    }

    fn stream_failed(ctx: &mut Ctx<Self>, peer: PeerId, stream: StreamKey) {
        ctx.core.handle_input(ctx.now, peer, (stream, StreamEvent::Reset));
    }

    fn chunk(
        &mut self,
        ctx: &mut Ctx<Self>,
        peer: PeerId,
        bin: u8,
        chunk: syncscope_proto::swarm::Chunk,
    ) -> Option<Event> {
        self.metrics.record_delivery(ctx.now);
        let address = chunk.address();
        match ctx.core.reserve_mut().put(chunk) {
            Ok(true) => {
                self.chunks_stored += 1;
                self.reserve_changed = true;
                Some(Event::ChunkStored { peer, bin, address })
            }
            Ok(false) => {
                self.chunks_duplicate += 1;
                None
            }
            Err(error) => {
                self.store_failures += 1;
                Some(Event::StoreFailed { peer, address, error })
            }
        }
    }

    /// Reads the chunks a peer wants, off the behaviour's poll; [`Glue::on_task`] hands them to
    /// the server.
    fn provide(ctx: &mut Ctx<Self>, peer: PeerId, stream: StreamId, chunks: &[ChunkRef]) {
        let read = ctx.core.reserve().read(chunks);
        let count = chunks.len();
        ctx.spawn(async move {
            let found = read.await.unwrap_or_else(|error| {
                tracing::warn!(%error, count, "wanted chunks unreadable");
                vec![None; count]
            });
            ChunksRead { peer, stream, found }
        });
    }
}

/// Chunks read for a peer's Want, `None` where one could not be read.
pub struct ChunksRead {
    peer: PeerId,
    stream: StreamId,
    found: Vec<Option<Chunk>>,
}

impl<S, I> Glue for PullsyncGlue<S, I>
where
    S: ChunkStore + 'static,
    I: IntervalStore + 'static,
{
    const PROTOCOL: &'static str = "pull-sync";
    /// Each stream is the core's own and fails alone with its connection
    /// ([`Glue::connection_closed`]); the peer's other streams go on.
    const RESTART_ON_LOST_CONNECTION: bool = false;

    type Core = Node<PeerId, I, S>;
    type Streams = PullsyncStreams;
    type Conn = Arc<WriteQueue>;
    type Task = ChunksRead;
    type Event = Event;
    type Misbehaviour = Misbehaviour;

    fn new_connection(&mut self, _: PeerId) -> (Arc<WriteQueue>, PullsyncStreams) {
        let queue = Arc::new(WriteQueue::default());
        let streams =
            PullsyncStreams::new(queue.clone(), self.shared.clone(), self.config.read_buffer);
        (queue, streams)
    }

    fn max_inbound_streams(&self) -> usize {
        self.config.max_inbound_streams
    }

    /// A peer is synced with from its first connection on.
    fn peer_info(
        &self,
        peer: PeerId,
        connections: &mut dyn Iterator<Item = &Arc<WriteQueue>>,
    ) -> Option<Address> {
        connections.next().map(|_| self.peer_overlay(&peer))
    }

    fn on_streams_event(&mut self, ctx: &mut Ctx<Self>, from: Origin, event: StreamsReport) {
        let Origin { peer, conn } = from;
        let (stream, input) = match event {
            StreamsReport::InboundOpened { stream, protocol } => {
                let key = StreamKey::Inbound(stream);
                self.routes.insert(key, conn);
                (key, StreamEvent::Opened(protocol))
            }
            StreamsReport::Data { stream, data } => (stream, StreamEvent::Data(data)),
            StreamsReport::Finished { stream } => (stream, StreamEvent::Finished),
            StreamsReport::Failed { stream } => {
                self.routes.remove(&stream);
                (stream, StreamEvent::Reset)
            }
            StreamsReport::Closed { stream } => {
                self.routes.remove(&stream);
                return;
            }
        };
        ctx.core.handle_input(ctx.now, peer, (stream, input));
    }

    fn route(&mut self, ctx: &mut Ctx<Self>, t: Transmit<PeerId>) {
        let key = t.stream;
        match t.action {
            StreamAction::Open(protocol) => {
                let newest = ctx.connections(t.peer).next().map(|(id, _)| id);
                match newest {
                    Some(conn) => {
                        self.routes.insert(key, conn);
                        ctx.send(
                            conn,
                            StreamCommand { stream: key, action: StreamAction::Open(protocol) },
                        );
                    }
                    None => Self::stream_failed(ctx, t.peer, key),
                }
            }
            StreamAction::Reset => {
                if let Some(conn) = self.routes.remove(&key) {
                    ctx.send(conn, StreamCommand { stream: key, action: StreamAction::Reset });
                }
            }
            action => {
                if let Some(&conn) = self.routes.get(&key) {
                    ctx.send(conn, StreamCommand { stream: key, action });
                }
            }
        }
    }

    fn on_core_event(&mut self, ctx: &mut Ctx<Self>, event: pullsync::Event<PeerId>) {
        let event = match event {
            pullsync::Event::Chunk { peer, bin, chunk } => {
                match self.chunk(ctx, peer, bin, chunk) {
                    Some(event) => event,
                    None => return,
                }
            }
            pullsync::Event::IntervalSynced { peer, bin, start, end, live } => {
                Event::IntervalSynced { peer, bin, start, end, live }
            }
            pullsync::Event::ChunksWanted { peer, stream, chunks } => {
                Self::provide(ctx, peer, stream, &chunks);
                Event::ChunksWanted { peer, count: chunks.len() }
            }
            pullsync::Event::Misbehaved { peer, error } if !error.disconnects() => {
                tracing::debug!(%peer, %error, "pull-sync stream refused");
                Event::Misbehaved { peer, error }
            }
            pullsync::Event::Misbehaved { peer, error } => return ctx.misbehaved(peer, error),
            pullsync::Event::IntervalStoreFailed { peer, bin, error } => {
                Event::IntervalStoreFailed { peer, bin, error }
            }
        };
        ctx.emit(event);
    }

    fn on_task(&mut self, ctx: &mut Ctx<Self>, ChunksRead { peer, stream, found }: ChunksRead) {
        if let Err(error) = ctx.core.provide_chunks(peer, stream, found) {
            tracing::warn!(%error, "wanted chunks not provided");
        }
    }

    /// Streams the connection carried fail; the core hears of each.
    fn connection_closed(&mut self, ctx: &mut Ctx<Self>, peer: PeerId, conn: ConnectionId) {
        let lost: Vec<StreamKey> =
            self.routes.iter().filter(|(_, c)| **c == conn).map(|(k, _)| *k).collect();
        for key in lost {
            self.routes.remove(&key);
            Self::stream_failed(ctx, peer, key);
        }
    }

    /// Deliveries are encoded only while sockets keep up.
    fn before_transmit(&mut self, ctx: &mut Ctx<Self>) {
        let queued = ctx.all_connections().map(|q| q.queued()).sum();
        ctx.core.set_backlog(queued);
    }

    /// One look at the reserve for every chunk stored since the last.
    fn settle(&mut self, ctx: &mut Ctx<Self>) -> bool {
        let changed = std::mem::take(&mut self.reserve_changed);
        if changed {
            ctx.core.handle_reserve_changed(ctx.now);
        }
        self.follow_store(ctx) || changed
    }

    fn register(&self, cx: &std::task::Context<'_>) {
        self.shared.writable.register(cx.waker());
    }

    fn misbehaved(peer: PeerId, error: Misbehaviour) -> Event {
        Event::Misbehaved { peer, error }
    }
}
