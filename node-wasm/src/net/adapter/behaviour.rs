//! The one `NetworkBehaviour`: drives any [`Glue`]'s core through the [`Core`] contract.

use std::task::{Context, Poll, Waker};

use futures::StreamExt;
use libp2p::core::transport::PortUse;
use libp2p::core::Endpoint;
use libp2p::swarm::{
    behaviour::ConnectionEstablished, CloseConnection, ConnectionClosed, ConnectionDenied,
    ConnectionId, FromSwarm, NetworkBehaviour, NotifyHandler, THandler, THandlerInEvent,
    THandlerOutEvent, ToSwarm,
};
use libp2p::{Multiaddr, PeerId};
use web_time::Instant;

use super::glue::{Connection, Ctx, Glue, Link, LinkStats, Origin};
use super::handler::{Command, Handler, HandlerEvent};
use super::timer::CoreTimer;
use syncscope_proto::Core;

/// Timer rounds per poll: a deadline the core keeps in the past cannot spin the task.
const MAX_TIMER_ROUNDS: usize = 16;

type PeerInfo<G> = <<G as Glue>::Core as Core>::PeerInfo;

/// A protocol core over libp2p. See the module docs.
pub struct Behaviour<G: Glue> {
    glue: G,
    core: G::Core,
    link: Link<G>,
    /// What the connections were last told of [`Glue::busy`].
    busy: bool,
    timer: CoreTimer,
    waker: Option<Waker>,
}

impl<G: Glue> Behaviour<G> {
    /// The adapter driving `core`, with `glue` for the protocol's own parts.
    pub fn from_parts(glue: G, core: G::Core) -> Self {
        Self {
            glue,
            core,
            link: Link::default(),
            busy: false,
            timer: CoreTimer::default(),
            waker: None,
        }
    }

    pub fn glue(&self) -> &G {
        &self.glue
    }

    pub fn core(&self) -> &G::Core {
        &self.core
    }

    /// The core itself, for state the glue does not drive (a store it owns). What changes here
    /// reaches the network only with the next [`Behaviour::command`] or input.
    pub fn core_mut(&mut self) -> &mut G::Core {
        &mut self.core
    }

    pub fn link_stats(&self) -> LinkStats {
        LinkStats {
            peers: self.link.peers.values().filter(|p| p.connected).count(),
            ..self.link.stats
        }
    }

    /// Runs one of the node's commands: `f` works on the glue and the core, then the core is
    /// drained and the behaviour woken.
    pub fn command<R>(&mut self, f: impl FnOnce(&mut G, &mut Ctx<G>) -> R) -> R {
        let now = Instant::now();
        let (glue, mut ctx) = self.split(now);
        let result = f(glue, &mut ctx);
        self.drain(now);
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
        result
    }

    fn split(&mut self, now: Instant) -> (&mut G, Ctx<'_, G>) {
        (&mut self.glue, Ctx { now, core: &mut self.core, link: &mut self.link })
    }

    /// Drains the core in its contract's order, transmits then events, and the adapter's own
    /// work (peers to refresh, offences), until none has more.
    fn drain(&mut self, now: Instant) {
        loop {
            let (glue, mut ctx) = self.split(now);
            let mut progress = false;
            glue.before_transmit(&mut ctx);
            while let Some(transmit) = ctx.core.poll_transmit(now) {
                progress = true;
                glue.route(&mut ctx, transmit);
                glue.before_transmit(&mut ctx);
            }
            while let Some(event) = ctx.core.poll_event() {
                progress = true;
                glue.on_core_event(&mut ctx, event);
            }
            progress |= glue.settle(&mut ctx);
            progress |= self.settle_peers(now);
            if !progress {
                break;
            }
        }
        self.update_busy();
    }

    fn settle_peers(&mut self, now: Instant) -> bool {
        let offences = std::mem::take(&mut self.link.offences);
        let refresh = std::mem::take(&mut self.link.refresh);
        let progress = !offences.is_empty() || !refresh.is_empty();
        for (peer, conn, error) in offences {
            self.misbehaved(now, peer, conn, error);
        }
        for peer in refresh {
            self.refresh_peer(now, peer);
        }
        progress
    }

