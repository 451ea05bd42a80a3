//! Bitswap's part of the adapter: tracks fetches, answers the core's block loads from the store,
//! stores verified blocks, and routes each message to one of the peer's connections.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use cid::Cid;
use libp2p::PeerId;

use super::config::Config;
use super::event::{Event, Misbehaviour};
use super::streams::{BitswapStreams, Outgoing, StreamsConfig, StreamsReport};
use crate::net::adapter::{Ctx, Glue, Origin};
use crate::store::{BlockStore, StoreError};
use syncscope_proto::bitswap::{self, Node, ProtocolVersion, SessionId, Transmit};
use syncscope_proto::Core;

/// Store work in flight and what it was for.
pub enum Task {
    /// Block data the server asked for with [`bitswap::Event::Load`].
    Serve { cid: Cid, result: Result<Option<Bytes>, StoreError> },
    /// A block a fetch wants, found in the index.
    Local { fetch: SessionId, cid: Cid, result: Result<Option<Bytes>, StoreError> },
    /// A verified block put into the store.
    Stored { cid: Cid, data: Bytes, result: Result<(), StoreError> },
}

#[derive(Debug, Default)]
pub(super) struct Fetch {
    /// Everything not delivered yet.
    pub(super) pending: HashSet<Cid>,
}

/// Who waits for a block being stored.
#[derive(Debug, Default)]
pub(super) struct Storing {
    fetches: Vec<SessionId>,
    pub(super) added: bool,
}

/// What a connection is to Bitswap.
#[derive(Debug, Default)]
pub struct Connection {
    /// The version its outbound stream negotiated.
    version: Option<ProtocolVersion>,
    /// It cannot carry Bitswap (unsupported, or its stream kept failing).
    dead: bool,
}

pub struct BitswapGlue<S> {
    pub(super) store: Arc<S>,
    streams: StreamsConfig,
    max_inbound_streams: usize,
    /// Oldest first: waiting wants are handed out in that order.
    pub(super) fetches: BTreeMap<SessionId, Fetch>,
    pub(super) storing: HashMap<Cid, Storing>,
    pub(super) store_reads_in_flight: usize,
    pub(super) store_failures: u64,
}

impl<S: BlockStore> BitswapGlue<S> {
    pub(super) fn new(config: &Config, store: S) -> Self {
        Self {
            store: Arc::new(store),
            streams: StreamsConfig {
                versions: config.versions.clone().into(),
                idle_close: config.idle_stream_close,
                max_message_size: config.bitswap.max_message_size,
            },
            max_inbound_streams: config.max_inbound_streams,
            fetches: BTreeMap::new(),
            storing: HashMap::new(),
            store_reads_in_flight: 0,
            store_failures: 0,
        }
    }

    /// Adds `cids` to `fetch`: blocks being stored or in the index are delivered from here, the
    /// rest are wanted from the network.
    pub(super) fn want(
        &mut self,
        ctx: &mut Ctx<Self>,
        fetch: SessionId,
        cids: impl IntoIterator<Item = Cid>,
    ) {
        let Some(f) = self.fetches.get_mut(&fetch) else { return };
        let mut network = Vec::new();
        for cid in cids {
            if !f.pending.insert(cid) {
                continue;
            }
            if let Some(storing) = self.storing.get_mut(&cid) {
                // Received or added a moment ago: it is reported once stored.
                storing.fetches.push(fetch);
            } else if ctx.core.server().has_block(&cid) {
                let store = self.store.clone();
                self.store_reads_in_flight += 1;
                ctx.spawn(async move { Task::Local { fetch, cid, result: store.get(&cid).await } });
            } else {
                network.push(cid);
            }
        }
        if f.pending.is_empty() {
            ctx.emit(Event::FetchDone { fetch });
        }
        ctx.core.want(ctx.now, fetch, network);
    }

    /// Puts a verified block into the store unless it is already on its way there; `wait`
    /// records who waits for it.
    pub(super) fn store_block(
        &mut self,
        ctx: &mut Ctx<Self>,
        cid: Cid,
        data: Bytes,
        wait: impl FnOnce(&mut Storing),
    ) {
        let entry = self.storing.entry(cid);
        let first = matches!(entry, Entry::Vacant(_));
        wait(entry.or_default());
        if first {
            let store = self.store.clone();
            ctx.spawn(async move {
                let result = store.put(cid, data.clone()).await;
                Task::Stored { cid, data, result }
            });
        }
    }

    fn read_result(
        &mut self,
        ctx: &mut Ctx<Self>,
        cid: Cid,
        result: Result<Option<Bytes>, StoreError>,
    ) -> Option<Bytes> {
        self.store_reads_in_flight -= 1;
        result.unwrap_or_else(|error| {
            self.store_failed(ctx, cid, error, Vec::new());
            None
        })
    }

    /// `fetches` waited for `cid` to be stored: it was not, so it is not reported to them.
    fn store_failed(
        &mut self,
        ctx: &mut Ctx<Self>,
        cid: Cid,
        error: StoreError,
        fetches: Vec<SessionId>,
    ) {
        tracing::warn!(%cid, %error, "bitswap store failed");
        self.store_failures += 1;
        ctx.emit(Event::StoreFailed { cid, error, fetches });
    }

    /// A block reached `fetch`: reported once, and the fetch is done when nothing is pending.
    fn deliver(
        &mut self,
        ctx: &mut Ctx<Self>,
        fetch: SessionId,
        cid: Cid,
        data: Bytes,
        from_store: bool,
    ) {
        let Some(f) = self.fetches.get_mut(&fetch) else { return };
        if !f.pending.remove(&cid) {
            return;
        }
        let done = f.pending.is_empty();
        ctx.emit(Event::Block { fetch, cid, data, from_store });
        if done {
            ctx.emit(Event::FetchDone { fetch });
        }
    }

