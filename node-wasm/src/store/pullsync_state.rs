//! Pull-sync's state across restarts: the reserve's chunks, its epoch, and the intervals synced
//! from each peer.
//!
//! The cores read the reserve's index and the intervals synchronously, so these live in memory
//! ([`Reserve`], [`MemoryIntervalStore`]); chunk data is read from the store only to serve it.
//! Everything is written behind to the node's store ([`Records`]): every change becomes a record
//! write, and one task writes whatever has queued up in one transaction. Writes keep their order,
//! so an interval is never stored before the chunks it covers. At start the
//! records are read back, each chunk verified against its address, and replayed in arrival
//! order, which gives every chunk its bin ID of before: pullers' intervals over this reserve stay
//! valid, and so does the epoch they were synced under. A removed chunk's record gives way to a
//! note of its removal under the same arrival number, so the replay still counts it.
//!
//! The write queue is bounded in effect: past [`MAX_QUEUED_CHUNKS`] chunks not yet written, the
//! reserve stops accepting more ([`ChunkStore::accepts_more`]) and the puller waits, so a store
//! slower than the network holds pulled chunks back rather than piling them up in memory.
//!
//! A failed write (over quota, say) loses its chunks from the store. Intervals written after it
//! would claim them as synced, and they would never be pulled again after a restart: so from the
//! first failure on, intervals are no longer written, and what is stored of them covers only
//! chunks that are.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Waker;

use bytes::Bytes;
use futures::channel::mpsc;
use futures::task::AtomicWaker;
use futures::StreamExt;

use super::{ChunkStore, NodeBlockStore, RecordWrite, Records, StoreError, Table};
use crate::cond_send::{BoxFuture, CondSync};
use crate::rt;
use syncscope_proto::pullsync::{
    BinEntry, ChunkPresence, IntervalStore, IntervalStoreError, MemoryIntervalStore, Reserve,
    ReserveIndex,
};
use syncscope_proto::swarm::{Address, Chunk, ChunkRef, Stamp, MAX_BINS, STAMP_SIZE};

/// Records written in one transaction at most, in bytes: a burst of deliveries is written in a
/// few large transactions rather than one huge one.
const MAX_BATCH_BYTES: usize = 4 << 20;

/// Chunks queued for writing at most before pulling waits for the store: 16 MiB of full chunks,
/// four transactions' worth.
pub const MAX_QUEUED_CHUNKS: usize = 4096;

/// What a record in [`Table::Pullsync`] holds: its first byte.
const RESERVE_EPOCH: u8 = 0;
const PEER_EPOCH: u8 = 1;
const INTERVALS: u8 = 2;
/// A chunk removed from the reserve: `REMOVED || arrival || address`.
const REMOVED: u8 = 3;

/// The reserve and intervals a node starts with, written behind to its store.
pub struct PullsyncState<S = NodeBlockStore> {
    pub reserve: PersistedReserve<S>,
    pub intervals: PersistedIntervals,
}

impl<S: Records + CondSync + 'static> PullsyncState<S> {
    /// Reads what `store` kept for the node at `overlay` (a fresh reserve whose epoch is `now`
    /// when it kept nothing) and starts the task that writes changes behind.
    pub async fn load(store: Arc<S>, overlay: Address, now: u64) -> Result<Self, StoreError> {
        let (writes, pending) = mpsc::unbounded();
        let writes = Writes(writes);
        let mut intervals = PersistedIntervals::new(writes.clone());
        let mut epoch = None;
        let mut removed = Vec::new();
        for record in store.records(Table::Pullsync).await? {
            match record.split_first() {
                Some((&RESERVE_EPOCH, rest)) => epoch = u64_at(rest, 0),
                Some((&PEER_EPOCH, rest)) => intervals.restore_epoch(rest),
                Some((&INTERVALS, rest)) => intervals.restore_intervals(rest),
                Some((&REMOVED, rest)) => removed.extend(decode_removed(rest)),
                _ => tracing::warn!("skipped an unknown pull-sync record"),
            }
        }
        let (chunks, gapless) = restore_chunks(store.records(Table::Chunks).await?, removed);
        // A chunk missing from the sequence (a write lost, a record damaged) shifts the bin IDs
        // of every later one: pullers must start over, under a new epoch.
        let epoch = match epoch {
            Some(epoch) if gapless => epoch,
            _ => {
                let fresh = epoch.map_or(now, |old| now.max(old + 1));
                let record = epoch_record(fresh);
                writes.send(RecordWrite::put(Table::Pullsync, vec![RESERVE_EPOCH], record));
                fresh
            }
        };
        let unwritten = Arc::new(Unwritten::default());
        let mut reserve = PersistedReserve {
            index: Reserve::new(overlay, epoch),
            next: 0,
            writes,
            unwritten: unwritten.clone(),
            store: store.clone(),
        };
        for (arrival, chunk) in chunks {
            match chunk {
                Restored::Held(chunk) => {
                    reserve.index.insert(chunk.chunk_ref(), arrival);
                }
                Restored::Removed(address) => {
                    reserve.index.leave_gap(&address);
                }
            }
            reserve.next = arrival + 1;
        }
        tracing::info!(chunks = reserve.index.len(), epoch, "restored the pull-sync reserve");
        rt::spawn(write_behind(store, pending, unwritten));
        Ok(Self { reserve, intervals })
    }
}

