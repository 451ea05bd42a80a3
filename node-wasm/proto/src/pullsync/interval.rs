//! Which bin IDs a puller already synced from a peer, per bin (bee `pkg/puller/intervalstore`),
//! and the store that keeps them across restarts.

use crate::swarm::Address;
use std::collections::HashMap;
use std::sync::Arc;
use thiserror::Error;

/// Sorted, disjoint, non-adjacent inclusive ranges of synced bin IDs. Bin IDs start at 1.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Intervals {
    ranges: Vec<(u64, u64)>,
}

impl Intervals {
    /// Marks `start..=end` as synced, merging with touching ranges.
    pub fn add(&mut self, start: u64, end: u64) {
        if end < start {
            return;
        }
        let first = self.ranges.partition_point(|&(_, e)| e.saturating_add(1) < start);
        let last = self.ranges.partition_point(|&(s, _)| s <= end.saturating_add(1));
        let merged = self.ranges[first..last]
            .iter()
            .fold((start, end), |(s, e), &(rs, re)| (s.min(rs), e.max(re)));
        self.ranges.splice(first..last, [merged]);
    }

    /// The lowest bin ID (from 1) not yet synced.
    pub fn next_missing(&self) -> u64 {
        match self.ranges.first() {
            Some(&(start, end)) if start <= 1 => end.saturating_add(1),
            _ => 1,
        }
    }

    pub fn contains(&self, bin_id: u64) -> bool {
        let i = self.ranges.partition_point(|&(_, e)| e < bin_id);
        self.ranges.get(i).is_some_and(|&(s, _)| s <= bin_id)
    }

    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }
}

/// Why an [`IntervalStore`] failed. Backends live outside this sans-IO crate, so their errors are
/// carried as they are, shared so that the error (and the events holding it) stays `Clone`.
#[derive(Debug, Error, Clone)]
#[non_exhaustive]
pub enum IntervalStoreError {
    #[error("interval store backend failed: {0}")]
    Backend(#[source] Arc<dyn std::error::Error + Send + Sync>),
}

/// Two errors are equal when they share one backend error.
impl PartialEq for IntervalStoreError {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Backend(a), Self::Backend(b)) => Arc::ptr_eq(a, b),
        }
    }
}

impl Eq for IntervalStoreError {}

/// Persistent intervals per (peer overlay, bin), plus the epoch of each peer's reserve: when a
/// peer's epoch changes its bin IDs mean something else and everything synced from it is reset.
///
/// Synchronous on purpose: a browser backend keeps the intervals in memory and writes them behind
/// (they are small), appending each write after the chunk writes that precede it, so a crash never
/// leaves an interval recorded for chunks that were not stored.
pub trait IntervalStore {
    fn next_missing(&self, peer: &Address, bin: u8) -> Result<u64, IntervalStoreError>;
    fn add(
        &mut self,
        peer: &Address,
        bin: u8,
        start: u64,
        end: u64,
    ) -> Result<(), IntervalStoreError>;
    fn epoch(&self, peer: &Address) -> Result<Option<u64>, IntervalStoreError>;
    /// Forgets every interval of `peer` and records its new epoch.
    fn reset_peer(&mut self, peer: &Address, epoch: u64) -> Result<(), IntervalStoreError>;
}

/// Intervals kept in memory: for tests, the simulator and nodes that do not persist.
#[derive(Clone, Debug, Default)]
pub struct MemoryIntervalStore {
    intervals: HashMap<(Address, u8), Intervals>,
    epochs: HashMap<Address, u64>,
}

impl MemoryIntervalStore {
    pub fn intervals(&self, peer: &Address, bin: u8) -> Option<&Intervals> {
        self.intervals.get(&(*peer, bin))
    }
}

impl IntervalStore for MemoryIntervalStore {
    fn next_missing(&self, peer: &Address, bin: u8) -> Result<u64, IntervalStoreError> {
        Ok(self.intervals(peer, bin).map_or(1, Intervals::next_missing))
    }

    fn add(
        &mut self,
        peer: &Address,
        bin: u8,
        start: u64,
        end: u64,
    ) -> Result<(), IntervalStoreError> {
        self.intervals.entry((*peer, bin)).or_default().add(start, end);
        Ok(())
    }

    fn epoch(&self, peer: &Address) -> Result<Option<u64>, IntervalStoreError> {
        Ok(self.epochs.get(peer).copied())
    }

    fn reset_peer(&mut self, peer: &Address, epoch: u64) -> Result<(), IntervalStoreError> {
        self.intervals.retain(|(p, _), _| p != peer);
        self.epochs.insert(*peer, epoch);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_merges_overlapping_and_adjacent_ranges() {
        let mut i = Intervals::default();
        i.add(10, 20);
        i.add(1, 5);
        assert_eq!(i.ranges(), &[(1, 5), (10, 20)]);
        i.add(6, 9);
        assert_eq!(i.ranges(), &[(1, 20)]);
        i.add(30, 40);
        i.add(15, 35);
        assert_eq!(i.ranges(), &[(1, 40)]);
        i.add(8, 3);
        assert_eq!(i.ranges(), &[(1, 40)]);
    }

    #[test]
    fn next_missing_starts_at_one_and_follows_the_first_range() {
        let mut i = Intervals::default();
        assert_eq!(i.next_missing(), 1);
        i.add(5, 9);
        assert_eq!(i.next_missing(), 1);
        i.add(1, 3);
        assert_eq!(i.next_missing(), 4);
        i.add(4, 4);
        assert_eq!(i.next_missing(), 10);
        assert!(i.contains(7) && !i.contains(10));
    }

    #[test]
    fn store_is_keyed_by_peer_and_bin_and_resets_per_peer() {
        let (a, b) = (Address([1; 32]), Address([2; 32]));
        let mut store = MemoryIntervalStore::default();
        store.add(&a, 0, 1, 10).unwrap();
        store.add(&a, 1, 1, 3).unwrap();
        store.add(&b, 0, 1, 7).unwrap();
        assert_eq!(store.next_missing(&a, 0).unwrap(), 11);
        assert_eq!(store.next_missing(&a, 1).unwrap(), 4);
        assert_eq!(store.next_missing(&a, 2).unwrap(), 1);
        store.reset_peer(&a, 42).unwrap();
        assert_eq!(store.next_missing(&a, 0).unwrap(), 1);
        assert_eq!(store.next_missing(&b, 0).unwrap(), 8);
        assert_eq!(store.epoch(&a).unwrap(), Some(42));
        assert_eq!(store.epoch(&b).unwrap(), None);
    }
}
