//! What every `BlockStore` backend must do: one suite, run over each backend on its target.

use bytes::Bytes;
use cid::Cid;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use syncscope_node::cond_send::CondSync;
use syncscope_node::store::{
    BlockStore, ChunkStore, IndexedDbError, IndexedDbErrorKind, IndexedDbOp, Manifest,
    NodeBlockStore, PullsyncState, RecordWrite, Records, StoreError, Table,
};
use syncscope_proto::bitswap::raw_cid;
use syncscope_proto::pullsync::{IntervalStore, ReserveIndex};
use syncscope_proto::swarm::{Address, Chunk, Stamp, STAMP_SIZE};

const DAG_PB: u64 = 0x70;

pub async fn conformance(store: impl BlockStore) {
    let data = Bytes::from_static(b"a verified block");
    let cid = raw_cid(&data);
    assert!(!store.has(&cid).await.unwrap());
    assert_eq!(store.get(&cid).await.unwrap(), None);
    store.put(cid, data.clone()).await.unwrap();
    store.put(cid, data.clone()).await.unwrap();
    assert!(store.has(&cid).await.unwrap());
    assert_eq!(store.get(&cid).await.unwrap(), Some(data.clone()));
    assert_eq!(store.get(&raw_cid(b"other")).await.unwrap(), None);

    let same_hash = Cid::new_v1(DAG_PB, *cid.hash());
    assert_eq!(store.get(&same_hash).await.unwrap(), Some(data.clone()), "keyed by multihash");

    let big = Bytes::from(vec![0xa5; 2 << 20]);
    let big_cid = raw_cid(&big);
    store.put(big_cid, big.clone()).await.unwrap();
    assert_eq!(store.get(&big_cid).await.unwrap(), Some(big.clone()), "a 2 MiB block round-trips");

    let batch: Vec<(Cid, Bytes)> = (0..300u32)
        .map(|i| Bytes::from(i.to_be_bytes().repeat(64)))
        .map(|d| (raw_cid(&d), d))
        .collect();
    store.put_many(batch.clone()).await.unwrap();
    for (cid, data) in &batch {
        assert_eq!(store.get(cid).await.unwrap().as_ref(), Some(data), "batched block {cid}");
    }

    let mut inventory = store.inventory().await.unwrap();
    inventory.sort();
    let mut expected: Vec<_> = batch.iter().map(|(c, d)| (*c.hash(), d.len())).collect();
    expected.extend([(*cid.hash(), data.len()), (*big_cid.hash(), big.len())]);
    expected.sort();
    assert_eq!(inventory, expected, "each block once, by multihash, with its size");

    store.delete_many(vec![*big_cid.hash(), *raw_cid(b"never stored").hash()]).await.unwrap();
    assert!(!store.has(&big_cid).await.unwrap(), "deleted");
    assert_eq!(store.get(&big_cid).await.unwrap(), None);
    assert_eq!(store.inventory().await.unwrap().len(), expected.len() - 1);
    assert!(store.has(&cid).await.unwrap(), "the others stay");

    // Small blocks written together may share a record: deleting some keeps their neighbours.
    let dropped: Vec<_> = batch.iter().step_by(3).map(|(cid, _)| *cid.hash()).collect();
    store.delete_many(dropped.clone()).await.unwrap();
    for (cid, data) in &batch {
        let expected = (!dropped.contains(cid.hash())).then(|| data.clone());
        assert_eq!(store.get(cid).await.unwrap(), expected, "block {cid} after a partial delete");
    }
    assert_eq!(store.inventory().await.unwrap().len(), expected.len() - 1 - dropped.len());

    // So may big blocks, which are read at once as a peer's wants are served.
    let big_batch: Vec<(Cid, Bytes)> = (0..6u32)
        .map(|i| Bytes::from(i.to_be_bytes().repeat(64 << 10)))
        .map(|d| (raw_cid(&d), d))
        .collect();
    store.put_many(big_batch.clone()).await.unwrap();
    let reads = futures::future::join_all(big_batch.iter().map(|(cid, _)| store.get(cid))).await;
    for ((cid, data), read) in big_batch.iter().zip(reads) {
        assert_eq!(read.unwrap().as_ref(), Some(data), "256 KiB block {cid}");
    }
    let dropped: Vec<_> = big_batch.iter().step_by(2).map(|(cid, _)| *cid.hash()).collect();
    store.delete_many(dropped.clone()).await.unwrap();
    for (cid, data) in &big_batch {
        let expected = (!dropped.contains(cid.hash())).then(|| data.clone());
        assert_eq!(store.get(cid).await.unwrap(), expected, "256 KiB block {cid} after a delete");
    }
}

