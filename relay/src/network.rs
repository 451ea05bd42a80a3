//! The relay's event loop: drives the swarm, keeps rooms, metrics and bans up to date, and
//! publishes what the HTTP side may show.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use futures::StreamExt;
use libp2p::{
    gossipsub::{self, IdentTopic, MessageAcceptance},
    identify,
    multiaddr::Protocol,
    relay,
    swarm::SwarmEvent,
    Multiaddr, PeerId, Swarm,
};
use syncscope_node::node::TransportKind;
use syncscope_node::RelayTransport;
use syncscope_proto::rooms::topic_of;
use tokio::sync::watch;

use crate::behaviour::{RelayBehaviour, RelayBehaviourEvent};
use crate::cli::{Cli, ListenArgs};
use crate::metrics::{RelayMetrics, RoomLabel, TransportLabel};
use crate::offences::Offences;
use crate::rooms::Rooms;

/// Listeners must report their addresses within this time of start-up.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(10);
/// Member lists are published again this often, for peers that missed a change.
const REPUBLISH_EVERY: Duration = Duration::from_secs(5);

/// The transport a relay listen address is announced under in `/config.json`.
fn listener_of(addr: &Multiaddr) -> Option<RelayTransport> {
    match TransportKind::of(addr) {
        TransportKind::WebRtcDirect => Some(RelayTransport::WebRtcDirect),
        TransportKind::WebSocket => Some(RelayTransport::WebSocket),
        TransportKind::Tcp => Some(RelayTransport::Tcp),
        _ => None,
    }
}

/// What the rest of the relay may know about the swarm; published through a watch channel.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub peer_id: Option<PeerId>,
    /// Dialable addresses (with `/p2p/<relay>`) per transport.
    pub addrs: Vec<(RelayTransport, Multiaddr)>,
}

pub struct Network {
    swarm: Swarm<RelayBehaviour>,
    snapshot: watch::Sender<Snapshot>,
    metrics: Arc<RelayMetrics>,
    rooms: Rooms,
    offences: Offences,
    announce: Vec<Multiaddr>,
}

impl Network {
    pub fn new(
        mut swarm: Swarm<RelayBehaviour>,
        cli: &Cli,
        metrics: Arc<RelayMetrics>,
    ) -> Result<Self> {
        for (addr, flag) in listen_addrs(&cli.listen) {
            swarm.listen_on(addr.clone()).map_err(|e| {
                anyhow!(
                    "cannot listen on {addr} ({e}): is the port in use? pick another with {flag}"
                )
            })?;
        }
        for addr in &cli.listen.announce {
            swarm.add_external_address(addr.clone());
        }
        let peer_id = Some(*swarm.local_peer_id());
        Ok(Self {
            swarm,
            snapshot: watch::Sender::new(Snapshot { peer_id, ..Default::default() }),
            metrics,
            rooms: Rooms::default(),
            offences: Offences::new(
                cli.connections.offences_before_ban,
                cli.connections.ban_duration,
            ),
            announce: cli.listen.announce.clone(),
        })
    }

    /// The relay's plain TCP address, for the native peers it runs itself.
    pub fn tcp_addr(&self) -> Multiaddr {
        let snap = self.snapshot.borrow();
        let tcp = snap.addrs.iter().find(|(l, _)| *l == RelayTransport::Tcp);
        tcp.or(snap.addrs.first()).map(|(_, a)| a.clone()).unwrap_or_else(Multiaddr::empty)
    }

    pub fn subscribe(&self) -> watch::Receiver<Snapshot> {
        self.snapshot.subscribe()
    }

    /// Drives the swarm until every listener has an address.
    pub async fn wait_listening(&mut self) -> Result<()> {
        tokio::time::timeout(LISTEN_TIMEOUT, async {
            while self.listeners_up() < 3 {
                let event = self.swarm.select_next_some().await;
                self.handle(event)?;
            }
            Ok::<_, anyhow::Error>(())
        })
        .await
        .context("listeners did not come up in time")??;
        self.apply_announcements();
        Ok(())
    }

    fn listeners_up(&self) -> usize {
        let snap = self.snapshot.borrow();
        let mut kinds: Vec<_> = snap.addrs.iter().map(|(l, _)| *l).collect();
        kinds.dedup();
        kinds.len()
    }

