//! `/metrics` in Prometheus text format: libp2p's own swarm and bandwidth metrics plus the
//! relay's: connections by transport, reservations, circuits, bytes relayed, room members,
//! refusals and bans.

use std::sync::atomic::{AtomicU64, Ordering};

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

/// Encodes every registered metric in Prometheus text format.
pub fn encode(registry: &Registry) -> String {
    let mut out = String::new();
    if let Err(e) = prometheus_client::encoding::text::encode(&mut out, registry) {
        tracing::error!("cannot encode metrics: {e}");
    }
    out
}
