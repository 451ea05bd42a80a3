//! The page's node and what it reports about its link to the relay and its room, as signals.

use std::collections::HashMap;
use std::time::Duration;

use web_time::Instant;

use futures::StreamExt;
use leptos::prelude::*;
use syncscope_node::net::PeerId;
use syncscope_node::node;
use syncscope_node::node::{NodeConfig, NodeEvent, RoomMember, StoredBlocks, TransportKind};
use syncscope_node::PeerKind;

use crate::config;
use crate::probe::LinkProbe;
use crate::rates::{RateCharts, RateSampler};
use crate::series::Series;
use crate::storage;
use crate::stored::Stored;
use crate::timing;
use crate::transfers::Transfers;

#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    Loading,
    Connecting,
    Connected,
    Failed(String),
}

/// Everything the connection and room panels show.
#[derive(Clone, Copy)]
pub struct Connection {
    pub status: RwSignal<Status>,
    pub own_peer_id: RwSignal<Option<String>>,
    /// Where the node keeps its data, in words.
    pub storage: RwSignal<Option<String>>,
    /// What the store held when the node started.
    pub stored_at_start: RwSignal<Option<StoredBlocks>>,
    pub relay_peer_id: RwSignal<Option<String>>,
    pub transport: RwSignal<Option<&'static str>>,
    pub rtt: RwSignal<Option<Duration>>,
    /// Every ping round trip to the relay, in milliseconds, since the page opened.
    pub rtt_history: RwSignal<Series>,
    /// Whether other peers can dial this one through the relay.
    pub reachable: RwSignal<bool>,
    pub room: RwSignal<Option<String>>,
    pub members: RwSignal<Vec<RoomMember>>,
    /// Connected peers outside the room that said what they run, such as kubo or Helia nodes
    /// dialled with `?peer=`.
    pub outsiders: RwSignal<Vec<Outsider>>,
    /// How this page reaches each connected peer other than the relay.
    pub links: RwSignal<HashMap<PeerId, PeerLink>>,
    /// Milliseconds from navigation start until the relay connection was up.
    pub connected_after_ms: RwSignal<Option<f64>>,
    /// The latest problem worth telling the user about, in words.
    pub notice: RwSignal<Option<String>>,
    /// When the page started its node: time zero of every chart.
    pub started: Instant,
}

impl Connection {
    fn new() -> Self {
        Self {
            status: RwSignal::new(Status::Loading),
            own_peer_id: RwSignal::new(None),
            storage: RwSignal::new(None),
            stored_at_start: RwSignal::new(None),
            relay_peer_id: RwSignal::new(None),
            transport: RwSignal::new(None),
            rtt: RwSignal::new(None),
            rtt_history: RwSignal::new(Series { name: "relay RTT".into(), points: Vec::new() }),
            reachable: RwSignal::new(false),
            room: RwSignal::new(None),
            members: RwSignal::new(Vec::new()),
            outsiders: RwSignal::new(Vec::new()),
            links: RwSignal::new(HashMap::new()),
            connected_after_ms: RwSignal::new(None),
            notice: RwSignal::new(None),
            started: Instant::now(),
        }
    }
}

/// How the page reaches a peer: "direct (WebRTC)", "relayed (circuit)" or the relay's own
/// transport; when a direct connection was tried and failed, why; and the latest ping's round
/// trip, which Bitswap ranks the peer by until its answers measure one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerLink {
    pub via: &'static str,
    pub not_direct: Option<String>,
    pub rtt: Option<Duration>,
}

/// A connected peer that is not in the room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outsider {
    pub peer: PeerId,
    pub agent: std::sync::Arc<str>,
    pub kind: PeerKind,
}

/// What the node's events update besides the connection.
#[derive(Clone, Copy)]
pub struct Observers {
    pub transfers: Transfers,
    pub charts: RateCharts,
    pub probe: LinkProbe,
    pub stored: Stored,
}

/// Starts the node and keeps the returned signals, and `observers`, up to date.
pub fn start(observers: Observers) -> Connection {
    let conn = Connection::new();
    leptos::task::spawn_local(async move {
        if let Err(e) = run(conn, observers).await {
            tracing::error!("{e}");
            conn.status.set(Status::Failed(e));
        }
    });
    conn
}

