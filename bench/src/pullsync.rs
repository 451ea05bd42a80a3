//! `syncscope-bench pullsync`: bee's `BenchmarkDeliveryLibP2P` reproduced over real libp2p and in
//! simulation, plus sustained throughput between two native nodes.
//!
//! One op is one sync of bin 0 with n chunks offered, wanted and delivered into an empty store:
//! the client stops syncing bin 0 (radius 1), forgets its intervals and chunks, and starts again
//! (radius 0), which opens one page stream: Get, Offer, Want, n deliveries. The server holds
//! exactly those n chunks in bin 0 and pulls nothing itself, like bee's benchmark host.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use syncscope_node::net::pullsync::Config;
use syncscope_node::store::{
    ChunkStore, DiskBlockStore, NodeBlockStore, PullsyncState, Records, Table,
};
use syncscope_proto::pullsync::{self, DeliveryMode, IntervalStore, MemoryReserve, RateLimit};
use syncscope_proto::swarm::{simd_path, Address, Chunk, Stamp, STAMP_SIZE};
use web_time::Instant;

use crate::alloc_counter;
use crate::delay_proxy::DelayProxy;
use crate::libp2p_host::Host;
use crate::report::{self, Format};
use syncscope_sim::pullsync::SimPair;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Timed ops per row, after one warm-up op.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(5..=1000))]
    ops: u32,
    /// Chunks synced in the sustained-throughput run.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1000..=1_000_000))]
    throughput_chunks: u64,
}

const SIZES: [usize; 2] = [25, 120];
const LATENCIES_MS: [u64; 2] = [0, 200];
const MODES: [DeliveryMode; 2] = [DeliveryMode::Streamed, DeliveryMode::Batched];
const LIMITS: [Option<RateLimit>; 2] = [None, Some(RateLimit::BEE)];
/// Bandwidth of the simulated link: 1 Gbit/s each way.
const SIM_BYTES_PER_SECOND: u64 = 125_000_000;
/// A radius no peer's bins qualify for: more than `MAX_PO_DELTA` above any proximity.
const PULL_NOTHING: u8 = 40;

/// bee's figures from the seed (BenchmarkDeliveryLibP2P/n=120, Apple M1 Pro, limiter at 250/s).
const BEE_MS_AT_0: f64 = 388.0;
const BEE_MS_AT_200: f64 = 1622.0;
const BEE_BYTES_STREAMED: f64 = 1_734_056.0;
const BEE_BYTES_BATCHED: f64 = 2_456_576.0;

const TARGET_MS_AT_0: f64 = 39.0;
const TARGET_MS_AT_200: f64 = 900.0;
const TARGET_BYTES: f64 = 1_000_000.0;
const TARGET_CHUNKS_PER_S: f64 = 50_000.0;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Transport {
    Libp2p,
    Sim,
}