    /// Closes the offending connection (all of the peer's if none carried the offence), once.
    fn misbehaved(
        &mut self,
        now: Instant,
        peer: PeerId,
        conn: Option<ConnectionId>,
        error: G::Misbehaviour,
    ) {
        let all = self.link.peers.get(&peer).map(|p| p.connections.clone()).unwrap_or_default();
        let mut closed = false;
        for id in conn.map_or(all, |c| vec![c]) {
            if let Some(c) = self.link.connections.get_mut(&id).filter(|c| !c.closing) {
                c.closing = true;
                closed = true;
            }
        }
        if !closed {
            return;
        }
        tracing::info!(%peer, %error, protocol = G::PROTOCOL, "peer misbehaved; disconnecting");
        self.link.stats.peers_disconnected += 1;
        self.lost_connection(now, peer);
        let connection = conn.map_or(CloseConnection::All, CloseConnection::One);
        self.link.actions.push_back(ToSwarm::CloseConnection { peer_id: peer, connection });
        self.link.actions.push_back(ToSwarm::GenerateEvent(G::misbehaved(peer, error)));
    }

    /// One of `peer`'s connections is gone or going: the peer goes on over the rest.
    fn lost_connection(&mut self, now: Instant, peer: PeerId) {
        if G::RESTART_ON_LOST_CONNECTION {
            self.set_connected(now, peer, None);
        }
        self.refresh_peer(now, peer);
    }

    /// Tells the core whether `peer` is usable, from the state of its connections.
    fn refresh_peer(&mut self, now: Instant, peer: PeerId) {
        let Some(p) = self.link.peers.get(&peer) else { return };
        let connections = &self.link.connections;
        let mut usable = p
            .connections
            .iter()
            .filter_map(|id| connections.get(id))
            .filter(|c| c.usable())
            .map(|c| &c.state);
        let info = self.glue.peer_info(peer, &mut usable);
        self.set_connected(now, peer, info);
    }

    fn set_connected(&mut self, now: Instant, peer: PeerId, info: Option<PeerInfo<G>>) {
        let Some(p) = self.link.peers.get_mut(&peer) else { return };
        if p.connected == info.is_some() {
            return;
        }
        p.connected = info.is_some();
        let (glue, mut ctx) = self.split(now);
        match &info {
            Some(info) => ctx.core.peer_connected(now, peer, info.clone()),
            None => ctx.core.peer_disconnected(now, peer),
        }
        glue.on_peer(&mut ctx, peer, info.as_ref());
    }

    fn update_busy(&mut self) {
        let busy = self.glue.busy();
        if std::mem::replace(&mut self.busy, busy) == busy {
            return;
        }
        for (id, c) in &self.link.connections {
            self.link.actions.push_back(ToSwarm::NotifyHandler {
                peer_id: c.peer,
                handler: NotifyHandler::One(*id),
                event: Command::Busy(busy),
            });
        }
    }

    fn new_handler(&mut self, peer: PeerId, conn: ConnectionId) -> Handler<G::Streams> {
        let (state, streams) = self.glue.new_connection(peer);
        let connection = Connection { peer, state, closing: false, remote_supports: true };
        self.link.connections.insert(conn, connection);
        Handler::new(streams, self.glue.max_inbound_streams(), self.busy)
    }

    fn connection_established(&mut self, peer: PeerId, conn: ConnectionId) {
        let now = Instant::now();
        self.link.peers.entry(peer).or_default().connections.push(conn);
        self.refresh_peer(now, peer);
        self.drain(now);
    }

