//! The node-wide side of Bitswap: owns the sans-IO [`Node`] and the [`BlockStore`], routes the
//! node's messages to connections and what they read back to the node, drives its timer, answers
//! its block loads, stores verified blocks, tracks fetches, and disconnects peers that misbehave.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use cid::Cid;
use futures::stream::FuturesUnordered;
use futures::StreamExt;
use libp2p::core::transport::PortUse;
use libp2p::core::Endpoint;
use libp2p::swarm::{
    CloseConnection, ConnectionClosed, ConnectionDenied, ConnectionId, FromSwarm, NetworkBehaviour,
    NotifyHandler, THandler, THandlerInEvent, THandlerOutEvent, ToSwarm,
};
use libp2p::{Multiaddr, PeerId};
use web_time::Instant;

use super::handler::{Command, Handler, HandlerConfig, HandlerEvent, StreamError};
use crate::cond_send::BoxFuture;
use crate::net::core_timer::CoreTimer;
use crate::store::{BlockStore, StoreError};
use syncscope_proto::bitswap::{
    self, verify, Counters, Message, Node, ProtocolVersion, SessionId, Transmit, VerifyError,
};
use syncscope_proto::Core;

/// Settings of the Bitswap glue: the core's [`bitswap::Config`] plus what the glue decides.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    pub bitswap: bitswap::Config,
    /// Versions offered on outbound streams (newest first) and accepted on inbound ones.
    pub versions: Vec<ProtocolVersion>,
    /// Inbound streams read at once per connection; more are refused.
    pub max_inbound_streams: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            bitswap: bitswap::Config::default(),
            versions: ProtocolVersion::ALL.to_vec(),
            max_inbound_streams: 32,
        }
    }
}

impl Config {
    pub fn new(bitswap: bitswap::Config) -> Self {
        Self { bitswap, ..Self::default() }
    }

    /// The pre-1.2 client of [`bitswap::ClientMode::Legacy`] speaking at most 1.1.0, as the
    /// benchmark's legacy rows do.
    pub fn legacy() -> Self {
        Self::new(bitswap::Config::new(bitswap::ClientMode::Legacy))
            .with_versions(vec![ProtocolVersion::V1_1_0])
    }

    /// Versions in order of preference; they are sorted newest first.
    pub fn with_versions(mut self, mut versions: Vec<ProtocolVersion>) -> Self {
        versions.sort_unstable_by(|a, b| b.cmp(a));
        versions.dedup();
        self.versions = versions;
        self
    }

    pub fn with_max_inbound_streams(mut self, streams: usize) -> Self {
        self.max_inbound_streams = streams;
        self
    }
}

/// How a peer broke the protocol.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Misbehaviour {
    /// What the core found: an invalid block, too many unsolicited ones.
    #[error(transparent)]
    Protocol(#[from] bitswap::Misbehaviour),
    /// An oversized or malformed frame or message.
    #[error(transparent)]
    Stream(#[from] StreamError),
}

/// What the behaviour reports to the node driver.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// The peer speaks Bitswap at `version`: it takes part in fetches and is served.
    PeerConnected { peer: PeerId, version: ProtocolVersion },
    /// The peer is gone, or its connections can no longer carry Bitswap.
    PeerDisconnected { peer: PeerId },
    /// A verified block `fetch` asked for, now in the store (unless [`Event::StoreFailed`] said
    /// otherwise for it).
    Block { fetch: SessionId, cid: Cid, data: Bytes },
    /// Every block `fetch` asked for so far has arrived. The fetch stays open for more
    /// ([`Behaviour::fetch_more`]) until [`Behaviour::close`].
    FetchDone { fetch: SessionId },
    /// A block given to [`Behaviour::add_block`] is stored and served.
    BlockAdded { cid: Cid },
    /// The peer broke the protocol: its stream was reset and it is being disconnected.
    Misbehaved { peer: PeerId, error: Misbehaviour },
    /// The store failed to read or keep `cid`.
    StoreFailed { cid: Cid, error: StoreError },
}