impl Transport {
    fn label(self) -> &'static str {
        match self {
            Transport::Libp2p => "libp2p-tcp",
            Transport::Sim => "sim",
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Case {
    transport: Transport,
    n: usize,
    latency_ms: u64,
    mode: DeliveryMode,
    limit: Option<RateLimit>,
}

struct Row {
    case: Case,
    /// Sorted.
    times: Vec<Duration>,
    alloc_per_op: u64,
}

struct Throughput {
    chunks: u64,
    elapsed: Duration,
    alloc: u64,
    /// CPU time of the whole process (both hosts) over the run, where the OS tells it.
    cpu: Option<Duration>,
}

impl Throughput {
    fn chunks_per_s(&self) -> f64 {
        self.chunks as f64 / self.elapsed.as_secs_f64()
    }
}

fn mode_label(mode: DeliveryMode) -> &'static str {
    match mode {
        DeliveryMode::Streamed => "streamed",
        DeliveryMode::Batched => "batched",
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

impl Row {
    fn median(&self) -> Duration {
        self.times[self.times.len() / 2]
    }
}

pub fn run(args: Args) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let chunks = bin0_chunks(*SIZES.iter().max().unwrap_or(&0));
    let mut rows = Vec::new();
    for transport in [Transport::Libp2p, Transport::Sim] {
        for n in SIZES {
            for latency_ms in LATENCIES_MS {
                for mode in MODES {
                    for limit in LIMITS {
                        let case = Case { transport, n, latency_ms, mode, limit };
                        eprintln!("running {}", describe(&case));
                        let row = match transport {
                            Transport::Libp2p => {
                                runtime.block_on(libp2p_row(case, &chunks[..n], args.ops))?
                            }
                            Transport::Sim => sim_row(case, &chunks[..n], args.ops)?,
                        };
                        rows.push(row);
                    }
                }
            }
        }
    }
    eprintln!("running sustained throughput, {} chunks", args.throughput_chunks);
    let in_memory = runtime.block_on(throughput(args.throughput_chunks, false))?;
    eprintln!("running sustained throughput into the redb reserve");
    let on_disk = runtime.block_on(throughput(args.throughput_chunks, true))?;
    let mut table: Vec<report::Row> = rows.iter().map(row_json).collect();
    table.push(throughput_json(&in_memory, "throughput"));
    table.push(throughput_json(&on_disk, "throughput-redb"));
    let notes = match args.format {
        Format::Table => notes(&rows, &in_memory, &on_disk, args.ops),
        _ => Vec::new(),
    };
    print!("{}", report::render(args.format, &table, &notes));
    Ok(())
}

fn describe(c: &Case) -> String {
    let limit = limit_label(c.limit);
    format!(
        "{} n={} latency={}ms {} limiter={limit}",
        c.transport.label(),
        c.n,
        c.latency_ms,
        mode_label(c.mode)
    )
}

fn server_overlay() -> Address {
    Address::ZERO
}

/// Proximity 31 to the server: a neighbour that syncs every bin from its radius up.
fn client_overlay() -> Address {
    let mut a = [0u8; 32];
    a[31] = 1;
    Address(a)
}

fn random_chunk(rng: &mut ChaCha8Rng, payload: &mut [u8]) -> Chunk {
    rng.fill_bytes(payload);
    let mut stamp = vec![0u8; STAMP_SIZE];
    rng.fill_bytes(&mut stamp);
    let stamp = Stamp::new(Bytes::from(stamp)).unwrap_or_else(|_| unreachable!("stamp size"));
    Chunk::new(payload, stamp).unwrap_or_else(|_| unreachable!("payload size"))
}

/// Full 4096-byte chunks in bin 0 of the server's overlay.
fn bin0_chunks(n: usize) -> Vec<Chunk> {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed);
    let mut payload = vec![0u8; 4096];
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let chunk = random_chunk(&mut rng, &mut payload);
        if server_overlay().proximity(&chunk.address()) == 0 {
            out.push(chunk);
        }
    }
    out
}

fn server_config(limit: Option<RateLimit>) -> pullsync::Config {
    pullsync::Config::default().with_rate_limit(limit)
}

fn client_config(mode: DeliveryMode) -> pullsync::Config {
    pullsync::Config::default().with_delivery(mode)
}

