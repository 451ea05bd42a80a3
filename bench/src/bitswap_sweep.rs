//! `bitswap --sweep`: the sessions client against the legacy one over a fixed grid of custom
//! networks, in the deterministic simulator. Where the seed's matrix has a few hand-picked
//! scenarios, the grid crosses every distribution with every fetch pattern, network size and
//! latency, so that a change tuned to one of them shows its cost on the others.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use syncscope_proto::bitswap::{ClientMode, Config};
use syncscope_sim::bitswap::{
    fixed_delay_matrix, result_hash, run_with, Distribution, FetchPattern, RunResult, Scenario,
};

use crate::bitswap_targets::{ms, targets};
use crate::report::Format;

const NODES: [usize; 5] = [5, 10, 20, 50, 100];
const DISTRIBUTIONS: [Distribution; 5] = [
    Distribution::AllToAll,
    Distribution::Overlap1,
    Distribution::Overlap2,
    Distribution::OnePeerPerBlock,
    Distribution::Random(0.3),
];
const FETCHES: [FetchPattern; 4] = [
    FetchPattern::OneAtATime,
    FetchPattern::BatchBy10,
    FetchPattern::BigBatch,
    FetchPattern::Unixfs,
];
const LATENCIES_MS: [f64; 3] = [5.0, 20.0, 80.0];
/// Standard deviation of each pair's latency, as a share of the latency.
const JITTER: f64 = 0.25;
const BLOCKS: usize = 100;
const BLOCK_SIZE: usize = 8000;
/// Seeds per grid point: `--seed` and the ones after it.
const SEEDS: u64 = 3;
/// The target: sessions take at most this times the legacy client's time.
const TIME_RATIO_TARGET: f64 = 1.1;
/// Rows listed, worst time ratio first.
const WORST_LISTED: usize = 10;
/// The sessions client's duplicate budgets the frontier compares.
const FRONTIER: [f64; 6] = [0.0, 0.1, 0.25, 0.5, 1.0, 2.0];

/// One grid point under one seed.
#[derive(Debug, Clone, Copy)]
struct Point {
    nodes: usize,
    distribution: Distribution,
    fetch: FetchPattern,
    latency_ms: f64,
    seed: u64,
}

impl Point {
    fn grid(first_seed: u64) -> Vec<Point> {
        let mut points = Vec::new();
        for nodes in NODES {
            for distribution in DISTRIBUTIONS {
                for fetch in FETCHES {
                    for latency_ms in LATENCIES_MS {
                        for seed in first_seed..first_seed + SEEDS {
                            points.push(Point { nodes, distribution, fetch, latency_ms, seed });
                        }
                    }
                }
            }
        }
        points
    }

    fn scenario(&self) -> Scenario {
        let latency = Duration::from_secs_f64(self.latency_ms / 1000.0);
        Scenario::custom(
            self.nodes,
            BLOCKS,
            BLOCK_SIZE,
            self.distribution,
            self.fetch,
            latency,
            latency.mul_f64(JITTER),
            None,
            self.seed,
        )
    }

    fn label(&self) -> String {
        let Point { nodes, distribution, fetch, latency_ms, seed } = self;
        format!("{nodes}n {distribution} {fetch} {latency_ms}ms seed {seed}")
    }
}

/// Both clients on one point.
struct Row {
    point: Point,
    sessions: RunResult,
    legacy: RunResult,
}

impl Row {
    /// Sessions' time over legacy's; infinite when sessions did not complete.
    fn time_ratio(&self) -> f64 {
        match (self.sessions.complete, self.legacy.complete) {
            (false, _) => f64::INFINITY,
            (true, false) => 0.0,
            _ => self.sessions.time.as_secs_f64() / self.legacy.time.as_secs_f64().max(1e-9),
        }
    }

    /// Sessions' duplicate share minus legacy's, in percentage points.
    fn dup_diff(&self) -> f64 {
        self.sessions.dup_pct() - self.legacy.dup_pct()
    }
}

