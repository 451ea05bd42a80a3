//! The task that drives a node's swarm: it turns commands into swarm calls and swarm events into
//! [`NodeEvent`]s, dials room members, walks fetched DAGs and samples the counters every second.

use std::num::NonZeroU8;
use std::sync::Arc;
use std::time::Duration;

use cid::Cid;
use futures::{channel::mpsc, FutureExt, StreamExt};
use libp2p::{
    gossipsub, identify,
    multiaddr::Protocol,
    ping,
    swarm::{dial_opts::DialOpts, DialError, SwarmEvent},
    Multiaddr, PeerId, Swarm,
};
use web_time::Instant;

use super::behaviour::{NodeBehaviour, NodeBehaviourEvent};
use super::config::{NodeConfig, RelayAddress};
use super::direct_upgrade::DirectUpgrades;
use super::events::{
    ContentAdded, DirectWebRtcFailure, Misbehaviour, NodeError, NodeEvent, NodeStats,
    ReservationError, TransportKind,
};
use super::fetches::{FetchUpdate, Fetches};
use super::membership::{Membership, RoomMember};
use super::redial::Redial;
use super::stored_content::{DriverRequest, StoredContent};
use crate::agent::PeerKind;
use crate::content::{Car, ImportedFile, SplitFile};
use crate::net::{bitswap, pullsync, webrtc};
use crate::rt;
use crate::store::{ChunkStore, Manifest};

/// Room members this node dials at most; more stay reachable through the relay on demand.
const MAX_DIALED_MEMBERS: usize = 32;

pub(super) enum Command {
    JoinRoom(String),
    LeaveRoom(String),
    Dial(Multiaddr),
    /// A file with its name, imported both ways.
    Add(Box<(String, ImportedFile, SplitFile)>),
    /// A root, and the name to list it under (empty: none known).
    Fetch(Cid, String),
    /// Forget a root the node holds ([`StoredContent::remove`]).
    Remove(Cid),
    ReadFile(Cid),
    /// A CAR read and verified, and the name to list its roots under.
    ImportCar(Box<Car>, String),
    ExportCar(Cid),
    /// A link probe started (`true`) or ended: it measures the link with nothing else on it.
    Probing(bool),
}

pub(super) struct Driver {
    swarm: Swarm<NodeBehaviour>,
    relay: Option<RelayAddress>,
    /// The address this node reached the relay at, once connected.
    relay_addr: Option<Multiaddr>,
    redial: Redial,
    reserve: bool,
    dial_members: bool,
    upgrades: DirectUpgrades,
    /// Listening for direct WebRTC through the relay; kept across relay reconnections.
    listening_webrtc: bool,
    membership: Membership,
    fetches: Fetches,
    /// Pause pull-sync's pulling while a fetch or a link probe runs
    /// ([`ProtocolSettings::pullsync_yields`]).
    pullsync_yields: bool,
    probes: usize,
    started: Instant,
    /// [`NodeConfig::stats_every`].
    stats_every: Duration,
    stored: StoredContent,
    /// What store work asks of the Bitswap server and the reserve ([`StoredContent::remove`]).
    store_requests: mpsc::UnboundedReceiver<DriverRequest>,
    events: mpsc::Sender<NodeEvent>,
}

impl Driver {
    /// Drives `swarm`, which has dialled the relay and listens already.
    pub(super) fn new(
        swarm: Swarm<NodeBehaviour>,
        config: &NodeConfig,
        manifests: Vec<Manifest>,
        events: mpsc::Sender<NodeEvent>,
    ) -> Self {
        let me = *swarm.local_peer_id();
        let (requests, store_requests) = mpsc::unbounded();
        Self {
            swarm,
            membership: Membership::new(me, config.relay.as_ref().map(|r| r.peer_id)),
            relay: config.relay.clone(),
            relay_addr: None,
            redial: Redial::new(),
            reserve: config.reserve,
            dial_members: config.dial_members,
            upgrades: DirectUpgrades::new(config.direct_webrtc.enabled && webrtc::SUPPORTED),
            listening_webrtc: false,
            fetches: Fetches::default(),
            pullsync_yields: config.protocols.pullsync_yields,
            probes: 0,
            started: Instant::now(),
            stats_every: config.stats_every,
            stored: StoredContent::new(config.blocks.clone(), events.clone(), manifests, requests),
            store_requests,
            events,
        }
    }