async fn libp2p_row(case: Case, chunks: &[Chunk], ops: u32) -> Result<Row, String> {
    let server = Host::start(
        Config::default()
            .with_protocol(server_config(case.limit))
            .with_storage_radius(PULL_NOTHING),
        server_overlay(),
    )
    .await?;
    let upload = chunks.to_vec();
    server
        .with(move |s, _| {
            upload.into_iter().try_for_each(|c| s.behaviour_mut().store_chunk(c).map(drop))
        })
        .await?
        .map_err(|e| e.to_string())?;
    let client =
        Host::start(Config::default().with_protocol(client_config(case.mode)), client_overlay())
            .await?;
    let server_peer = server.peer_id;
    client
        .with(move |s, _| s.behaviour_mut().set_peer_overlay(server_peer, server_overlay()))
        .await?;
    let client_peer = client.peer_id;
    server
        .with(move |s, _| s.behaviour_mut().set_peer_overlay(client_peer, client_overlay()))
        .await?;

    let latency = Duration::from_millis(case.latency_ms);
    let proxy = match case.latency_ms {
        0 => None,
        _ => Some(DelayProxy::start(server.addr, latency).map_err(|e| format!("proxy: {e}"))?),
    };
    let dial = proxy.as_ref().map_or(server.addr, |p| p.addr);
    let n = chunks.len() as u64;
    let initial = client.with(move |_, p| p.notify_at(n)).await?;
    client.connect(server.peer_id, dial).await?;
    initial.await.map_err(|_| "initial sync did not finish")?;

    let settle = latency * 2 + Duration::from_millis(20);
    let mut times = Vec::new();
    let mut alloc = 0;
    for i in 0..=ops {
        client
            .with(|s, _| {
                let b = s.behaviour_mut();
                b.set_storage_radius(1);
                // The memory interval store never fails.
                let _ = b.intervals_mut().reset_peer(&server_overlay(), 1);
                *b.store_mut() = MemoryReserve::new(client_overlay(), 1);
            })
            .await?;
        tokio::time::sleep(settle).await;
        let before = alloc_counter::snapshot();
        let (start, done) = client
            .with(move |s, p| {
                let done = p.notify_at(p.stored + n);
                let start = Instant::now();
                s.behaviour_mut().set_storage_radius(0);
                (start, done)
            })
            .await?;
        let end = tokio::time::timeout(Duration::from_secs(120), done)
            .await
            .map_err(|_| format!("op timed out: {}", describe(&case)))?
            .map_err(|_| "host stopped")?;
        if i > 0 {
            alloc += alloc_counter::snapshot().since(before).bytes;
            times.push(end - start);
        }
    }
    times.sort();
    Ok(Row { case, times, alloc_per_op: alloc / u64::from(ops) })
}

fn sim_row(case: Case, chunks: &[Chunk], ops: u32) -> Result<Row, String> {
    let mut pair = SimPair::new(
        Duration::from_millis(case.latency_ms),
        SIM_BYTES_PER_SECOND as f64,
        server_config(case.limit),
        client_config(case.mode),
        (server_overlay(), client_overlay()),
        chunks,
    );
    let n = chunks.len() as u64;
    let stuck = || format!("simulated op did not finish: {}", describe(&case));
    pair.op(n).ok_or_else(stuck)?;
    let before = alloc_counter::snapshot();
    let mut times =
        (0..ops).map(|_| pair.op(n).ok_or_else(stuck)).collect::<Result<Vec<_>, _>>()?;
    let alloc = alloc_counter::snapshot().since(before).bytes;
    times.sort();
    Ok(Row { case, times, alloc_per_op: alloc / u64::from(ops) })
}

/// Chunks per second from a fresh client syncing `count` random chunks (all bins) from a
/// neighbour, every chunk verified and stored; timed from the dial to the last chunk stored, in
/// the client's memory reserve or, with `on_disk`, on its redb file (the node's own reserve,
/// written behind: timed to the last chunk's write).
async fn throughput(count: u64, on_disk: bool) -> Result<Throughput, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7468);
    let mut payload = vec![0u8; 4096];
    let chunks: Vec<Chunk> = (0..count).map(|_| random_chunk(&mut rng, &mut payload)).collect();
    let server =
        Host::start(Config::default().with_storage_radius(PULL_NOTHING), server_overlay()).await?;
    server
        .with(move |s, _| {
            chunks.into_iter().try_for_each(|c| s.behaviour_mut().store_chunk(c).map(drop))
        })
        .await?
        .map_err(|e| e.to_string())?;
    if !on_disk {
        let client = Host::start(Config::default(), client_overlay()).await?;
        return timed_sync(&server, &client, count, async { Ok(()) }).await;
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let disk = DiskBlockStore::open(&dir.path().join("reserve.redb")).map_err(|e| e.to_string())?;
    let store = Arc::new(NodeBlockStore::Persistent(disk));
    let state =
        PullsyncState::load(store.clone(), client_overlay(), 1).await.map_err(|e| e.to_string())?;
    let client =
        Host::start_with(Config::default(), client_overlay(), state.reserve, state.intervals)
            .await?;
    timed_sync(&server, &client, count, written(store, count)).await
}

