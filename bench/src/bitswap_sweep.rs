//! `bitswap --sweep`: the sessions client against the legacy one over a fixed grid of custom
//! networks, in the deterministic simulator. Where the seed's matrix has a few hand-picked
//! scenarios, the grid crosses every distribution with every fetch pattern, network size and
//! latency, so that a change tuned to one of them shows its cost on the others.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use syncscope_proto::bitswap::ClientMode;
use syncscope_sim::bitswap::{
    result_hash, run as run_scenario, Distribution, FetchPattern, RunResult, Scenario,
};

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

pub fn run(first_seed: u64, format: Format) -> Result<(), String> {
    let started = Instant::now();
    let rows = run_grid(Point::grid(first_seed));
    let results: Vec<RunResult> =
        rows.iter().flat_map(|r| [r.sessions.clone(), r.legacy.clone()]).collect();
    let hash = result_hash(&results);
    let out = match format {
        Format::Table => table(&rows, &hash, started.elapsed()),
        Format::Csv => csv(&rows),
        Format::Json => {
            let rows: Vec<Value> = rows.iter().map(json_row).collect();
            serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())? + "\n"
        }
    };
    print!("{out}");
    Ok(())
}

/// Every point in both modes, on every core; the rows come back in grid order.
fn run_grid(points: Vec<Point>) -> Vec<Row> {
    let next = AtomicUsize::new(0);
    let rows = Mutex::new(Vec::with_capacity(points.len()));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(&point) = points.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let scenario = point.scenario();
                    let sessions = run_scenario(&scenario, ClientMode::Sessions);
                    let legacy = run_scenario(&scenario, ClientMode::Legacy);
                    let row = Row { point, sessions, legacy };
                    rows.lock().unwrap_or_else(|e| e.into_inner()).push(row);
                }
            });
        }
    });
    let mut rows = rows.into_inner().unwrap_or_else(|e| e.into_inner());
    let order = |p: &Point| {
        let index = |i: Option<usize>| i.unwrap_or(usize::MAX);
        (
            index(NODES.iter().position(|&n| n == p.nodes)),
            index(DISTRIBUTIONS.iter().position(|&d| d == p.distribution)),
            index(FETCHES.iter().position(|&f| f == p.fetch)),
            index(LATENCIES_MS.iter().position(|&l| l == p.latency_ms)),
            p.seed,
        )
    };
    rows.sort_by_key(|r| order(&r.point));
    rows
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
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
    let mut ratios: Vec<f64> = rows.iter().map(|r| r.time_ratio()).collect();
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios.get(((ratios.len() as f64 - 1.0) * q).round() as usize).copied();
    let cell = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
    let over = ratios.iter().filter(|&&r| r > TIME_RATIO_TARGET).count();
    let _ = writeln!(
        out,
        "{label:<34} {:>8} {:>8} {:>8} {:>8}",
        cell(at(0.5)),
        cell(at(0.9)),
        cell(ratios.last().copied()),
        format!("{over}/{}", ratios.len())
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
    fn rows_come_back_in_grid_order_whatever_order_they_ran_in() {
        let grid: Vec<Point> = Point::grid(1).into_iter().take(4).collect();
        let rows = run_grid(grid.iter().rev().copied().collect());
        let labels: Vec<String> = rows.iter().map(|r| r.point.label()).collect();
        assert_eq!(labels, grid.iter().map(Point::label).collect::<Vec<_>>());
        assert!(rows.iter().all(|r| r.sessions.complete && r.legacy.complete));
        assert!(rows.iter().all(|r| r.time_ratio().is_finite() && r.time_ratio() > 0.0));
    }
}
