//! The node-wide side of pull-sync: owns the sans-IO [`Node`] (and through it the chunk store),
//! routes its stream actions to connection handlers and what they read back to it, drives its
//! timer, stores delivered chunks and serves wanted ones.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use libp2p::core::transport::PortUse;
use libp2p::core::Endpoint;
use libp2p::swarm::{
    CloseConnection, ConnectionClosed, ConnectionDenied, ConnectionId, FromSwarm, NetworkBehaviour,
    NotifyHandler, THandler, THandlerInEvent, THandlerOutEvent, ToSwarm,
};
use libp2p::{Multiaddr, PeerId};
use web_time::Instant;

use super::handler::{Command, Handler, HandlerEvent, Shared, WriteQueue};
use super::overlay::overlay_of;
use crate::metrics::{PullsyncCounters, PullsyncMetrics, Timeseries};
use crate::net::core_timer::CoreTimer;
use crate::store::{ChunkStore, StoreError};
use syncscope_proto::pullsync::{
    self, IntervalStore, IntervalStoreError, Misbehaviour, Node, PullerStats, ServerStats,
    StreamAction, StreamEvent, StreamId, StreamKey, Transmit,
};
use syncscope_proto::swarm::{Address, Chunk, ChunkRef};
use syncscope_proto::Core;

/// Settings of the pull-sync glue: the cores' [`pullsync::Config`] plus what the glue decides.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    pub protocol: pullsync::Config,
    /// Chunks whose proximity to this node is below the radius are neither wanted nor synced.
    pub storage_radius: u8,
    /// Most bytes a connection takes from a stream in one read, and the buffer each connection
    /// keeps for it. Reading whatever yamux holds in one go (up to a window) means fewer hops to
    /// the behaviour and window updates sooner: 64 KiB reads ran at under 40,000 chunks/s where
    /// 1 MiB reads ran at over 70,000 on the throughput benchmark.
    pub read_buffer: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            protocol: pullsync::Config::default(),
            storage_radius: 0,
            read_buffer: 1024 * 1024,
        }
    }
}

impl Config {
    pub fn with_protocol(mut self, protocol: pullsync::Config) -> Self {
        self.protocol = protocol;
        self
    }

    pub fn with_storage_radius(mut self, radius: u8) -> Self {
        self.storage_radius = radius;
        self
    }

    pub fn with_read_buffer(mut self, bytes: usize) -> Self {
        self.read_buffer = bytes.max(1);
        self
    }
}

#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// A delivered chunk was verified and stored (it was not already there).
    ChunkStored { peer: PeerId, bin: u8, address: Address },
    /// `start..=end` of the peer's `bin` is synced and recorded.
    IntervalSynced { peer: PeerId, bin: u8, start: u64, end: u64, live: bool },
    /// A peer wanted `count` chunks from our reserve; they are being delivered.
    ChunksWanted { peer: PeerId, count: usize },
    /// The peer broke the protocol: its stream was reset and the connection that carried it is
    /// being closed (except for opening more streams than allowed, where only the stream is
    /// refused).
    Misbehaved { peer: PeerId, error: Misbehaviour },
    /// A verified chunk could not be stored.
    StoreFailed { peer: PeerId, address: Address, error: StoreError },
    /// The interval store failed; the bin retries later.
    IntervalStoreFailed { peer: PeerId, bin: u8, error: IntervalStoreError },
}

/// A snapshot of the counters, cheap to take for the UI.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    pub puller: PullerStats,
    pub server: ServerStats,
    pub counters: PullsyncCounters,
    /// Connected peers.
    pub peers: usize,
    /// Delivered chunks stored for the first time.
    pub chunks_stored: u64,
    /// Delivered chunks that were already stored (two peers delivering one chunk at once).
    pub chunks_duplicate: u64,
    pub store_failures: u64,
    /// Peers disconnected for breaking the protocol.
    pub peers_disconnected: u64,
    /// Chunks per second delivered in the last complete second.
    pub delivery_rate: f64,
    /// Frames waiting to be written to sockets.
    pub queued_bytes: usize,
}

struct Connection {
    peer: PeerId,
    queue: Arc<WriteQueue>,
}