/// Waits until the `count`th chunk (arrival number `count - 1`) is in `store`: writes land in
/// order, so every earlier one is too.
async fn written(store: Arc<NodeBlockStore>, count: u64) -> Result<(), String> {
    let last = vec![(count - 1).to_be_bytes().to_vec()];
    let deadline = Instant::now() + Duration::from_secs(600);
    while store.records_at(Table::Chunks, last.clone()).await.map_err(|e| e.to_string())?[0]
        .is_none()
    {
        if Instant::now() > deadline {
            return Err("the reserve's writes never landed".into());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    Ok(())
}

/// Dials `server` from `client` and times the sync of `count` chunks until they are stored and
/// `settled` completes.
async fn timed_sync<S: ChunkStore + Send + 'static, I: IntervalStore + Send + 'static>(
    server: &Host,
    client: &Host<S, I>,
    count: u64,
    settled: impl std::future::Future<Output = Result<(), String>>,
) -> Result<Throughput, String> {
    let server_peer = server.peer_id;
    client
        .with(move |s, _| s.behaviour_mut().set_peer_overlay(server_peer, server_overlay()))
        .await?;
    let done = client.with(move |_, p| p.notify_at(count)).await?;
    let before = alloc_counter::snapshot();
    let cpu_before = process_cpu_time();
    let start = Instant::now();
    client.connect(server.peer_id, server.addr).await?;
    tokio::time::timeout(Duration::from_secs(600), done)
        .await
        .map_err(|_| "throughput run timed out")?
        .map_err(|_| "host stopped")?;
    settled.await?;
    let end = Instant::now();
    let alloc = alloc_counter::snapshot().since(before).bytes;
    let cpu =
        process_cpu_time().zip(cpu_before).map(|(after, before)| after.saturating_sub(before));
    let stats = client.with(|s, _| s.behaviour().stats()).await?;
    if stats.puller.chunks_delivered != count || stats.puller.chunks_rejected != 0 {
        return Err(format!("throughput run delivered {:?}", stats.puller));
    }
    Ok(Throughput { chunks: count, elapsed: end - start, alloc, cpu })
}

/// User plus system time of this process so far, from `/proc/self/stat` (Linux; 100 ticks/s).
fn process_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may contain spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// The 1-minute load average, to judge how much of the machine the run had.
fn load_average() -> Option<String> {
    let loadavg = std::fs::read_to_string("/proc/loadavg").ok()?;
    loadavg.split_whitespace().next().map(str::to_string)
}

fn limit_label(limit: Option<RateLimit>) -> String {
    limit.map_or("off".to_string(), |l| format!("{}/s", l.chunks_per_second))
}

/// bee's time and bytes per op from the seed, for the rows it measured the equivalent of.
fn bee(case: &Case) -> Option<(f64, f64)> {
    if case.transport != Transport::Libp2p || case.n != 120 {
        return None;
    }
    let ms = if case.latency_ms == 0 { BEE_MS_AT_0 } else { BEE_MS_AT_200 };
    let bytes = match case.mode {
        DeliveryMode::Streamed => BEE_BYTES_STREAMED,
        DeliveryMode::Batched => BEE_BYTES_BATCHED,
    };
    Some((ms, bytes))
}

fn human_bytes(bytes: f64) -> String {
    if bytes >= 1e6 {
        format!("{:.2} MB", bytes / 1e6)
    } else {
        format!("{:.0} KB", bytes / 1e3)
    }
}

fn human_ms(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.3} s", ms / 1000.0)
    } else {
        format!("{ms:.1} ms")
    }
}

