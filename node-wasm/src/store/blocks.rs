//! Verified Bitswap blocks, by CID.
//!
//! Every method returns a future, so one trait fits a map in memory, a disk store under tokio and
//! IndexedDB in a single-threaded browser: the futures are `CondSend` (`Send` natively, unbounded
//! in the browser) and the store is shared (`&self`, `CondSync`), so the Bitswap behaviour holds an
//! `Arc` of it and runs several reads at once. An IndexedDB backend answers `get` from a read-only
//! transaction and batches `put`s, as [`super::IndexedDbStore`] does.
//!
//! The store trusts its callers and keeps what it is given: Bitswap verifies every block against its
//! CID before it stores it.

use std::collections::HashMap;
use std::future::{ready, Future};
use std::sync::{PoisonError, RwLock};

use bytes::Bytes;
use cid::Cid;

use super::StoreError;
use crate::cond_send::{CondSend, CondSync};

pub trait BlockStore: CondSync + 'static {
    /// The data of `cid`, `None` if the store does not hold it.
    fn get(&self, cid: &Cid) -> impl Future<Output = Result<Option<Bytes>, StoreError>> + CondSend;

    /// Keeps a verified block. `Ok(false)` if it was already there.
    fn put(
        &self,
        cid: Cid,
        data: Bytes,
    ) -> impl Future<Output = Result<bool, StoreError>> + CondSend;

    fn has(&self, cid: &Cid) -> impl Future<Output = Result<bool, StoreError>> + CondSend;
}

/// Blocks in a map. Every operation completes at once.
#[derive(Debug, Default)]
pub struct MemoryBlockStore {
    blocks: RwLock<HashMap<Cid, Bytes>>,
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
        self.blocks.read().unwrap_or_else(PoisonError::into_inner).get(cid).cloned()
    }
}

impl BlockStore for MemoryBlockStore {
    fn get(&self, cid: &Cid) -> impl Future<Output = Result<Option<Bytes>, StoreError>> + CondSend {
        ready(Ok(self.block(cid)))
    }

    fn put(
        &self,
        cid: Cid,
        data: Bytes,
    ) -> impl Future<Output = Result<bool, StoreError>> + CondSend {
        let mut blocks = self.blocks.write().unwrap_or_else(PoisonError::into_inner);
        ready(Ok(blocks.insert(cid, data).is_none()))
    }

    fn has(&self, cid: &Cid) -> impl Future<Output = Result<bool, StoreError>> + CondSend {
        ready(Ok(self.blocks.read().unwrap_or_else(PoisonError::into_inner).contains_key(cid)))
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
        assert!(block_on(store.put(raw_cid(&data), data.clone())).unwrap());
        assert_eq!((store.len(), store.block(&raw_cid(&data))), (1, Some(data)));
    }
}
