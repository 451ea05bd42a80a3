//! `bitswap-net`: Bitswap over real libp2p swarms on loopback TCP (noise, yamux): one fetcher and
//! N seeds, the sessions client against the legacy one, each variant run several times in one
//! go, on three layouts: every seed holds every block (plain loopback); each block is on one
//! seed of three, each seed behind the delay proxy (a round trip of twice its delay); and every
//! seed holds every block, one near and two farther away. Every host runs libp2p's ping, and the
//! fetcher hands its round trips to Bitswap as the node does; on the last layout a sessions row
//! without them shows what they are worth. Prints one
//! table (or CSV, JSON): median wall time and its spread, throughput, duplicates, messages, and
//! percentiles of block arrival after the fetch started; `x_sessions` is the row's median time
//! over the sessions row of the same layout and seeds. Rows behind the proxy also show what the
//! deterministic simulator gives for the same layout, so that the two orderings can be compared.
//! Every block is checked against its CID.
//!
//! Wall-clock figures on a shared machine: for the protocol's behaviour in controlled networks,
//! use the deterministic simulator (`bitswap`).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use bytes::Bytes;
use cid::Cid;
use clap::Parser;
use futures::StreamExt;
use libp2p::swarm::{NetworkBehaviour, SwarmEvent};
use libp2p::{ping, Multiaddr, PeerId, Swarm};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use syncscope_node::content::Block;
use syncscope_node::net::bitswap::{Behaviour, Config, Event};
use syncscope_node::store::MemoryBlockStore;
use syncscope_proto::bitswap::{raw_cid, ClientMode};

use syncscope_sim::bitswap::{Distribution, FetchPattern, Scenario};

use crate::delay_proxy::DelayProxy;
use crate::libp2p_host::{listen_loopback, socket_addr, tcp_multiaddr, tcp_swarm};
use crate::report::{render, spread, Format, Row};

/// Bitswap and ping, as on a node: the fetcher ranks its seeds by the pings' round trips.
#[derive(NetworkBehaviour)]
struct Host {
    bitswap: Behaviour<MemoryBlockStore>,
    ping: ping::Behaviour,
}

type Node = Swarm<Host>;

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
    /// Blocks fetched on the one-holder layout.
    #[arg(long, default_value_t = 100)]
    one_holder_blocks: usize,
    /// Bytes per block on the one-holder layout: small, as in the simulator's sweep, so that
    /// round trips, not the proxy's throughput, decide the time.
    #[arg(long, default_value_t = 8000)]
    one_holder_size: usize,
    /// One-way delay the proxy adds in front of each seed on the one-holder layout, in ms.
    #[arg(long, default_value_t = 20)]
    delay_ms: u64,
}

/// Where the blocks are and how far away the seeds are.
#[derive(Debug, Clone)]
struct Layout {
    distribution: Distribution,
    /// One-way delay in front of each seed (zero: plain loopback).
    delays: Vec<Duration>,
}

impl Layout {
    fn seeds(&self) -> usize {
        self.delays.len()
    }

    /// The one delay in front of every seed, when they all have the same one.
    fn uniform_delay(&self) -> Option<Duration> {
        let first = *self.delays.first()?;
        self.delays.iter().all(|d| *d == first).then_some(first)
    }

    /// "5/20/40ms", or "20ms" when every seed is as far.
    fn delay_label(&self) -> String {
        match self.uniform_delay() {
            Some(d) => format!("{}ms", d.as_millis()),
            None => {
                let each: Vec<String> =
                    self.delays.iter().map(|d| d.as_millis().to_string()).collect();
                format!("{}ms", each.join("/"))
            }
        }
    }

    /// The seeds (0-based) that hold each block, drawn as the simulator draws them.
    fn holders(&self, blocks: usize) -> Vec<Vec<usize>> {
        self.distribution.assign(self.seeds(), blocks, &mut ChaCha8Rng::seed_from_u64(2))
    }

    /// The simulator's run of this layout: the same blocks, seeds and one-way delay, one fetch
    /// of everything at once; none on plain loopback or with seeds at different delays, which
    /// the simulator's custom networks do not model.
    fn simulated(&self, blocks: usize, size: usize, mode: ClientMode) -> Option<Duration> {
        let delay = self.uniform_delay().filter(|d| !d.is_zero())?;
        let scenario = Scenario::custom(
            self.seeds() + 1,
            blocks,
            size,
            self.distribution,
            FetchPattern::BigBatch,
            delay,
            Duration::ZERO,
            None,
            1,
        );
        Some(syncscope_sim::bitswap::run(&scenario, mode).time)
    }
}

fn node(config: Config) -> Node {
    let bitswap = Behaviour::new(config, MemoryBlockStore::new());
    tcp_swarm(Host { bitswap, ping: ping::Behaviour::default() }, None).expect("swarm")
}