fn object(value: serde_json::Value) -> report::Row {
    match value {
        serde_json::Value::Object(map) => map,
        _ => report::Row::new(),
    }
}

fn row_json(row: &Row) -> report::Row {
    let c = &row.case;
    let bee = bee(c);
    object(json!({
        "transport": c.transport.label(),
        "n": c.n,
        "latency_ms": c.latency_ms,
        "mode": mode_label(c.mode),
        "rate_limit": c.limit.map(|l| l.chunks_per_second),
        "time_ms_median": ms(row.median()),
        "time_ms_min": ms(row.times[0]),
        "time_ms_max": ms(row.times[row.times.len() - 1]),
        "alloc_bytes_per_op": row.alloc_per_op,
        "chunks_per_s": null,
        "bee_ms_per_op": bee.map(|(ms, _)| ms),
        "bee_bytes_per_op": bee.map(|(_, bytes)| bytes),
    }))
}

fn throughput_json(t: &Throughput, mode: &str) -> report::Row {
    let total = ms(t.elapsed);
    object(json!({
        "transport": Transport::Libp2p.label(),
        "n": t.chunks,
        "latency_ms": 0,
        "mode": mode,
        "rate_limit": null,
        "time_ms_median": total,
        "time_ms_min": total,
        "time_ms_max": total,
        "alloc_bytes_per_op": t.alloc / t.chunks,
        "chunks_per_s": t.chunks_per_s(),
        "bee_ms_per_op": null,
        "bee_bytes_per_op": null,
    }))
}

/// What the table's rows mean, the throughput run's context, and the targets.
fn notes(rows: &[Row], throughput: &Throughput, on_disk: &Throughput, ops: u32) -> Vec<String> {
    let mut out = vec![
        String::new(),
        "one op = one sync of bin 0 (bee's BenchmarkDeliveryLibP2P): n chunks offered, wanted and delivered into an empty store".into(),
        format!("time: median, min and max of {ops} ops after one warm-up op; alloc_bytes_per_op: bytes allocated by the whole process"),
        "  (both hosts; the proxy's thread excluded), counted by a counting global allocator; rate_limit: chunks/s per peer".into(),
        "libp2p-tcp: two real libp2p hosts in this process, TCP + noise + yamux on loopback, V1Lazy stream negotiation;".into(),
        "  latency_ms is added by a user-space delaying TCP proxy that holds every read for the one-way delay in both".into(),
        "  directions: it keeps the round trips, but not the sender's congestion-window growth across a slow link".into(),
        format!(
            "sim: the same op on virtual time in the shared simulator (syncscope_sim), the two cores on a {} Gbit/s link",
            SIM_BYTES_PER_SECOND * 8 / 1_000_000_000
        ),
        "  with the same one-way latency; frame bytes only (no yamux/noise/TCP overhead or flow-control windows)".into(),
        "bee_*: bee's figures from the seed (n=120, Apple M1 Pro, its 250/s limiter on), beside our n=120 libp2p rows".into(),
        format!(
            "throughput: {} chunks of 4 KiB, all bins of a neighbour, streamed, limiter off, every chunk verified and stored:",
            throughput.chunks
        ),
        format!(
            "  {:.0} chunks/s ({:.0} MiB/s); BMT hashing path: {}",
            throughput.chunks_per_s(),
            throughput.chunks_per_s() * 4096.0 / 1_048_576.0,
            simd_path()
        ),
    ];
    out.push(format!(
        "throughput-redb: the same into the node's own reserve on a redb file, written behind, timed to the last write: {:.0} chunks/s, {:.2} x memory",
        on_disk.chunks_per_s(),
        on_disk.chunks_per_s() / throughput.chunks_per_s()
    ));
    if let Some(cpu) = throughput.cpu {
        out.push(format!(
            "  CPU: {:.2} s for both hosts = {:.1} us per chunk ({:.0} chunks per CPU-second); {} cores, load average {}",
            cpu.as_secs_f64(),
            cpu.as_secs_f64() * 1e6 / throughput.chunks as f64,
            throughput.chunks as f64 / cpu.as_secs_f64().max(1e-9),
            std::thread::available_parallelism().map_or(0, usize::from),
            load_average().unwrap_or_else(|| "unknown".into())
        ));
    }
    out.push(String::new());
    out.push("targets".into());
    for (pass, text) in targets(rows, throughput) {
        out.push(format!("  [{}] {text}", if pass { "PASS" } else { "FAIL" }));
    }
    out
}

