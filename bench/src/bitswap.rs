//! `bitswap`: the seed's fixed-delay matrix, the realistic and the datacenter sets (or one custom
//! scenario), run in the deterministic simulator in sessions and legacy mode, side by side.

use std::fmt::Write as _;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use serde_json::{json, Value};
use syncscope_proto::bitswap::{ClientMode, Config};
use syncscope_sim::bitswap::{
    datacenter_set, fixed_delay_matrix, realistic_set, result_hash, run_with, slow_link_set,
    Distribution, FetchPattern, RunResult, Scenario,
};

use crate::bitswap_sweep;
use crate::bitswap_targets::{ms, targets, DUP_EXCEPTION};
use crate::report::Format;

#[derive(Parser, Debug)]
pub struct Args {
    /// A scenario name, or a set: matrix, realistic, datacenter, slow (default: all four sets).
    #[arg(long)]
    scenario: Option<String>,
    #[arg(long, value_enum, default_value_t = Mode::All)]
    mode: Mode,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Custom scenario: nodes, the last one fetching [default: 10].
    #[arg(long)]
    nodes: Option<usize>,
    /// Custom scenario: number of blocks [default: 100].
    #[arg(long)]
    blocks: Option<usize>,
    /// Custom scenario: bytes per block [default: 8000].
    #[arg(long)]
    block_size: Option<usize>,
    /// Custom scenario: allToAll, overlap1, overlap2, onePeerPerBlock or random:P [default: allToAll].
    #[arg(long)]
    distribution: Option<Distribution>,
    /// Custom scenario: oneAtATime, batchBy10, allConcurrent, bigBatch, unixfs, unixfsLarge
    /// [default: bigBatch].
    #[arg(long)]
    fetch: Option<FetchPattern>,
    /// Custom scenario: one-way latency per message in ms [default: 10].
    #[arg(long)]
    latency_ms: Option<f64>,
    /// Custom scenario: standard deviation of the per-pair latency in ms [default: 0].
    #[arg(long)]
    jitter_ms: Option<f64>,
    /// Custom scenario: bandwidth per directed pair in megabits per second [default: unlimited].
    #[arg(long)]
    bandwidth_mbps: Option<f64>,
    /// Custom scenario: the fetcher's downlink in megabits per second, shared by every sender
    /// after its link (one connection carrying all peers, as through a relay) [default: none].
    #[arg(long)]
    downlink_mbps: Option<f64>,
    /// Seed of every random draw (block data, placement, links, node RNGs).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Runs both clients over a fixed grid of custom networks (nodes, distributions, fetch
    /// patterns, latencies, three seeds from --seed) and prints the time ratios and duplicate
    /// differences, worst first.
    #[arg(long)]
    sweep: bool,
    /// The sessions client's dup_budget: expected duplicate blocks per want that optimistic
    /// want-blocks may risk [default: the client's own, 0.1].
    #[arg(long)]
    dup_budget: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    Sessions,
    Legacy,
    All,
}

impl Args {
    fn is_custom(&self) -> bool {
        self.nodes.is_some()
            || self.blocks.is_some()
            || self.block_size.is_some()
            || self.distribution.is_some()
            || self.fetch.is_some()
            || self.latency_ms.is_some()
            || self.jitter_ms.is_some()
            || self.bandwidth_mbps.is_some()
            || self.downlink_mbps.is_some()
    }

    fn custom(&self) -> Result<Scenario, String> {
        let nodes = self.nodes.unwrap_or(10);
        let blocks = self.blocks.unwrap_or(100);
        let block_size = self.block_size.unwrap_or(8000);
        if nodes < 2 {
            return Err(format!("--nodes must be at least 2 (one seed, one fetcher), got {nodes}"));
        }
        if blocks == 0 || block_size == 0 || block_size > 2 << 20 {
            return Err("--blocks must be positive and --block-size between 1 and 2 MiB".into());
        }
        let ms = |name: &str, v: Option<f64>, default: f64| -> Result<Duration, String> {
            let v = v.unwrap_or(default);
            if !(0.0..=600_000.0).contains(&v) {
                return Err(format!("--{name} must be between 0 and 600000, got {v}"));
            }
            Ok(Duration::from_secs_f64(v / 1000.0))
        };
        let bytes_per_sec = |name: &str, v: Option<f64>| match v {
            Some(mbps) if mbps > 0.0 && mbps.is_finite() => Ok(Some(mbps * 1e6 / 8.0)),
            Some(mbps) => Err(format!("--{name} must be positive, got {mbps}")),
            None => Ok(None),
        };
        let bandwidth = bytes_per_sec("bandwidth-mbps", self.bandwidth_mbps)?;
        let downlink = bytes_per_sec("downlink-mbps", self.downlink_mbps)?;
        let scenario = Scenario::custom(
            nodes,
            blocks,
            block_size,
            self.distribution.unwrap_or(Distribution::AllToAll),
            self.fetch.unwrap_or(FetchPattern::BigBatch),
            ms("latency-ms", self.latency_ms, 10.0)?,
            ms("jitter-ms", self.jitter_ms, 0.0)?,
            bandwidth,
            self.seed,
        );
        Ok(match downlink {
            Some(bw) => scenario.with_leech_downlink(bw),
            None => scenario,
        })
    }