/// Puts made at once, as deliveries are, all land; a backend may group them.
pub async fn concurrent_puts(store: impl BlockStore) {
    let blocks: Vec<(Cid, Bytes)> = (0..200u32)
        .map(|i| Bytes::from(i.to_le_bytes().repeat(1024)))
        .map(|d| (raw_cid(&d), d))
        .collect();
    let puts = blocks.iter().map(|(cid, data)| store.put(*cid, data.clone()));
    for result in futures::future::join_all(puts).await {
        result.unwrap();
    }
    for (cid, data) in &blocks {
        assert_eq!(store.get(cid).await.unwrap().as_ref(), Some(data));
    }
    assert_eq!(store.inventory().await.unwrap().len(), blocks.len());
}

/// Manifests are kept by root: a second put replaces the first, and a removed one is gone.
pub async fn manifests(store: NodeBlockStore) {
    assert!(store.manifests().await.unwrap().is_empty());
    let partial = Manifest {
        root: raw_cid(b"a root"),
        name: "notes.txt".into(),
        size: 0,
        since_ms: 1_764_000_000_000,
        complete: false,
        swarm_root: None,
    };
    let other = Manifest {
        root: raw_cid(b"another root"),
        swarm_root: Some(Address([0xa5; 32])),
        ..partial.clone()
    };
    store.put_manifest(&partial).await.unwrap();
    store.put_manifest(&other).await.unwrap();
    let complete = Manifest { size: 1234, complete: true, ..partial.clone() };
    store.put_manifest(&complete).await.unwrap();
    let mut expected = vec![complete, other.clone()];
    expected.sort_by_key(|m| m.root);
    assert_eq!(store.manifests().await.unwrap(), expected);
    store.remove_manifest(&partial.root).await.unwrap();
    assert_eq!(store.manifests().await.unwrap(), vec![other]);
}

/// Records come back in key order (bytes compared, so big-endian numbers sort as numbers), one
/// table's apart from another's, and a batch over several tables lands whole.
pub async fn records(store: NodeBlockStore) {
    let key = |n: u64| n.to_be_bytes().to_vec();
    let writes = vec![
        RecordWrite::put(Table::Chunks, key(300), b"third".to_vec()),
        RecordWrite::put(Table::Chunks, key(2), b"first".to_vec()),
        RecordWrite::put(Table::Pullsync, key(1), b"state".to_vec()),
        RecordWrite::put(Table::Chunks, key(17), b"second".to_vec()),
        RecordWrite::put(Table::Chunks, key(40), b"gone".to_vec()),
        RecordWrite::delete(Table::Chunks, key(40)),
    ];
    store.write_records(writes).await.unwrap();
    let chunks = store.records(Table::Chunks).await.unwrap();
    assert_eq!(chunks, vec![b"first".to_vec(), b"second".to_vec(), b"third".to_vec()]);
    assert_eq!(store.records(Table::Pullsync).await.unwrap(), vec![b"state".to_vec()]);
    assert!(store.manifests().await.unwrap().is_empty(), "other tables untouched");
    store.write_records(Vec::new()).await.unwrap();
}