/// Why a fetch could not be extended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    #[error("no open fetch {0:?}")]
    Unknown(SessionId),
}

/// A snapshot of the counters, cheap to take for the UI.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// The core's counters: messages, bytes, blocks, duplicates, unsolicited, invalid, timeouts.
    pub counters: Counters,
    /// Peers that speak Bitswap with us.
    pub peers: usize,
    pub open_fetches: usize,
    /// Blocks wanted by open fetches and not received yet.
    pub wanted_blocks: usize,
    /// Of those, the ones handed to the client (at most [`Config::max_active_wants`]).
    pub active_wants: usize,
    pub store_reads_in_flight: usize,
    pub store_writes_in_flight: usize,
    pub store_failures: u64,
    /// Peers disconnected for breaking the protocol.
    pub peers_disconnected: u64,
    /// Inbound streams refused because a connection had too many open.
    pub streams_refused: u64,
}

/// Store work in flight and what it was for.
enum Task {
    /// Block data the server asked for with [`bitswap::Event::Load`].
    Serve { cid: Cid, result: Result<Option<Bytes>, StoreError> },
    /// A block a fetch wants, found in the index.
    Local { fetch: SessionId, cid: Cid, result: Result<Option<Bytes>, StoreError> },
    /// A verified block put into the store.
    Stored { cid: Cid, data: Bytes, result: Result<bool, StoreError> },
}

#[derive(Debug, Default)]
struct Fetch {
    /// Everything not delivered yet.
    pending: HashSet<Cid>,
}

/// Who waits for a block being stored.
#[derive(Debug, Default)]
struct Storing {
    fetches: Vec<SessionId>,
    added: bool,
}

#[derive(Debug)]
struct Connection {
    peer: PeerId,
    /// The version its outbound stream negotiated.
    version: Option<ProtocolVersion>,
    /// It cannot carry Bitswap (unsupported, or its stream kept failing).
    dead: bool,
}

#[derive(Debug, Default)]
struct Peer {
    /// Oldest first.
    connections: Vec<ConnectionId>,
    /// Told to the node with `peer_connected`.
    connected: bool,
    /// Being disconnected for misbehaving: nothing more it sends is read.
    closing: bool,
}

/// Timer rounds per poll: a deadline the core keeps in the past cannot spin the task.
const MAX_TIMER_ROUNDS: usize = 16;

/// Bitswap over libp2p, standalone so that any swarm can compose it with
/// `#[derive(NetworkBehaviour)]`. See the module docs for what the node driver does with it.
pub struct Behaviour<S> {
    handler_config: HandlerConfig,
    node: Node<PeerId>,
    store: Arc<S>,
    connections: HashMap<ConnectionId, Connection>,
    peers: HashMap<PeerId, Peer>,
    /// Oldest first: waiting wants are handed out in that order.
    fetches: BTreeMap<SessionId, Fetch>,
    storing: HashMap<Cid, Storing>,
    tasks: FuturesUnordered<BoxFuture<'static, Task>>,
    actions: VecDeque<ToSwarm<Event, Command>>,
    fetching: bool,
    timer: CoreTimer,
    waker: Option<Waker>,
    stats: Stats,
}

impl<S: BlockStore> Behaviour<S> {
    /// Bitswap keeping its blocks in `store`; blocks are served once added with
    /// [`Behaviour::add_block`].
    pub fn new(config: Config, store: S) -> Self {
        let handler_config = HandlerConfig {
            versions: config.versions.clone().into(),
            max_message_size: config.bitswap.max_message_size,
            max_inbound_streams: config.max_inbound_streams,
        };
        Self {
            node: Node::new(config.bitswap.clone()),
            handler_config,
            store: Arc::new(store),
            connections: HashMap::new(),
            peers: HashMap::new(),
            fetches: BTreeMap::new(),
            storing: HashMap::new(),
            tasks: FuturesUnordered::new(),
            actions: VecDeque::new(),
            fetching: false,
            timer: CoreTimer::default(),
            waker: None,
            stats: Stats::default(),
        }
    }