fn find(rows: &[Row], latency_ms: u64, mode: DeliveryMode, limit: bool) -> Option<&Row> {
    rows.iter().find(|r| {
        let c = &r.case;
        c.transport == Transport::Libp2p
            && c.n == 120
            && c.latency_ms == latency_ms
            && c.mode == mode
            && c.limit.is_some() == limit
    })
}

fn targets(rows: &[Row], throughput: &Throughput) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    for (latency, target) in [(0, TARGET_MS_AT_0), (200, TARGET_MS_AT_200)] {
        for mode in MODES {
            let Some(row) = find(rows, latency, mode, false) else { continue };
            let median = ms(row.median());
            let verdict = if median <= target {
                format!("{:.0}% of the target", 100.0 * median / target)
            } else {
                format!("missed by {}", human_ms(median - target))
            };
            out.push((
                median <= target,
                format!(
                    "n=120 libp2p-tcp {latency} ms limiter off {}: {} <= {} ({verdict})",
                    mode_label(mode),
                    human_ms(median),
                    human_ms(target)
                ),
            ));
        }
    }
    let libp2p120: Vec<&Row> =
        rows.iter().filter(|r| r.case.transport == Transport::Libp2p && r.case.n == 120).collect();
    if let Some(worst) = libp2p120.iter().max_by_key(|r| r.alloc_per_op) {
        let bytes = worst.alloc_per_op as f64;
        out.push((
            bytes <= TARGET_BYTES,
            format!(
                "alloc per op <= {} on every n=120 libp2p-tcp row: worst {} ({})",
                human_bytes(TARGET_BYTES),
                human_bytes(bytes),
                describe(&worst.case)
            ),
        ));
    }
    let mut pairs = 0;
    let mut worse = Vec::new();
    for latency in LATENCIES_MS {
        for limit in [false, true] {
            let streamed = find(rows, latency, DeliveryMode::Streamed, limit);
            let batched = find(rows, latency, DeliveryMode::Batched, limit);
            if let (Some(s), Some(b)) = (streamed, batched) {
                pairs += 1;
                if b.alloc_per_op > s.alloc_per_op {
                    worse.push(format!(
                        "{} ms limiter {}: {} > {}",
                        latency,
                        if limit { "on" } else { "off" },
                        human_bytes(b.alloc_per_op as f64),
                        human_bytes(s.alloc_per_op as f64)
                    ));
                }
            }
        }
    }
    out.push((
        worse.is_empty(),
        format!(
            "batched allocates no more than streamed (n=120 libp2p-tcp): {} of {pairs} pairs{}",
            pairs - worse.len(),
            if worse.is_empty() {
                String::new()
            } else {
                format!("; batched more at {}", worse.join(", "))
            }
        ),
    ));
    let rate = throughput.chunks_per_s();
    out.push((
        rate >= TARGET_CHUNKS_PER_S,
        format!("sustained throughput {rate:.0} chunks/s >= {TARGET_CHUNKS_PER_S:.0}"),
    ));
    out
}