    fn scenarios(&self) -> Result<Vec<Scenario>, String> {
        if self.is_custom() {
            if self.scenario.is_some() {
                return Err("give either --scenario or custom scenario flags, not both".into());
            }
            return Ok(vec![self.custom()?]);
        }
        let seed = self.seed;
        let all = || {
            [
                fixed_delay_matrix(seed),
                realistic_set(seed),
                datacenter_set(seed),
                slow_link_set(seed),
            ]
            .concat()
        };
        match self.scenario.as_deref() {
            None => Ok(all()),
            Some("matrix") => Ok(fixed_delay_matrix(seed)),
            Some("realistic") => Ok(realistic_set(seed)),
            Some("datacenter") => Ok(datacenter_set(seed)),
            Some("slow") => Ok(slow_link_set(seed)),
            Some(name) => {
                let found: Vec<Scenario> = all().into_iter().filter(|s| s.name == name).collect();
                if found.is_empty() {
                    Err(format!(
                        "unknown scenario {name:?}; use matrix, realistic, datacenter, slow or one of: {}",
                        all().iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
                    ))
                } else {
                    Ok(found)
                }
            }
        }
    }

    fn modes(&self) -> Vec<ClientMode> {
        match self.mode {
            Mode::Sessions => vec![ClientMode::Sessions],
            Mode::Legacy => vec![ClientMode::Legacy],
            Mode::All => vec![ClientMode::Sessions, ClientMode::Legacy],
        }
    }
}

pub fn run(args: Args) -> Result<(), String> {
    if args.sweep {
        if args.is_custom() || args.scenario.is_some() || args.mode != Mode::All {
            return Err("--sweep runs its own grid in both modes: give no scenario flags".into());
        }
        return bitswap_sweep::run(args.seed, args.format, args.dup_budget);
    }
    let scenarios = args.scenarios()?;
    let started = std::time::Instant::now();
    let mut rows = Vec::new();
    for s in &scenarios {
        for mode in args.modes() {
            let config = match (mode, args.dup_budget) {
                (ClientMode::Sessions, Some(budget)) => Config::default().with_dup_budget(budget),
                _ => Config::new(mode),
            };
            rows.push((s.clone(), run_with(s, &config)));
        }
    }
    let results: Vec<RunResult> = rows.iter().map(|(_, r)| r.clone()).collect();
    let hash = result_hash(&results);
    let out = match args.format {
        Format::Table => table(&rows, &hash, started.elapsed()),
        Format::Csv => csv(&rows),
        Format::Json => {
            let rows: Vec<Value> = rows.iter().map(|(s, r)| json_row(s, r)).collect();
            serde_json::to_string_pretty(&Value::Array(rows)).map_err(|e| e.to_string())? + "\n"
        }
    };
    print!("{out}");
    Ok(())
}

fn mode_name(m: ClientMode) -> &'static str {
    match m {
        ClientMode::Sessions => "sessions",
        ClientMode::Legacy => "legacy",
    }
}

fn json_row(s: &Scenario, r: &RunResult) -> Value {
    let f = s.seed_figures();
    json!({
        "scenario": r.scenario,
        "mode": mode_name(r.mode),
        "time_ms": ms(r.time),
        "lower_bound_ms": ms(r.lower_bound),
        "blocks_received": r.blocks_received,
        "duplicates": r.duplicates,
        "dup_pct": r.dup_pct(),
        "senders": r.senders,
        "msgs_sent": r.msgs_sent,
        "msgs_received": r.msgs_received,
        "bytes_sent": r.bytes_sent,
        "bytes_received": r.bytes_received,
        "seed_master_time_ms": f.map(|f| f.master_time_ms),
        "seed_master_dup_pct": f.map(|f| f.master_dup_pct),
        "seed_poc_time_ms": f.map(|f| f.poc_time_ms),
        "seed_poc_dup_pct": f.map(|f| f.poc_dup_pct),
    })
}

