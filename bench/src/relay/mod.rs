//! `relay`: the real relay process under a bounded load on loopback. For each load level it
//! reports resident memory (and its growth per connection), the throughput of a bulk transfer
//! through one circuit, and the time from dial to a usable relayed connection; the last two as
//! the median with min and max over repeated runs.

mod circuit;
mod load;
mod process;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Parser;
use serde_json::json;

use crate::report::{render, spread, Format, Row};
use circuit::{Dialer, Sink};
use load::Load;
use process::{default_relay_bin, RelayProcess};

/// Targets from the issue: memory per connection at 5,000 connections, and circuit throughput.
const TARGET_BYTES_PER_CONN: f64 = 60_000.0;
const TARGET_MB_PER_S: f64 = 100.0;
/// The whole load stops by itself after this long, whatever happens to the bench.
const LOAD_DEADLINE: Duration = Duration::from_secs(600);

#[derive(Parser, Debug)]
pub struct Args {
    /// Connection counts to measure at, in increasing order.
    #[arg(long, value_delimiter = ',', default_value = "100,1000,5000")]
    connections: Vec<usize>,
    /// Mebibytes sent through the circuit in each transfer.
    #[arg(long, default_value_t = 64)]
    transfer_mib: usize,
    /// Transfers and dials per load level.
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// The relay binary [default: syncscope-relay beside this binary].
    #[arg(long)]
    relay_bin: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    if args.repeats == 0 || args.connections.windows(2).any(|w| w[0] >= w[1]) {
        bail!("--repeats must be positive and --connections strictly increasing");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let rows = runtime.block_on(measure(&args))?;
    print!("{}", render(args.format, &rows, &notes(&rows)));
    Ok(())
}

async fn measure(args: &Args) -> Result<Vec<Row>> {
    let work = std::env::temp_dir().join(format!("syncscope-bench-relay-{}", std::process::id()));
    let bin = args.relay_bin.clone().unwrap_or_else(default_relay_bin);
    // The load comes from one address and never idles out; lift the per-IP and idle limits.
    let relay = RelayProcess::start(
        &bin,
        &work,
        &[
            "--max-connections-per-ip",
            "1000000",
            "--max-pending",
            "100000",
            "--max-connections",
            "1000000",
            "--idle-timeout",
            "3600",
        ],
    )?;
    let addr = relay.tcp_addr();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle = relay.rss_bytes()?;
    let sink = Sink::start(&addr).await?;
    let mut load = Load::new(LOAD_DEADLINE);
    let mut rows = vec![level(&relay, &addr, &sink, args, 0, idle).await?];
    for &target in &args.connections {
        load.grow_to(&addr, target).await?;
        tokio::time::sleep(Duration::from_secs(2)).await;
        rows.push(level(&relay, &addr, &sink, args, load.open(), idle).await?);
    }
    drop(load);
    let _ = std::fs::remove_dir_all(&work);
    Ok(rows)
}

async fn level(
    relay: &RelayProcess,
    addr: &libp2p::Multiaddr,
    sink: &Sink,
    args: &Args,
    connections: usize,
    idle: u64,
) -> Result<Row> {
    let rss = relay.rss_bytes()?;
    let mut dial_ms = Vec::new();
    let mut mb_per_s = Vec::new();
    for _ in 0..args.repeats {
        let mut dialer = Dialer::connect(addr, sink).await?;
        dial_ms.push(dialer.dial_ms);
        mb_per_s.push(dialer.transfer(args.transfer_mib << 20).await?);
    }
    let (mbps, mbps_min, mbps_max) = spread(&mb_per_s);
    let (dial, dial_min, dial_max) = spread(&dial_ms);
    let per_conn = (connections > 0).then(|| rss.saturating_sub(idle) as f64 / connections as f64);
    let row = json!({
        "connections": connections,
        "rss_bytes": rss,
        "rss_per_conn_bytes": per_conn.map(|b| b.round() as u64),
        "circuit_mb_per_s": mbps,
        "circuit_mb_per_s_min": mbps_min,
        "circuit_mb_per_s_max": mbps_max,
        "relayed_dial_ms": dial,
        "relayed_dial_ms_min": dial_min,
        "relayed_dial_ms_max": dial_max,
    });
    Ok(row.as_object().cloned().unwrap_or_default())
}

fn notes(rows: &[Row]) -> Vec<String> {
    let get = |r: &Row, k: &str| r.get(k).and_then(|v| v.as_f64());
    let mut notes = vec![
        "Real relay process (release) on loopback; load peers: one libp2p peer per connection (TCP+Noise+Yamux, identify, ping).".to_string(),
        "rss_per_conn_bytes = (RSS now - RSS idle) / connections; circuit and dial figures: median (min, max) over the repeats.".to_string(),
    ];
    if let Some(last) = rows.last().filter(|r| get(r, "connections").unwrap_or(0.0) >= 5000.0) {
        let per = get(last, "rss_per_conn_bytes").unwrap_or(f64::MAX);
        let verdict = if per <= TARGET_BYTES_PER_CONN { "PASS" } else { "FAIL" };
        notes.push(format!(
            "target: <= 60 KB per connection at 5,000 connections: {per:.0} B -> {verdict}"
        ));
    }
    if let Some(best) = rows.iter().filter_map(|r| get(r, "circuit_mb_per_s")).reduce(f64::min) {
        let verdict = if best >= TARGET_MB_PER_S { "PASS" } else { "FAIL" };
        notes.push(format!("target: >= 100 MB/s through one circuit (worst level's median): {best:.1} MB/s -> {verdict}"));
    }
    notes
}
