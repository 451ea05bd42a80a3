//! The block store a node runs on: in memory, or the one of its target that outlives the process
//! ([`PersistentBlockStore`]: a redb file natively, IndexedDB in the browser).

use bytes::Bytes;
use cid::Cid;

use super::{BlockKey, BlockStore, MemoryBlockStore, PersistentBlockStore, StoreError};

pub enum NodeBlockStore {
    /// Gone when the node stops: for tests, benchmarks and throw-away peers.
    Memory(MemoryBlockStore),
    Persistent(PersistentBlockStore),
}

impl Default for NodeBlockStore {
    fn default() -> Self {
        Self::Memory(MemoryBlockStore::new())
    }
}

impl std::fmt::Debug for NodeBlockStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Memory(_) => "NodeBlockStore::Memory",
            Self::Persistent(_) => "NodeBlockStore::Persistent",
        })
    }
}

impl BlockStore for NodeBlockStore {
    async fn get(&self, cid: &Cid) -> Result<Option<Bytes>, StoreError> {
        match self {
            Self::Memory(store) => store.get(cid).await,
            Self::Persistent(store) => store.get(cid).await,
        }
    }

    async fn put_many(&self, blocks: Vec<(Cid, Bytes)>) -> Result<(), StoreError> {
        match self {
            Self::Memory(store) => store.put_many(blocks).await,
            Self::Persistent(store) => store.put_many(blocks).await,
        }
    }

    async fn has(&self, cid: &Cid) -> Result<bool, StoreError> {
        match self {
            Self::Memory(store) => store.has(cid).await,
            Self::Persistent(store) => store.has(cid).await,
        }
    }

    async fn inventory(&self) -> Result<Vec<(BlockKey, usize)>, StoreError> {
        match self {
            Self::Memory(store) => store.inventory().await,
            Self::Persistent(store) => store.inventory().await,
        }
    }
}