    /// With `--announce`, browsers are told the announced addresses instead of the bound ones;
    /// WebRTC-direct ones get this relay's certhash.
    fn apply_announcements(&mut self) {
        if self.announce.is_empty() {
            return;
        }
        let certhash = self.snapshot.borrow().addrs.iter().find_map(|(_, a)| {
            a.iter().find(|p| matches!(p, Protocol::Certhash(_))).map(Protocol::acquire)
        });
        let peer_id = *self.swarm.local_peer_id();
        let addrs = self
            .announce
            .iter()
            .filter_map(|a| {
                let kind = listener_of(a)?;
                let mut addr = a.clone();
                if kind == RelayTransport::WebRtcDirect
                    && !a.iter().any(|p| matches!(p, Protocol::Certhash(_)))
                {
                    addr = addr.with(certhash.clone()?);
                }
                Some((kind, addr.with_p2p(peer_id).unwrap_or_else(|a| a)))
            })
            .collect();
        self.snapshot.send_modify(|s| s.addrs = addrs);
    }

    /// Drives the swarm until the task is dropped.
    pub async fn run(mut self) -> Result<()> {
        let mut tick = tokio::time::interval(REPUBLISH_EVERY);
        loop {
            tokio::select! {
                event = self.swarm.select_next_some() => self.handle(event)?,
                _ = tick.tick() => self.on_tick(),
            }
        }
    }

    fn on_tick(&mut self) {
        for peer in self.offences.expired(Instant::now()) {
            tracing::info!(%peer, "ban lifted");
            self.swarm.behaviour_mut().blocked.unblock_peer(peer);
        }
        self.metrics.banned.set(self.offences.banned() as i64);
        let rooms: Vec<String> = self.rooms.rooms().map(String::from).collect();
        for room in rooms {
            self.publish(&room);
        }
    }

