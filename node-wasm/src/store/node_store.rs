//! The block store a node runs on: in memory, or the one of its target that outlives the process
//! ([`PersistentBlockStore`]: a redb file natively, IndexedDB in the browser).

use bytes::Bytes;
use cid::Cid;

use super::{
    BlockKey, BlockStore, Manifest, MemoryBlockStore, PersistentBlockStore, RecordWrite, Records,
    StoreError, Table,
};

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

    async fn delete_many(&self, keys: Vec<BlockKey>) -> Result<(), StoreError> {
        match self {
            Self::Memory(store) => store.delete_many(keys).await,
            Self::Persistent(store) => store.delete_many(keys).await,
        }
    }

    async fn inventory(&self) -> Result<Vec<(BlockKey, usize)>, StoreError> {
        match self {
            Self::Memory(store) => store.inventory().await,
            Self::Persistent(store) => store.inventory().await,
        }
    }
}

impl Records for NodeBlockStore {
    async fn records(&self, table: Table) -> Result<Vec<Vec<u8>>, StoreError> {
        match self {
            Self::Memory(store) => store.records(table).await,
            Self::Persistent(store) => store.records(table).await,
        }
    }

    async fn records_at(
        &self,
        table: Table,
        keys: Vec<Vec<u8>>,
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        match self {
            Self::Memory(store) => store.records_at(table, keys).await,
            Self::Persistent(store) => store.records_at(table, keys).await,
        }
    }

    async fn write_records(&self, writes: Vec<RecordWrite>) -> Result<(), StoreError> {
        match self {
            Self::Memory(store) => store.write_records(writes).await,
            Self::Persistent(store) => store.write_records(writes).await,
        }
    }
}

impl NodeBlockStore {
    /// Every content manifest held, in root order.
    pub async fn manifests(&self) -> Result<Vec<Manifest>, StoreError> {
        let records = self.records(Table::Manifests).await?;
        let mut manifests =
            records.iter().map(|r| Manifest::decode(r)).collect::<Result<Vec<_>, _>>()?;
        manifests.sort_by_key(|m| m.root);
        Ok(manifests)
    }

    /// Keeps `manifest`, replacing the one of its root.
    pub async fn put_manifest(&self, manifest: &Manifest) -> Result<(), StoreError> {
        let write =
            RecordWrite::put(Table::Manifests, Manifest::key(&manifest.root), manifest.encode());
        self.write_records(vec![write]).await
    }

    pub async fn remove_manifest(&self, root: &Cid) -> Result<(), StoreError> {
        self.write_records(vec![RecordWrite::delete(Table::Manifests, Manifest::key(root))]).await
    }
}