    fn connection_closed(&mut self, peer: PeerId, conn: ConnectionId) {
        let now = Instant::now();
        if self.link.connections.remove(&conn).is_none() {
            return;
        }
        self.link.input = Some(conn);
        let (glue, mut ctx) = self.split(now);
        glue.connection_closed(&mut ctx, peer, conn);
        self.link.input = None;
        if let Some(p) = self.link.peers.get_mut(&peer) {
            p.connections.retain(|c| *c != conn);
            if p.connections.is_empty() {
                let connected = std::mem::take(&mut p.connected);
                self.link.peers.remove(&peer);
                let (glue, mut ctx) = self.split(now);
                // Also forgets what the core began for a peer that never became usable.
                ctx.core.peer_disconnected(now, peer);
                if connected {
                    glue.on_peer(&mut ctx, peer, None);
                }
            } else {
                self.lost_connection(now, peer);
            }
        }
        self.drain(now);
    }

    fn on_handler_event(
        &mut self,
        peer: PeerId,
        conn: ConnectionId,
        event: HandlerEvent<<G::Streams as super::Streams>::Event>,
    ) {
        let event = match event {
            HandlerEvent::InboundRefused => {
                self.link.stats.streams_refused += 1;
                return;
            }
            HandlerEvent::RemoteSupport(supports) => {
                return self.remote_support(peer, conn, supports)
            }
            HandlerEvent::Streams(event) => event,
        };
        if self.link.connections.get(&conn).is_none_or(|c| c.closing) {
            return;
        }
        let now = Instant::now();
        self.link.input = Some(conn);
        let (glue, mut ctx) = self.split(now);
        glue.on_streams_event(&mut ctx, Origin { peer, conn }, event);
        self.drain(now);
        self.link.input = None;
    }

    /// A peer is usable only over connections whose remote speaks the protocol: a foreign peer
    /// (a plain IPFS node, the relay) is never asked again once it has said it does not.
    fn remote_support(&mut self, peer: PeerId, conn: ConnectionId, supports: bool) {
        let Some(c) = self.link.connections.get_mut(&conn) else { return };
        c.remote_supports = supports;
        if !supports {
            tracing::debug!(%peer, protocol = G::PROTOCOL, "the remote does not speak the protocol");
            self.link.stats.unsupported_connections += 1;
        }
        let now = Instant::now();
        self.refresh_peer(now, peer);
        self.drain(now);
    }

    /// Fires the core's timer once due and re-arms it for the next deadline. Deadlines that move
    /// later all the time (stream timeouts pushed back by every delivery) keep the earlier one
    /// armed: firing early is harmless and cheaper than a new delay at every move.
    fn poll_timer(&mut self, cx: &mut Context<'_>) {
        for _ in 0..MAX_TIMER_ROUNDS {
            let now = Instant::now();
            if self.timer.take_due(now) {
                self.core.handle_timeout(now);
                self.drain(now);
            }
            self.timer.set_at_most(now, self.core.poll_timeout());
            if self.timer.poll(cx).is_pending() {
                return;
            }
        }
        cx.waker().wake_by_ref();
    }

    fn poll_tasks(&mut self, cx: &mut Context<'_>) -> bool {
        let mut progress = false;
        while let Poll::Ready(Some(task)) = self.link.tasks.poll_next_unpin(cx) {
            progress = true;
            let now = Instant::now();
            let (glue, mut ctx) = self.split(now);
            glue.on_task(&mut ctx, task);
            self.drain(now);
        }
        progress
    }
}

impl<G: Glue> NetworkBehaviour for Behaviour<G>
where
    G::Event: Send + 'static,
{
    type ConnectionHandler = Handler<G::Streams>;
    type ToSwarm = G::Event;

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
            FromSwarm::ConnectionEstablished(ConnectionEstablished {
                peer_id,
                connection_id,
                ..
            }) => self.connection_established(peer_id, connection_id),
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

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<ToSwarm<G::Event, THandlerInEvent<Self>>> {
        self.glue.register(cx);
        loop {
            if let Some(action) = self.link.actions.pop_front() {
                return Poll::Ready(action);
            }
            self.drain(Instant::now());
            // The timer may start store work and store work may move the timer: both until
            // neither has anything to do.
            self.poll_timer(cx);
            let progress = self.poll_tasks(cx);
            if !progress && self.link.actions.is_empty() {
                self.waker = Some(cx.waker().clone());
                return Poll::Pending;
            }
        }
    }
}