    pub(super) async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        let mut tick = Box::pin(rt::sleep(self.stats_every).fuse());
        loop {
            futures::select! {
                event = self.swarm.select_next_some() => self.on_swarm(event),
                // A handle whose command sender was dropped (its `events` moved elsewhere) still
                // observes the node; only dropping `events` stops it.
                command = commands.next() => if let Some(command) = command {
                    self.on_command(command);
                },
                request = self.store_requests.select_next_some() => self.on_store_request(request),
                () = tick => {
                    self.emit_stats();
                    tick = Box::pin(rt::sleep(self.stats_every).fuse());
                }
                () = self.redial.due() => self.dial_relay(),
            }
            if self.events.is_closed() {
                tracing::debug!("node handle dropped; stopping");
                return;
            }
        }
    }

    fn on_store_request(&mut self, request: DriverRequest) {
        let behaviour = self.swarm.behaviour_mut();
        match request {
            DriverRequest::ForgetBlocks(keys) => behaviour.bitswap.forget_stored(keys),
            DriverRequest::ReadChunks(addresses, reply) => {
                let _ = reply.send(behaviour.pullsync.store().read_at(&addresses));
            }
            DriverRequest::RemoveChunks(addresses, reply) => {
                let _ = reply.send(behaviour.pullsync.store_mut().remove(&addresses));
            }
        }
    }

    fn emit(&mut self, event: NodeEvent) {
        if let Err(e) = self.events.try_send(event) {
            if !e.is_disconnected() {
                tracing::warn!("observer is behind; dropped a node event");
            }
        }
    }

    fn emit_stats(&mut self) {
        let behaviour = self.swarm.behaviour();
        let stats = NodeStats {
            elapsed: self.started.elapsed(),
            bitswap: behaviour.bitswap.stats(),
            pullsync: behaviour.pullsync.stats(),
            connected_peers: self.swarm.connected_peers().count(),
        };
        self.emit(NodeEvent::Stats(Box::new(stats)));
    }

    fn on_command(&mut self, command: Command) {
        let result = match command {
            Command::JoinRoom(room) => self
                .membership
                .join(&mut self.swarm.behaviour_mut().rooms, &room)
                .map_err(NodeError::JoinRoom),
            Command::LeaveRoom(room) => {
                self.membership.leave(&mut self.swarm.behaviour_mut().rooms, &room);
                Ok(())
            }
            Command::Dial(addr) => self.dial(addr),
            Command::Add(content) => {
                let (name, unixfs, swarm) = *content;
                self.add(&name, unixfs, swarm)
            }
            Command::Remove(root) => {
                self.stored.remove(root);
                Ok(())
            }
            Command::ReadFile(root) => {
                self.stored.read_file(root);
                Ok(())
            }
            Command::Fetch(root, name) => {
                self.fetch(root, name);
                Ok(())
            }
            Command::ImportCar(car, name) => {
                self.import_car(*car, name);
                Ok(())
            }
            Command::ExportCar(root) => {
                self.stored.export_car(root);
                Ok(())
            }
            Command::Probing(started) => {
                self.probes = if started { self.probes + 1 } else { self.probes.saturating_sub(1) };
                self.yield_pullsync();
                Ok(())
            }
        };
        if let Err(error) = result {
            self.emit(NodeEvent::Error { error });
        }
    }

    fn fetch(&mut self, root: Cid, name: String) {
        if !self.fetches.is_active(&root) {
            self.stored.fetch_started(root, name);
            self.fetches.start(&mut self.swarm.behaviour_mut().bitswap, root);
            self.yield_pullsync();
        }
    }

    /// Stores a CAR's blocks, then fetches each root: the store answers for the blocks the CAR
    /// held, and the fetch lists the root once its DAG is whole.
    fn import_car(&mut self, car: Car, name: String) {
        let bitswap = &mut self.swarm.behaviour_mut().bitswap;
        for block in car.blocks {
            bitswap.add_block(block);
        }
        tracing::info!(roots = ?car.roots, "CAR imported");
        for root in car.roots {
            self.fetch(root, name.clone());
        }
    }

    fn add(&mut self, name: &str, unixfs: ImportedFile, swarm: SplitFile) -> Result<(), NodeError> {
        let added = ContentAdded {
            cid: unixfs.root,
            name: name.to_owned(),
            swarm_root: swarm.root,
            size: unixfs.size,
            blocks: unixfs.blocks.len(),
            chunks: swarm.chunks.len(),
        };
        if let Some(last) = unixfs.blocks.last() {
            self.stored.adding(last.cid(), &added);
        }
        let behaviour = self.swarm.behaviour_mut();
        for block in unixfs.blocks {
            behaviour.bitswap.add_block(block);
        }
        for chunk in swarm.chunks {
            let address = chunk.address();
            behaviour
                .pullsync
                .store_chunk(chunk)
                .map_err(|e| NodeError::StoreChunk { address, error: Arc::new(e) })?;
        }
        tracing::info!(cid = %added.cid, swarm_root = %added.swarm_root, size = added.size, "content added");
        self.emit(NodeEvent::ContentAdded(added));
        Ok(())
    }

    fn on_swarm(&mut self, event: SwarmEvent<NodeBehaviourEvent>) {
        match event {
            SwarmEvent::ConnectionEstablished { peer_id, connection_id, endpoint, .. } => {
                for circuit in self.upgrades.on_established(peer_id, connection_id, &endpoint) {
                    tracing::info!(%peer_id, "reached directly over WebRTC; closing the circuit");
                    self.swarm.close_connection(circuit);
                }
                let addr = endpoint.get_remote_address().clone();
                tracing::info!(%peer_id, %addr, "connected");
                if self.is_relay(peer_id) && self.relay_addr.is_none() {
                    self.redial.connected();
                    self.relay_connected(peer_id, addr.clone());
                }
                let transport = TransportKind::of_connection(&endpoint);
                self.emit(NodeEvent::Connected { peer: peer_id, transport, addr });
            }
            SwarmEvent::ConnectionClosed {
                peer_id,
                connection_id,
                num_established,
                cause,
                endpoint,
                ..
            } => {
                self.upgrades.on_closed(peer_id, connection_id, num_established);
                if num_established > 0 {
                    return;
                }
                tracing::info!(%peer_id, ?cause, "disconnected");
                self.emit(NodeEvent::Disconnected { peer: peer_id, cause: cause.map(Arc::new) });
                if TransportKind::of_connection(&endpoint) == TransportKind::WebRtc {
                    self.redial_member(peer_id);
                }
                if self.is_relay(peer_id) {
                    self.relay_lost();
                }
            }
            SwarmEvent::OutgoingConnectionError { peer_id, error, .. } => {
                self.dial_failed(peer_id, error)
            }
            SwarmEvent::IncomingConnectionError { send_back_addr, error, .. } => {
                if let Some(peer) = webrtc::peer_of(&send_back_addr) {
                    self.direct_webrtc_failed(peer, DirectWebRtcFailure::Listen(Arc::new(error)));
                }
            }
            SwarmEvent::NewListenAddr { address, .. } if webrtc::is_listen_addr(&address) => {
                tracing::info!(%address, "listening for direct WebRTC through the relay");
            }
            SwarmEvent::NewListenAddr { address, .. } if is_circuit(&address) => {
                tracing::info!(%address, "reserved a slot on the relay");
                self.emit(NodeEvent::Reserved { addr: address });
            }
            SwarmEvent::NewListenAddr { address, .. } => {
                let addr = address.with_p2p(*self.swarm.local_peer_id()).unwrap_or_else(|a| a);
                tracing::info!(%addr, "listening");
                self.emit(NodeEvent::Listening { addr });
            }
            SwarmEvent::ListenerClosed { reason: Err(e), .. } => {
                let error = ReservationError::Closed(Arc::new(e));
                self.emit(NodeEvent::ReservationFailed { error });
            }
            SwarmEvent::Behaviour(event) => self.on_behaviour(event),
            _ => {}
        }
    }

    fn direct_webrtc_failed(&mut self, peer: PeerId, error: DirectWebRtcFailure) {
        tracing::warn!(%peer, %error, "no direct WebRTC; staying on the circuit");
        self.emit(NodeEvent::DirectWebRtcFailed { peer, error });
    }

    /// Dials `addr`. A `/webrtc` address is reached through the circuit under it, which upgrades
    /// to direct WebRTC once the peer is identified ([`DirectUpgrades`]).
    fn dial(&mut self, addr: Multiaddr) -> Result<(), NodeError> {
        let addr = match webrtc::circuit_of(&addr) {
            Some(circuit) => {
                tracing::info!(%addr, %circuit, "dialling the circuit under a /webrtc address");
                circuit
            }
            None => addr,
        };
        self.swarm.dial(addr.clone()).map_err(|e| NodeError::Dial { addr, error: Arc::new(e) })
    }

    fn dial_failed(&mut self, peer: Option<PeerId>, error: DialError) {
        if let Some(peer) = peer.filter(|_| DirectWebRtcFailure::is_webrtc_dial(&error)) {
            return self.direct_webrtc_failed(peer, DirectWebRtcFailure::Dial(Arc::new(error)));
        }
        tracing::warn!(?peer, %error, "dial failed");
        self.emit(NodeEvent::DialFailed { peer, error: Arc::new(error) });
        if peer.is_some_and(|p| self.is_relay(p)) && self.relay_addr.is_none() {
            self.schedule_redial();
        }
    }

    fn on_behaviour(&mut self, event: NodeBehaviourEvent) {
        match event {
            NodeBehaviourEvent::Ping(ping::Event { peer, result, .. }) => {
                self.on_ping(peer, result)
            }
            NodeBehaviourEvent::Rooms(gossipsub::Event::Message {
                propagation_source,
                message_id,
                message,
            }) => self.on_room_message(propagation_source, message_id, message),
            NodeBehaviourEvent::Identify(identify::Event::Received { peer_id, info, .. }) => {
                let kind = PeerKind::of_identify(&info.agent_version, &info.protocols);
                tracing::debug!(peer = %peer_id, agent = %info.agent_version, kind = kind.label(), "identified");
                if let Some(dial) = self.upgrades.on_identified(peer_id, &info.protocols) {
                    if let Err(e) = self.swarm.dial(dial) {
                        tracing::warn!(peer = %peer_id, "cannot dial over direct WebRTC: {e}");
                    }
                }
                let agent = info.agent_version.into();
                self.emit(NodeEvent::Identified { peer: peer_id, agent, kind });
            }
            NodeBehaviourEvent::Bitswap(event) => self.on_bitswap(event),
            NodeBehaviourEvent::Pullsync(event) => self.on_pullsync(event),
            _ => {}
        }
    }

    fn on_ping(&mut self, peer: PeerId, result: Result<Duration, ping::Failure>) {
        let event = match result {
            Ok(rtt) => {
                self.swarm.behaviour_mut().bitswap.peer_round_trip(peer, rtt);
                NodeEvent::Ping { peer, rtt }
            }
            Err(e) => NodeEvent::PingFailed { peer, error: Arc::new(e) },
        };
        self.emit(event);
    }

    fn on_bitswap(&mut self, event: bitswap::Event) {
        match event {
            bitswap::Event::Block { fetch, cid, data, from_store } => {
                let bitswap = &mut self.swarm.behaviour_mut().bitswap;
                let block = (cid, &data, from_store);
                if let Some(update) = self.fetches.on_block(bitswap, fetch, block) {
                    if !matches!(update, FetchUpdate::Progress { .. }) {
                        self.yield_pullsync();
                    }
                    if let FetchUpdate::Done { root, size, .. } = update {
                        self.stored.fetch_done(root, size);
                    }
                    self.emit(NodeEvent::Fetch(update));
                }
            }
            bitswap::Event::Verified { fetch, cid, data } => {
                let bitswap = &mut self.swarm.behaviour_mut().bitswap;
                if let Some(update) = self.fetches.on_verified(bitswap, fetch, (cid, &data)) {
                    self.yield_pullsync();
                    self.emit(NodeEvent::Fetch(update));
                }
            }
            bitswap::Event::Misbehaved { peer, error } => {
                tracing::warn!(%peer, %error, "bitswap peer misbehaved");
                self.emit(NodeEvent::Misbehaved { peer, error: Misbehaviour::Bitswap(error) });
            }
            bitswap::Event::PeerConnected { peer, version } => {
                self.emit(NodeEvent::Bitswap { peer, version: Some(version) });
            }
            bitswap::Event::PeerDisconnected { peer } => {
                self.emit(NodeEvent::Bitswap { peer, version: None });
            }
            bitswap::Event::BlockAdded { cid } => self.stored.block_added(&cid),
            bitswap::Event::StoreFailed { cid, error, fetches } => {
                let bitswap = &mut self.swarm.behaviour_mut().bitswap;
                for update in self.fetches.store_failed(bitswap, &fetches, cid, &error) {
                    self.yield_pullsync();
                    self.emit(NodeEvent::Fetch(update));
                }
                let error = NodeError::StoreBlock { cid, error: Arc::new(error) };
                self.emit(NodeEvent::Error { error });
            }
            _ => {}
        }
    }

    /// Pull-sync pulls only while no fetch or link probe runs, if so configured: a fetch is what
    /// the user waits for, a probe measures the bare link, and the background copy of the same
    /// content would take a share of it.
    fn yield_pullsync(&mut self) {
        let paused = self.pullsync_yields && (self.fetches.any_active() || self.probes > 0);
        let pullsync = &mut self.swarm.behaviour_mut().pullsync;
        if pullsync.is_paused() != paused {
            match paused {
                true => tracing::info!("pull-sync pulling paused while a fetch or link probe runs"),
                false => tracing::info!("pull-sync pulling resumed"),
            }
            pullsync.set_paused(paused);
        }
    }

    fn on_pullsync(&mut self, event: pullsync::Event) {
        match event {
            pullsync::Event::Misbehaved { peer, error } => {
                tracing::warn!(%peer, %error, "pull-sync peer misbehaved");
                self.emit(NodeEvent::Misbehaved { peer, error: Misbehaviour::Pullsync(error) });
            }
            pullsync::Event::StoreFailed { address, error, .. } => {
                let error = NodeError::StoreChunk { address, error: Arc::new(error) };
                self.emit(NodeEvent::Error { error });
            }
            _ => {}
        }
    }

    fn is_relay(&self, peer: PeerId) -> bool {
        self.relay.as_ref().is_some_and(|r| r.peer_id == peer)
    }

    /// The rooms and every circuit went with the relay: members are listed as gone until the
    /// relay, dialled again, lists them anew.
    fn relay_lost(&mut self) {
        self.relay_addr = None;
        for update in self.membership.relay_lost() {
            self.emit(NodeEvent::Room(update));
        }
        self.schedule_redial();
    }

    fn schedule_redial(&mut self) {
        if let Some(wait) = self.redial.schedule() {
            tracing::info!(?wait, "no connection to the relay; dialling it again after a wait");
        }
    }

    fn dial_relay(&mut self) {
        let Some(relay) = &self.relay else { return };
        if let Err(error) = self.swarm.dial(relay_dial_opts(relay)) {
            tracing::warn!(%error, "cannot dial the relay");
            self.schedule_redial();
        }
    }

    /// Reserves a slot through the connection just made, so that room members can dial us.
    fn relay_connected(&mut self, relay: PeerId, addr: Multiaddr) {
        self.relay_addr = Some(addr.clone());
        if !self.reserve {
            return;
        }
        let circuit = addr.with_p2p(relay).unwrap_or_else(|a| a).with(Protocol::P2pCircuit);
        if let Err(e) = self.swarm.listen_on(circuit.clone()) {
            let error = ReservationError::Listen(Arc::new(e));
            self.emit(NodeEvent::ReservationFailed { error });
        }
        if self.upgrades.enabled() && !self.listening_webrtc {
            match self.swarm.listen_on(webrtc::listen_addr(circuit)) {
                Ok(_) => self.listening_webrtc = true,
                Err(e) => tracing::warn!("cannot listen for direct WebRTC: {e}"),
            }
        }
    }

    fn on_room_message(
        &mut self,
        source: PeerId,
        id: gossipsub::MessageId,
        message: gossipsub::Message,
    ) {
        let rooms = &mut self.swarm.behaviour_mut().rooms;
        match self.membership.handle(rooms, source, id, message, self.relay_addr.as_ref()) {
            Some(Ok(update)) => {
                self.dial_members(&update.joined);
                self.emit(NodeEvent::Room(update));
            }
            Some(Err(e)) => self.emit(NodeEvent::Error { error: NodeError::MemberList(e) }),
            None => {}
        }
    }

    /// A room member whose direct WebRTC connection ended (its peer connection failed, say) is
    /// dialled through the relay again, by the side that dialled it before, and upgrades from
    /// there; a member that left is in no room any more.
    fn redial_member(&mut self, peer: PeerId) {
        if let Some(member) = self.membership.member(peer, self.relay_addr.as_ref()) {
            tracing::info!(%peer, "lost the direct connection to a room member; dialling it again");
            self.dial_members(&[member]);
        }
    }

    /// Of each pair of members, the one with the smaller peer id dials, so that a pair holds one
    /// circuit rather than two.
    fn dial_members(&mut self, members: &[RoomMember]) {
        if !self.dial_members {
            return;
        }
        let me = *self.swarm.local_peer_id();
        for member in members {
            let connected = self.swarm.connected_peers().count();
            if me >= member.peer
                || self.swarm.is_connected(&member.peer)
                || connected > MAX_DIALED_MEMBERS
            {
                continue;
            }
            let opts = DialOpts::peer_id(member.peer)
                .addresses(member.addrs.clone())
                .override_dial_concurrency_factor(NonZeroU8::MIN)
                .build();
            if let Err(e) = self.swarm.dial(opts) {
                tracing::debug!(peer = %member.peer, "not dialling room member: {e}");
            }
        }
    }
}

/// One address at a time, so that the preferred transport wins whenever it works.
pub(super) fn relay_dial_opts(relay: &RelayAddress) -> DialOpts {
    DialOpts::peer_id(relay.peer_id)
        .addresses(relay.addrs.clone())
        .override_dial_concurrency_factor(NonZeroU8::MIN)
        .build()
}

fn is_circuit(addr: &Multiaddr) -> bool {
    addr.iter().any(|p| matches!(p, Protocol::P2pCircuit))
}
