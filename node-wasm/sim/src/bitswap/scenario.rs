//! The scenario sets of REFERENCE.md and custom scenarios.

use std::time::Duration;

use super::fetch::{Distribution, FetchPattern};
use super::seed_figures::{matrix_names, seed_figures, SeedFigures};
use crate::{LinkModel, SlowPairs};

/// When the seeds connect to the leeches, counted from the fetch's start: seed `k` at
/// `first + k * gap`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeedJoins {
    pub first: Duration,
    pub gap: Duration,
}

/// One benchmark scenario: who holds what, how it is fetched, and the network.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    /// All nodes, seeds and leeches together.
    pub nodes: usize,
    /// The last `leeches` nodes fetch; the others are seeds.
    pub leeches: usize,
    pub blocks: usize,
    pub block_size: usize,
    /// Size of block 0 when it differs (the matrix uses 800 bytes).
    pub first_block_size: Option<usize>,
    pub distribution: Distribution,
    pub fetch: FetchPattern,
    pub links: LinkModel,
    /// Bytes per second of a downlink that every message to a leech crosses after its link,
    /// shared by the senders: one connection carrying all peers, as through a relay.
    pub leech_downlink: Option<f64>,
    /// Seeds that join a fetch under way. None: everyone is connected from the start.
    pub seed_joins: Option<SeedJoins>,
    pub store_latency: Duration,
    pub seed: u64,
}

impl Scenario {
    /// A custom scenario on fixed or jittered links; `bandwidth` in bytes per second.
    #[allow(clippy::too_many_arguments)]
    pub fn custom(
        nodes: usize,
        blocks: usize,
        block_size: usize,
        distribution: Distribution,
        fetch: FetchPattern,
        latency: Duration,
        jitter: Duration,
        bandwidth: Option<f64>,
        seed: u64,
    ) -> Self {
        let links = if jitter.is_zero() {
            LinkModel::Fixed { latency, bandwidth }
        } else {
            LinkModel::Normal { latency, jitter, bandwidth, bandwidth_sd: 0.0, slow: None }
        };
        Self {
            name: format!("custom-{nodes}n-{blocks}x{block_size}-{distribution}-{fetch}"),
            nodes,
            leeches: 1,
            blocks,
            block_size,
            first_block_size: None,
            distribution,
            fetch,
            links,
            leech_downlink: None,
            seed_joins: None,
            store_latency: Duration::ZERO,
            seed,
        }
    }

    /// The same scenario with every leech behind a shared downlink of `bandwidth` bytes/s.
    pub fn with_leech_downlink(mut self, bandwidth: f64) -> Self {
        self.leech_downlink = Some(bandwidth);
        self.name = format!("{}-down{}Mbps", self.name, bandwidth * 8.0 / 1e6);
        self
    }

    pub fn seeds(&self) -> usize {
        self.nodes - self.leeches
    }

    /// When seed `seed` connects to the leeches, counted from the fetch's start.
    pub fn seed_joins_at(&self, seed: usize) -> Duration {
        self.seed_joins.map_or(Duration::ZERO, |j| j.first + j.gap * seed as u32)
    }

    /// Whether nodes `a` and `b` are connected from the start: all are, except leeches and the
    /// seeds that join later.
    pub fn connected_at_start(&self, a: usize, b: usize) -> bool {
        let seeds = self.seeds();
        match (a < seeds, b < seeds) {
            (true, false) => self.seed_joins_at(a).is_zero(),
            (false, true) => self.seed_joins_at(b).is_zero(),
            _ => true,
        }
    }

    pub fn block_len(&self, index: usize) -> usize {
        match (index, self.first_block_size) {
            (0, Some(first)) => first,
            _ => self.block_size,
        }
    }

    pub fn seed_figures(&self) -> Option<SeedFigures> {
        seed_figures(&self.name)
    }
}

