//! Verified Bitswap blocks, keyed by multihash ([`BlockKey`]).
//!
//! Every method returns a future, so one trait fits a map in memory, a disk store under tokio and
//! IndexedDB in a single-threaded browser: the futures are `CondSend` (`Send` natively, unbounded
//! in the browser) and the store is shared (`&self`, `CondSync`), so the Bitswap behaviour holds an
//! `Arc` of it and runs several reads at once. Puts come in batches ([`BlockStore::put_many`]):
//! a persistent backend writes a batch in one transaction, and a block counts as stored only when
//! that transaction has committed.
//!
//! The store trusts its callers and keeps what it is given: Bitswap verifies every block against
//! its CID before it stores it.

use std::collections::{BTreeMap, HashMap};
use std::future::{ready, Future};
use std::sync::{PoisonError, RwLock};

use bytes::Bytes;
use cid::Cid;
use multihash::Multihash;

use super::{RecordWrite, Records, StoreError, Table};
use crate::cond_send::{CondSend, CondSync};

/// A block's key in every store: its multihash, so that the same bytes under another codec (a
/// raw leaf and a CIDv0 of the same digest) are stored once.
pub type BlockKey = Multihash<64>;

pub trait BlockStore: CondSync + 'static {
    /// The data of `cid`, `None` if the store does not hold it.
    fn get(&self, cid: &Cid) -> impl Future<Output = Result<Option<Bytes>, StoreError>> + CondSend;

    /// Keeps verified blocks in one write: all of them, or none and an error. A block that is
    /// already there is written again, which changes nothing (the key is its hash).
    fn put_many(
        &self,
        blocks: Vec<(Cid, Bytes)>,
    ) -> impl Future<Output = Result<(), StoreError>> + CondSend;

    fn has(&self, cid: &Cid) -> impl Future<Output = Result<bool, StoreError>> + CondSend;

    /// Drops the blocks with these multihashes, in one write; those not held are skipped.
    fn delete_many(
        &self,
        keys: Vec<BlockKey>,
    ) -> impl Future<Output = Result<(), StoreError>> + CondSend;

    /// Every block held, as its key and size: what a node indexes when it starts.
    fn inventory(
        &self,
    ) -> impl Future<Output = Result<Vec<(BlockKey, usize)>, StoreError>> + CondSend;

    /// Keeps one verified block.
    fn put(
        &self,
        cid: Cid,
        data: Bytes,
    ) -> impl Future<Output = Result<(), StoreError>> + CondSend {
        self.put_many(vec![(cid, data)])
    }
}

/// A store shared with others (the node's owner reads what it fetched from it).
impl<S: BlockStore> BlockStore for std::sync::Arc<S> {
    fn get(&self, cid: &Cid) -> impl Future<Output = Result<Option<Bytes>, StoreError>> + CondSend {
        S::get(self, cid)
    }

    fn put_many(
        &self,
        blocks: Vec<(Cid, Bytes)>,
    ) -> impl Future<Output = Result<(), StoreError>> + CondSend {
        S::put_many(self, blocks)
    }

    fn has(&self, cid: &Cid) -> impl Future<Output = Result<bool, StoreError>> + CondSend {
        S::has(self, cid)
    }

    fn delete_many(
        &self,
        keys: Vec<BlockKey>,
    ) -> impl Future<Output = Result<(), StoreError>> + CondSend {
        S::delete_many(self, keys)
    }

    fn inventory(
        &self,
    ) -> impl Future<Output = Result<Vec<(BlockKey, usize)>, StoreError>> + CondSend {
        S::inventory(self)
    }
}

/// Where a record sits in [`MemoryBlockStore`]'s one map of records.
type RecordKey = (Table, Vec<u8>);

/// Blocks in a map. Every operation completes at once.
#[derive(Debug, Default)]
pub struct MemoryBlockStore {
    blocks: RwLock<HashMap<BlockKey, Bytes>>,
    records: RwLock<BTreeMap<RecordKey, Vec<u8>>>,
}

impl MemoryBlockStore {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.blocks.read().unwrap_or_else(PoisonError::into_inner).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The block now, without a future: for tests and tools.
    pub fn block(&self, cid: &Cid) -> Option<Bytes> {
        self.blocks.read().unwrap_or_else(PoisonError::into_inner).get(cid.hash()).cloned()
    }
}

impl BlockStore for MemoryBlockStore {
    fn get(&self, cid: &Cid) -> impl Future<Output = Result<Option<Bytes>, StoreError>> + CondSend {
        ready(Ok(self.block(cid)))
    }

    fn put_many(
        &self,
        blocks: Vec<(Cid, Bytes)>,
    ) -> impl Future<Output = Result<(), StoreError>> + CondSend {
        let mut map = self.blocks.write().unwrap_or_else(PoisonError::into_inner);
        map.extend(blocks.into_iter().map(|(cid, data)| (*cid.hash(), data)));
        ready(Ok(()))
    }

    fn delete_many(
        &self,
        keys: Vec<BlockKey>,
    ) -> impl Future<Output = Result<(), StoreError>> + CondSend {
        let mut map = self.blocks.write().unwrap_or_else(PoisonError::into_inner);
        for key in &keys {
            map.remove(key);
        }
        ready(Ok(()))
    }

    fn has(&self, cid: &Cid) -> impl Future<Output = Result<bool, StoreError>> + CondSend {
        let blocks = self.blocks.read().unwrap_or_else(PoisonError::into_inner);
        ready(Ok(blocks.contains_key(cid.hash())))
    }

    fn inventory(
        &self,
    ) -> impl Future<Output = Result<Vec<(BlockKey, usize)>, StoreError>> + CondSend {
        let blocks = self.blocks.read().unwrap_or_else(PoisonError::into_inner);
        ready(Ok(blocks.iter().map(|(key, data)| (*key, data.len())).collect()))
    }
}

impl Records for MemoryBlockStore {
    fn records(
        &self,
        table: Table,
    ) -> impl Future<Output = Result<Vec<Vec<u8>>, StoreError>> + CondSend {
        let records = self.records.read().unwrap_or_else(PoisonError::into_inner);
        let values = records.range((table, Vec::new())..).take_while(|((t, _), _)| *t == table);
        ready(Ok(values.map(|(_, v)| v.clone()).collect()))
    }

    fn records_at(
        &self,
        table: Table,
        keys: Vec<Vec<u8>>,
    ) -> impl Future<Output = Result<Vec<Option<Vec<u8>>>, StoreError>> + CondSend {
        let records = self.records.read().unwrap_or_else(PoisonError::into_inner);
        ready(Ok(keys.into_iter().map(|key| records.get(&(table, key)).cloned()).collect()))
    }

    fn write_records(
        &self,
        writes: Vec<RecordWrite>,
    ) -> impl Future<Output = Result<(), StoreError>> + CondSend {
        let mut records = self.records.write().unwrap_or_else(PoisonError::into_inner);
        for RecordWrite { table, key, value } in writes {
            match value {
                Some(value) => records.insert((table, key), value),
                None => records.remove(&(table, key)),
            };
        }
        ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use syncscope_proto::bitswap::raw_cid;

    // The conformance suite every backend runs is tests/block_store_suite.
    #[test]
    fn memory_store_reads_back_synchronously_what_it_holds() {
        let store = MemoryBlockStore::new();
        let data = Bytes::from_static(b"block");
        assert!(store.is_empty());
        block_on(store.put(raw_cid(&data), data.clone())).unwrap();
        assert_eq!((store.len(), store.block(&raw_cid(&data))), (1, Some(data)));
    }
}