/// Pull-sync over libp2p, standalone so that any swarm can compose it with `#[derive(
/// NetworkBehaviour)]`. See the module docs for what the node driver does with it.
pub struct Behaviour<S, I> {
    config: Config,
    overlay: Address,
    node: Node<PeerId, I, S>,
    overlays: HashMap<PeerId, Address>,
    /// Open connections, established or not yet reported.
    connections: HashMap<ConnectionId, Connection>,
    /// Established connections per peer, oldest first; new streams go on the first.
    peers: HashMap<PeerId, Vec<ConnectionId>>,
    /// Which connection carries each stream.
    routes: HashMap<StreamKey, (PeerId, ConnectionId)>,
    shared: Arc<Shared>,
    /// The connection whose handler event is being handled: misbehaviour found while handling
    /// it closes that connection.
    input: Option<ConnectionId>,
    actions: VecDeque<ToSwarm<Event, Command>>,
    /// A chunk was stored since the server last looked at the reserve.
    reserve_changed: bool,
    timer: CoreTimer,
    waker: Option<Waker>,
    metrics: PullsyncMetrics,
    stats: Stats,
}

impl<S: ChunkStore, I: IntervalStore> Behaviour<S, I> {
    /// Pull-sync for the node at `overlay`, keeping chunks in `store` and synced intervals in
    /// `intervals`.
    pub fn new(config: Config, overlay: Address, store: S, intervals: I) -> Self {
        let now = Instant::now();
        let mut node = Node::new(config.protocol.clone(), overlay, intervals, store);
        node.set_storage_radius(now, config.storage_radius);
        Behaviour {
            node,
            config,
            overlay,
            overlays: HashMap::new(),
            connections: HashMap::new(),
            peers: HashMap::new(),
            routes: HashMap::new(),
            shared: Arc::new(Shared::default()),
            input: None,
            actions: VecDeque::new(),
            reserve_changed: false,
            timer: CoreTimer::default(),
            waker: None,
            metrics: PullsyncMetrics::new(now),
            stats: Stats::default(),
        }
    }

    pub fn overlay(&self) -> Address {
        self.overlay
    }

    /// Sets the overlay address of `peer`, overriding the one derived from its peer ID
    /// ([`overlay_of`]). Call it before the peer connects: bins are chosen on connection.
    pub fn set_peer_overlay(&mut self, peer: PeerId, overlay: Address) {
        self.overlays.insert(peer, overlay);
    }

    /// The overlay address this node uses for `peer`.
    pub fn peer_overlay(&self, peer: &PeerId) -> Address {
        self.overlays.get(peer).copied().unwrap_or_else(|| overlay_of(peer))
    }

    pub fn storage_radius(&self) -> u8 {
        self.node.storage_radius()
    }

    /// Changes which bins are synced from whom and which offered chunks are wanted.
    pub fn set_storage_radius(&mut self, radius: u8) {
        self.node.set_storage_radius(Instant::now(), radius);
        self.wake();
    }

    /// Stores a chunk that this node created or received outside pull-sync (an upload), so that
    /// it is offered to pullers.
    pub fn store_chunk(&mut self, chunk: Chunk) -> Result<bool, StoreError> {
        let stored = self.node.reserve_mut().put(chunk)?;
        if stored {
            self.reserve_changed = true;
            self.wake();
        }
        Ok(stored)
    }

    pub fn store(&self) -> &S {
        self.node.reserve()
    }

    /// The chunk store itself. Chunks put here directly are offered only once
    /// [`Behaviour::store_chunk`] or another stored chunk next tells the server.
    pub fn store_mut(&mut self) -> &mut S {
        self.node.reserve_mut()
    }

    pub fn intervals(&self) -> &I {
        self.node.intervals()
    }

    pub fn intervals_mut(&mut self) -> &mut I {
        self.node.intervals_mut()
    }

    /// Bins currently synced from `peer`.
    pub fn syncing_bins(&self, peer: &PeerId) -> Vec<u8> {
        self.node.syncing_bins(peer)
    }

    pub fn stats(&self) -> Stats {
        let (puller, server) = (self.node.puller_stats(), self.node.server_stats());
        let queued_bytes = self.queued_bytes();
        let now = Instant::now();
        Stats {
            puller,
            server,
            counters: PullsyncCounters::from_stats(&puller, &server),
            peers: self.peers.len(),
            delivery_rate: self.metrics.delivery_rate().last_complete(now).map_or(0.0, |s| s.rate),
            queued_bytes,
            ..self.stats
        }
    }

    /// Chunks delivered and verified per second, in 1 s samples.
    pub fn delivery_rate(&self) -> &Timeseries {
        self.metrics.delivery_rate()
    }

    fn wake(&mut self) {
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }

    fn queued_bytes(&self) -> usize {
        self.connections.values().map(|c| c.queue.queued()).sum()
    }