/// The 18 scenarios of the seed: 10 ms one way, no bandwidth limit, block 0 of 800 bytes and
/// the others of 8000, one fetcher, discovery by broadcast only.
pub fn fixed_delay_matrix(seed: u64) -> Vec<Scenario> {
    matrix_names()
        .map(|name| {
            let mut parts = name.split('-');
            let nodes: usize =
                parts.next().and_then(|n| n.trim_end_matches("Nodes").parse().ok()).unwrap_or(3);
            let distribution = match parts.next() {
                Some("Overlap1") => Distribution::Overlap1,
                Some("Overlap3") => Distribution::Overlap2,
                Some("OnePeerPerBlock") => Distribution::OnePeerPerBlock,
                _ => Distribution::AllToAll,
            };
            let fetch = match parts.next() {
                Some("OneAtATime") => FetchPattern::OneAtATime,
                Some("BatchBy10" | "BatchFetchBy10") => FetchPattern::BatchBy10,
                Some("AllConcurrent") => FetchPattern::AllConcurrent,
                Some("UnixfsFetch") => FetchPattern::Unixfs,
                Some("UnixfsFetchLarge") => FetchPattern::UnixfsLarge,
                _ => FetchPattern::BigBatch,
            };
            let blocks = match nodes {
                200 => 20,
                _ if fetch == FetchPattern::UnixfsLarge => 1000,
                _ => 100,
            };
            Scenario {
                name: name.to_string(),
                nodes,
                leeches: 1,
                blocks,
                block_size: 8000,
                first_block_size: Some(800),
                distribution,
                fetch,
                links: LinkModel::Fixed { latency: Duration::from_millis(10), bandwidth: None },
                leech_downlink: None,
                seed_joins: None,
                store_latency: Duration::ZERO,
                seed,
            }
        })
        .collect()
}

/// 300 nodes, 200 blocks of 8000 bytes on every seed, fetched as a unixfs file, latency
/// 60 ms + N(0, 20 ms) and bandwidth N(1.25 MB/s, 0.3 MB/s) per directed pair; then the same
/// with 30 % of pairs slowed by +140 ms, +740 ms or +3940 ms at half the bandwidth.
pub fn realistic_set(seed: u64) -> Vec<Scenario> {
    let base = |name: &str, slow: Option<SlowPairs>| Scenario {
        name: name.to_string(),
        nodes: 300,
        leeches: 1,
        blocks: 200,
        block_size: 8000,
        first_block_size: None,
        distribution: Distribution::AllToAll,
        fetch: FetchPattern::Unixfs,
        links: LinkModel::Normal {
            latency: Duration::from_millis(60),
            jitter: Duration::from_millis(20),
            bandwidth: Some(1.25e6),
            bandwidth_sd: 0.3e6,
            slow,
        },
        leech_downlink: None,
        seed_joins: None,
        store_latency: Duration::ZERO,
        seed,
    };
    let slow = |ms: u64| SlowPairs {
        fraction: 0.3,
        extra_latency: Duration::from_millis(ms),
        bandwidth_factor: 0.5,
    };
    vec![
        base("Realistic-300Nodes", None),
        base("Realistic-300Nodes-30pct+140ms", Some(slow(140))),
        base("Realistic-300Nodes-30pct+740ms", Some(slow(740))),
        base("Realistic-300Nodes-30pct+3940ms", Some(slow(3940))),
    ]
}

/// Datacenter: 5 ms + N(0, 3 ms), 125 MB/s, 256 KiB blocks, 25 ms blockstore reads.
pub fn datacenter_set(seed: u64) -> Vec<Scenario> {
    let dc = |name: &str, nodes, leeches, blocks, fetch| Scenario {
        name: name.to_string(),
        nodes,
        leeches,
        blocks,
        block_size: 256 * 1024,
        first_block_size: None,
        distribution: Distribution::AllToAll,
        fetch,
        links: LinkModel::Normal {
            latency: Duration::from_millis(5),
            jitter: Duration::from_millis(3),
            bandwidth: Some(125e6),
            bandwidth_sd: 0.0,
            slow: None,
        },
        leech_downlink: None,
        seed_joins: None,
        store_latency: Duration::from_millis(25),
        seed,
    };
    vec![
        dc("Datacenter-3Nodes-100x256KiB", 3, 1, 100, FetchPattern::Unixfs),
        dc("Datacenter-3Leeches3Seeds-1000x256KiB", 6, 3, 1000, FetchPattern::UnixfsLarge),
    ]
}