    fn handle(&mut self, event: SwarmEvent<RelayBehaviourEvent>) -> Result<()> {
        match event {
            SwarmEvent::NewListenAddr { address, .. } => self.add_listen_addr(address),
            SwarmEvent::ListenerClosed { addresses, reason: Err(e), .. } => {
                return Err(anyhow!("listener on {addresses:?} failed: {e}"));
            }
            SwarmEvent::ConnectionEstablished { peer_id, endpoint, num_established, .. } => {
                let addr = endpoint.get_remote_address();
                tracing::info!(%peer_id, %addr, transport = TransportKind::of(addr).label(), num_established, "peer connected");
                self.connections(addr).inc();
            }
            SwarmEvent::ConnectionClosed { peer_id, endpoint, num_established, cause, .. } => {
                tracing::info!(%peer_id, cause = ?cause.map(|c| c.to_string()), "peer disconnected");
                self.connections(endpoint.get_remote_address()).dec();
                if num_established == 0 {
                    for room in self.rooms.disconnected(peer_id) {
                        self.publish(&room);
                    }
                }
            }
            SwarmEvent::IncomingConnectionError { send_back_addr, error, .. } => {
                tracing::info!(addr = %send_back_addr, %error, "refused incoming connection");
                self.metrics.refuse("connection");
            }
            SwarmEvent::Behaviour(RelayBehaviourEvent::Relay(event)) => self.on_relay(event),
            SwarmEvent::Behaviour(RelayBehaviourEvent::Rooms(event)) => self.on_rooms(event),
            SwarmEvent::Behaviour(RelayBehaviourEvent::Identify(identify::Event::Received {
                peer_id,
                info,
                ..
            })) => {
                for room in self.rooms.set_agent(peer_id, info.agent_version) {
                    self.publish(&room);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn connections(&self, addr: &Multiaddr) -> prometheus_client::metrics::gauge::Gauge {
        let transport = TransportKind::of(addr).label().to_string();
        self.metrics.connections.get_or_create(&TransportLabel { transport }).clone()
    }

    fn on_relay(&mut self, event: relay::Event) {
        match event {
            relay::Event::ReservationReqAccepted { src_peer_id, renewed } => {
                tracing::info!(peer = %src_peer_id, renewed, "reservation accepted");
                // A renewal keeps the reservation its connection already holds.
                if !renewed {
                    self.metrics.reservations.inc();
                    self.reservation_changed(src_peer_id, true);
                }
            }
            relay::Event::ReservationClosed { src_peer_id }
            | relay::Event::ReservationTimedOut { src_peer_id } => {
                tracing::info!(peer = %src_peer_id, "reservation ended");
                self.metrics.reservations.dec();
                self.reservation_changed(src_peer_id, false);
            }
            relay::Event::ReservationReqDenied { src_peer_id, status } => {
                tracing::info!(peer = %src_peer_id, ?status, "reservation refused");
                self.metrics.refuse("reservation");
                self.offence(src_peer_id, "too many refused reservations");
            }
            relay::Event::CircuitReqAccepted { src_peer_id, dst_peer_id } => {
                tracing::info!(src = %src_peer_id, dst = %dst_peer_id, "circuit opened");
                self.metrics.circuits.inc();
            }
            relay::Event::CircuitClosed { src_peer_id, dst_peer_id, error } => {
                tracing::info!(src = %src_peer_id, dst = %dst_peer_id, error = ?error.map(|e| e.to_string()), "circuit closed");
                self.metrics.circuits.dec();
            }
            relay::Event::CircuitReqDenied { src_peer_id, dst_peer_id, status } => {
                tracing::info!(src = %src_peer_id, dst = %dst_peer_id, ?status, "circuit refused");
                self.metrics.refuse("circuit");
                self.offence(src_peer_id, "too many refused circuits");
            }
            _ => {}
        }
    }

    fn reservation_changed(&mut self, peer: PeerId, held: bool) {
        for room in self.rooms.reservation(peer, held) {
            self.publish(&room);
        }
    }

    fn on_rooms(&mut self, event: gossipsub::Event) {
        match event {
            gossipsub::Event::Subscribed { peer_id, topic } => {
                if let Some(room) = self.rooms.subscribed(peer_id, topic.as_str()) {
                    tracing::info!(peer = %peer_id, %room, "joined room");
                    self.publish(&room);
                }
            }
            gossipsub::Event::Unsubscribed { peer_id, topic } => {
                if let Some(room) = self.rooms.unsubscribed(peer_id, topic.as_str()) {
                    tracing::info!(peer = %peer_id, %room, "left room");
                    self.publish(&room);
                }
            }
            gossipsub::Event::Message { propagation_source, message_id, message } => {
                // Only the relay publishes member lists; anything else is forged or spam.
                let rooms = &mut self.swarm.behaviour_mut().rooms;
                rooms.report_message_validation_result(
                    &message_id,
                    &propagation_source,
                    MessageAcceptance::Reject,
                );
                self.metrics.refuse("publish");
                let sender = message.source.unwrap_or(propagation_source);
                self.offence(sender, "publishing into a room");
            }
            _ => {}
        }
    }

    fn offence(&mut self, peer: PeerId, why: &str) {
        if self.offences.record(peer, Instant::now()) {
            tracing::warn!(%peer, reason = why, "peer cut off");
            self.swarm.behaviour_mut().blocked.block_peer(peer);
            self.metrics.banned.set(self.offences.banned() as i64);
        }
    }

    fn publish(&mut self, room: &str) {
        let Ok(topic) = topic_of(room) else { return };
        let relay_addrs: Vec<Multiaddr> =
            self.snapshot.borrow().addrs.iter().map(|(_, a)| a.clone()).collect();
        let list = self.rooms.list(room, &relay_addrs);
        let count = list.members.len();
        self.metrics
            .room_members
            .get_or_create(&RoomLabel { room: room.to_string() })
            .set(count as i64);
        let rooms = &mut self.swarm.behaviour_mut().rooms;
        let topic = IdentTopic::new(topic);
        if let Err(e) = rooms.subscribe(&topic) {
            tracing::warn!(%room, "cannot subscribe to the room topic: {e}");
        }
        match rooms.publish(topic, list.encode_to_vec()) {
            Ok(_) | Err(gossipsub::PublishError::NoPeersSubscribedToTopic) => {}
            Err(e) => tracing::debug!(%room, "member list not published: {e}"),
        }
    }

    fn add_listen_addr(&mut self, address: Multiaddr) {
        let Some(kind) = listener_of(&address) else { return };
        let peer_id = *self.swarm.local_peer_id();
        if self.announce.is_empty() {
            // Reservations carry the relay's external addresses; without --announce the bound
            // ones are what peers can reach.
            self.swarm.add_external_address(address.clone());
        }
        let dialable = address.with_p2p(peer_id).unwrap_or_else(|a| a);
        tracing::info!(addr = %dialable, "listening");
        self.snapshot.send_modify(|s| {
            s.addrs.push((kind, dialable));
            s.addrs.sort();
        });
    }
}

fn listen_addrs(args: &ListenArgs) -> [(Multiaddr, &'static str); 3] {
    let ip = match args.listen_addr {
        IpAddr::V4(ip) => Protocol::Ip4(ip),
        IpAddr::V6(ip) => Protocol::Ip6(ip),
    };
    let base = Multiaddr::empty().with(ip);
    [
        (
            base.clone().with(Protocol::Tcp(args.ws_port)).with(Protocol::Ws("/".into())),
            "--ws-port",
        ),
        (
            base.clone().with(Protocol::Udp(args.webrtc_port)).with(Protocol::WebRTCDirect),
            "--webrtc-port",
        ),
        (base.with(Protocol::Tcp(args.tcp_port)), "--tcp-port"),
    ]
}