/// Runs the grid with the sessions client on `dup_budget` (its default if `None`), then the
/// frontier: every budget of [`FRONTIER`] on the grid and on the seed's matrix.
pub fn run(first_seed: u64, format: Format, dup_budget: Option<f64>) -> Result<(), String> {
    let started = Instant::now();
    let points = Point::grid(first_seed);
    let legacy =
        on_every_core(&points, |p| run_with(&p.scenario(), &Config::new(ClientMode::Legacy)));
    let rows = with_sessions(&points, &legacy, sessions_config(dup_budget));
    let results: Vec<RunResult> =
        rows.iter().flat_map(|r| [r.sessions.clone(), r.legacy.clone()]).collect();
    let hash = result_hash(&results);
    let out = match format {
        Format::Table => {
            let table = table(&rows, &hash, started.elapsed());
            let started = Instant::now();
            let frontier = frontier(&points, &legacy, first_seed);
            format!("{table}{frontier}({:.1} s wall)\n", started.elapsed().as_secs_f64())
        }
        Format::Csv => csv(&rows),
        Format::Json => {
            let rows: Vec<Value> = rows.iter().map(json_row).collect();
            serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())? + "\n"
        }
    };
    print!("{out}");
    Ok(())
}

fn sessions_config(dup_budget: Option<f64>) -> Config {
    let config = Config::default();
    match dup_budget {
        Some(budget) => config.with_dup_budget(budget),
        None => config,
    }
}

/// The sessions client on `config` at every point, beside the legacy client's results.
fn with_sessions(points: &[Point], legacy: &[RunResult], config: Config) -> Vec<Row> {
    let sessions = on_every_core(points, |p| run_with(&p.scenario(), &config));
    points
        .iter()
        .zip(sessions)
        .zip(legacy)
        .map(|((&point, sessions), legacy)| Row { point, sessions, legacy: legacy.clone() })
        .collect()
}