/// A browser fetching an 8 MiB UnixFS file (a root of 1600 bytes and 32 leaves of 256 KiB)
/// from seeds over slow paths, where one block takes far longer to arrive than a round trip:
/// - through a relay: native seeds on fast links, 20 ms each way, and every message to the
///   browser crossing its one 8 Mbit/s connection to the relay;
/// - over direct 8 Mbit/s links (WebRTC), 20 ms each way;
/// - through the relay from 9 seeds that each hold half of the blocks;
/// - over direct links from 3 seeds of which the second and third join 0.5 s and 1 s into the
///   fetch, when the first holds every want-block;
/// - through the relay from 3 seeds that join 40, 60 and 80 ms into the fetch: a browser starts
///   fetching as soon as it is connected, before any seed is ready for Bitswap, and its seeds
///   get ready one after another (as measured in Chromium: 10 to 35 ms apart).
pub fn slow_link_set(seed: u64) -> Vec<Scenario> {
    let file = |name: &str, nodes, distribution, bandwidth, downlink| Scenario {
        name: name.to_string(),
        nodes,
        leeches: 1,
        blocks: 33,
        block_size: 256 * 1024,
        first_block_size: Some(1600),
        distribution,
        fetch: FetchPattern::Unixfs,
        links: LinkModel::Fixed { latency: Duration::from_millis(20), bandwidth },
        leech_downlink: downlink,
        seed_joins: None,
        store_latency: Duration::ZERO,
        seed,
    };
    let mbps = |m: f64| m * 1e6 / 8.0;
    vec![
        file("Relay-4Nodes-8MiB-8Mbps", 4, Distribution::AllToAll, None, Some(mbps(8.0))),
        file("Direct-4Nodes-8MiB-8Mbps", 4, Distribution::AllToAll, Some(mbps(8.0)), None),
        file("Relay-10Nodes-Half-8MiB-8Mbps", 10, Distribution::Random(0.5), None, Some(mbps(8.0))),
        Scenario {
            seed_joins: Some(SeedJoins { first: Duration::ZERO, gap: Duration::from_millis(500) }),
            ..file(
                "Direct-4Nodes-8MiB-8Mbps-LateSeeds",
                4,
                Distribution::AllToAll,
                Some(mbps(8.0)),
                None,
            )
        },
        Scenario {
            seed_joins: Some(SeedJoins {
                first: Duration::from_millis(40),
                gap: Duration::from_millis(20),
            }),
            ..file(
                "Relay-4Nodes-8MiB-8Mbps-LateSeeds",
                4,
                Distribution::AllToAll,
                None,
                Some(mbps(8.0)),
            )
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_has_the_seed_shapes() {
        let m = fixed_delay_matrix(1);
        assert_eq!(m.len(), 18);
        let big = m.iter().find(|s| s.name == "200Nodes-AllToAll-BigBatch").unwrap();
        assert_eq!((big.nodes, big.blocks, big.fetch), (200, 20, FetchPattern::BigBatch));
        let large = m.iter().find(|s| s.name == "10Nodes-AllToAll-UnixfsFetchLarge").unwrap();
        assert_eq!((large.nodes, large.blocks), (10, 1000));
        let o3 = m.iter().find(|s| s.name == "3Nodes-Overlap3-BatchBy10").unwrap();
        assert_eq!((o3.distribution, o3.fetch), (Distribution::Overlap2, FetchPattern::BatchBy10));
        assert!(m.iter().all(|s| s.seed_figures().is_some()));
    }
}