/// Waits until the write-behind task has written `chunks` chunk records and `state` pull-sync
/// records.
async fn flushed(store: &impl Records, chunks: usize, state: usize) {
    for _ in 0..500 {
        let written = (
            store.records(Table::Chunks).await.unwrap().len(),
            store.records(Table::Pullsync).await.unwrap().len(),
        );
        if written == (chunks, state) {
            return;
        }
        syncscope_node::rt::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the pull-sync state was not written behind");
}

async fn read(reserve: &impl ChunkStore, chunks: &[Chunk]) -> Vec<Option<Chunk>> {
    let refs: Vec<_> = chunks.iter().map(Chunk::chunk_ref).collect();
    reserve.read(&refs).await.unwrap()
}

/// Pull-sync's reserve and intervals, written behind, load back as they were: every chunk with
/// its bin ID, the reserve's epoch, each peer's epoch and intervals; chunks stored after a
/// restart number on from the last.
pub async fn pullsync_state(store: Arc<NodeBlockStore>) {
    let overlay = Address([0x55; 32]);
    let (peer, other) = (Address([1; 32]), Address([2; 32]));
    let stamp = Stamp::new(Bytes::from(vec![9; STAMP_SIZE])).unwrap();
    let chunks: Vec<Chunk> =
        (0u32..4).map(|i| Chunk::new(&i.to_le_bytes(), stamp.clone()).unwrap()).collect();
    let mut state = PullsyncState::load(store.clone(), overlay, 100).await.unwrap();
    for chunk in &chunks[..3] {
        assert!(state.reserve.put(chunk.clone()).unwrap());
    }
    assert!(!state.reserve.put(chunks[0].clone()).unwrap(), "stored once");
    state.intervals.add(&peer, 1, 1, 10).unwrap();
    state.intervals.reset_peer(&other, 5).unwrap();
    state.intervals.add(&other, 0, 1, 3).unwrap();
    state.intervals.add(&other, 0, 5, 6).unwrap();
    let cursors = state.reserve.cursors();
    let expected: Vec<Option<Chunk>> = chunks[..3].iter().cloned().map(Some).collect();
    assert_eq!(read(&state.reserve, &chunks[..3]).await, expected, "queued or written");
    drop(state);
    flushed(&*store, 3, 4).await;

    let mut state = PullsyncState::load(store.clone(), overlay, 200).await.unwrap();
    assert_eq!((state.reserve.len(), state.reserve.epoch()), (3, 100));
    assert_eq!(state.reserve.cursors(), cursors, "every chunk keeps its bin ID");
    assert_eq!(read(&state.reserve, &chunks[..3]).await, expected, "read back from the store");
    let mut restamped = chunks[0].chunk_ref();
    restamped.stamp_hash = [0; 32];
    assert_eq!(state.reserve.read(&[restamped]).await.unwrap(), vec![None], "another stamp");
    assert_eq!(state.intervals.next_missing(&peer, 1).unwrap(), 11);
    assert_eq!(state.intervals.epoch(&other).unwrap(), Some(5));
    let ranges = state.intervals.memory().intervals(&other, 0).unwrap().ranges().to_vec();
    assert_eq!(ranges, vec![(1, 3), (5, 6)]);
    assert!(state.reserve.put(chunks[3].clone()).unwrap());
    drop(state);
    flushed(&*store, 4, 4).await;
    let state = PullsyncState::load(store, overlay, 300).await.unwrap();
    assert_eq!((state.reserve.len(), state.reserve.epoch()), (4, 100));
}

/// A store whose record writes fail, whole, while `failing` is set: as a full quota makes them.
struct FailingWrites<S> {
    inner: Arc<S>,
    failing: AtomicBool,
    failed: AtomicUsize,
}

impl<S: Records + CondSync> Records for FailingWrites<S> {
    async fn records(&self, table: Table) -> Result<Vec<Vec<u8>>, StoreError> {
        self.inner.records(table).await
    }

    async fn records_at(
        &self,
        table: Table,
        keys: Vec<Vec<u8>>,
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.inner.records_at(table, keys).await
    }

    async fn write_records(&self, writes: Vec<RecordWrite>) -> Result<(), StoreError> {
        if self.failing.load(Ordering::SeqCst) {
            self.failed.fetch_add(1, Ordering::SeqCst);
            return Err(IndexedDbError::new(
                IndexedDbOp::Commit,
                IndexedDbErrorKind::QuotaExceeded,
            )
            .into());
        }
        self.inner.write_records(writes).await
    }
}

/// A write that fails between two that land leaves nothing half-written: after a restart the
/// intervals claim no chunk the failed write lost (they are pulled again), the gap gives the
/// reserve a new epoch, and until then the lost chunks are served from memory.
pub async fn pullsync_state_after_a_failed_write<S: Records + CondSync + 'static>(store: Arc<S>) {
    let (overlay, peer) = (Address([0x55; 32]), Address([1; 32]));
    let stamp = Stamp::new(Bytes::from(vec![9; STAMP_SIZE])).unwrap();
    let chunks: Vec<Chunk> =
        (0u32..7).map(|i| Chunk::new(&i.to_le_bytes(), stamp.clone()).unwrap()).collect();
    let failing = Arc::new(FailingWrites {
        inner: store.clone(),
        failing: AtomicBool::new(false),
        failed: AtomicUsize::new(0),
    });
    let mut state = PullsyncState::load(failing.clone(), overlay, 100).await.unwrap();
    let mut pull = |range: std::ops::Range<usize>| {
        for chunk in &chunks[range.clone()] {
            assert!(state.reserve.put(chunk.clone()).unwrap());
        }
        state.intervals.add(&peer, 0, range.start as u64 + 1, range.end as u64).unwrap();
    };
    pull(0..2);
    flushed(&*store, 2, 2).await;
    failing.failing.store(true, Ordering::SeqCst);
    pull(2..4);
    while failing.failed.load(Ordering::SeqCst) == 0 {
        syncscope_node::rt::sleep(std::time::Duration::from_millis(5)).await;
    }
    failing.failing.store(false, Ordering::SeqCst);
    pull(4..6);
    // Written after everything before it (writes keep their order).
    assert!(state.reserve.put(chunks[6].clone()).unwrap());
    flushed(&*store, 5, 2).await;
    let lost: Vec<Option<Chunk>> = chunks[2..4].iter().cloned().map(Some).collect();
    assert_eq!(read(&state.reserve, &chunks[2..4]).await, lost, "served from memory");
    drop(state);

    let state = PullsyncState::load(store, overlay, 200).await.unwrap();
    assert_eq!(state.intervals.next_missing(&peer, 0).unwrap(), 3, "pulled again from the gap");
    assert_eq!(state.reserve.len(), 5);
    assert_eq!(state.reserve.epoch(), 200, "a new epoch: the gap moved later bin IDs");
    assert_eq!(read(&state.reserve, &chunks[2..4]).await, vec![None, None]);
}