/// A seed holding `blocks`, driven by its own task once they are stored.
async fn seed(blocks: &[(Cid, Bytes)]) -> (PeerId, Multiaddr, tokio::task::JoinHandle<()>) {
    let mut node = node(Config::default());
    let peer = *node.local_peer_id();
    let addr = listen_loopback(&mut node).await.expect("listen");
    for (cid, data) in blocks {
        let block = Block::verified(*cid, data.clone()).expect("valid block");
        node.behaviour_mut().bitswap.add_block(block);
    }
    let mut added = 0;
    while added < blocks.len() {
        if let SwarmEvent::Behaviour(HostEvent::Bitswap(Event::BlockAdded { .. })) =
            node.select_next_some().await
        {
            added += 1;
        }
    }
    (peer, addr, tokio::spawn(async move { node.for_each(|_| async {}).await }))
}

struct Outcome {
    time: Duration,
    arrivals: Vec<Duration>,
    duplicates: u64,
    /// Blocks received from each seed, duplicates included, in the layout's order.
    per_seed: Vec<u64>,
    msgs_received: u64,
    bytes_received: u64,
}

/// The client under test: Bitswap's mode, and whether it is told the pings' round trips.
#[derive(Debug, Clone, Copy)]
struct Client {
    mode: ClientMode,
    pings: bool,
}

impl Client {
    fn config(self) -> Config {
        match self.mode {
            ClientMode::Legacy => Config::legacy(),
            ClientMode::Sessions => Config::default(),
        }
    }

    fn label(self) -> &'static str {
        match (self.mode, self.pings) {
            (ClientMode::Sessions, true) => "sessions",
            (ClientMode::Sessions, false) => "sessions, no pings",
            (ClientMode::Legacy, _) => "legacy",
        }
    }
}

/// Drives the fetcher until every seed is connected and has answered a ping (each connection
/// pings as it opens), handing the round trips to Bitswap if `client.pings`.
async fn connect(fetcher: &mut Node, seeds: usize, client: Client) {
    let (mut connected, mut pinged) = (0, HashSet::<PeerId>::new());
    while connected < seeds || pinged.len() < seeds {
        match fetcher.select_next_some().await {
            SwarmEvent::Behaviour(HostEvent::Bitswap(Event::PeerConnected { .. })) => {
                connected += 1
            }
            SwarmEvent::Behaviour(HostEvent::Ping(ping::Event {
                peer, result: Ok(rtt), ..
            })) => {
                if client.pings {
                    fetcher.behaviour_mut().bitswap.peer_round_trip(peer, rtt);
                }
                pinged.insert(peer);
            }
            _ => {}
        }
    }
}

async fn fetch(client: Client, layout: &Layout, blocks: &[(Cid, Bytes)]) -> Outcome {
    let mut tasks = Vec::new();
    let mut proxies = Vec::new();
    let mut seeds = Vec::new();
    let mut fetcher = node(client.config());
    let holders = layout.holders(blocks.len());
    for (s, delay) in layout.delays.iter().enumerate() {
        let own: Vec<(Cid, Bytes)> = (blocks.iter().zip(&holders))
            .filter(|(_, h)| h.contains(&s))
            .map(|(b, _)| b.clone())
            .collect();
        let (peer, mut addr, task) = seed(&own).await;
        seeds.push(peer);
        tasks.push(task);
        if !delay.is_zero() {
            let target = socket_addr(&addr).expect("a TCP listen address");
            let proxy = DelayProxy::start(target, *delay).expect("delay proxy");
            addr = tcp_multiaddr(proxy.addr);
            proxies.push(proxy);
        }
        fetcher.dial(addr).expect("dial");
    }
    connect(&mut fetcher, layout.seeds(), client).await;
    let started = Instant::now();
    let fetch = fetcher.behaviour_mut().bitswap.fetch(blocks.iter().map(|(c, _)| *c));
    let mut arrivals = Vec::with_capacity(blocks.len());
    loop {
        match fetcher.select_next_some().await {
            SwarmEvent::Behaviour(HostEvent::Bitswap(Event::Block { cid, data, .. })) => {
                assert_eq!(raw_cid(&data), cid, "a verified block");
                arrivals.push(started.elapsed());
            }
            SwarmEvent::Behaviour(HostEvent::Bitswap(Event::FetchDone { fetch: f }))
                if f == fetch =>
            {
                break
            }
            _ => {}
        }
    }
    let time = started.elapsed();
    assert_eq!(arrivals.len(), blocks.len(), "every block once");
    for task in tasks {
        task.abort();
    }
    let bitswap = &fetcher.behaviour().bitswap;
    let c = bitswap.stats().counters;
    Outcome {
        time,
        arrivals,
        duplicates: c.duplicate_blocks,
        per_seed: seeds.iter().map(|p| bitswap.peer_stats(*p).blocks_received).collect(),
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
        "{} blocks x {} B where every seed holds every block, {} x {} B where each is on one \
         seed behind a proxy adding {} ms each way, the same where every seed holds every block \
         behind proxies adding a quarter, one and two times that; time_ms is the median of {} runs (min-max beside it), the \
         other columns are from the median run (per_seed: blocks received from each seed, \
         duplicates included, nearest first where the delays differ); x_sessions is time_ms over the sessions row of \
         the same layout and seeds; sim_ms is the deterministic simulator's time for the same \
         layout and delay (no bandwidth limit), and sim_x_sessions its ratio",
        args.blocks,
        args.size,
        args.one_holder_blocks,
        args.one_holder_size,
        args.delay_ms,
        args.runs
    );
    print!("{}", render(args.format, &rows, &[note]));
    Ok(())
}