/// A record write queued, and the arrival number of the chunk it stores, if it stores one.
struct Queued {
    write: RecordWrite,
    chunk: Option<u64>,
}

/// Chunks not in the store (yet), shared by the reserve and the task that writes behind.
#[derive(Default)]
struct Unwritten {
    /// By arrival number: served from here until their write lands (or for good, if it failed).
    chunks: Mutex<HashMap<u64, Chunk>>,
    /// Chunks queued and not yet tried: the depth of the write queue.
    queued: AtomicUsize,
    /// Woken whenever a transaction ends, so that pulling can go on.
    written: AtomicWaker,
}

impl Unwritten {
    fn chunks(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Chunk>> {
        self.chunks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Queues record writes for the task that writes them.
#[derive(Clone)]
struct Writes(mpsc::UnboundedSender<Queued>);

impl Writes {
    fn send(&self, write: RecordWrite) {
        self.queue(Queued { write, chunk: None });
    }

    fn queue(&self, queued: Queued) {
        // The writer is gone only once the node stops; what it missed is pulled again.
        let _ = self.0.unbounded_send(queued);
    }
}

/// Writes what queued up while the last transaction ran, in one transaction.
async fn write_behind<S: Records>(
    store: Arc<S>,
    mut pending: mpsc::UnboundedReceiver<Queued>,
    unwritten: Arc<Unwritten>,
) {
    let mut intervals_kept = true;
    while let Some(first) = pending.next().await {
        let mut bytes = 0;
        let mut batch = Vec::new();
        let mut chunks = Vec::new();
        let mut next = Some(first);
        while let Some(Queued { write, chunk }) = next.take() {
            bytes += write.key.len() + write.value.as_ref().map_or(0, Vec::len);
            if intervals_kept || !holds_intervals(&write) {
                batch.push(write);
            }
            chunks.extend(chunk);
            if bytes < MAX_BATCH_BYTES {
                next = pending.try_recv().ok();
            }
        }
        let writes = batch.len();
        let tried = chunks.len();
        match store.write_records(batch).await {
            Ok(()) => {
                let mut unwritten = unwritten.chunks();
                for arrival in chunks {
                    unwritten.remove(&arrival);
                }
            }
            // The chunks stay in memory and are served until the node stops; the gap they leave
            // in the store gives the reserve a new epoch at the next start.
            Err(error) => {
                tracing::warn!(%error, writes, "pull-sync state not stored; intervals no longer are");
                intervals_kept = false;
            }
        }
        unwritten.queued.fetch_sub(tried, Ordering::AcqRel);
        unwritten.written.wake();
    }
}

/// The reserve's index in memory, and each chunk written to the store under its arrival number,
/// where it is read back from to serve it.
pub struct PersistedReserve<S = NodeBlockStore> {
    index: Reserve<u64>,
    /// Arrival number of the next chunk stored.
    next: u64,
    writes: Writes,
    unwritten: Arc<Unwritten>,
    store: Arc<S>,
}

impl<S> PersistedReserve<S> {
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

impl<S: Records + CondSync + 'static> ChunkStore for PersistedReserve<S> {
    fn put(&mut self, chunk: Chunk) -> Result<bool, StoreError> {
        if self.index.insert(chunk.chunk_ref(), self.next).is_none() {
            return Ok(false);
        }
        let (key, record) = (self.next.to_be_bytes().to_vec(), encode_chunk(self.next, &chunk));
        self.unwritten.chunks().insert(self.next, chunk);
        self.unwritten.queued.fetch_add(1, Ordering::AcqRel);
        let write = RecordWrite::put(Table::Chunks, key, record);
        self.writes.queue(Queued { write, chunk: Some(self.next) });
        self.next += 1;
        Ok(true)
    }

    fn remove(&mut self, addresses: &[Address]) -> usize {
        let removed = self.index.remove(addresses);
        for (chunk, arrival) in &removed {
            self.unwritten.chunks().remove(arrival);
            let key = arrival.to_be_bytes().to_vec();
            self.writes.send(RecordWrite::delete(Table::Chunks, key));
            let (key, record) = removed_record(*arrival, &chunk.address);
            self.writes.send(RecordWrite::put(Table::Pullsync, key, record));
        }
        removed.len()
    }

    fn chunk_ref(&self, address: &Address) -> Option<ChunkRef> {
        self.index.chunk_ref(address)
    }

    /// Chunks still queued for writing come from memory, the others from the store.
    fn read(
        &self,
        chunks: &[ChunkRef],
    ) -> BoxFuture<'static, Result<Vec<Option<Chunk>>, StoreError>> {
        let wanted: Vec<ChunkRef> = chunks.to_vec();
        let keys: Vec<Option<u64>> = chunks.iter().map(|c| self.index.value(c).copied()).collect();
        let in_memory: Vec<Option<Chunk>> = {
            let unwritten = self.unwritten.chunks();
            keys.iter().map(|k| k.and_then(|k| unwritten.get(&k).cloned())).collect()
        };
        let store = self.store.clone();
        Box::pin(async move {
            let stored: Vec<Option<u64>> =
                keys.iter().zip(&in_memory).map(|(k, m)| k.filter(|_| m.is_none())).collect();
            let held = stored.iter().flatten().map(|a| a.to_be_bytes().to_vec()).collect();
            let mut records = store.records_at(Table::Chunks, held).await?.into_iter();
            let mut chunks = Vec::with_capacity(wanted.len());
            for ((memory, key), wanted) in in_memory.into_iter().zip(stored).zip(wanted) {
                let record = key.and_then(|_| records.next().flatten());
                let read = record.as_deref().and_then(decode_chunk).map(|(_, chunk)| chunk);
                chunks.push(memory.or(read).filter(|chunk| chunk.chunk_ref() == wanted));
            }
            Ok(chunks)
        })
    }

    fn accepts_more(&self, waker: &Waker) -> bool {
        self.unwritten.written.register(waker);
        self.unwritten.queued.load(Ordering::Acquire) < MAX_QUEUED_CHUNKS
    }
}

impl<S> ReserveIndex for PersistedReserve<S> {
    fn epoch(&self) -> u64 {
        self.index.epoch()
    }

    fn cursors(&self) -> [u64; MAX_BINS as usize] {
        self.index.cursors()
    }

    fn collect(&self, bin: u8, start: u64, limit: usize, out: &mut Vec<BinEntry>) {
        self.index.collect(bin, start, limit, out);
    }
}

impl<S> ChunkPresence for PersistedReserve<S> {
    fn has(&self, chunk: &ChunkRef) -> bool {
        self.index.has(chunk)
    }
}

/// The intervals in memory, each change also written to the store.
pub struct PersistedIntervals {
    memory: MemoryIntervalStore,
    writes: Writes,
}

impl PersistedIntervals {
    fn new(writes: Writes) -> Self {
        Self { memory: MemoryIntervalStore::default(), writes }
    }

    pub fn memory(&self) -> &MemoryIntervalStore {
        &self.memory
    }

    /// `overlay || epoch`.
    fn restore_epoch(&mut self, record: &[u8]) {
        if let (Some(peer), Some(epoch)) = (address_at(record), u64_at(record, 32)) {
            let _ = self.memory.reset_peer(&peer, epoch);
        }
    }

    /// `overlay || bin || (start, end)*`.
    fn restore_intervals(&mut self, record: &[u8]) {
        let (Some(peer), Some(&bin)) = (address_at(record), record.get(32)) else { return };
        let ranges = record.get(33..).unwrap_or_default();
        for range in ranges.chunks_exact(16) {
            if let (Some(start), Some(end)) = (u64_at(range, 0), u64_at(range, 8)) {
                let _ = self.memory.add(&peer, bin, start, end);
            }
        }
    }
}

impl IntervalStore for PersistedIntervals {
    fn next_missing(&self, peer: &Address, bin: u8) -> Result<u64, IntervalStoreError> {
        self.memory.next_missing(peer, bin)
    }

    fn add(
        &mut self,
        peer: &Address,
        bin: u8,
        start: u64,
        end: u64,
    ) -> Result<(), IntervalStoreError> {
        self.memory.add(peer, bin, start, end)?;
        let key = intervals_key(peer, bin);
        let mut record = key.clone();
        for (start, end) in self.memory.intervals(peer, bin).map_or(&[][..], |i| i.ranges()) {
            record.extend_from_slice(&start.to_be_bytes());
            record.extend_from_slice(&end.to_be_bytes());
        }
        self.writes.send(RecordWrite::put(Table::Pullsync, key, record));
        Ok(())
    }

    fn epoch(&self, peer: &Address) -> Result<Option<u64>, IntervalStoreError> {
        self.memory.epoch(peer)
    }

    fn reset_peer(&mut self, peer: &Address, epoch: u64) -> Result<(), IntervalStoreError> {
        self.memory.reset_peer(peer, epoch)?;
        for bin in 0..MAX_BINS {
            self.writes.send(RecordWrite::delete(Table::Pullsync, intervals_key(peer, bin)));
        }
        let mut record = vec![PEER_EPOCH];
        record.extend_from_slice(&peer.0);
        let key = record.clone();
        record.extend_from_slice(&epoch.to_be_bytes());
        self.writes.send(RecordWrite::put(Table::Pullsync, key, record));
        Ok(())
    }
}

/// A peer's intervals or epoch.
fn holds_intervals(write: &RecordWrite) -> bool {
    write.table == Table::Pullsync && matches!(write.key.first(), Some(&(PEER_EPOCH | INTERVALS)))
}

/// `INTERVALS || overlay || bin`: the key of a peer's intervals in a bin, and the start of
/// their record.
fn intervals_key(peer: &Address, bin: u8) -> Vec<u8> {
    let mut key = vec![INTERVALS];
    key.extend_from_slice(&peer.0);
    key.push(bin);
    key
}

fn epoch_record(epoch: u64) -> Vec<u8> {
    let mut record = vec![RESERVE_EPOCH];
    record.extend_from_slice(&epoch.to_be_bytes());
    record
}

/// A chunk as the replay at start finds it.
enum Restored {
    Held(Chunk),
    /// At this address: its bin ID is a gap.
    Removed(Address),
}

/// The chunks in `records` and those `removed`, in arrival order, each held one verified against
/// its address; and whether their arrival numbers run without a gap from 0.
fn restore_chunks(
    records: Vec<Vec<u8>>,
    removed: Vec<(u64, Address)>,
) -> (Vec<(u64, Restored)>, bool) {
    let mut chunks = Vec::with_capacity(records.len() + removed.len());
    let mut gapless = true;
    // Both come in key order, which is arrival order: merged, they stay in it.
    let mut removed = removed.into_iter().peekable();
    for record in records {
        let Some((arrival, chunk)) = decode_chunk(&record) else {
            tracing::warn!("skipped a stored chunk that does not verify");
            gapless = false;
            continue;
        };
        while let Some((before, gone)) = removed.next_if(|(a, _)| *a < arrival) {
            chunks.push((before, Restored::Removed(gone)));
        }
        chunks.push((arrival, Restored::Held(chunk)));
    }
    chunks.extend(removed.map(|(arrival, chunk)| (arrival, Restored::Removed(chunk))));
    gapless &= chunks.iter().zip(0..).all(|((arrival, _), i)| *arrival == i);
    (chunks, gapless)
}

/// The key and record that note the removal of the chunk at `address`, which arrived
/// `arrival`th.
fn removed_record(arrival: u64, address: &Address) -> (Vec<u8>, Vec<u8>) {
    let mut key = vec![REMOVED];
    key.extend_from_slice(&arrival.to_be_bytes());
    let mut record = key.clone();
    record.extend_from_slice(&address.0);
    (key, record)
}

/// `arrival || address`.
fn decode_removed(record: &[u8]) -> Option<(u64, Address)> {
    Some((u64_at(record, 0)?, address_at(record.get(8..)?)?))
}

/// `arrival || address || stamp || span || payload`.
fn encode_chunk(arrival: u64, chunk: &Chunk) -> Vec<u8> {
    let stamp = chunk.stamp().as_bytes();
    let mut record = Vec::with_capacity(40 + stamp.len() + chunk.data().len());
    record.extend_from_slice(&arrival.to_be_bytes());
    record.extend_from_slice(&chunk.address().0);
    record.extend_from_slice(stamp);
    record.extend_from_slice(chunk.data());
    record
}

/// The arrival number and chunk in a record, if the chunk verifies against the address it was
/// stored under.
fn decode_chunk(record: &[u8]) -> Option<(u64, Chunk)> {
    let arrival = u64_at(record, 0)?;
    let rest = record.get(8..)?;
    let address = address_at(rest)?;
    let stamp = Stamp::new(Bytes::copy_from_slice(rest.get(32..32 + STAMP_SIZE)?)).ok()?;
    let data = Bytes::copy_from_slice(rest.get(32 + STAMP_SIZE..)?);
    Some((arrival, Chunk::verify(address, data, stamp).ok()?))
}

fn address_at(bytes: &[u8]) -> Option<Address> {
    Some(Address(bytes.get(..32)?.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}