    fn stored(
        &mut self,
        ctx: &mut Ctx<Self>,
        cid: Cid,
        data: Bytes,
        result: Result<(), StoreError>,
    ) {
        let storing = self.storing.remove(&cid).unwrap_or_default();
        if let Err(error) = result {
            return self.store_failed(ctx, cid, error, storing.fetches);
        }
        ctx.core.add_block(cid, data.len());
        if storing.added {
            ctx.emit(Event::BlockAdded { cid });
        }
        // A block this node added itself (a CAR's, say) was not fetched, even if a fetch waited
        // for its put.
        for fetch in storing.fetches {
            self.deliver(ctx, fetch, cid, data.clone(), storing.added);
        }
    }
}

impl<S: BlockStore> Glue for BitswapGlue<S> {
    const PROTOCOL: &'static str = "bitswap";
    /// Answers in flight on a lost connection are gone both ways, and a client never asks a peer
    /// twice for one want: the peer starts afresh on the connections left, as the other end
    /// (seeing the same connection close) does with us.
    const RESTART_ON_LOST_CONNECTION: bool = true;

    type Core = Node<PeerId>;
    type Streams = BitswapStreams;
    type Conn = Connection;
    type Task = Task;
    type Event = Event;
    type Misbehaviour = Misbehaviour;

    fn new_connection(&mut self, _: PeerId) -> (Connection, BitswapStreams) {
        (Connection::default(), BitswapStreams::new(self.streams.clone()))
    }

    fn max_inbound_streams(&self) -> usize {
        self.max_inbound_streams
    }

    /// A peer speaks Bitswap once one of its connections negotiated an outbound stream.
    fn peer_info(
        &self,
        _: PeerId,
        connections: &mut dyn Iterator<Item = &Connection>,
    ) -> Option<ProtocolVersion> {
        connections.filter(|c| !c.dead).find_map(|c| c.version)
    }

    fn on_peer(&mut self, ctx: &mut Ctx<Self>, peer: PeerId, version: Option<&ProtocolVersion>) {
        ctx.emit(match version {
            Some(&version) => Event::PeerConnected { peer, version },
            None => Event::PeerDisconnected { peer },
        });
    }

    fn on_streams_event(&mut self, ctx: &mut Ctx<Self>, from: Origin, event: StreamsReport) {
        let (now, Origin { peer, conn }) = (ctx.now, from);
        match event {
            StreamsReport::Ready(version) => {
                if let Some(c) = ctx.connection_mut(conn) {
                    c.version = Some(version);
                }
                ctx.refresh(peer);
            }
            StreamsReport::OutboundFailed => {
                if let Some(c) = ctx.connection_mut(conn) {
                    c.dead = true;
                }
                ctx.refresh(peer);
            }
            StreamsReport::Message(msg) => ctx.core.handle_input(now, peer, msg),
            StreamsReport::Progress => ctx.core.handle_progress(now, peer),
            StreamsReport::Sent { server_msgs } => {
                for _ in 0..server_msgs {
                    ctx.core.handle_sent(peer);
                }
            }
            StreamsReport::Misbehaved(error) => ctx.misbehaved(peer, error.into()),
        }
    }

    /// Hands a message to the peer's newest live connection, which queues it while its stream
    /// is still negotiating.
    fn route(&mut self, ctx: &mut Ctx<Self>, t: Transmit<PeerId>) {
        let chosen = ctx.connections(t.peer).find(|(_, c)| !c.dead);
        let Some(conn) = chosen.map(|(id, _)| id) else {
            if t.from_server {
                ctx.core.handle_sent(t.peer);
            }
            return;
        };
        ctx.send(conn, Outgoing { msg: t.msg, from_server: t.from_server });
    }

    fn on_core_event(&mut self, ctx: &mut Ctx<Self>, event: bitswap::Event<PeerId>) {
        match event {
            bitswap::Event::Block { session, block } => {
                let cid = block.cid();
                if ctx.core.server().has_block(&cid) {
                    self.deliver(ctx, session, cid, block.into_data(), false);
                    return;
                }
                let data = block.into_data();
                ctx.emit(Event::Verified { fetch: session, cid, data: data.clone() });
                self.store_block(ctx, cid, data, |s| s.fetches.push(session));
            }
            bitswap::Event::Load(cid) => {
                let store = self.store.clone();
                self.store_reads_in_flight += 1;
                ctx.spawn(async move { Task::Serve { cid, result: store.get(&cid).await } });
            }
            bitswap::Event::Misbehaved { peer, error } => ctx.misbehaved(peer, error.into()),
        }
    }

    fn on_task(&mut self, ctx: &mut Ctx<Self>, task: Task) {
        match task {
            Task::Serve { cid, result } => {
                let data = self.read_result(ctx, cid, result);
                ctx.core.block_loaded(cid, data);
            }
            Task::Local { fetch, cid, result } => match self.read_result(ctx, cid, result) {
                Some(data) => self.deliver(ctx, fetch, cid, data, true),
                // The index was wrong: ask the network after all.
                None => ctx.core.want(ctx.now, fetch, [cid]),
            },
            Task::Stored { cid, data, result } => self.stored(ctx, cid, data, result),
        }
    }

    fn busy(&self) -> bool {
        self.fetches.values().any(|f| !f.pending.is_empty())
    }

    fn misbehaved(peer: PeerId, error: Misbehaviour) -> Event {
        Event::Misbehaved { peer, error }
    }
}
