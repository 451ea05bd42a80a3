//! What a node keeps: content it adds is listed, read back verified, and removed without taking
//! blocks another root still needs; pull-sync's reserve and intervals outlive a restart. On the
//! disk store, through a real relay.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)

mod common;

use std::time::Duration;

use cid::Cid;
use common::{temp_dir, wait_for, Relay};
use syncscope_node::net::pullsync;
use syncscope_node::node::{self, NodeConfig, NodeError, NodeEvent, NodeHandle, StoredChange};
use syncscope_node::store::{DiskBlockStore, NodeBlockStore};

const WAIT: Duration = Duration::from_secs(20);

/// `len` bytes that no other call with another `seed` repeats.
fn data(seed: u32, len: usize) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2654435761) ^ seed.wrapping_mul(40503)) as u8 ^ (i >> 13) as u8)
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
async fn removing_one_of_two_roots_keeps_the_blocks_the_other_needs() {
    let relay = Relay::start(&[]);
    let store = DiskBlockStore::open(&temp_dir("remove").join("blocks.redb")).unwrap();
    let config = NodeConfig::new(relay.relay_address("tcp"))
        .with_block_store(NodeBlockStore::Persistent(store));
    let mut node = node::start(config).await.unwrap();
    // 256 KiB chunks: the first three leaves of `b` are those of `a`.
    let a = data(1, 1 << 20);
    let b = [&a[..3 << 18], &data(2, 1 << 19)[..]].concat();
    let root_a = added(&mut node, "a.bin", &a).await;
    let root_b = added(&mut node, "b.bin", &b).await;

    node.remove(root_a).unwrap();
    let removed = stored_change(&mut node, |c| matches!(c, StoredChange::Removed { .. })).await;
    let StoredChange::Removed { root, freed_blocks } = removed else { unreachable!() };
    assert_eq!((root, freed_blocks), (root_a, 2), "a's root and its own last leaf");
    assert_eq!(read(&mut node, root_b).await, b, "b downloads intact");

    node.read_file(root_a).unwrap();
    let failed = wait_for(&mut node, WAIT, |e| matches!(e, NodeEvent::Error { .. })).await;
    assert!(
        matches!(failed, NodeEvent::Error { error: NodeError::ReadFile { root, .. } } if root == root_a),
        "{failed:?}"
    );
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