    pub fn store(&self) -> &Arc<S> {
        &self.store
    }

    /// The sans-IO core, to read its client and server state.
    pub fn node(&self) -> &Node<PeerId> {
        &self.node
    }

    /// Starts fetching `cids` in a new session. Each block arrives as one [`Event::Block`]
    /// (blocks already held come from the store), then [`Event::FetchDone`].
    pub fn fetch(&mut self, cids: impl IntoIterator<Item = Cid>) -> SessionId {
        let now = Instant::now();
        let fetch = self.node.new_session(now);
        self.fetches.insert(fetch, Fetch::default());
        self.want(now, fetch, cids);
        fetch
    }

    /// Adds `cids` to an open fetch, which keeps what its session learned about peers.
    pub fn fetch_more(
        &mut self,
        fetch: SessionId,
        cids: impl IntoIterator<Item = Cid>,
    ) -> Result<(), FetchError> {
        if !self.fetches.contains_key(&fetch) {
            return Err(FetchError::Unknown(fetch));
        }
        self.want(Instant::now(), fetch, cids);
        Ok(())
    }

    /// Ends a fetch: what it still wants is cancelled, and the session is forgotten.
    pub fn close(&mut self, fetch: SessionId) {
        let now = Instant::now();
        if self.fetches.remove(&fetch).is_none() {
            return;
        }
        self.node.close_session(now, fetch);
        self.after_input(now);
    }

    /// Stores a block of this node's own and serves it. Refused if `data` is not what `cid`
    /// addresses. [`Event::BlockAdded`] follows once it is stored.
    pub fn add_block(&mut self, cid: Cid, data: Bytes) -> Result<(), VerifyError> {
        verify(&cid, &data)?;
        self.store_block(cid, data, |s| s.added = true);
        self.wake();
        Ok(())
    }

    /// Whether the node holds `cid`, as far as its index knows.
    pub fn has_block(&self, cid: &Cid) -> bool {
        self.node.server().has_block(cid)
    }

    pub fn stats(&self) -> Stats {
        Stats {
            counters: self.node.stats(),
            peers: self.peers.values().filter(|p| p.connected).count(),
            open_fetches: self.fetches.len(),
            wanted_blocks: self.fetches.values().map(|f| f.pending.len()).sum(),
            active_wants: self.node.active_wants(),
            store_writes_in_flight: self.storing.len(),
            ..self.stats
        }
    }

    pub fn peer_stats(&self, peer: PeerId) -> Counters {
        self.node.peer_stats(peer)
    }

    /// What this node received, in total and per peer.
    pub fn client_stats(&self) -> &bitswap::Stats<PeerId> {
        self.node.client_stats()
    }

    fn want(&mut self, now: Instant, fetch: SessionId, cids: impl IntoIterator<Item = Cid>) {
        let Some(f) = self.fetches.get_mut(&fetch) else { return };
        let mut network = Vec::new();
        for cid in cids {
            if !f.pending.insert(cid) {
                continue;
            }
            if let Some(storing) = self.storing.get_mut(&cid) {
                // Received or added a moment ago: it is reported once stored.
                storing.fetches.push(fetch);
            } else if self.node.server().has_block(&cid) {
                let store = self.store.clone();
                self.stats.store_reads_in_flight += 1;
                self.tasks.push(Box::pin(async move {
                    Task::Local { fetch, cid, result: store.get(&cid).await }
                }));
            } else {
                network.push(cid);
            }
        }
        if f.pending.is_empty() {
            self.actions.push_back(ToSwarm::GenerateEvent(Event::FetchDone { fetch }));
        }
        self.node.want(now, fetch, network);
        self.after_input(now);
    }

