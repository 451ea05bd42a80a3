//! Quick micro-measurements of the pull-sync hot path, in one process and one thread:
//! BMT hashing of full chunks, and a server core syncing a bin to a puller core in memory (no
//! network, no latency), streamed and batched, with bytes allocated per op of 120 chunks counted
//! by a counting global allocator. Not the benchmark (`cargo xtask bench pullsync` is); a check
//! of where the cores stand.
//!
//! `cargo run --release -p syncscope-node --example pullsync_micro [chunks]`

use bytes::Bytes;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant as WallClock;
use syncscope_proto::pullsync::{
    Config, DeliveryMode, IntervalStore, MemoryIntervalStore, MemoryReserve, Puller, PullerEvent,
    Server, ServerEvent, StreamAction,
};
use syncscope_proto::swarm::{chunk_address, Address, Chunk, Stamp, STAMP_SIZE};
use web_time::Instant;

struct Counting;

static ALLOCATED: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size() as u64, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new_size.saturating_sub(layout.size()) as u64, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const SERVER: u8 = 1;
const CLIENT: u8 = 2;

fn far() -> Address {
    let mut a = [0; 32];
    a[0] = 0x80;
    Address(a)
}

/// Full 4096-byte chunks that fall into bin 0 of the zero overlay.
fn bin0_chunks(n: usize) -> Vec<Chunk> {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut payload = vec![0u8; 4096];
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        rng.fill_bytes(&mut payload);
        let mut stamp = vec![0u8; STAMP_SIZE];
        rng.fill_bytes(&mut stamp);
        let chunk = Chunk::new(&payload, Stamp::new(Bytes::from(stamp)).unwrap()).unwrap();
        if Address::ZERO.proximity(&chunk.address()) == 0 {
            out.push(chunk);
        }
    }
    out
}

fn puller(mode: DeliveryMode) -> Puller<u8, MemoryIntervalStore> {
    let config = Config::default().with_delivery(mode);
    let mut puller = Puller::new(config, far(), MemoryIntervalStore::default());
    puller.set_storage_radius(Instant::now(), 1);
    puller
}

/// One op: `puller` syncs bin 0 from `server` from scratch, until it has `expect` chunks or
/// nothing moves; returns the number delivered. Chunks are dropped after counting, as in bee's
/// benchmark client.
fn sync(
    server: &mut Server<u8>,
    puller: &mut Puller<u8, MemoryIntervalStore>,
    reserve: &MemoryReserve,
    expect: usize,
) -> usize {
    let now = Instant::now();
    puller.store_mut().reset_peer(&Address::ZERO, 1).expect("memory store");
    puller.add_peer(now, SERVER, Address::ZERO);
    let have = MemoryReserve::new(far(), 1);
    let mut delivered = 0;
    loop {
        let mut moved = false;
        while let Some(t) = puller.poll_transmit() {
            moved = true;
            match t.action {
                StreamAction::Open(p) => server.handle_stream_opened(CLIENT, t.stream, p),
                StreamAction::Send(d) => server.handle_data(now, CLIENT, t.stream, &d, reserve),
                StreamAction::Finish => server.handle_stream_finished(CLIENT, t.stream),
                StreamAction::Reset => server.handle_stream_reset(CLIENT, t.stream),
            }
        }
        while let Some(ServerEvent::ChunksWanted { peer, stream, chunks }) = server.poll_event() {
            let found = chunks.iter().map(|c| reserve.get(c)).collect();
            server.provide_chunks(peer, stream, found).expect("stream waits for chunks");
        }
        // Drain the puller's events after every input, as the glue must: chunks then die at
        // once and the receive buffer is reused instead of growing.
        while let Some(t) = server.poll_transmit(now) {
            moved = true;
            match t.action {
                StreamAction::Send(d) => puller.handle_data(now, t.stream, &d, &have),
                StreamAction::Finish => puller.handle_stream_finished(now, t.stream),
                StreamAction::Reset => puller.handle_stream_failed(now, t.stream),
                StreamAction::Open(_) => unreachable!("servers do not open streams"),
            }
            while let Some(e) = puller.poll_event() {
                match e {
                    PullerEvent::Chunk { .. } => delivered += 1,
                    PullerEvent::Misbehaved { error, .. } => panic!("misbehaviour: {error}"),
                    _ => {}
                }
            }
        }
        if !moved || delivered >= expect {
            server.handle_peer_disconnected(CLIENT);
            puller.remove_peer(now, SERVER);
            return delivered;
        }
    }
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let chunks = bin0_chunks(n);

    let start = WallClock::now();
    let mut acc = 0u8;
    for c in &chunks {
        acc ^= chunk_address(c.span(), c.payload()).0[0];
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "bmt: {n} full chunks hashed in {secs:.3} s = {:.0} chunks/s ({acc})",
        n as f64 / secs
    );

    let mut reserve = MemoryReserve::new(Address::ZERO, 1);
    for c in &chunks {
        reserve.put(c.clone());
    }
    for mode in [DeliveryMode::Streamed, DeliveryMode::Batched] {
        let mut server = Server::new(Config::default());
        let start = WallClock::now();
        let got = sync(&mut server, &mut puller(mode), &reserve, n);
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(got, n);
        println!("sync {mode:?}: {n} chunks in {secs:.3} s = {:.0} chunks/s", n as f64 / secs);
    }

    let mut small = MemoryReserve::new(Address::ZERO, 1);
    for c in &chunks[..120] {
        small.put(c.clone());
    }
    for mode in [DeliveryMode::Streamed, DeliveryMode::Batched] {
        let mut server = Server::new(Config::default());
        let mut puller = puller(mode);
        sync(&mut server, &mut puller, &small, 120);
        let ops = 20;
        let before = ALLOCATED.load(Ordering::Relaxed);
        for _ in 0..ops {
            assert_eq!(sync(&mut server, &mut puller, &small, 120), 120);
        }
        let per_op = (ALLOCATED.load(Ordering::Relaxed) - before) / ops;
        println!("alloc {mode:?}: {per_op} bytes per op of 120 chunks (both cores, in memory)");
    }
}