async fn run(conn: Connection, observers: Observers) -> Result<(), String> {
    let config = config::fetch().await?;
    timing::mark("config");
    let relay = config::relay_address(&config, &config::transports_from_url()?)?;
    let direct = config::direct_webrtc_from_url(&config)?;
    let room = config::url_param("room").unwrap_or(config.room);
    conn.relay_peer_id.set(Some(relay.peer_id.to_string()));
    conn.status.set(Status::Connecting);
    let relay_peer = relay.peer_id;
    let stats_every = config::stats_every_from_url()?;
    let node = NodeConfig::new(relay).with_direct_webrtc(direct).with_stats_every(stats_every);
    let (node_config, storage) = storage::open(node).await;
    conn.storage.set(Some(storage.description));
    if let Some(problem) = storage.problem {
        tracing::warn!("{problem}");
        conn.notice.set(Some(problem));
    }
    // The tab owns its stored node until the page goes away.
    let _lock = storage.lock;
    let persistent = _lock.is_some();
    let mut node = node::start(node_config).await.map_err(|e| e.to_string())?;
    timing::mark("node-started");
    conn.own_peer_id.set(Some(node.peer_id.to_string()));
    conn.stored_at_start.set(Some(node.stored));
    node.join_room(&room).map_err(|e| e.to_string())?;
    conn.room.set(Some(room));
    observers.transfers.node_started(node.control.clone());
    // `?peer=MULTIADDR`: a peer outside the room, such as a kubo or Helia node.
    if let Some(peer) = config::url_param("peer") {
        observers.transfers.dial(&peer);
    }
    observers.stored.node_started(node.control.clone(), node.content.clone(), persistent);
    let mut sampler = RateSampler::default();
    while let Some(event) = node.events.next().await {
        match event {
            NodeEvent::Stats(stats) => observers.charts.push(sampler.push(*stats)),
            NodeEvent::Fetch(update) => observers.transfers.on_fetch(update),
            NodeEvent::ContentAdded(added) => observers.transfers.on_added(added),
            NodeEvent::Stored(change) => observers.stored.on_change(change),
            NodeEvent::Connected { peer, transport, .. } if peer != relay_peer => {
                if matches!(transport, TransportKind::Circuit | TransportKind::WebRtc) {
                    observers.probe.peer_connected(peer);
                }
                // For the benchmark's dial_to_first_byte_ms: when each kind of link came up.
                timing::mark(&format!("peer-connected:{}", transport.label()));
                let link = PeerLink { via: transport.label(), not_direct: None, rtt: None };
                conn.links.update(|all| drop(all.insert(peer, link)));
            }
            NodeEvent::Bitswap { peer, version } => {
                observers.transfers.bitswap_peer(peer, version.is_some())
            }
            NodeEvent::Room(update) if Some(&update.room) == conn.room.get_untracked().as_ref() => {
                observers.transfers.room_members(&update.members);
                conn.members.set(update.members);
            }
            NodeEvent::Connected { peer, .. } if peer == relay_peer => {
                observers.probe.relay_connected(node.control.clone(), relay_peer);
                on_event(conn, relay_peer, event);
            }
            event => on_event(conn, relay_peer, event),
        }
    }
    Err("the node stopped".into())
}

fn on_event(conn: Connection, relay: PeerId, event: NodeEvent) {
    match event {
        NodeEvent::Connected { peer, transport, .. } if peer == relay => {
            conn.transport.set(Some(transport.label()));
            conn.status.set(Status::Connected);
            if conn.connected_after_ms.get_untracked().is_none() {
                conn.connected_after_ms.set(timing::mark("relay-connected"));
            }
        }
        NodeEvent::Disconnected { peer, cause } if peer == relay => {
            let why = cause.map_or_else(|| "closed".to_owned(), |c| c.to_string());
            conn.status.set(Status::Failed(format!("lost the relay connection: {why}")));
            conn.reachable.set(false);
        }
        NodeEvent::DialFailed { peer: Some(peer), error } if peer == relay => {
            conn.status.set(Status::Failed(format!("cannot connect to the relay: {error}")));
        }
        NodeEvent::Ping { peer, rtt } if peer == relay => {
            conn.rtt.set(Some(rtt));
            let t = conn.started.elapsed().as_secs_f64();
            conn.rtt_history.update(|s| s.points.push((t, rtt.as_secs_f64() * 1e3)));
        }
        NodeEvent::Ping { peer, rtt } => conn.links.update(|all| {
            if let Some(link) = all.get_mut(&peer) {
                link.rtt = Some(rtt);
            }
        }),
        NodeEvent::Identified { peer, agent, kind } if peer != relay => {
            let in_room = conn.members.with_untracked(|all| all.iter().any(|m| m.peer == peer));
            if !in_room {
                conn.outsiders.update(|all| {
                    all.retain(|o| o.peer != peer);
                    all.push(Outsider { peer, agent, kind });
                });
            }
        }
        NodeEvent::Disconnected { peer, .. } => {
            conn.outsiders.update(|all| all.retain(|o| o.peer != peer));
            conn.links.update(|all| drop(all.remove(&peer)));
        }
        NodeEvent::DirectWebRtcFailed { peer, error } => conn.links.update(|all| {
            if let Some(link) = all.get_mut(&peer) {
                link.not_direct = Some(format!("direct WebRTC failed: {error}"));
            }
        }),
        NodeEvent::Reserved { .. } => conn.reachable.set(true),
        NodeEvent::ReservationFailed { error } => {
            conn.notice.set(Some(format!("other peers cannot reach this page: {error}")));
        }
        NodeEvent::Error { error } => conn.notice.set(Some(error.to_string())),
        _ => {}
    }
}