    /// Puts a verified block into the store unless it is already on its way there; `wait`
    /// records who waits for it.
    fn store_block(&mut self, cid: Cid, data: Bytes, wait: impl FnOnce(&mut Storing)) {
        let entry = self.storing.entry(cid);
        let first = matches!(entry, Entry::Vacant(_));
        wait(entry.or_default());
        if first {
            self.put(cid, data);
        }
    }

    fn put(&mut self, cid: Cid, data: Bytes) {
        let store = self.store.clone();
        self.tasks.push(Box::pin(async move {
            let result = store.put(cid, data.clone()).await;
            Task::Stored { cid, data, result }
        }));
    }

    fn wake(&mut self) {
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }

    fn after_input(&mut self, now: Instant) {
        self.drain(now);
        self.wake();
    }

    /// Drains the node in its contract's order: transmits, then events, until neither has more.
    /// Waiting wants go in first, as far as the window allows.
    fn drain(&mut self, now: Instant) {
        loop {
            let mut progress = false;
            while let Some(t) = self.node.poll_transmit(now) {
                progress = true;
                self.route(t);
            }
            while let Some(event) = self.node.poll_event() {
                progress = true;
                self.on_node_event(now, event);
            }
            if !progress {
                break;
            }
        }
        self.update_keep_alive();
    }

    /// Hands a message to the peer's connection: the oldest whose stream is negotiated, else the
    /// oldest still negotiating (it queues the message meanwhile).
    fn route(&mut self, t: Transmit<PeerId>) {
        let conns = self.peers.get(&t.peer).map(|p| p.connections.as_slice()).unwrap_or_default();
        let usable = |id: &&ConnectionId| self.connections.get(id).is_some_and(|c| !c.dead);
        let ready =
            |id: &&ConnectionId| self.connections.get(id).is_some_and(|c| c.version.is_some());
        let chosen =
            conns.iter().filter(usable).find(ready).or_else(|| conns.iter().find(usable)).copied();
        let Some(conn) = chosen else {
            if t.from_server {
                self.node.handle_sent(t.peer);
            }
            return;
        };
        self.actions.push_back(ToSwarm::NotifyHandler {
            peer_id: t.peer,
            handler: NotifyHandler::One(conn),
            event: Command::Send { msg: t.msg, from_server: t.from_server },
        });
    }

    fn on_node_event(&mut self, now: Instant, event: bitswap::Event<PeerId>) {
        match event {
            bitswap::Event::Block { session, block } => {
                if self.node.server().has_block(&block.cid) {
                    self.deliver(session, block.cid, block.data);
                    return;
                }
                self.store_block(block.cid, block.data, |s| s.fetches.push(session));
            }
            bitswap::Event::Load(cid) => {
                let store = self.store.clone();
                self.stats.store_reads_in_flight += 1;
                self.tasks.push(Box::pin(async move {
                    Task::Serve { cid, result: store.get(&cid).await }
                }));
            }
            bitswap::Event::Misbehaved { peer, error } => {
                self.misbehaved(now, peer, error.into());
            }
        }
    }

    fn on_task(&mut self, now: Instant, task: Task) {
        match task {
            Task::Serve { cid, result } => {
                self.stats.store_reads_in_flight -= 1;
                let data = self.read_result(cid, result);
                self.node.block_loaded(cid, data);
            }
            Task::Local { fetch, cid, result } => {
                self.stats.store_reads_in_flight -= 1;
                match self.read_result(cid, result) {
                    Some(data) => self.deliver(fetch, cid, data),
                    // The index was wrong: ask the network after all.
                    None => self.node.want(now, fetch, [cid]),
                }
            }
            Task::Stored { cid, data, result } => {
                let storing = self.storing.remove(&cid).unwrap_or_default();
                match result {
                    Ok(_) => {
                        self.node.add_block(cid, data.len());
                        if storing.added {
                            self.actions
                                .push_back(ToSwarm::GenerateEvent(Event::BlockAdded { cid }));
                        }
                    }
                    Err(error) => self.store_failed(cid, error),
                }
                for fetch in storing.fetches {
                    self.deliver(fetch, cid, data.clone());
                }
            }
        }
        self.drain(now);
    }

