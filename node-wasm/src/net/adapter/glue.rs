//! What a protocol tells the adapter: the [`Glue`] trait, and the [`Ctx`] through which its code
//! reaches the core, the connections and the swarm.

use std::collections::{HashMap, VecDeque};
use std::fmt::{Debug, Display};
use std::future::Future;

use futures::stream::FuturesUnordered;
use libp2p::swarm::{ConnectionId, NotifyHandler, ToSwarm};
use libp2p::PeerId;
use web_time::Instant;

use super::handler::{Command, Streams};
use crate::cond_send::{BoxFuture, CondSend};
use syncscope_proto::Core;

/// A protocol's own part of the glue: its codecs (through [`Glue::Streams`]), its store tasks and
/// its routing. Everything else (connections, peers, the timer, waking, the inbound-stream cap,
/// disconnecting misbehaving peers) is the adapter's.
///
/// Every method with a [`Ctx`] may queue events, commands, store tasks and offences; the adapter
/// drains the core after each.
pub trait Glue: Sized + 'static {
    /// The protocol's name in logs.
    const PROTOCOL: &'static str;
    /// Whether a peer that loses one of several connections is started afresh on the rest
    /// (`peer_disconnected`, then `peer_connected`): for protocols whose answers in flight on the
    /// lost connection are gone and never asked for again. Otherwise the glue hears of the loss
    /// in [`Glue::connection_closed`] and the core keeps the peer.
    const RESTART_ON_LOST_CONNECTION: bool;

    type Core: Core<Peer = PeerId, PeerInfo: Clone>;
    type Streams: Streams;
    /// What the glue keeps per connection.
    type Conn: 'static;
    /// The result of a store task.
    type Task: 'static;
    /// What the behaviour reports to the swarm.
    type Event: Debug + Send + 'static;
    type Misbehaviour: Display;

    /// A connection to `peer` is being set up: its state and its streams.
    fn new_connection(&mut self, peer: PeerId) -> (Self::Conn, Self::Streams);
    /// Inbound streams a connection reads at once; more are refused.
    fn max_inbound_streams(&self) -> usize;
    /// What the core is told when `peer` becomes usable over `connections` (established, not
    /// closing, speaking the protocol, oldest first), or `None` while it is not.
    fn peer_info(
        &self,
        peer: PeerId,
        connections: &mut dyn Iterator<Item = &Self::Conn>,
    ) -> Option<<Self::Core as Core>::PeerInfo>;
    /// The core was just told that `peer` connected (`Some`) or disconnected (`None`).
    fn on_peer(
        &mut self,
        _ctx: &mut Ctx<Self>,
        _peer: PeerId,
        _info: Option<&<Self::Core as Core>::PeerInfo>,
    ) {
    }
    fn on_streams_event(
        &mut self,
        ctx: &mut Ctx<Self>,
        from: Origin,
        event: <Self::Streams as Streams>::Event,
    );
    /// Hands one of the core's transmits to a connection.
    fn route(&mut self, ctx: &mut Ctx<Self>, transmit: <Self::Core as Core>::Transmit);
    fn on_core_event(&mut self, ctx: &mut Ctx<Self>, event: <Self::Core as Core>::Event);
    fn on_task(&mut self, ctx: &mut Ctx<Self>, task: Self::Task);
    /// `conn` (no longer in the context) closed.
    fn connection_closed(&mut self, _ctx: &mut Ctx<Self>, _peer: PeerId, _conn: ConnectionId) {}
    /// Called before each `poll_transmit`: the place to tell the core how full the sockets are.
    fn before_transmit(&mut self, _ctx: &mut Ctx<Self>) {}
    /// Called once the core has no transmits or events left; returns whether it gave the core
    /// more input (batched work, such as one notice for many stored items).
    fn settle(&mut self, _ctx: &mut Ctx<Self>) -> bool {
        false
    }
    /// Whether the node is busy with this protocol: connections that carry it are kept open.
    fn busy(&self) -> bool {
        false
    }
    /// Registers `cx`'s waker with anything outside the behaviour that may give it work (a
    /// socket that drained).
    fn register(&self, _cx: &std::task::Context<'_>) {}
    /// The event that reports an offence; the peer is already being disconnected.
    fn misbehaved(peer: PeerId, error: Self::Misbehaviour) -> Self::Event;
}

/// Where a connection's report came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    pub peer: PeerId,
    pub conn: ConnectionId,
}

pub(super) type StreamsCommand<G> = <<G as Glue>::Streams as Streams>::Command;
pub(super) type Action<G> = ToSwarm<<G as Glue>::Event, Command<StreamsCommand<G>>>;

pub(super) struct Connection<C> {
    pub(super) peer: PeerId,
    pub(super) state: C,
    /// Being closed for an offence: nothing more it reports is read.
    pub(super) closing: bool,
    /// The remote speaks the protocol, as far as its identify and negotiation tell
    /// ([`super::HandlerEvent::RemoteSupport`]).
    pub(super) remote_supports: bool,
}

