//! `bitswap-net`: Bitswap over real libp2p swarms on loopback TCP (noise, yamux): one fetcher and
//! N seeds that each hold every block, the sessions client against the legacy one, each variant
//! run several times in one go. Prints one table (or CSV, JSON): median wall time and its spread,
//! throughput, duplicates, messages, and percentiles of block arrival after the fetch started;
//! the last column is the row's median time over the sessions row with the same seeds. Every
//! block is checked against its CID.
//!
//! Wall-clock figures on a shared machine: for the protocol's behaviour in controlled networks,
//! use the deterministic simulator (`bitswap`).

use std::time::{Duration, Instant};

use bytes::Bytes;
use cid::Cid;
use clap::Parser;
use futures::StreamExt;
use libp2p::swarm::SwarmEvent;
use libp2p::{Multiaddr, Swarm};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use syncscope_node::content::Block;
use syncscope_node::net::bitswap::{Behaviour, Config, Event};
use syncscope_node::store::MemoryBlockStore;
use syncscope_proto::bitswap::raw_cid;

use crate::libp2p_host::{listen_loopback, tcp_swarm};
use crate::report::{render, spread, Format, Row};

type Node = Swarm<Behaviour<MemoryBlockStore>>;

#[derive(Parser, Debug)]
pub struct Args {
    /// Blocks to fetch.
    #[arg(long, default_value_t = 400)]
    blocks: usize,
    /// Bytes per block (random data).
    #[arg(long, default_value_t = 256 * 1024)]
    size: usize,
    /// Runs per variant; the table shows the median.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..))]
    runs: u16,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

fn node(config: Config) -> Node {
    tcp_swarm(Behaviour::new(config, MemoryBlockStore::new()), None).expect("swarm")
}

/// A seed holding `blocks`, driven by its own task once they are stored.
async fn seed(blocks: &[(Cid, Bytes)]) -> (Multiaddr, tokio::task::JoinHandle<()>) {
    let mut node = node(Config::default());
    let addr = listen_loopback(&mut node).await.expect("listen");
    for (cid, data) in blocks {
        node.behaviour_mut().add_block(Block::verified(*cid, data.clone()).expect("valid block"));
    }
    let mut added = 0;
    while added < blocks.len() {
        if let SwarmEvent::Behaviour(Event::BlockAdded { .. }) = node.select_next_some().await {
            added += 1;
        }
    }
    (addr, tokio::spawn(async move { node.for_each(|_| async {}).await }))
}

struct Outcome {
    time: Duration,
    arrivals: Vec<Duration>,
    duplicates: u64,
    msgs_received: u64,
    bytes_received: u64,
}

async fn fetch(config: Config, seeds: usize, blocks: &[(Cid, Bytes)]) -> Outcome {
    let mut tasks = Vec::new();
    let mut fetcher = node(config);
    for _ in 0..seeds {
        let (addr, task) = seed(blocks).await;
        tasks.push(task);
        fetcher.dial(addr).expect("dial");
    }
    let mut connected = 0;
    while connected < seeds {
        if let SwarmEvent::Behaviour(Event::PeerConnected { .. }) = fetcher.select_next_some().await
        {
            connected += 1;
        }
    }
    let started = Instant::now();
    let fetch = fetcher.behaviour_mut().fetch(blocks.iter().map(|(c, _)| *c));
    let mut arrivals = Vec::with_capacity(blocks.len());
    loop {
        match fetcher.select_next_some().await {
            SwarmEvent::Behaviour(Event::Block { cid, data, .. }) => {
                assert_eq!(raw_cid(&data), cid, "a verified block");
                arrivals.push(started.elapsed());
            }
            SwarmEvent::Behaviour(Event::FetchDone { fetch: f }) if f == fetch => break,
            _ => {}
        }
    }
    let time = started.elapsed();
    assert_eq!(arrivals.len(), blocks.len(), "every block once");
    for task in tasks {
        task.abort();
    }
    let c = fetcher.behaviour().stats().counters;
    Outcome {
        time,
        arrivals,
        duplicates: c.duplicate_blocks,
        msgs_received: c.msgs_received,
        bytes_received: c.bytes_received,
    }
}

fn percentile(sorted: &[Duration], q: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub fn run(args: Args) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let rows = runtime.block_on(rows(&args));
    let note = format!(
        "{} blocks x {} B, every seed holds every block; time_ms is the median of {} runs \
         (min-max beside it), the other columns are from the median run; x_sessions is time_ms \
         over the sessions row with as many seeds",
        args.blocks, args.size, args.runs
    );
    print!("{}", render(args.format, &rows, &[note]));
    Ok(())
}

async fn rows(args: &Args) -> Vec<Row> {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let blocks: Vec<(Cid, Bytes)> = (0..args.blocks)
        .map(|_| {
            let mut data = vec![0; args.size];
            rng.fill_bytes(&mut data);
            (raw_cid(&data), Bytes::from(data))
        })
        .collect();
    let total_mb = (args.blocks * args.size) as f64 / 1e6;
    let mut rows = Vec::new();
    let mut sessions_ms = [None, None];
    for (mode, seeds) in [("sessions", 1), ("sessions", 3), ("legacy", 1), ("legacy", 3)] {
        let mut outcomes = Vec::new();
        for _ in 0..args.runs {
            let config = if mode == "legacy" { Config::legacy() } else { Config::default() };
            outcomes.push(fetch(config, seeds, &blocks).await);
        }
        let times: Vec<f64> = outcomes.iter().map(|o| ms(o.time)).collect();
        let (median, min, max) = spread(&times);
        outcomes.sort_by_key(|o| o.time);
        let o = &outcomes[outcomes.len() / 2];
        let base = *sessions_ms[usize::from(seeds > 1)].get_or_insert(median);
        let mut arrivals = o.arrivals.clone();
        arrivals.sort();
        let received = o.arrivals.len() as u64 + o.duplicates;
        let row = json!({
            "mode": mode,
            "seeds": seeds,
            "time_ms": median,
            "min_ms": min,
            "max_ms": max,
            "mb_per_s": total_mb / (median / 1000.0),
            "dups": o.duplicates,
            "dup_pct": 100.0 * o.duplicates as f64 / received as f64,
            "msgs_in": o.msgs_received,
            "mb_in": o.bytes_received as f64 / 1e6,
            "p50_ms": ms(percentile(&arrivals, 0.5)),
            "p99_ms": ms(percentile(&arrivals, 0.99)),
            "x_sessions": median / base,
        });
        if let Value::Object(row) = row {
            rows.push(row);
        }
    }
    rows
}