/// Removed chunks are gone after a restart, and every other chunk keeps its bin ID under the
/// same epoch: pullers go on from their intervals. A chunk put back is a new arrival.
pub async fn pullsync_state_after_a_removal<S: Records + CondSync + 'static>(store: Arc<S>) {
    let overlay = Address([0x55; 32]);
    let stamp = Stamp::new(Bytes::from(vec![9; STAMP_SIZE])).unwrap();
    let chunks: Vec<Chunk> =
        (0u32..7).map(|i| Chunk::new(&i.to_le_bytes(), stamp.clone()).unwrap()).collect();
    let mut state = PullsyncState::load(store.clone(), overlay, 100).await.unwrap();
    for chunk in &chunks[..6] {
        assert!(state.reserve.put(chunk.clone()).unwrap());
    }
    let gone = [chunks[1].address(), chunks[4].address(), Address([7; 32])];
    assert_eq!(state.reserve.remove(&gone), 2, "removes what it holds, queued or written");
    assert!(state.reserve.put(chunks[6].clone()).unwrap());
    let cursors = state.reserve.cursors();
    let mut entries = Vec::new();
    for bin in 0..syncscope_proto::swarm::MAX_BINS {
        state.reserve.collect(bin, 0, usize::MAX, &mut entries);
    }
    assert_eq!(read(&state.reserve, &chunks[1..2]).await, vec![None]);
    drop(state);
    flushed(&*store, 5, 3).await;

    let mut state = PullsyncState::load(store.clone(), overlay, 200).await.unwrap();
    assert_eq!((state.reserve.len(), state.reserve.epoch()), (5, 100), "the same epoch");
    assert_eq!(state.reserve.cursors(), cursors);
    let mut restored = Vec::new();
    for bin in 0..syncscope_proto::swarm::MAX_BINS {
        state.reserve.collect(bin, 0, usize::MAX, &mut restored);
    }
    assert_eq!(restored, entries, "every chunk left keeps its bin ID");
    let left = [&chunks[0], &chunks[2], &chunks[3], &chunks[5], &chunks[6]].map(|c| (*c).clone());
    assert_eq!(
        read(&state.reserve, &left).await,
        left.iter().cloned().map(Some).collect::<Vec<_>>()
    );
    assert_eq!(read(&state.reserve, &chunks[4..5]).await, vec![None]);
    assert!(state.reserve.put(chunks[1].clone()).unwrap(), "put back");
    let bin = usize::from(overlay.proximity(&chunks[1].address()));
    assert_eq!(state.reserve.cursors()[bin], cursors[bin] + 1, "under a new bin ID");
    let cursors = state.reserve.cursors();
    drop(state);
    flushed(&*store, 6, 3).await;

    let state = PullsyncState::load(store, overlay, 300).await.unwrap();
    assert_eq!((state.reserve.len(), state.reserve.epoch()), (6, 100), "put back after a restart");
    assert_eq!(state.reserve.cursors(), cursors);
    assert_eq!(read(&state.reserve, &chunks[1..2]).await, vec![Some(chunks[1].clone())]);
}
