//! Quick micro-measurements of the pull-sync hot path, in one process and one thread:
//! BMT hashing of full chunks, and a server node syncing a bin to a puller node on the simulator
//! (no latency, no bandwidth limit), streamed and batched, with bytes allocated per op of 120
//! chunks counted by a counting global allocator. Not the benchmark (`cargo xtask bench
//! pullsync` is); a check of where the cores stand.
//!
//! `cargo run --release -p syncscope-sim --example pullsync_micro [chunks]`

use bytes::Bytes;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant as WallClock};
use syncscope_proto::pullsync::{Config, DeliveryMode};
use syncscope_proto::swarm::{chunk_address, Address, Chunk, Stamp, STAMP_SIZE};
use syncscope_sim::pullsync::SimPair;

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
        let chunk =
            Chunk::new(&payload, Stamp::new(Bytes::from(stamp)).expect("a stamp of STAMP_SIZE"))
                .expect("a payload of at most 4096 bytes");
        if Address::ZERO.proximity(&chunk.address()) == 0 {
            out.push(chunk);
        }
    }
    out
}

/// A server holding `chunks` and a puller in `mode`, on a link with no latency and no bandwidth
/// limit, with the first sync done.
fn pair(mode: DeliveryMode, chunks: &[Chunk]) -> SimPair {
    let client = Config::default().with_delivery(mode);
    SimPair::new(
        Duration::ZERO,
        f64::INFINITY,
        Config::default(),
        client,
        (Address::ZERO, far()),
        chunks,
    )
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

    for mode in [DeliveryMode::Streamed, DeliveryMode::Batched] {
        let start = WallClock::now();
        let pair = pair(mode, &chunks);
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(pair.stored(), n as u64);
        println!("sync {mode:?}: {n} chunks in {secs:.3} s = {:.0} chunks/s", n as f64 / secs);
    }

    for mode in [DeliveryMode::Streamed, DeliveryMode::Batched] {
        let mut pair = pair(mode, &chunks[..120]);
        pair.op(120).expect("a warm-up op completes");
        let ops = 20;
        let before = ALLOCATED.load(Ordering::Relaxed);
        for _ in 0..ops {
            pair.op(120).expect("an op completes");
        }
        let per_op = (ALLOCATED.load(Ordering::Relaxed) - before) / ops;
        println!(
            "alloc {mode:?}: {per_op} bytes per op of 120 chunks (both nodes and the simulator, in memory)"
        );
    }
}