/// `f` of every item, on every core, in the items' order.
fn on_every_core<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::with_capacity(items.len()));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    mine.push((i, f(item)));
                }
                done.lock().unwrap_or_else(|e| e.into_inner()).append(&mut mine);
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Time against duplicates for each budget: on the grid (all of it, and its onePeerPerBlock
/// points) and on the seed's matrix with its targets.
fn frontier(points: &[Point], legacy: &[RunResult], seed: u64) -> String {
    let matrix = fixed_delay_matrix(seed);
    let mut out = format!(
        "\nFrontier: the sessions client's dup_budget (expected duplicate blocks per want that \
         optimistic want-blocks may risk; default {}).\n{:>7}  {:>30}  {:>24}  {:>26}\n{:>7}  {:>6} {:>6} {:>8} {:>7}  {:>6} {:>8} {:>7}  {:>3} {:>3} {:>3} {:>3} {:>9}\n",
        Config::default().dup_budget,
        "", "grid: ratio p50 p90 >1.1 dup%", "onePeerPerBlock", "matrix: T D A L, dup%",
        "budget", "p50", "p90", ">1.1", "dup%", "p50", ">1.1", "dup%", "T", "D", "A", "L", "dup%"
    );
    for budget in FRONTIER {
        let config = sessions_config(Some(budget));
        let rows = with_sessions(points, legacy, config.clone());
        let one_peer: Vec<&Row> =
            rows.iter().filter(|r| r.point.distribution == Distribution::OnePeerPerBlock).collect();
        let all: Vec<&Row> = rows.iter().collect();
        let matrix_runs = on_every_core(&matrix, |s| run_with(s, &config));
        let mut tally = [0; 4];
        for t in matrix.iter().zip(&matrix_runs).filter_map(|(s, r)| targets(s, r)) {
            let checks = [t.time_vs_poc, t.dup_vs_poc, t.dup_abs, t.near_bound];
            for (n, ok) in tally.iter_mut().zip(checks) {
                *n += usize::from(ok);
            }
        }
        let (all_ratios, one_ratios) = (ratios(&all), ratios(&one_peer));
        let _ = writeln!(
            out,
            "{budget:>7}  {:>6.2} {:>6.2} {:>8} {:>7.2}  {:>6.2} {:>8} {:>7.2}  {:>3} {:>3} {:>3} {:>3} {:>9.2}",
            quantile(&all_ratios, 0.5),
            quantile(&all_ratios, 0.9),
            over_target(&all_ratios),
            mean(all.iter().map(|r| r.sessions.dup_pct())),
            quantile(&one_ratios, 0.5),
            over_target(&one_ratios),
            mean(one_peer.iter().map(|r| r.sessions.dup_pct())),
            tally[0],
            tally[1],
            tally[2],
            tally[3],
            mean(matrix_runs.iter().map(RunResult::dup_pct)),
        );
    }
    let legacy_dups = mean(legacy.iter().map(RunResult::dup_pct));
    let _ = writeln!(out, "legacy, for comparison: grid dup% {legacy_dups:.2}");
    out
}

fn ratios(rows: &[&Row]) -> Vec<f64> {
    let mut ratios: Vec<f64> = rows.iter().map(|r| r.time_ratio()).collect();
    ratios.sort_by(f64::total_cmp);
    ratios
}

/// The `q` quantile of sorted `values` (nearest rank); NaN when there are none.
fn quantile(values: &[f64], q: f64) -> f64 {
    let at = ((values.len() as f64 - 1.0) * q).round() as usize;
    values.get(at).copied().unwrap_or(f64::NAN)
}

fn over_target(ratios: &[f64]) -> String {
    format!("{}/{}", ratios.iter().filter(|&&r| r > TIME_RATIO_TARGET).count(), ratios.len())
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    sum / n.max(1) as f64
}

fn table(rows: &[Row], hash: &str, wall: Duration) -> String {
    let mut out = String::new();
    let by_ratio = sorted(rows, |r| r.time_ratio());
    let by_dups = sorted(rows, Row::dup_diff);
    let over = rows.iter().filter(|r| r.time_ratio() > TIME_RATIO_TARGET).count();
    let more_dups = rows.iter().filter(|r| r.dup_diff() > 1e-9).count();
    let _ = writeln!(
        out,
        "Sweep: {} points ({} nodes x {} distributions x {} fetches x {} latencies, {}% jitter, \
         {BLOCKS} blocks of {BLOCK_SIZE} B, {SEEDS} seeds), sessions against legacy.\n",
        rows.len(),
        NODES.len(),
        DISTRIBUTIONS.len(),
        FETCHES.len(),
        LATENCIES_MS.len(),
        JITTER * 100.0
    );
    let _ = writeln!(
        out,
        "{:<34} {:>8} {:>8} {:>8} {:>8}",
        "time ratio (sessions / legacy)", "p50", "p90", "max", "> 1.1"
    );
    summary_line(&mut out, "every point", rows.iter().collect());
    for distribution in DISTRIBUTIONS {
        let of = rows.iter().filter(|r| r.point.distribution == distribution).collect();
        summary_line(&mut out, &format!("  {distribution}"), of);
    }
    for fetch in FETCHES {
        let of = rows.iter().filter(|r| r.point.fetch == fetch).collect();
        summary_line(&mut out, &format!("  {fetch}"), of);
    }
    let _ = writeln!(out, "\nWorst time ratios:");
    worst_rows(&mut out, by_ratio.iter().rev().take(WORST_LISTED));
    let _ = writeln!(out, "\nWorst duplicate differences:");
    worst_rows(&mut out, by_dups.iter().rev().take(3));
    let (worst, dups) = (by_ratio.last(), by_dups.last());
    let _ = writeln!(
        out,
        "\nWorst time ratio: {} ({}). Worst duplicate difference: {:+.2} points ({}).",
        worst.map_or("-".into(), |r| format!("{:.2}", r.time_ratio())),
        worst.map_or("-".into(), |r| r.point.label()),
        dups.map_or(0.0, |r| r.dup_diff()),
        dups.map_or("-".into(), |r| r.point.label()),
    );
    let _ = writeln!(
        out,
        "Target: sessions <= {TIME_RATIO_TARGET} x legacy's time with duplicates <= legacy's at \
         every point: {over} of {} points over the time target, {more_dups} with more duplicates.",
        rows.len()
    );
    let _ = writeln!(
        out,
        "Result hash: {hash}   ({} runs, {:.1} s wall)",
        rows.len() * 2,
        wall.as_secs_f64()
    );
    out
}

fn sorted(rows: &[Row], key: impl Fn(&Row) -> f64) -> Vec<&Row> {
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by(|a, b| key(a).total_cmp(&key(b)));
    sorted
}

fn summary_line(out: &mut String, label: &str, rows: Vec<&Row>) {
    let ratios = ratios(&rows);
    let _ = writeln!(
        out,
        "{label:<34} {:>8.2} {:>8.2} {:>8.2} {:>8}",
        quantile(&ratios, 0.5),
        quantile(&ratios, 0.9),
        quantile(&ratios, 1.0),
        over_target(&ratios)
    );
}

fn worst_rows<'a>(out: &mut String, rows: impl Iterator<Item = &'a &'a Row>) {
    let _ = writeln!(
        out,
        "  {:<52} {:>11} {:>11} {:>6} {:>7} {:>7}",
        "point", "sessions ms", "legacy ms", "ratio", "dup% s", "dup% l"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "  {:<52} {:>11.1} {:>11.1} {:>6.2} {:>7.2} {:>7.2}",
            r.point.label(),
            ms(r.sessions.time),
            ms(r.legacy.time),
            r.time_ratio(),
            r.sessions.dup_pct(),
            r.legacy.dup_pct()
        );
    }
}

