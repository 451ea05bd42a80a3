//! `syncscope-relay peer`: a native syncscope peer for another host. It joins a room through a
//! relay, serves files (and optionally the demo content) over Bitswap and pull-sync, can fetch a
//! CID from the room, and runs until Ctrl-C.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bytesize::ByteSize;
use cid::Cid;
use futures::StreamExt;
use syncscope_node::content::import_demo;
use syncscope_node::node::{ContentAdded, FetchUpdate, NodeConfig, NodeEvent, StoredChange};
use syncscope_node::store::Manifest;
use syncscope_proto::rooms::topic_of;

use crate::cli::PeerArgs;
use crate::peer_storage::PeerStorage;
use crate::{native_peer, seeds};

pub async fn run(args: PeerArgs, shutdown: impl std::future::Future<Output = ()>) -> Result<()> {
    topic_of(&args.room)?;
    let config = match &args.relay {
        Some(relay) => NodeConfig::new(native_peer::relay_address(relay)?),
        None => NodeConfig::without_relay(),
    }
    .with_listen(args.listen.clone());
    let files = args
        .add
        .iter()
        .map(|path| {
            let name =
                path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let data =
                std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            Ok((name, data))
        })
        .collect::<Result<Vec<_>>>()?;
    let demo = args.demo_content.map(|size| {
        let size = size.as_u64() as usize;
        let demo = import_demo(args.content_seed, size);
        (seeds::demo_name(args.content_seed, size), demo.unixfs, demo.swarm)
    });
    let storage = match &args.data_dir {
        Some(dir) => PeerStorage::open(dir, args.store.rebuild_store)?,
        None => PeerStorage::in_memory(),
    };
    let kept_in = match &storage.dir {
        Some(dir) => format!("keeping its data in {}", dir.display()),
        None => "in memory (give --data-dir to keep its data)".to_owned(),
    };
    let (mut handle, added) =
        native_peer::start(config, storage, &args.room, demo.into_iter().collect()).await?;
    added.iter().for_each(print_serving);
    for (name, data) in &files {
        handle.add_bytes_with(name, data, args.unixfs_profile.import_config())?;
    }
    for path in &args.import_car {
        let data =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let name = path.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let roots = handle
            .import_car(data.into(), &name)
            .with_context(|| format!("cannot import {}", path.display()))?;
        let roots: Vec<String> = roots.iter().map(Cid::to_string).collect();
        println!("imported {}: roots {}", path.display(), roots.join(", "));
    }
    for addr in &args.connect {
        handle.dial(addr.clone())?;
    }
    for &root in args.export_car.iter().filter(|root| Some(**root) != args.fetch) {
        handle.export_car(root)?;
    }
    match &args.relay {
        Some(relay) => {
            println!(
                "peer {} joining room {:?} through {relay}, {kept_in}",
                handle.peer_id, args.room
            )
        }
        None => println!("peer {} without a relay, {kept_in}", handle.peer_id),
    }
    let stored = handle.stored;
    if stored.blocks + stored.chunks > 0 {
        let (blocks, bytes, chunks) = (stored.blocks, ByteSize(stored.bytes), stored.chunks);
        println!("serving {blocks} blocks ({bytes}) and {chunks} pull-sync chunks stored earlier");
    }
    for manifest in &handle.content {
        print_manifest(manifest);
    }
    let mut fetch = args.fetch;
    let mut progress = ProgressLine::default();
    tokio::pin!(shutdown);
    loop {
        let event = tokio::select! {
            event = handle.events.next() => match event {
                Some(event) => event,
                None => anyhow::bail!("the peer stopped"),
            },
            () = &mut shutdown => return Ok(()),
        };
        native_peer::log(handle.peer_id, &event);
        match event {
            NodeEvent::ContentAdded(added) => print_serving(&added),
            NodeEvent::Listening { addr } => println!("listening on {addr}"),
            NodeEvent::Reserved { addr } => {
                let addr = addr.with_p2p(handle.peer_id).unwrap_or_else(|addr| addr);
                println!("reachable through the relay at {addr}");
            }
            NodeEvent::Identified { peer, agent, kind } => {
                println!("connected to {peer}, a {} peer ({agent:?})", kind.label());
            }
            // The first peer to speak Bitswap starts the fetch; the wants wait a moment for
            // the peers dialled with it (`bitswap::Config::gather_quiet`).
            NodeEvent::Bitswap { version: Some(_), .. } => {
                if let Some(root) = fetch.take() {
                    println!("fetching {root}");
                    handle.fetch(root)?;
                }
            }
            NodeEvent::Stored(StoredChange::Car { root, data }) => {
                let path = args.car_dir.join(format!("{root}.car"));
                std::fs::write(&path, &data)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                println!(
                    "wrote {} ({}, the DAG of {root})",
                    path.display(),
                    ByteSize(data.len() as u64)
                );
            }
            NodeEvent::Fetch(FetchUpdate::Done {
                root,
                size,
                blocks,
                from_store,
                elapsed,
                sources,
                duplicate_blocks,
            }) => {
                let secs = elapsed.as_secs_f64().max(1e-9);
                let fetched = match blocks - from_store {
                    0 => "none fetched".to_string(),
                    n => format!("{n} fetched from {sources}"),
                };
                println!(
                    "fetched {root}: {} ({size} bytes) in {secs:.3} s ({}/s), {blocks} blocks ({from_store} already stored, {fetched}), {duplicate_blocks} duplicate blocks, verified",
                    ByteSize(size),
                    ByteSize((size as f64 / secs) as u64),
                );
                if args.export_car.contains(&root) {
                    handle.export_car(root)?;
                }
            }
            NodeEvent::Fetch(FetchUpdate::Progress { root, blocks, bytes, wanted }) => {
                progress.print(|| {
                    format!(
                        "fetching {root}: {} in {blocks} blocks, {wanted} more wanted",
                        ByteSize(bytes)
                    )
                });
            }
            NodeEvent::Stored(StoredChange::Kept(manifest)) => print_manifest(&manifest),
            NodeEvent::Fetch(FetchUpdate::Failed { root, error }) => {
                eprintln!("error: fetching {root} failed: {error}");
            }
            NodeEvent::Error { error } => eprintln!("error: {error}"),
            _ => {}
        }
    }
}

/// "stored: bafy… "notes.txt" 1.2 MiB (complete)": a root the peer holds, as its store has it.
fn print_serving(added: &ContentAdded) {
    let (size, cid, swarm_root) = (added.size, added.cid, added.swarm_root);
    println!("serving {} ({size}) as UnixFS {cid} and Swarm root {swarm_root}", ByteSize(size));
}

fn print_manifest(manifest: &Manifest) {
    let state = if manifest.complete { "complete" } else { "partial" };
    println!("stored: {} {:?} {} ({state})", manifest.root, manifest.name, ByteSize(manifest.size));
}

/// Prints a fetch's progress at most twice a second: enough to watch, not a flood.
#[derive(Default)]
struct ProgressLine {
    last: Option<Instant>,
}

impl ProgressLine {
    const EVERY: Duration = Duration::from_millis(500);

    fn print(&mut self, line: impl FnOnce() -> String) {
        if self.last.is_some_and(|last| last.elapsed() < Self::EVERY) {
            return;
        }
        self.last = Some(Instant::now());
        println!("{}", line());
    }
}