impl<C> Connection<C> {
    /// Whether the protocol may run on it.
    pub(super) fn usable(&self) -> bool {
        !self.closing && self.remote_supports
    }
}

#[derive(Debug, Default)]
pub(super) struct PeerConnections {
    /// Established, oldest first.
    pub(super) connections: Vec<ConnectionId>,
    /// Told to the core with `peer_connected`.
    pub(super) connected: bool,
}

/// Counters the adapter keeps for any protocol.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Peers the core knows as connected.
    pub peers: usize,
    /// Connections closed because their peer broke the protocol.
    pub peers_disconnected: u64,
    /// Inbound streams refused because a connection had too many open.
    pub streams_refused: u64,
    /// Connections whose remote turned out not to speak the protocol.
    pub unsupported_connections: u64,
}

/// The adapter's state that the glue works through.
pub(super) struct Link<G: Glue> {
    pub(super) connections: HashMap<ConnectionId, Connection<G::Conn>>,
    pub(super) peers: HashMap<PeerId, PeerConnections>,
    pub(super) actions: VecDeque<Action<G>>,
    pub(super) tasks: FuturesUnordered<BoxFuture<'static, G::Task>>,
    /// The connection whose report is being handled: an offence found meanwhile is its.
    pub(super) input: Option<ConnectionId>,
    pub(super) refresh: Vec<PeerId>,
    pub(super) offences: Vec<(PeerId, Option<ConnectionId>, G::Misbehaviour)>,
    pub(super) stats: LinkStats,
}

impl<G: Glue> Default for Link<G> {
    fn default() -> Self {
        Self {
            connections: HashMap::new(),
            peers: HashMap::new(),
            actions: VecDeque::new(),
            tasks: FuturesUnordered::new(),
            input: None,
            refresh: Vec::new(),
            offences: Vec::new(),
            stats: LinkStats::default(),
        }
    }
}

/// The core, the connections and the swarm, as the glue sees them during one call.
pub struct Ctx<'a, G: Glue> {
    pub now: Instant,
    pub core: &'a mut G::Core,
    pub(super) link: &'a mut Link<G>,
}

impl<G: Glue> Ctx<'_, G> {
    /// Reports `event` to the swarm.
    pub fn emit(&mut self, event: G::Event) {
        self.link.actions.push_back(ToSwarm::GenerateEvent(event));
    }

    /// Hands `command` to the streams of `conn`, if it is still open.
    pub fn send(&mut self, conn: ConnectionId, command: StreamsCommand<G>) {
        let Some(peer_id) = self.link.connections.get(&conn).map(|c| c.peer) else { return };
        self.link.actions.push_back(ToSwarm::NotifyHandler {
            peer_id,
            handler: NotifyHandler::One(conn),
            event: Command::Streams(command),
        });
    }

    /// Runs store work with the behaviour; its result comes back in [`Glue::on_task`].
    pub fn spawn(&mut self, task: impl Future<Output = G::Task> + CondSend + 'static) {
        self.link.tasks.push(Box::pin(task));
    }

    /// `peer` broke the protocol: the connection that carried the offence (all of the peer's,
    /// if none did) is closed, counted and reported with [`Glue::misbehaved`].
    pub fn misbehaved(&mut self, peer: PeerId, error: G::Misbehaviour) {
        self.link.offences.push((peer, self.link.input, error));
    }

    /// What makes `peer` usable changed: the adapter asks [`Glue::peer_info`] again.
    pub fn refresh(&mut self, peer: PeerId) {
        self.link.refresh.push(peer);
    }

    /// `peer`'s established connections that are not closing and whose remote speaks the
    /// protocol, newest first: where a glue sends. A newer connection is most often an upgrade
    /// (direct WebRTC after the relay's circuit), and the older one is about to be closed: what
    /// is sent on it would be lost, and a fetch started in that moment waited for blocks that
    /// never came.
    pub fn connections(&self, peer: PeerId) -> impl Iterator<Item = (ConnectionId, &G::Conn)> {
        let ids = self.link.peers.get(&peer).map(|p| p.connections.as_slice()).unwrap_or_default();
        ids.iter().rev().filter_map(|id| {
            let c = self.link.connections.get(id).filter(|c| c.usable())?;
            Some((*id, &c.state))
        })
    }

    pub fn connection_mut(&mut self, conn: ConnectionId) -> Option<&mut G::Conn> {
        self.link.connections.get_mut(&conn).map(|c| &mut c.state)
    }

    /// Every connection's state, established or being set up.
    pub fn all_connections(&self) -> impl Iterator<Item = &G::Conn> {
        self.link.connections.values().map(|c| &c.state)
    }
}
