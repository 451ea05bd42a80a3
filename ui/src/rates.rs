//! Per-second rates of both protocols, from the counters a node reports at each stats interval
//! (`?sample=`): exact differences of cumulative counters over the measured interval, never a
//! smoothed estimate.

use leptos::prelude::*;
use syncscope_node::node::NodeStats;

use crate::series::Series;

/// One interval's rates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// Seconds since the node started, at the end of the interval.
    pub t: f64,
    pub bitswap_mb_s: f64,
    pub pullsync_mb_s: f64,
    pub bitswap_blocks_s: f64,
    pub pullsync_chunks_s: f64,
    /// Duplicate blocks among the blocks received in the interval, in percent.
    pub bitswap_dup_pct: f64,
    /// Chunks delivered twice among the chunks delivered in the interval, in percent.
    pub pullsync_dup_pct: f64,
}

/// Turns successive [`NodeStats`] into [`Rates`]. The first interval starts with the node, whose
/// counters start at zero: a fetch done within the node's first second is charted too.
#[derive(Default)]
pub struct RateSampler {
    prev: NodeStats,
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

impl RateSampler {
    pub fn push(&mut self, now: NodeStats) -> Rates {
        let prev = std::mem::replace(&mut self.prev, now);
        let dt = (now.elapsed.as_secs_f64() - prev.elapsed.as_secs_f64()).max(1e-3);
        let (b, pb) = (now.bitswap.counters, prev.bitswap.counters);
        let (p, pp) = (now.pullsync, prev.pullsync);
        let blocks = b.blocks_received - pb.blocks_received;
        let delivered = p.counters.delivered - pp.counters.delivered;
        Rates {
            t: now.elapsed.as_secs_f64(),
            bitswap_mb_s: (b.block_bytes_received - pb.block_bytes_received) as f64 / 1e6 / dt,
            pullsync_mb_s: (p.counters.bytes_received - pp.counters.bytes_received) as f64
                / 1e6
                / dt,
            bitswap_blocks_s: blocks as f64 / dt,
            pullsync_chunks_s: delivered as f64 / dt,
            bitswap_dup_pct: pct(b.duplicate_blocks - pb.duplicate_blocks, blocks),
            pullsync_dup_pct: pct(p.chunks_duplicate - pp.chunks_duplicate, delivered),
        }
    }
}

/// The charted series, as signals.
#[derive(Clone, Copy)]
pub struct RateCharts {
    pub throughput: RwSignal<Vec<Series>>,
    pub items: RwSignal<Vec<Series>>,
    pub duplicates: RwSignal<Vec<Series>>,
}

impl RateCharts {
    pub fn new() -> Self {
        let pair = |a: &str, b: &str| {
            RwSignal::new(vec![
                Series { name: a.into(), points: Vec::new() },
                Series { name: b.into(), points: Vec::new() },
            ])
        };
        Self {
            throughput: pair("Bitswap", "pull-sync"),
            items: pair("Bitswap blocks", "pull-sync chunks"),
            duplicates: pair("Bitswap", "pull-sync"),
        }
    }

    pub fn push(&self, r: Rates) {
        let add = |signal: RwSignal<Vec<Series>>, a: f64, b: f64| {
            signal.update(|s| {
                s[0].points.push((r.t, a));
                s[1].points.push((r.t, b));
            })
        };
        add(self.throughput, r.bitswap_mb_s, r.pullsync_mb_s);
        add(self.items, r.bitswap_blocks_s, r.pullsync_chunks_s);
        add(self.duplicates, r.bitswap_dup_pct, r.pullsync_dup_pct);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;

    fn stats(secs: u64, blocks: u64, dups: u64, bytes: u64, chunks: u64) -> NodeStats {
        let mut s = NodeStats { elapsed: Duration::from_secs(secs), ..NodeStats::default() };
        s.bitswap.counters.blocks_received = blocks;
        s.bitswap.counters.duplicate_blocks = dups;
        s.bitswap.counters.block_bytes_received = bytes;
        s.pullsync.counters.delivered = chunks;
        s
    }

    #[test]
    fn a_known_schedule_gives_the_known_rates() {
        let mut sampler = RateSampler::default();
        assert_eq!(sampler.push(stats(1, 0, 0, 0, 0)).bitswap_blocks_s, 0.0);
        let r = sampler.push(stats(3, 40, 4, 10_000_000, 500));
        assert_eq!((r.t, r.bitswap_blocks_s, r.bitswap_mb_s), (3.0, 20.0, 5.0));
        assert_eq!((r.bitswap_dup_pct, r.pullsync_chunks_s), (10.0, 250.0));
        let quiet = sampler.push(stats(4, 40, 4, 10_000_000, 500));
        assert_eq!((quiet.bitswap_blocks_s, quiet.bitswap_dup_pct), (0.0, 0.0));
    }

    #[test]
    fn a_fetch_within_the_first_second_is_charted() {
        let r = RateSampler::default().push(stats(1, 10, 1, 2_000_000, 0));
        assert_eq!((r.t, r.bitswap_mb_s, r.bitswap_dup_pct), (1.0, 2.0, 10.0));
    }
}