    fn read_result(
        &mut self,
        cid: Cid,
        result: Result<Option<Bytes>, StoreError>,
    ) -> Option<Bytes> {
        result.unwrap_or_else(|error| {
            self.store_failed(cid, error);
            None
        })
    }

    fn store_failed(&mut self, cid: Cid, error: StoreError) {
        tracing::warn!(%cid, %error, "bitswap store failed");
        self.stats.store_failures += 1;
        self.actions.push_back(ToSwarm::GenerateEvent(Event::StoreFailed { cid, error }));
    }

    /// A block reached `fetch`: reported once, and the fetch is done when nothing is pending.
    fn deliver(&mut self, fetch: SessionId, cid: Cid, data: Bytes) {
        let Some(f) = self.fetches.get_mut(&fetch) else { return };
        if !f.pending.remove(&cid) {
            return;
        }
        let done = f.pending.is_empty();
        self.actions.push_back(ToSwarm::GenerateEvent(Event::Block { fetch, cid, data }));
        if done {
            self.actions.push_back(ToSwarm::GenerateEvent(Event::FetchDone { fetch }));
        }
    }

    fn update_keep_alive(&mut self) {
        let fetching = self.fetches.values().any(|f| !f.pending.is_empty());
        if fetching == self.fetching {
            return;
        }
        self.fetching = fetching;
        for (id, c) in &self.connections {
            self.actions.push_back(ToSwarm::NotifyHandler {
                peer_id: c.peer,
                handler: NotifyHandler::One(*id),
                event: Command::KeepAlive(fetching),
            });
        }
    }

    fn misbehaved(&mut self, now: Instant, peer: PeerId, error: Misbehaviour) {
        let Some(p) = self.peers.get_mut(&peer) else { return };
        if std::mem::replace(&mut p.closing, true) {
            return;
        }
        tracing::info!(%peer, %error, "bitswap peer misbehaved; disconnecting");
        self.stats.peers_disconnected += 1;
        if std::mem::take(&mut p.connected) {
            self.node.peer_disconnected(now, peer);
            self.actions.push_back(ToSwarm::GenerateEvent(Event::PeerDisconnected { peer }));
        }
        self.actions.push_back(ToSwarm::CloseConnection {
            peer_id: peer,
            connection: CloseConnection::All,
        });
        self.actions.push_back(ToSwarm::GenerateEvent(Event::Misbehaved { peer, error }));
    }

    fn on_message(&mut self, now: Instant, peer: PeerId, msg: Message) {
        if self.peers.get(&peer).is_none_or(|p| p.closing) {
            return;
        }
        self.node.handle_message(now, peer, &msg);
    }

    fn on_handler_event(&mut self, peer: PeerId, conn: ConnectionId, event: HandlerEvent) {
        let now = Instant::now();
        match event {
            HandlerEvent::Ready(version) => {
                if let Some(c) = self.connections.get_mut(&conn) {
                    c.version = Some(version);
                }
                self.refresh_peer(now, peer);
            }
            HandlerEvent::Unsupported | HandlerEvent::OutboundFailed => {
                if let Some(c) = self.connections.get_mut(&conn) {
                    c.dead = true;
                }
                self.refresh_peer(now, peer);
            }
            HandlerEvent::Message(msg) => self.on_message(now, peer, msg),
            HandlerEvent::Progress => self.node.handle_progress(now, peer),
            HandlerEvent::Sent { server_msgs } => {
                for _ in 0..server_msgs {
                    self.node.handle_sent(peer);
                }
            }
            HandlerEvent::Misbehaved(error) => self.misbehaved(now, peer, error.into()),
            HandlerEvent::InboundRefused => self.stats.streams_refused += 1,
        }
        self.drain(now);
    }

