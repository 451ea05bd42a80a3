//! `/metrics` in Prometheus text format: libp2p's own swarm and bandwidth metrics plus the
//! relay's: connections by transport, reservations, circuits, bytes relayed, room members,
//! refusals and bans; and the protocol counters of the seed peers it runs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use libp2p::PeerId;
use syncscope_node::node::NodeStats;

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge},
    registry::Registry,
};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TransportLabel {
    pub transport: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RoomLabel {
    pub room: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabel {
    pub reason: String,
}

pub struct RelayMetrics {
    pub connections: Family<TransportLabel, Gauge>,
    pub reservations: Gauge,
    pub circuits: Gauge,
    pub room_members: Family<RoomLabel, Gauge>,
    pub refused: Family<ReasonLabel, Counter>,
    pub banned: Gauge,
    relayed_bytes: Counter,
    relayed_seen: AtomicU64,
}

impl RelayMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = Self {
            connections: Family::default(),
            reservations: Gauge::default(),
            circuits: Gauge::default(),
            room_members: Family::default(),
            refused: Family::default(),
            banned: Gauge::default(),
            relayed_bytes: Counter::default(),
            relayed_seen: AtomicU64::new(0),
        };
        let r = registry.sub_registry_with_prefix("syncscope_relay");
        r.register("connections", "Open connections by transport", metrics.connections.clone());
        r.register("reservations", "Reservations held", metrics.reservations.clone());
        r.register("circuits", "Circuits open", metrics.circuits.clone());
        r.register(
            "relayed_bytes",
            "Bytes relayed through circuits",
            metrics.relayed_bytes.clone(),
        );
        r.register("room_members", "Members listed per room", metrics.room_members.clone());
        r.register(
            "refused",
            "Requests and connections refused, by reason",
            metrics.refused.clone(),
        );
        r.register("banned_peers", "Peers cut off for misbehaving", metrics.banned.clone());
        metrics
    }

    pub fn refuse(&self, reason: &str) {
        self.refused.get_or_create(&ReasonLabel { reason: reason.into() }).inc();
    }

    /// Brings the relayed-bytes counter up to date; called before each scrape.
    pub fn sync_relayed_bytes(&self) {
        let total = libp2p::relay::relayed_bytes();
        let seen = self.relayed_seen.swap(total, Ordering::Relaxed);
        self.relayed_bytes.inc_by(total.saturating_sub(seen));
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PeerLabel {
    pub peer: String,
}

/// The protocol counters of the seed peers this relay runs, per peer.
#[derive(Default)]
pub struct SeedMetrics {
    counters: Vec<(&'static str, Family<PeerLabel, Counter>)>,
    peers: Family<PeerLabel, Gauge>,
    last: Mutex<HashMap<PeerId, [u64; SEED_COUNTERS.len()]>>,
}

/// The counters exported per seed peer, and how to read each from a node's stats.
type ReadCounter = fn(&NodeStats) -> u64;

const SEED_COUNTERS: [(&str, &str, ReadCounter); 7] = [
    ("bitswap_blocks_sent", "Bitswap blocks sent", |s| s.bitswap.counters.blocks_sent),
    ("bitswap_block_bytes_sent", "Bitswap block bytes sent", |s| {
        s.bitswap.counters.block_bytes_sent
    }),
    ("bitswap_blocks_received", "Bitswap blocks received", |s| s.bitswap.counters.blocks_received),
    ("bitswap_duplicate_blocks", "Bitswap duplicate blocks received", |s| {
        s.bitswap.counters.duplicate_blocks
    }),
    ("bitswap_dont_haves_sent", "Bitswap DONT_HAVE answers sent", |s| {
        s.bitswap.counters.dont_haves_sent
    }),
    ("pullsync_chunks_sent", "Pull-sync chunks sent", |s| s.pullsync.counters.sent),
    ("pullsync_chunks_delivered", "Pull-sync chunks delivered to this peer", |s| {
        s.pullsync.counters.delivered
    }),
];

impl SeedMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        let r = registry.sub_registry_with_prefix("syncscope_seed");
        let counters = SEED_COUNTERS
            .iter()
            .map(|(name, help, _)| {
                let family = Family::<PeerLabel, Counter>::default();
                r.register(*name, *help, family.clone());
                (*name, family)
            })
            .collect();
        let peers = Family::<PeerLabel, Gauge>::default();
        r.register("connected_peers", "Peers a seed peer is connected to", peers.clone());
        Self { counters, peers, last: Mutex::default() }
    }

    /// Brings a seed peer's counters up to the stats it just reported.
    pub fn record(&self, peer: PeerId, stats: &NodeStats) {
        let label = PeerLabel { peer: peer.to_string() };
        self.peers.get_or_create(&label).set(stats.connected_peers as i64);
        let Ok(mut last) = self.last.lock() else { return };
        let seen = last.entry(peer).or_default();
        for (i, ((_, family), (_, _, read))) in self.counters.iter().zip(SEED_COUNTERS).enumerate()
        {
            let now = read(stats);
            family.get_or_create(&label).inc_by(now.saturating_sub(seen[i]));
            seen[i] = now;
        }
    }
}

/// Encodes every registered metric in Prometheus text format.
pub fn encode(registry: &Registry) -> String {
    let mut out = String::new();
    if let Err(e) = prometheus_client::encoding::text::encode(&mut out, registry) {
        tracing::error!("cannot encode metrics: {e}");
    }
    out
}
