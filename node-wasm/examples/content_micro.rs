//! Quick micro-measurements of content import and export, in one process and one thread: the
//! demo content of a given size through the UnixFS importer (kubo's `--cid-version=1
//! --raw-leaves` layout) and exporter, and through the Swarm splitter and joiner, each beside the
//! bare hashing it cannot avoid (sha2-256 of every leaf, the BMT of every data chunk). Each row is
//! the median of 5 runs. Not a benchmark of the network; a check of where the importers stand.
//!
//! `cargo run --release -p syncscope-node --example content_micro [MiB]`

use bytes::Bytes;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::time::{Duration, Instant as WallClock};
use syncscope_node::content::{
    demo_content, demo_stamp, export_file, import_bytes, join_file, split_bytes, ExportLimits,
    ImportConfig, DEFAULT_CHUNK_SIZE,
};
use syncscope_proto::swarm::{chunk_address, CHUNK_SIZE};

const RUNS: usize = 5;

fn median(mut run: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = WallClock::now();
            run();
            started.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

fn main() {
    let mib: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(64);
    let size = mib << 20;
    let data = demo_content(1, size).into_vec();
    let unixfs = import_bytes(&data, ImportConfig::default()).expect("default config is valid");
    let blocks: HashMap<_, _> = unixfs.blocks.iter().map(|b| (b.cid(), b.data().clone())).collect();
    let swarm = split_bytes(&data, demo_stamp(1));
    let chunks: HashMap<_, Bytes> =
        swarm.chunks.iter().map(|c| (c.address(), c.data().clone())).collect();
    println!(
        "{mib} MiB: {} UnixFS blocks (root {}), {} Swarm chunks (root {})\n",
        unixfs.blocks.len(),
        unixfs.root,
        swarm.chunks.len(),
        swarm.root
    );

    let rows: Vec<(&str, Duration, Option<Duration>)> = {
        let sha = median(|| {
            data.chunks(DEFAULT_CHUNK_SIZE).for_each(|leaf| {
                std::hint::black_box(Sha256::digest(leaf));
            })
        });
        let bmt = median(|| {
            data.chunks(CHUNK_SIZE).for_each(|chunk| {
                std::hint::black_box(chunk_address(chunk.len() as u64, chunk));
            })
        });
        let generate = median(|| {
            std::hint::black_box(demo_content(1, size).into_vec());
        });
        let import = median(|| {
            std::hint::black_box(import_bytes(&data, ImportConfig::default()).ok());
        });
        let export = median(|| {
            let file =
                export_file(unixfs.root, ExportLimits::default(), |c| blocks.get(c).cloned());
            assert_eq!(file.map(|f| f.len()), Ok(size));
        });
        let split = median(|| {
            std::hint::black_box(split_bytes(&data, demo_stamp(1)));
        });
        let join = median(|| {
            let file = join_file(swarm.root, size as u64, |a| chunks.get(a).cloned());
            assert_eq!(file.map(|f| f.len()), Ok(size));
        });
        vec![
            ("demo content (ChaCha20)", generate, None),
            ("sha2-256 of the leaves", sha, None),
            ("UnixFS import", import, Some(sha)),
            ("UnixFS export, verified", export, Some(sha)),
            ("BMT of the data chunks", bmt, None),
            ("Swarm split", split, Some(bmt)),
            ("Swarm join, verified", join, Some(bmt)),
        ]
    };

    println!("{:<26} {:>9} {:>10} {:>14}", "operation", "ms", "MB/s", "x bare hashing");
    for (name, took, floor) in rows {
        let mb_per_s = size as f64 / 1e6 / took.as_secs_f64();
        let ratio = floor
            .map_or(String::from("-"), |f| format!("{:.2}", took.as_secs_f64() / f.as_secs_f64()));
        println!("{name:<26} {:>9.1} {mb_per_s:>10.0} {ratio:>14}", took.as_secs_f64() * 1e3);
    }
}