    /// Tells the node whether `peer` speaks Bitswap, from the state of its connections.
    fn refresh_peer(&mut self, now: Instant, peer: PeerId) {
        let Some(p) = self.peers.get_mut(&peer) else { return };
        let version = p
            .connections
            .iter()
            .filter_map(|id| self.connections.get(id))
            .find(|c| !c.dead && c.version.is_some())
            .and_then(|c| c.version);
        match (p.connected, version) {
            (false, Some(version)) if !p.closing => {
                p.connected = true;
                self.node.peer_connected(now, peer, version);
                self.actions
                    .push_back(ToSwarm::GenerateEvent(Event::PeerConnected { peer, version }));
            }
            (true, None) => {
                p.connected = false;
                self.node.peer_disconnected(now, peer);
                self.actions.push_back(ToSwarm::GenerateEvent(Event::PeerDisconnected { peer }));
            }
            _ => {}
        }
    }

    fn new_handler(&mut self, peer: PeerId, conn: ConnectionId) -> Handler {
        self.connections.insert(conn, Connection { peer, version: None, dead: false });
        self.peers.entry(peer).or_default().connections.push(conn);
        Handler::new(self.handler_config.clone(), self.fetching)
    }

    fn connection_closed(&mut self, peer: PeerId, conn: ConnectionId) {
        let now = Instant::now();
        if self.connections.remove(&conn).is_none() {
            return;
        }
        let Some(p) = self.peers.get_mut(&peer) else { return };
        p.connections.retain(|c| *c != conn);
        if p.connections.is_empty() {
            let connected = p.connected;
            self.peers.remove(&peer);
            // Also forgets a ledger the server opened for a peer that never got ready.
            self.node.peer_disconnected(now, peer);
            if connected {
                self.actions.push_back(ToSwarm::GenerateEvent(Event::PeerDisconnected { peer }));
            }
        } else {
            // Answers in flight on the lost connection are gone, both ways, and a client never
            // asks a peer twice for one want: the peer starts afresh on the connections left, as
            // the other end (seeing the same connection close) does with us.
            if std::mem::take(&mut p.connected) {
                self.node.peer_disconnected(now, peer);
                self.actions.push_back(ToSwarm::GenerateEvent(Event::PeerDisconnected { peer }));
            }
            self.refresh_peer(now, peer);
        }
        self.drain(now);
    }

    /// Fires the node's timer once due and re-arms it for the next deadline.
    fn poll_timer(&mut self, cx: &mut Context<'_>) {
        for _ in 0..MAX_TIMER_ROUNDS {
            let now = Instant::now();
            if self.timer.take_due(now) {
                self.node.handle_timeout(now);
                self.drain(now);
            }
            self.timer.set(now, self.node.poll_timeout());
            if self.timer.poll(cx).is_pending() {
                return;
            }
        }
        cx.waker().wake_by_ref();
    }
}

impl<S: BlockStore> NetworkBehaviour for Behaviour<S> {
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
        if let FromSwarm::ConnectionClosed(ConnectionClosed { peer_id, connection_id, .. }) = event
        {
            self.connection_closed(peer_id, connection_id);
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
        loop {
            if let Some(action) = self.actions.pop_front() {
                return Poll::Ready(action);
            }
            // The timer may start store work and store work may move the timer: both until
            // neither has anything to do.
            self.poll_timer(cx);
            let mut progress = false;
            while let Poll::Ready(Some(task)) = self.tasks.poll_next_unpin(cx) {
                self.on_task(Instant::now(), task);
                progress = true;
            }
            if !progress && self.actions.is_empty() {
                self.waker = Some(cx.waker().clone());
                return Poll::Pending;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_offered_newest_first_once_each() {
        use ProtocolVersion::*;
        let config = Config::default().with_versions(vec![V1_0_0, V1_2_0, V1_0_0, Legacy]);
        assert_eq!(config.versions, [V1_2_0, V1_0_0, Legacy]);
        assert_eq!(Config::legacy().versions, [V1_1_0]);
        assert_eq!(Config::default().versions, ProtocolVersion::ALL);
    }
}
