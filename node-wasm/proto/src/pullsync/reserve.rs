//! What pull-sync needs from the node's chunk store, and an in-memory reserve providing it.
//!
//! The server reads offers from a [`ReserveIndex`] (small, kept in memory, synchronous) but never
//! reads chunk data itself: it asks the glue with an event, because in the browser the data lives
//! in IndexedDB and can only be read asynchronously. The puller asks a [`ChunkPresence`] oracle
//! which offered chunks it already has; a browser node answers from its in-memory index, which
//! also covers chunks still queued for writing.

use crate::swarm::{Address, Chunk, ChunkRef, MAX_BINS};
use std::collections::HashMap;

/// One chunk in a bin of the reserve, with its position in that bin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinEntry {
    pub bin_id: u64,
    pub chunk: ChunkRef,
}

pub trait ReserveIndex {
    /// When this reserve was created; pullers restart from scratch when it changes.
    fn epoch(&self) -> u64;
    /// The highest bin ID of each bin, 0 for an empty bin.
    fn cursors(&self) -> [u64; MAX_BINS as usize];
    /// Appends to `out` up to `limit` entries of `bin` whose bin ID is at least `start`, in
    /// increasing bin-ID order.
    fn collect(&self, bin: u8, start: u64, limit: usize, out: &mut Vec<BinEntry>);
}

pub trait ChunkPresence {
    /// Whether this exact chunk (address and stamp) is already stored.
    fn has(&self, chunk: &ChunkRef) -> bool;
}

/// A reserve's index: chunks binned by proximity to the node's overlay, numbered per bin from 1
/// in arrival order, each with a `V` that says where its data is.
///
/// A removed chunk leaves a gap: bin IDs are never given twice, so that a puller's intervals stay
/// true of what it was offered.
#[derive(Clone, Debug)]
pub struct Reserve<V> {
    overlay: Address,
    epoch: u64,
    /// Each bin's entries in bin-ID order.
    bins: Vec<Vec<BinEntry>>,
    /// The highest bin ID given in each bin, removed or not.
    cursors: [u64; MAX_BINS as usize],
    entries: HashMap<Address, (ChunkRef, V)>,
}

/// A reserve that holds the chunks themselves.
pub type MemoryReserve = Reserve<Chunk>;

impl<V> Reserve<V> {
    pub fn new(overlay: Address, epoch: u64) -> Self {
        Reserve {
            overlay,
            epoch,
            bins: vec![Vec::new(); MAX_BINS.into()],
            cursors: [0; MAX_BINS as usize],
            entries: HashMap::new(),
        }
    }

    pub fn overlay(&self) -> Address {
        self.overlay
    }

    /// Indexes `chunk` with `value`; returns its bin and bin ID, or `None` (and keeps the value
    /// of before) if a chunk with its address was already there.
    pub fn insert(&mut self, chunk: ChunkRef, value: V) -> Option<(u8, u64)> {
        if self.entries.contains_key(&chunk.address) {
            return None;
        }
        let (bin, bin_id) = self.leave_gap(&chunk.address);
        self.bins[usize::from(bin)].push(BinEntry { bin_id, chunk });
        self.entries.insert(chunk.address, (chunk, value));
        Some((bin, bin_id))
    }

    /// Gives the next bin ID of `address`'s bin to no chunk, as if one had come and been removed
    /// (a reserve replaying its history); returns the bin and the ID.
    pub fn leave_gap(&mut self, address: &Address) -> (u8, u64) {
        let bin = self.overlay.proximity(address);
        let cursor = &mut self.cursors[usize::from(bin)];
        *cursor += 1;
        (bin, *cursor)
    }

    /// Takes the chunks at `addresses` out of the index and returns those it held, with their
    /// values. Their bin IDs are not given again.
    pub fn remove(&mut self, addresses: &[Address]) -> Vec<(ChunkRef, V)> {
        let mut touched = [false; MAX_BINS as usize];
        let mut removed = Vec::new();
        for address in addresses {
            if let Some(entry) = self.entries.remove(address) {
                touched[usize::from(self.overlay.proximity(address))] = true;
                removed.push(entry);
            }
        }
        // One pass over each bin touched, whatever the number removed from it.
        let held = |e: &BinEntry| self.entries.contains_key(&e.chunk.address);
        for (entries, _) in self.bins.iter_mut().zip(touched).filter(|(_, touched)| *touched) {
            entries.retain(held);
        }
        removed
    }

    /// The value of `chunk`, if held under that stamp.
    pub fn value(&self, chunk: &ChunkRef) -> Option<&V> {
        self.entries.get(&chunk.address).filter(|(r, _)| r == chunk).map(|(_, v)| v)
    }

    /// The chunk held at `address`, under whichever stamp.
    pub fn chunk_ref(&self, address: &Address) -> Option<ChunkRef> {
        self.entries.get(address).map(|(r, _)| *r)
    }

