//! The demo's seed peers: native peers in the relay process that join the default room and serve
//! the same deterministic content, so that someone alone with `cargo xtask demo` has peers to
//! fetch from and a link that stays valid across restarts.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use cid::Cid;
use futures::StreamExt;
use libp2p::Multiaddr;
use syncscope_node::content::import_demo;
use syncscope_node::node::{NodeConfig, NodeEvent};
use syncscope_proto::swarm::Address;

use crate::cli::{SeedArgs, StoreArgs};
use crate::metrics::SeedMetrics;
use crate::native_peer;
use crate::peer_storage::PeerStorage;

/// What the seed peers serve.
#[derive(Debug, Clone)]
pub struct DemoContent {
    pub cid: Cid,
    pub swarm_root: Address,
    pub size: u64,
    pub blocks: usize,
    pub chunks: usize,
}

/// Starts the seed peers through the relay at `relay_addr`, each with its identity and blocks in
/// `<data_dir>/seeds/<n>`; `None` when there are none.
pub async fn start(
    args: &SeedArgs,
    store: &StoreArgs,
    data_dir: &Path,
    relay_addr: &Multiaddr,
    room: &str,
    metrics: Arc<SeedMetrics>,
) -> Result<Option<DemoContent>> {
    if args.seed_peers == 0 {
        return Ok(None);
    }
    let (seed, size) = (args.content_seed, args.seed_content.as_u64() as usize);
    let demo = tokio::task::spawn_blocking(move || import_demo(seed, size)).await?;
    let content = DemoContent {
        cid: demo.unixfs.root,
        swarm_root: demo.swarm.root,
        size: demo.unixfs.size,
        blocks: demo.unixfs.blocks.len(),
        chunks: demo.swarm.chunks.len(),
    };
    let relay = native_peer::relay_address(relay_addr)?;
    for n in 0..args.seed_peers {
        let dir = data_dir.join("seeds").join(n.to_string());
        let storage = PeerStorage::open(&dir, store.rebuild_store)
            .with_context(|| format!("seed peer {n}"))?;
        let name = demo_name(seed, size);
        let content = vec![(name, demo.unixfs.clone(), demo.swarm.clone())];
        let (mut handle, _) =
            native_peer::start(NodeConfig::new(relay.clone()), storage, room, content).await?;
        let metrics = metrics.clone();
        tracing::info!(peer = %handle.peer_id, %room, "seed peer started");
        tokio::spawn(async move {
            while let Some(event) = handle.events.next().await {
                native_peer::log(handle.peer_id, &event);
                if let NodeEvent::Stats(stats) = event {
                    metrics.record(handle.peer_id, &stats);
                }
            }
        });
    }
    Ok(Some(content))
}

/// "demo 1, 4.0 MiB": the name the demo content of `seed` is listed under.
pub fn demo_name(seed: u64, size: usize) -> String {
    format!("demo {seed}, {}", bytesize::ByteSize(size as u64))
}