fn csv(rows: &[Row]) -> String {
    let mut out = String::from(
        "nodes,distribution,fetch,latency_ms,seed,sessions_complete,sessions_ms,sessions_dup_pct,\
         legacy_complete,legacy_ms,legacy_dup_pct,time_ratio,dup_diff\n",
    );
    for r in rows {
        let p = &r.point;
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{:.3},{:.3},{},{:.3},{:.3},{:.4},{:.3}",
            p.nodes,
            p.distribution,
            p.fetch,
            p.latency_ms,
            p.seed,
            r.sessions.complete,
            ms(r.sessions.time),
            r.sessions.dup_pct(),
            r.legacy.complete,
            ms(r.legacy.time),
            r.legacy.dup_pct(),
            r.time_ratio(),
            r.dup_diff()
        );
    }
    out
}

fn json_row(r: &Row) -> Value {
    let p = &r.point;
    json!({
        "nodes": p.nodes,
        "distribution": p.distribution.to_string(),
        "fetch": p.fetch.to_string(),
        "latency_ms": p.latency_ms,
        "seed": p.seed,
        "sessions": { "complete": r.sessions.complete, "time_ms": ms(r.sessions.time), "dup_pct": r.sessions.dup_pct() },
        "legacy": { "complete": r.legacy.complete, "time_ms": ms(r.legacy.time), "dup_pct": r.legacy.dup_pct() },
        "time_ratio": r.time_ratio(),
        "dup_diff": r.dup_diff(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_covers_every_combination_once() {
        let grid = Point::grid(7);
        assert_eq!(grid.len(), 5 * 5 * 4 * 3 * SEEDS as usize);
        let labels: std::collections::HashSet<String> = grid.iter().map(Point::label).collect();
        assert_eq!(labels.len(), grid.len());
        assert!(grid.iter().all(|p| (7..7 + SEEDS).contains(&p.seed)));
    }

    #[test]
    fn results_come_back_in_the_order_of_their_points() {
        let squares = on_every_core(&(0..1000u64).collect::<Vec<_>>(), |i| i * i);
        assert_eq!(squares, (0..1000u64).map(|i| i * i).collect::<Vec<_>>());
        let grid: Vec<Point> = Point::grid(1).into_iter().take(4).collect();
        let legacy =
            on_every_core(&grid, |p| run_with(&p.scenario(), &Config::new(ClientMode::Legacy)));
        let rows = with_sessions(&grid, &legacy, Config::default());
        assert!(rows.iter().all(|r| r.sessions.complete && r.legacy.complete));
        assert!(rows.iter().all(|r| r.time_ratio().is_finite() && r.time_ratio() > 0.0));
        assert!(rows.iter().all(|r| r.legacy.mode == ClientMode::Legacy));
    }

    #[test]
    fn quantiles_take_the_nearest_rank() {
        let sorted = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!((quantile(&sorted, 0.5), quantile(&sorted, 0.9)), (3.0, 5.0));
        assert!(quantile(&[], 0.5).is_nan());
    }
}