    fn on_handler_event(&mut self, peer: PeerId, conn: ConnectionId, event: HandlerEvent) {
        let now = Instant::now();
        let (stream, input) = match event {
            HandlerEvent::InboundOpened { stream, protocol } => {
                let key = StreamKey::Inbound(stream);
                self.routes.insert(key, (peer, conn));
                (key, StreamEvent::Opened(protocol))
            }
            HandlerEvent::Data { stream, data } => (stream, StreamEvent::Data(data)),
            HandlerEvent::Finished { stream } => (stream, StreamEvent::Finished),
            HandlerEvent::Failed { stream } => {
                self.routes.remove(&stream);
                (stream, StreamEvent::Reset)
            }
            HandlerEvent::Closed { stream } => {
                self.routes.remove(&stream);
                return;
            }
        };
        self.node.handle_input(now, peer, (stream, input));
        self.input = Some(conn);
        self.drain(now);
        self.input = None;
    }

    /// Drains the node until it has nothing left, in the order the core contract gives:
    /// transmits, then events. Deliveries are encoded only while sockets keep up.
    fn drain(&mut self, now: Instant) {
        loop {
            let mut progress = false;
            self.node.set_backlog(self.queued_bytes());
            while let Some(t) = self.node.poll_transmit(now) {
                progress = true;
                self.route(now, t);
                self.node.set_backlog(self.queued_bytes());
            }
            while let Some(event) = self.node.poll_event() {
                progress = true;
                self.on_node_event(now, event);
            }
            if std::mem::take(&mut self.reserve_changed) {
                progress = true;
                self.node.handle_reserve_changed(now);
            }
            if !progress {
                return;
            }
        }
    }

    fn stream_failed(&mut self, now: Instant, peer: PeerId, stream: StreamKey) {
        self.node.handle_input(now, peer, (stream, StreamEvent::Reset));
    }

    fn route(&mut self, now: Instant, t: Transmit<PeerId>) {
        let key = t.stream;
        match t.action {
            StreamAction::Open(protocol) => {
                let conn = self.peers.get(&t.peer).and_then(|conns| conns.first()).copied();
                match conn {
                    Some(conn) => {
                        self.routes.insert(key, (t.peer, conn));
                        self.send(conn, key, StreamAction::Open(protocol));
                    }
                    None => self.stream_failed(now, t.peer, key),
                }
            }
            StreamAction::Reset => {
                if let Some((_, conn)) = self.routes.remove(&key) {
                    self.send(conn, key, StreamAction::Reset);
                }
            }
            action => {
                if let Some(&(_, conn)) = self.routes.get(&key) {
                    self.send(conn, key, action);
                }
            }
        }
    }

    fn send(&mut self, conn: ConnectionId, stream: StreamKey, action: StreamAction) {
        let Some(peer_id) = self.connections.get(&conn).map(|c| c.peer) else { return };
        self.actions.push_back(ToSwarm::NotifyHandler {
            peer_id,
            handler: NotifyHandler::One(conn),
            event: Command { stream, action },
        });
    }

    fn on_node_event(&mut self, now: Instant, event: pullsync::Event<PeerId>) {
        let event = match event {
            pullsync::Event::Chunk { peer, bin, chunk } => {
                self.metrics.record_delivery(now);
                let address = chunk.address();
                match self.node.reserve_mut().put(chunk) {
                    Ok(true) => {
                        self.stats.chunks_stored += 1;
                        self.reserve_changed = true;
                        Event::ChunkStored { peer, bin, address }
                    }
                    Ok(false) => {
                        self.stats.chunks_duplicate += 1;
                        return;
                    }
                    Err(error) => {
                        self.stats.store_failures += 1;
                        Event::StoreFailed { peer, address, error }
                    }
                }
            }
            pullsync::Event::IntervalSynced { peer, bin, start, end, live } => {
                Event::IntervalSynced { peer, bin, start, end, live }
            }
            pullsync::Event::ChunksWanted { peer, stream, chunks } => {
                self.provide(peer, stream, &chunks);
                Event::ChunksWanted { peer, count: chunks.len() }
            }
            pullsync::Event::Misbehaved { peer, error } if !error.disconnects() => {
                tracing::debug!(%peer, %error, "pull-sync stream refused");
                Event::Misbehaved { peer, error }
            }
            pullsync::Event::Misbehaved { peer, error } => return self.misbehaved(peer, error),
            pullsync::Event::IntervalStoreFailed { peer, bin, error } => {
                Event::IntervalStoreFailed { peer, bin, error }
            }
        };
        self.actions.push_back(ToSwarm::GenerateEvent(event));
    }

    /// Reads the chunks a peer wants and hands them to the server.
    fn provide(&mut self, peer: PeerId, stream: StreamId, chunks: &[ChunkRef]) {
        let found = chunks
            .iter()
            .map(|c| {
                self.node.reserve().get(c).unwrap_or_else(|error| {
                    tracing::warn!(%error, address = %c.address, "wanted chunk unreadable");
                    None
                })
            })
            .collect();
        if let Err(error) = self.node.provide_chunks(peer, stream, found) {
            tracing::warn!(%error, "wanted chunks not provided");
        }
    }