async fn rows(args: &Args) -> Vec<Row> {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut random_blocks = |count, size| -> Vec<(Cid, Bytes)> {
        (0..count)
            .map(|_| {
                let mut data = vec![0; size];
                rng.fill_bytes(&mut data);
                (raw_cid(&data), Bytes::from(data))
            })
            .collect()
    };
    let blocks = random_blocks(args.blocks, args.size);
    let small = random_blocks(args.one_holder_blocks, args.one_holder_size);
    let every = |seeds| Layout {
        distribution: Distribution::AllToAll,
        delays: vec![Duration::ZERO; seeds],
    };
    let delay = Duration::from_millis(args.delay_ms);
    let one_holder = Layout { distribution: Distribution::OnePeerPerBlock, delays: vec![delay; 3] };
    let near_and_far =
        Layout { distribution: Distribution::AllToAll, delays: vec![delay / 4, delay, 2 * delay] };
    let sessions = Client { mode: ClientMode::Sessions, pings: true };
    let legacy = Client { mode: ClientMode::Legacy, pings: true };
    let unpinged = Client { mode: ClientMode::Sessions, pings: false };
    let variants = [
        (every(1), &blocks, vec![sessions, legacy]),
        (every(3), &blocks, vec![sessions, legacy]),
        (one_holder, &small, vec![sessions, legacy]),
        (near_and_far, &small, vec![sessions, unpinged, legacy]),
    ];
    let mut rows = Vec::new();
    for (layout, blocks, clients) in variants {
        let mut base = None;
        for client in clients {
            rows.push(variant(args, &layout, blocks, client, &mut base).await);
        }
    }
    rows
}

/// One row: `runs` fetches of `blocks` on `layout`; `sessions` holds the layout's first row's
/// median time and its simulated time (none where the simulator has no such network), which
/// the other rows are compared with.
async fn variant(
    args: &Args,
    layout: &Layout,
    blocks: &[(Cid, Bytes)],
    client: Client,
    sessions: &mut Option<(f64, Option<f64>)>,
) -> Row {
    let mut outcomes = Vec::new();
    for _ in 0..args.runs {
        outcomes.push(fetch(client, layout, blocks).await);
    }
    let times: Vec<f64> = outcomes.iter().map(|o| ms(o.time)).collect();
    let (median, min, max) = spread(&times);
    outcomes.sort_by_key(|o| o.time);
    let o = &outcomes[outcomes.len() / 2];
    let size = blocks.first().map_or(0, |(_, b)| b.len());
    let simulated = layout.simulated(blocks.len(), size, client.mode).map(ms);
    let (base, sim_base) = *sessions.get_or_insert((median, simulated));
    let mut arrivals = o.arrivals.clone();
    arrivals.sort();
    let received = o.arrivals.len() as u64 + o.duplicates;
    let total_mb = (blocks.len() * size) as f64 / 1e6;
    let row = json!({
        "layout": format!("{} {}", layout.distribution, layout.delay_label()),
        "mode": client.label(),
        "seeds": layout.seeds(),
        "time_ms": median,
        "min_ms": min,
        "max_ms": max,
        "mb_per_s": total_mb / (median / 1000.0),
        "dups": o.duplicates,
        "dup_pct": 100.0 * o.duplicates as f64 / received as f64,
        "per_seed": o.per_seed.iter().map(u64::to_string).collect::<Vec<_>>().join("/"),
        "msgs_in": o.msgs_received,
        "mb_in": o.bytes_received as f64 / 1e6,
        "p50_ms": ms(percentile(&arrivals, 0.5)),
        "p99_ms": ms(percentile(&arrivals, 0.99)),
        "x_sessions": median / base,
        "sim_ms": simulated,
        "sim_x_sessions": simulated.zip(sim_base).map(|(s, b)| s / b),
    });
    match row {
        Value::Object(row) => row,
        _ => Row::new(),
    }
}
