//! Runs a scenario and reduces it to one result row.

use std::time::Duration;

use bytes::Bytes;
use cid::Cid;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};
use web_time::Instant;

use super::node::SimBitswapNode;
use super::scenario::Scenario;
use crate::{Links, Network, NodeId};
use syncscope_proto::bitswap::{raw_cid, ClientMode, Config, Node, ProtocolVersion, Stats};
use syncscope_proto::Core;

/// Virtual time after which a run is reported as not complete.
const TIME_LIMIT: Duration = Duration::from_secs(600);

/// One row of the benchmark: the fetchers' view of a run (summed over leeches).
#[derive(Debug, Clone, PartialEq)]
pub struct RunResult {
    pub scenario: String,
    pub mode: ClientMode,
    pub complete: bool,
    /// When the last leech had every block.
    pub time: Duration,
    pub lower_bound: Duration,
    pub blocks_received: u64,
    pub duplicates: u64,
    pub msgs_sent: u64,
    pub msgs_received: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub timeouts: u64,
    /// Peers that sent a leech at least a tenth of its blocks (the fewest over leeches): how
    /// widely the fetch was spread. Not part of [`result_hash`], which predates it.
    pub senders: usize,
}

impl RunResult {
    /// Duplicates over blocks received, in percent.
    pub fn dup_pct(&self) -> f64 {
        if self.blocks_received == 0 {
            0.0
        } else {
            100.0 * self.duplicates as f64 / self.blocks_received as f64
        }
    }
}

/// Random block data and CIDs for a scenario, drawn from its seed.
fn make_blocks(s: &Scenario, rng: &mut ChaCha8Rng) -> Vec<(Cid, Bytes)> {
    (0..s.blocks)
        .map(|i| {
            let mut data = vec![0u8; s.block_len(i)];
            rng.fill_bytes(&mut data);
            (raw_cid(&data), Bytes::from(data))
        })
        .collect()
}

/// Runs `scenario` with every node's client in `mode`.
pub fn run(scenario: &Scenario, mode: ClientMode) -> RunResult {
    run_with(scenario, &Config::new(mode))
}

/// Runs `scenario` with every node on `config` (each with its own RNG seed), in its mode.
pub fn run_with(scenario: &Scenario, config: &Config) -> RunResult {
    let mode = config.mode;
    let epoch = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(scenario.seed);
    let blocks = make_blocks(scenario, &mut rng);
    let holders = scenario.distribution.assign(scenario.seeds(), scenario.blocks, &mut rng);
    let links = Links::draw(scenario.nodes, scenario.links, scenario.seed ^ 0x6c69_6e6b);
    let lower_bound = lower_bound(scenario, &links, &blocks);
    let version = match mode {
        ClientMode::Sessions => ProtocolVersion::V1_2_0,
        ClientMode::Legacy => ProtocolVersion::V1_1_0,
    };
    let nodes = (0..scenario.nodes)
        .map(|i| {
            let config = config.clone().with_rng_seed(scenario.seed.wrapping_add(i as u64));
            let mut node = Node::new(config);
            for peer in
                (0..scenario.nodes).filter(|p| *p != i && scenario.connected_at_start(i, *p))
            {
                node.peer_connected(epoch, NodeId(peer as u32), version);
                // A connection open before the fetch has had its pings (a node pings every
                // connection as it opens, then every few seconds).
                let rtt = links.get(i, peer).latency + links.get(peer, i).latency;
                node.peer_round_trip(NodeId(peer as u32), rtt);
            }
            SimBitswapNode::with_store(node, scenario.store_latency)
        })
        .collect();
    let mut net = Network::new(epoch, nodes, links);
    if let Some(bandwidth) = scenario.leech_downlink {
        for leech in scenario.seeds()..scenario.nodes {
            net.set_downlink(NodeId(leech as u32), bandwidth);
        }
    }
    for (b, seeds) in holders.iter().enumerate() {
        for &s in seeds {
            let (cid, data) = &blocks[b];
            net.node_mut(NodeId(s as u32)).insert_block(*cid, data.clone());
        }
    }
    let leeches: Vec<NodeId> =
        (scenario.seeds()..scenario.nodes).map(|i| NodeId(i as u32)).collect();
    let steps: Vec<Vec<Cid>> = scenario
        .fetch
        .steps(scenario.blocks)
        .into_iter()
        .map(|step| step.into_iter().map(|i| blocks[i].0).collect())
        .collect();
    for &leech in &leeches {
        let steps = steps.clone();
        net.with_node(leech, |n, now| n.start_fetch(now, steps));
    }
    for seed in
        (0..scenario.seeds()).filter(|s| !scenario.connected_at_start(*s, leeches[0].index()))
    {
        net.run_to(epoch + scenario.seed_joins_at(seed));
        let seed = NodeId(seed as u32);
        for &leech in &leeches {
            net.with_node(leech, |n, now| n.core.peer_connected(now, seed, version));
            net.with_node(seed, |n, now| n.core.peer_connected(now, leech, version));
        }
    }
    let complete = net.run_until(TIME_LIMIT, |net| {
        leeches.iter().all(|l| net.nodes()[l.index()].finished_at().is_some())
    });
    // Let everything already sent arrive, so duplicates in flight at completion are counted.
    net.run_until(TIME_LIMIT + TIME_LIMIT, |_| false);
    let mut result = RunResult {
        scenario: scenario.name.clone(),
        mode,
        complete,
        time: Duration::ZERO,
        lower_bound,
        blocks_received: 0,
        duplicates: 0,
        msgs_sent: 0,
        msgs_received: 0,
        bytes_sent: 0,
        bytes_received: 0,
        timeouts: 0,
        senders: usize::MAX,
    };
    for l in &leeches {
        let node = &net.nodes()[l.index()];
        let finished = node.finished_at().unwrap_or(epoch + TIME_LIMIT);
        result.time = result.time.max(finished - epoch);
        let c = node.node().stats();
        result.blocks_received += c.blocks_received;
        result.duplicates += c.duplicate_blocks;
        result.msgs_sent += c.msgs_sent;
        result.msgs_received += c.msgs_received;
        result.bytes_sent += c.bytes_sent;
        result.bytes_received += c.bytes_received;
        result.timeouts += c.timeouts;
        result.senders = result.senders.min(senders(node.node().client_stats()));
    }
    result
}