fn csv(rows: &[(Scenario, RunResult)]) -> String {
    let mut out = String::from(
        "scenario,mode,complete,time_ms,lower_bound_ms,blocks_received,duplicates,dup_pct,\
         senders,msgs_sent,msgs_received,bytes_sent,bytes_received,seed_master_time_ms,\
         seed_master_dup_pct,seed_poc_time_ms,seed_poc_dup_pct\n",
    );
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
    for (s, r) in rows {
        let f = s.seed_figures();
        let _ = writeln!(
            out,
            "{},{},{},{:.3},{:.3},{},{},{:.3},{},{},{},{},{},{},{},{},{}",
            r.scenario,
            mode_name(r.mode),
            r.complete,
            ms(r.time),
            ms(r.lower_bound),
            r.blocks_received,
            r.duplicates,
            r.dup_pct(),
            r.senders,
            r.msgs_sent,
            r.msgs_received,
            r.bytes_sent,
            r.bytes_received,
            opt(f.map(|f| f.master_time_ms)),
            opt(f.map(|f| f.master_dup_pct)),
            opt(f.map(|f| f.poc_time_ms)),
            opt(f.map(|f| f.poc_dup_pct)),
        );
    }
    out
}

fn mark(ok: bool) -> &'static str {
    if ok {
        "ok"
    } else {
        "MISS"
    }
}

fn table(rows: &[(Scenario, RunResult)], hash: &str, wall: Duration) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<38} {:<8} {:>9} {:>8} {:>5} {:>6} {:>5} {:>6} {:>4} {:>11} {:>19} {:>15} {:>15} {:>6} {:<24}",
        "scenario",
        "mode",
        "time ms",
        "LB ms",
        "t/LB",
        "recv",
        "dups",
        "dup%",
        "sndr",
        "msgs s/r",
        "bytes s/r",
        "master ms/dup%",
        "PoC ms/dup%",
        "t/PoC",
        "targets T D A L"
    );
    let mut tally = [0usize; 4];
    let mut matrix_rows = 0;
    for (s, r) in rows {
        let f = s.seed_figures();
        let seed_col = |t: Option<f64>, d: Option<f64>| match (t, d) {
            (Some(t), Some(d)) => format!("{t:.0}/{d:.1}%"),
            _ => "-".to_string(),
        };
        let vs_poc = f.map_or("-".to_string(), |f| format!("{:.2}", ms(r.time) / f.poc_time_ms));
        let tg = targets(s, r);
        let tg_col = tg.as_ref().map_or(String::new(), |t| {
            matrix_rows += 1;
            let checks = [t.time_vs_poc, t.dup_vs_poc, t.dup_abs, t.near_bound];
            for (n, ok) in tally.iter_mut().zip(checks) {
                *n += usize::from(ok);
            }
            checks.iter().map(|ok| mark(*ok)).collect::<Vec<_>>().join(" ")
        });
        let time = if r.complete { format!("{:.1}", ms(r.time)) } else { "INCOMPLETE".into() };
        let _ = writeln!(
            out,
            "{:<38} {:<8} {:>9} {:>8.1} {:>5.2} {:>6} {:>5} {:>6.2} {:>4} {:>11} {:>19} {:>15} {:>15} {:>6} {:<24}",
            r.scenario,
            mode_name(r.mode),
            time,
            ms(r.lower_bound),
            r.time.as_secs_f64() / r.lower_bound.as_secs_f64().max(1e-9),
            r.blocks_received,
            r.duplicates,
            r.dup_pct(),
            r.senders,
            format!("{}/{}", r.msgs_sent, r.msgs_received),
            format!("{}/{}", r.bytes_sent, r.bytes_received),
            seed_col(f.map(|f| f.master_time_ms), f.map(|f| f.master_dup_pct)),
            seed_col(f.map(|f| f.poc_time_ms), f.map(|f| f.poc_dup_pct)),
            vs_poc,
            tg_col,
        );
    }
    let _ = writeln!(
        out,
        "\nTargets (sessions mode, seed matrix): T time <= PoC time, D dup% <= PoC dup%, \
         A dup% <= 2 % (10 % for {DUP_EXCEPTION}), L time <= 1.15 x lower bound. \
         sndr: peers that sent at least a tenth of the blocks (the fewest over fetchers)."
    );
    if matrix_rows > 0 {
        let _ = writeln!(
            out,
            "Summary over {matrix_rows} rows: T {}/{matrix_rows} (need all), D {}/{matrix_rows} \
             (need all), A {}/{matrix_rows} (need all), L {}/{matrix_rows} (need 15 of 18).",
            tally[0], tally[1], tally[2], tally[3]
        );
    }
    let _ = writeln!(
        out,
        "Model: a message is serialised on its directed link at the link's bandwidth (FIFO per \
         pair; none with no limit), then delivered after the link's one-way latency, and, where \
         the fetcher has a downlink, after crossing it (shared equally by the senders); sizes \
         are framed protobuf lengths; a connection open from the start comes with its round \
         trip, as a ping would have measured it (seeds that join later have none). Lower \
         bound: steps of the fetch pattern x (shortest RTT + blockstore read) + all bytes / \
         inbound bandwidth (sum of inbound links, or the downlink if smaller)."
    );
    let _ = writeln!(
        out,
        "Result hash: {hash}   ({} runs, {:.1} s wall)",
        rows.len(),
        wall.as_secs_f64()
    );
    out
}
