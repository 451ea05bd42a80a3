//! What a node keeps: content it adds is listed, read back verified, and removed without taking
//! blocks another root still needs; pull-sync's reserve and intervals outlive a restart. On the
//! disk store, through a real relay.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)

mod common;

use std::sync::Arc;
use std::time::Duration;

use cid::Cid;
use common::{temp_dir, wait_for, Relay};
use syncscope_node::content::{demo_stamp, split_bytes};
use syncscope_node::net::pullsync;
use syncscope_node::node::{self, NodeConfig, NodeError, NodeEvent, NodeHandle, StoredChange};
use syncscope_node::store::{DiskBlockStore, NodeBlockStore, PullsyncState};
use syncscope_proto::pullsync::ChunkPresence;
use syncscope_proto::swarm::{Address, Chunk};

const WAIT: Duration = Duration::from_secs(20);

/// `len` bytes that no other call with another `seed` repeats, nor any 4 KiB of them another.
fn data(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            // xorshift64
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

async fn stored_change(
    node: &mut NodeHandle,
    want: impl Fn(&StoredChange) -> bool,
) -> StoredChange {
    let event = wait_for(node, WAIT, |e| matches!(e, NodeEvent::Stored(c) if want(c))).await;
    let NodeEvent::Stored(change) = event else { unreachable!() };
    change
}

async fn added(node: &mut NodeHandle, name: &str, data: &[u8]) -> Cid {
    node.add_bytes(name, data).unwrap();
    let kept = stored_change(node, |c| matches!(c, StoredChange::Kept(m) if m.name == name)).await;
    let StoredChange::Kept(manifest) = kept else { unreachable!() };
    assert!(manifest.complete && manifest.size == data.len() as u64, "{manifest:?}");
    manifest.root
}

async fn read(node: &mut NodeHandle, root: Cid) -> Vec<u8> {
    node.read_file(root).unwrap();
    let read =
        stored_change(node, |c| matches!(c, StoredChange::Read { root: r, .. } if *r == root))
            .await;
    let StoredChange::Read { data, .. } = read else { unreachable!() };
    data.to_vec()
}

#[tokio::test(flavor = "multi_thread")]
async fn removing_one_of_two_roots_keeps_the_blocks_and_chunks_the_other_needs() {
    let relay = Relay::start(&[]);
    let path = temp_dir("remove").join("blocks.redb");
    let config = NodeConfig::new(relay.relay_address("tcp"))
        .with_block_store(NodeBlockStore::Persistent(DiskBlockStore::open(&path).unwrap()));
    let mut node = node::start(config).await.unwrap();
    // 256 KiB blocks and 4 KiB chunks: the first three leaves of `b` are those of `a`, and so are
    // its first 192 data chunks and the intermediate chunk over the first 128.
    let a = data(1, 1 << 20);
    let b = [&a[..3 << 18], &data(2, 1 << 19)[..]].concat();
    let root_a = added(&mut node, "a.bin", &a).await;
    let root_b = added(&mut node, "b.bin", &b).await;
    let (chunks_a, chunks_b) = (split_bytes(&a, demo_stamp(0)), split_bytes(&b, demo_stamp(0)));
    let only_a: Vec<&Chunk> =
        chunks_a.chunks.iter().filter(|c| !chunks_b.chunks.contains(c)).collect();

    node.remove(root_a).unwrap();
    let removed = stored_change(&mut node, |c| matches!(c, StoredChange::Removed { .. })).await;
    let StoredChange::Removed { root, freed_blocks, freed_chunks } = removed else {
        unreachable!()
    };
    assert_eq!((root, freed_blocks), (root_a, 2), "a's root and its own last leaf");
    assert_eq!(freed_chunks, only_a.len(), "a's chunks that b does not share");
    assert_eq!(freed_chunks, 66, "a's last 64 data chunks, the intermediate over them, its root");
    assert_eq!(read(&mut node, root_b).await, b, "b downloads intact");

    node.read_file(root_a).unwrap();
    let failed = wait_for(&mut node, WAIT, |e| matches!(e, NodeEvent::Error { .. })).await;
    assert!(
        matches!(failed, NodeEvent::Error { error: NodeError::ReadFile { root, .. } } if root == root_a),
        "{failed:?}"
    );

    // After a restart the reserve holds every chunk of `b` and none that only `a` had.
    drop(node);
    let store = Arc::new(NodeBlockStore::Persistent(reopen(&path).await));
    let state = PullsyncState::load(store, Address::ZERO, 0).await.unwrap();
    assert_eq!(state.reserve.len(), chunks_b.chunks.len());
    assert!(chunks_b.chunks.iter().all(|c| state.reserve.has(&c.chunk_ref())));
    assert!(only_a.iter().all(|c| !state.reserve.has(&c.chunk_ref())));
}

/// Pull-sync stats of the next stats event.
async fn pullsync_stats(node: &mut NodeHandle) -> pullsync::Stats {
    let event = wait_for(node, WAIT, |e| matches!(e, NodeEvent::Stats(_))).await;
    let NodeEvent::Stats(stats) = event else { unreachable!() };
    stats.pullsync
}

/// Waits until `node` has stored chunks and stored none for two stats in a row; returns how many.
async fn pulled_until_quiet(node: &mut NodeHandle) -> u64 {
    let mut last = (0, 0);
    loop {
        let stored = pullsync_stats(node).await.chunks_stored;
        if stored > 0 && last == (stored, stored) {
            return stored;
        }
        last = (last.1, stored);
    }
}

/// The disk store at `path` once the last node on it let it go (its writer finishes behind).
async fn reopen(path: &std::path::Path) -> DiskBlockStore {
    for _ in 0..100 {
        if let Ok(store) = DiskBlockStore::open(path) {
            return store;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{} stayed open", path.display());
}

async fn start_in_room(relay: &Relay, store: NodeBlockStore) -> NodeHandle {
    let config = NodeConfig::new(relay.relay_address("tcp")).with_block_store(store);
    let node = node::start(config).await.unwrap();
    node.join_room("reserve").unwrap();
    node
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_node_keeps_its_reserve_and_pulls_nothing_again() {
    let relay = Relay::start(&[]);
    let path = temp_dir("reserve").join("blocks.redb");
    let mut source = start_in_room(&relay, NodeBlockStore::default()).await;
    added(&mut source, "pulled.bin", &data(3, 1 << 20)).await;

    let store = NodeBlockStore::Persistent(DiskBlockStore::open(&path).unwrap());
    let mut puller = start_in_room(&relay, store).await;
    let pulled = pulled_until_quiet(&mut puller).await;
    drop(puller);

    let mut puller = start_in_room(&relay, NodeBlockStore::Persistent(reopen(&path).await)).await;
    assert_eq!(puller.stored.chunks as u64, pulled, "the reserve is back at start");
    let source_id = source.peer_id;
    wait_for(
        &mut puller,
        WAIT,
        |e| matches!(e, NodeEvent::Connected { peer, .. } if *peer == source_id),
    )
    .await;
    // Three stats ticks connected: the puller asks only past its stored intervals, where the
    // source has nothing more, so it is offered nothing.
    for _ in 0..3 {
        let stats = pullsync_stats(&mut puller).await;
        let again = (stats.puller.chunks_offered, stats.puller.chunks_delivered);
        assert_eq!((again, stats.chunks_stored), ((0, 0), 0), "{stats:?}");
    }
}