/// Peers that sent at least a tenth of the blocks received.
fn senders(stats: &Stats<NodeId>) -> usize {
    let tenth = stats.total.blocks_received / 10;
    stats.per_peer.values().filter(|c| c.blocks_received > 0 && c.blocks_received >= tenth).count()
}

/// The least time any client could take, leech by leech (the slowest leech counts):
/// each step of the fetch pattern needs at least the shortest round trip to any other node plus
/// one blockstore read, and every byte must cross links into the leech, each open from when its
/// seed joins, whose bandwidths add up to at most its downlink if it has one. Steps cannot
/// overlap (a step starts when the last one is complete), so the per-step bounds add.
fn lower_bound(s: &Scenario, links: &Links, blocks: &[(Cid, Bytes)]) -> Duration {
    let steps = s.fetch.steps(s.blocks);
    let total_bytes: usize = blocks.iter().map(|(_, d)| d.len()).sum();
    (s.seeds()..s.nodes)
        .map(|leech| {
            let others = (0..s.nodes).filter(|&o| o != leech);
            let min_rtt = others
                .clone()
                .map(|o| links.get(leech, o).latency + links.get(o, leech).latency)
                .min()
                .unwrap_or_default();
            let inbound: Vec<(f64, f64)> = others
                .map(|o| {
                    let opens = if o < s.seeds() { s.seed_joins_at(o) } else { Duration::ZERO };
                    (opens.as_secs_f64(), links.get(o, leech).bandwidth.unwrap_or(f64::INFINITY))
                })
                .collect();
            let transfer = fill_time(inbound, s.leech_downlink, total_bytes as f64);
            (min_rtt + s.store_latency) * steps.len() as u32 + Duration::from_secs_f64(transfer)
        })
        .max()
        .unwrap_or_default()
}

/// Seconds until `links`, each (opening time, bytes per second), have carried `bytes` together,
/// their sum bounded by `cap` if there is one.
fn fill_time(mut links: Vec<(f64, f64)>, cap: Option<f64>, bytes: f64) -> f64 {
    links.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut now, mut rate, mut left) = (0.0, 0.0_f64, bytes);
    for (opens, bandwidth) in links {
        if rate.is_infinite() || (rate > 0.0 && left <= rate * (opens - now)) {
            break;
        }
        left -= rate * (opens - now);
        now = opens;
        rate = cap.map_or(rate + bandwidth, |c| (rate + bandwidth).min(c));
    }
    match rate {
        r if r.is_infinite() || left <= 0.0 => now,
        r if r > 0.0 => now + left / r,
        _ => 0.0,
    }
}