    fn misbehaved(&mut self, peer: PeerId, error: Misbehaviour) {
        tracing::info!(%peer, %error, "pull-sync peer misbehaved; disconnecting");
        if self.peers.contains_key(&peer) {
            self.stats.peers_disconnected += 1;
        }
        // Only the connection that carried the offence: a stream cut by a lost connection reads
        // as truncated, and must not take down the peer's new connection with it.
        let connection = self.input.map_or(CloseConnection::All, CloseConnection::One);
        self.actions.push_back(ToSwarm::CloseConnection { peer_id: peer, connection });
        self.actions.push_back(ToSwarm::GenerateEvent(Event::Misbehaved { peer, error }));
    }

    fn new_handler(&mut self, peer: PeerId, conn: ConnectionId) -> Handler {
        let queue = Arc::new(WriteQueue::default());
        self.connections.insert(conn, Connection { peer, queue: queue.clone() });
        Handler::new(queue, self.shared.clone(), self.config.read_buffer)
    }

    fn connection_established(&mut self, peer: PeerId, conn: ConnectionId) {
        let conns = self.peers.entry(peer).or_default();
        conns.push(conn);
        if conns.len() == 1 {
            let overlay = self.peer_overlay(&peer);
            let now = Instant::now();
            self.node.peer_connected(now, peer, overlay);
            self.drain(now);
        }
    }

    fn connection_closed(&mut self, peer: PeerId, conn: ConnectionId) {
        let now = Instant::now();
        self.connections.remove(&conn);
        let lost: Vec<StreamKey> =
            self.routes.iter().filter(|(_, (_, c))| *c == conn).map(|(k, _)| *k).collect();
        for key in lost {
            self.routes.remove(&key);
            self.stream_failed(now, peer, key);
        }
        if let Some(conns) = self.peers.get_mut(&peer) {
            conns.retain(|c| *c != conn);
            if conns.is_empty() {
                self.peers.remove(&peer);
                self.node.peer_disconnected(now, peer);
            }
        }
        self.drain(now);
    }

    /// Fires the cores' timers once due and re-arms the timer for the next deadline.
    fn poll_timer(&mut self, cx: &mut Context<'_>) {
        loop {
            let now = Instant::now();
            if self.timer.take_due(now) {
                self.node.handle_timeout(now);
                self.drain(now);
            }
            // Deadlines move later with every delivery (stream timeouts).
            self.timer.set_at_most(now, self.node.poll_timeout());
            if self.timer.poll(cx).is_pending() {
                return;
            }
        }
    }
}

impl<S, I> NetworkBehaviour for Behaviour<S, I>
where
    S: ChunkStore + Send + 'static,
    I: IntervalStore + Send + 'static,
{
    type ConnectionHandler = Handler;
    type ToSwarm = Event;

    fn handle_established_inbound_connection(
        &mut self,
        conn: ConnectionId,
        peer: PeerId,
        _: &Multiaddr,
        _: &Multiaddr,
    ) -> Result<THandler<Self>, ConnectionDenied> {
        Ok(self.new_handler(peer, conn))
    }

    fn handle_established_outbound_connection(
        &mut self,
        conn: ConnectionId,
        peer: PeerId,
        _: &Multiaddr,
        _: Endpoint,
        _: PortUse,
    ) -> Result<THandler<Self>, ConnectionDenied> {
        Ok(self.new_handler(peer, conn))
    }

    fn on_swarm_event(&mut self, event: FromSwarm) {
        match event {
            FromSwarm::ConnectionEstablished(e) => {
                self.connection_established(e.peer_id, e.connection_id)
            }
            FromSwarm::ConnectionClosed(ConnectionClosed { peer_id, connection_id, .. }) => {
                self.connection_closed(peer_id, connection_id)
            }
            _ => {}
        }
    }

    fn on_connection_handler_event(
        &mut self,
        peer: PeerId,
        conn: ConnectionId,
        event: THandlerOutEvent<Self>,
    ) {
        self.on_handler_event(peer, conn, event);
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<ToSwarm<Event, THandlerInEvent<Self>>> {
        self.shared.writable.register(cx.waker());
        if let Some(action) = self.actions.pop_front() {
            return Poll::Ready(action);
        }
        self.drain(Instant::now());
        self.poll_timer(cx);
        match self.actions.pop_front() {
            Some(action) => Poll::Ready(action),
            None => {
                self.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}
