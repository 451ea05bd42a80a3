//! The `BlockStore` conformance suite over the native backends.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)
#![cfg(not(target_arch = "wasm32"))]

mod block_store_suite;

use std::sync::Arc;

use bytes::Bytes;
use std::time::{Duration, Instant};

use syncscope_node::store::{
    BatchWrite, BlockKey, BlockStore, DiskBlockStore, GroupCommit, MemoryBlockStore,
    NodeBlockStore, StoreError,
};
use syncscope_proto::bitswap::raw_cid;

#[test]
fn memory_store_conforms() {
    futures::executor::block_on(block_store_suite::conformance(MemoryBlockStore::new()));
    futures::executor::block_on(block_store_suite::concurrent_puts(MemoryBlockStore::new()));
    futures::executor::block_on(block_store_suite::manifests(NodeBlockStore::default()));
    futures::executor::block_on(block_store_suite::records(NodeBlockStore::default()));
}

#[tokio::test]
async fn disk_store_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let open = |name: &str| DiskBlockStore::open(&dir.path().join(name)).unwrap();
    block_store_suite::conformance(open("a.redb")).await;
    block_store_suite::concurrent_puts(open("b.redb")).await;
    block_store_suite::manifests(NodeBlockStore::Persistent(open("c.redb"))).await;
    block_store_suite::records(NodeBlockStore::Persistent(open("d.redb"))).await;
}

#[tokio::test]
async fn pullsync_state_is_written_behind_and_loads_back_from_each_store() {
    block_store_suite::pullsync_state(Arc::new(NodeBlockStore::default())).await;
    let dir = tempfile::tempdir().unwrap();
    let disk = DiskBlockStore::open(&dir.path().join("pullsync.redb")).unwrap();
    block_store_suite::pullsync_state(Arc::new(NodeBlockStore::Persistent(disk))).await;
}

#[tokio::test]
async fn a_failed_pullsync_write_leaves_nothing_half_written_in_each_store() {
    let memory = Arc::new(NodeBlockStore::default());
    block_store_suite::pullsync_state_after_a_failed_write(memory).await;
    let dir = tempfile::tempdir().unwrap();
    let disk = Arc::new(DiskBlockStore::open(&dir.path().join("failing.redb")).unwrap());
    block_store_suite::pullsync_state_after_a_failed_write(disk).await;
}

#[tokio::test]
async fn removed_chunks_stay_removed_and_the_rest_keep_their_bin_ids_in_each_store() {
    block_store_suite::pullsync_state_after_a_removal(Arc::new(NodeBlockStore::default())).await;
    let dir = tempfile::tempdir().unwrap();
    let disk = Arc::new(DiskBlockStore::open(&dir.path().join("removal.redb")).unwrap());
    block_store_suite::pullsync_state_after_a_removal(disk).await;
}

#[tokio::test]
async fn disk_store_keeps_blocks_across_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("blocks.redb");
    let data = Bytes::from_static(b"kept");
    DiskBlockStore::open(&path).unwrap().put(raw_cid(&data), data.clone()).await.unwrap();
    let reopened = DiskBlockStore::open(&path).unwrap();
    assert_eq!(reopened.get(&raw_cid(&data)).await.unwrap(), Some(data.clone()));
    assert_eq!(reopened.inventory().await.unwrap(), vec![(*raw_cid(&data).hash(), data.len())]);
}

#[test]
fn a_file_that_is_not_a_block_database_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("blocks.redb");
    std::fs::write(&path, vec![0x5a; 10_000]).unwrap();
    let error = DiskBlockStore::open(&path).err().unwrap().to_string();
    assert!(error.starts_with("disk store failed to open the block database: "), "{error}");
}

/// Counts the blocks of each transaction.
#[derive(Default)]
struct Transactions(std::sync::Mutex<Vec<usize>>);

impl BatchWrite for Transactions {
    async fn write(&self, batch: Vec<(BlockKey, Bytes)>) -> Result<(), StoreError> {
        self.0.lock().unwrap().push(batch.len());
        Ok(())
    }
}

fn key(i: u8) -> (BlockKey, Bytes) {
    (*raw_cid(&[i]).hash(), Bytes::from(vec![i]))
}

#[tokio::test]
async fn a_paced_group_commit_gathers_the_puts_of_its_pace_and_writes_a_lone_put_at_once() {
    let pace = Duration::from_millis(200);
    let writes = GroupCommit::paced(Transactions::default(), pace);
    let lone_put = |i| {
        let put = writes.put(vec![key(i)]);
        async move {
            let started = Instant::now();
            put.await.unwrap();
            assert!(started.elapsed() < pace / 2, "a put after a quiet pace waits for nothing");
        }
    };
    lone_put(0).await;
    // Within the pace of the first transaction: these wait for it to end, and go out together
    // (unpaced, the first four would go at once and the late one alone).
    let puts: Vec<_> = (1..=4).map(|i| writes.put(vec![key(i)])).collect();
    tokio::time::sleep(pace / 4).await;
    let late = writes.put(vec![key(5)]);
    futures::future::try_join_all(puts.into_iter().chain([late])).await.unwrap();
    tokio::time::sleep(pace * 2).await;
    lone_put(6).await;
    assert_eq!(*writes.backend().0.lock().unwrap(), [1, 5, 1]);
}