/// SHA-256 over every figure of every row, hex: equal hashes mean bit-identical results.
pub fn result_hash(rows: &[RunResult]) -> String {
    let mut h = Sha256::new();
    for r in rows {
        let line = format!(
            "{}|{:?}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}\n",
            r.scenario,
            r.mode,
            r.complete,
            r.time.as_nanos(),
            r.lower_bound.as_nanos(),
            r.blocks_received,
            r.duplicates,
            r.msgs_sent,
            r.msgs_received,
            r.bytes_sent,
            r.bytes_received,
            r.timeouts,
            r.dup_pct(),
        );
        h.update(line.as_bytes());
    }
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitswap::scenario::fixed_delay_matrix;

    fn matrix_row(name: &str) -> Scenario {
        fixed_delay_matrix(1).into_iter().find(|s| s.name == name).unwrap()
    }

    fn assert_targets(name: &str) -> RunResult {
        let s = matrix_row(name);
        let r = run(&s, ClientMode::Sessions);
        let f = s.seed_figures().unwrap();
        assert!(r.complete, "{name} did not complete");
        assert_eq!(r.blocks_received - r.duplicates, s.blocks as u64, "{name}");
        assert!(r.time.as_secs_f64() * 1000.0 <= f.poc_time_ms, "{name}: {:?}", r.time);
        assert!(r.dup_pct() <= f.poc_dup_pct, "{name}: {}%", r.dup_pct());
        r
    }

    #[test]
    fn matrix_rows_meet_the_targets() {
        for name in [
            "3Nodes-AllToAll-BigBatch",
            "3Nodes-Overlap1-OneAtATime",
            "10Nodes-AllToAll-UnixfsFetch",
        ] {
            let r = assert_targets(name);
            assert!(r.dup_pct() <= 2.0, "{name}: {}%", r.dup_pct());
            assert!(r.time.as_secs_f64() <= 1.15 * r.lower_bound.as_secs_f64(), "{name}");
        }
        let r = assert_targets("200Nodes-AllToAll-BigBatch");
        assert!(r.dup_pct() <= 10.0);
        let r = assert_targets("10Nodes-OnePeerPerBlock-BigBatch");
        assert_eq!(r.duplicates, 0);
    }

    #[test]
    fn same_seed_same_hash() {
        let s = matrix_row("3Nodes-Overlap3-BigBatch");
        let a = [run(&s, ClientMode::Sessions), run(&s, ClientMode::Legacy)];
        let b = [run(&s, ClientMode::Sessions), run(&s, ClientMode::Legacy)];
        assert_eq!(result_hash(&a), result_hash(&b));
        let other =
            Scenario { seed: 2, distribution: super::super::Distribution::OnePeerPerBlock, ..s };
        let c = [run(&other, ClientMode::Sessions), run(&other, ClientMode::Legacy)];
        assert_ne!(result_hash(&a), result_hash(&c));
    }

    #[test]
    fn legacy_completes_with_duplicates_from_broadcast() {
        let r = run(&matrix_row("3Nodes-AllToAll-BigBatch"), ClientMode::Legacy);
        assert!(r.complete);
        assert_eq!(r.duplicates, 100, "both seeds send every block");
    }

    #[test]
    fn bandwidth_limited_jittered_network_completes() {
        use super::super::{Distribution, FetchPattern};
        let s = Scenario::custom(
            12,
            60,
            16_000,
            Distribution::Random(0.4),
            FetchPattern::Unixfs,
            Duration::from_millis(30),
            Duration::from_millis(10),
            Some(1e6),
            3,
        );
        let r = run(&s, ClientMode::Sessions);
        assert!(r.complete);
        assert!(r.time >= r.lower_bound);
        assert_eq!(r.blocks_received - r.duplicates, 60);
    }

    #[test]
    fn blocks_slower_to_arrive_than_a_round_trip_are_not_asked_twice() {
        for s in crate::bitswap::slow_link_set(1) {
            let r = run(&s, ClientMode::Sessions);
            assert!(r.complete, "{} did not complete", s.name);
            assert_eq!(r.blocks_received - r.duplicates, s.blocks as u64, "{}", s.name);
            assert!(r.dup_pct() <= 2.0, "{}: {}% duplicates", s.name, r.dup_pct());
            let ratio = r.time.as_secs_f64() / r.lower_bound.as_secs_f64();
            assert!(ratio <= 1.5, "{}: {ratio} x the lower bound", s.name);
        }
    }

    #[test]
    fn fixed_delay_lower_bound_is_steps_times_rtt() {
        let s = matrix_row("3Nodes-Overlap3-BatchBy10");
        let links = Links::draw(s.nodes, s.links, 0);
        let blocks = make_blocks(&s, &mut ChaCha8Rng::seed_from_u64(0));
        assert_eq!(lower_bound(&s, &links, &blocks), Duration::from_millis(200));
    }
}