    pub fn contains(&self, address: &Address) -> bool {
        self.entries.contains_key(address)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn bin_len(&self, bin: u8) -> usize {
        self.bins.get(usize::from(bin)).map_or(0, Vec::len)
    }
}

impl Reserve<Chunk> {
    /// Stores `chunk`; returns its bin and bin ID, or `None` if it was already there.
    pub fn put(&mut self, chunk: Chunk) -> Option<(u8, u64)> {
        self.insert(chunk.chunk_ref(), chunk)
    }

    /// The chunk `chunk` names, if stored under that stamp.
    pub fn get(&self, chunk: &ChunkRef) -> Option<Chunk> {
        self.value(chunk).cloned()
    }
}

impl<V> ReserveIndex for Reserve<V> {
    fn epoch(&self) -> u64 {
        self.epoch
    }

    fn cursors(&self) -> [u64; MAX_BINS as usize] {
        self.cursors
    }

    fn collect(&self, bin: u8, start: u64, limit: usize, out: &mut Vec<BinEntry>) {
        let Some(entries) = self.bins.get(usize::from(bin)) else { return };
        let from = entries.partition_point(|e| e.bin_id < start);
        out.extend(entries[from..].iter().take(limit));
    }
}

impl<V> ChunkPresence for Reserve<V> {
    fn has(&self, chunk: &ChunkRef) -> bool {
        self.value(chunk).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swarm::{Stamp, STAMP_SIZE};
    use bytes::Bytes;

    fn chunk(i: u32) -> Chunk {
        Chunk::new(&i.to_le_bytes(), Stamp::new(Bytes::from(vec![1; STAMP_SIZE])).unwrap()).unwrap()
    }

    #[test]
    fn chunks_are_binned_by_proximity_and_numbered_per_bin() {
        let mut reserve = MemoryReserve::new(Address::ZERO, 7);
        let chunks: Vec<Chunk> = (0..40).map(chunk).collect();
        for c in &chunks {
            let (bin, _) = reserve.put(c.clone()).unwrap();
            assert_eq!(bin, Address::ZERO.proximity(&c.address()));
        }
        assert_eq!(reserve.put(chunks[0].clone()), None);
        let cursors = reserve.cursors();
        for bin in 0..MAX_BINS {
            assert_eq!(cursors[usize::from(bin)], reserve.bin_len(bin) as u64);
        }
        let mut out = Vec::new();
        reserve.collect(0, 2, 3, &mut out);
        assert_eq!(out.iter().map(|e| e.bin_id).collect::<Vec<_>>(), vec![2, 3, 4]);
        assert!(reserve.has(&chunks[5].chunk_ref()));
        assert_eq!(reserve.get(&chunks[5].chunk_ref()), Some(chunks[5].clone()));
    }

    #[test]
    fn a_different_stamp_is_a_different_chunk() {
        let mut reserve = MemoryReserve::new(Address::ZERO, 7);
        let c = chunk(1);
        reserve.put(c.clone());
        let mut other = c.chunk_ref();
        other.stamp_hash = [0; 32];
        assert!(!reserve.has(&other));
        assert_eq!(reserve.get(&other), None);
    }

    #[test]
    fn a_removed_chunk_leaves_a_gap_and_its_bin_id_is_not_given_again() {
        let mut reserve = MemoryReserve::new(Address::ZERO, 7);
        let chunks: Vec<Chunk> = (0..40).map(chunk).collect();
        for c in &chunks {
            reserve.put(c.clone());
        }
        let mut bin0 = Vec::new();
        reserve.collect(0, 1, usize::MAX, &mut bin0);
        let (second, last) = (bin0[1], bin0[bin0.len() - 1]);
        let cursors = reserve.cursors();
        let removed = reserve.remove(&[second.chunk.address, last.chunk.address, Address::ZERO]);
        let removed: Vec<ChunkRef> = removed.iter().map(|(r, _)| *r).collect();
        assert_eq!(removed, vec![second.chunk, last.chunk]);
        assert!(reserve.remove(&[last.chunk.address]).is_empty());
        assert_eq!(reserve.cursors(), cursors, "cursors never go back");
        assert!(!reserve.has(&second.chunk));
        assert_eq!(reserve.len(), 38);

        let mut after = Vec::new();
        reserve.collect(0, 1, 3, &mut after);
        let ids: Vec<u64> = after.iter().map(|e| e.bin_id).collect();
        assert_eq!(ids, vec![1, 3, 4]);
        let removed = chunks.iter().find(|c| c.address() == second.chunk.address).unwrap();
        assert_eq!(reserve.put(removed.clone()), Some((0, last.bin_id + 1)), "put back, it is new");
        let fresh = (40..).map(chunk).find(|c| Address::ZERO.proximity(&c.address()) == 0).unwrap();
        assert_eq!(reserve.put(fresh), Some((0, last.bin_id + 2)));
        assert_eq!(reserve.leave_gap(&last.chunk.address), (0, last.bin_id + 3));
        assert_eq!(reserve.cursors()[0], last.bin_id + 3, "a gap left is an ID given");
        assert_eq!(reserve.bin_len(0), bin0.len());
    }
}
