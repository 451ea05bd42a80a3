//! Pull-sync metrics: the counters of both cores in one struct, and the per-second rate of chunks
//! delivered and verified (what bee exports as `bee_pullsync_chunks_delivered`).

use super::timeseries::Timeseries;
use syncscope_proto::pullsync::{PullerStats, ServerStats};
use web_time::Instant;

/// Counters for a node's pull-sync, both directions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PullsyncCounters {
    /// Chunks peers offered to this node.
    pub offered: u64,
    /// Offered chunks this node asked for.
    pub wanted: u64,
    /// Offered chunks not asked for because another peer was already delivering them.
    pub skipped_in_flight: u64,
    /// Chunks received that matched the offer and verified.
    pub delivered: u64,
    /// Chunks received that failed verification or were not wanted.
    pub rejected: u64,
    /// Chunks this node's server sent.
    pub sent: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
}

impl PullsyncCounters {
    pub fn from_stats(puller: &PullerStats, server: &ServerStats) -> Self {
        PullsyncCounters {
            offered: puller.chunks_offered,
            wanted: puller.chunks_wanted,
            skipped_in_flight: puller.chunks_skipped_in_flight,
            delivered: puller.chunks_delivered,
            rejected: puller.chunks_rejected,
            sent: server.chunks_sent,
            bytes_received: puller.bytes_received,
            bytes_sent: server.bytes_sent,
        }
    }
}

/// The delivery-rate series, fed from the puller's events as the glue drains them.
#[derive(Clone, Debug)]
pub struct PullsyncMetrics {
    delivered: Timeseries,
}

impl PullsyncMetrics {
    /// Per-second delivery counts for the last hour, starting at `origin`.
    pub fn new(origin: Instant) -> Self {
        PullsyncMetrics { delivered: Timeseries::per_second(origin, 3600) }
    }

    /// A chunk was delivered and verified.
    pub fn record_delivery(&mut self, now: Instant) {
        self.delivered.record(now, 1);
    }

    pub fn delivery_rate(&self) -> &Timeseries {
        &self.delivered
    }
}
