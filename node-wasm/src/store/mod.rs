//! Where a node keeps its data: verified Bitswap blocks ([`BlockStore`]: in memory, on disk with
//! redb natively, in IndexedDB in the browser; [`NodeBlockStore`] is the one a node runs on) and
//! pull-sync chunks ([`ChunkStore`]; [`PullsyncState`] keeps them, with the intervals, in memory and
//! writes them behind to the node's store).

#[cfg(any(target_arch = "wasm32", test))]
mod block_packs;
mod blocks;
#[cfg(target_arch = "wasm32")]
mod browser_node;
mod chunks;
#[cfg(not(target_arch = "wasm32"))]
mod disk;
mod group_commit;
#[cfg(target_arch = "wasm32")]
mod indexed_db;
mod indexed_db_error;
#[cfg(target_arch = "wasm32")]
mod indexed_db_writer;
mod manifests;
mod node_store;
mod pullsync_state;
#[cfg(any(target_arch = "wasm32", test))]
mod recent_pack;
mod records;

use std::sync::Arc;

pub use blocks::{BlockKey, BlockStore, MemoryBlockStore};
#[cfg(target_arch = "wasm32")]
pub use browser_node::{claim_browser_node, BrowserNode, BrowserNodeError, SlotLock};
pub use chunks::ChunkStore;
#[cfg(not(target_arch = "wasm32"))]
pub use disk::DiskBlockStore;
pub use group_commit::{BatchWrite, GroupCommit};
#[cfg(target_arch = "wasm32")]
pub use indexed_db::IndexedDbBlockStore;
pub use indexed_db_error::{IndexedDbError, IndexedDbErrorKind, IndexedDbOp};
pub use manifests::Manifest;
pub use node_store::NodeBlockStore;
pub use pullsync_state::{PersistedIntervals, PersistedReserve, PullsyncState, MAX_QUEUED_CHUNKS};
pub use records::{RecordWrite, Records, Table};

/// Where this target keeps blocks across restarts.
#[cfg(not(target_arch = "wasm32"))]
pub type PersistentBlockStore = DiskBlockStore;
#[cfg(target_arch = "wasm32")]
pub type PersistentBlockStore = IndexedDbBlockStore;

/// Why a store operation failed. Cloned to every put that shared the failed transaction.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The browser's IndexedDB refused or failed an operation.
    #[error("storage backend failed: IndexedDB {0}")]
    IndexedDb(#[from] IndexedDbError),
    /// The disk store (natively) failed; `op` says what it was doing.
    #[error("disk store failed to {op}: {source}")]
    Disk { op: &'static str, source: Arc<dyn std::error::Error + Send + Sync> },
    /// The store's writer stopped before it wrote the data (the node is shutting down).
    #[error("the store stopped before the write was done")]
    Stopped,
    /// What the backend gave back is not what the store writes.
    #[error("stored data is corrupt: {0}")]
    Corrupt(#[from] Corruption),
}

/// How stored data fails to be what the store wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Corruption {
    #[error("a stored value is not a byte array")]
    NotBytes,
    #[error("a stored block's key is not a multihash")]
    NotAMultihash,
    #[error("a stored block size is not a number")]
    NotASize,
    #[error("a stored content manifest cannot be read")]
    NotAManifest,
    #[error("a stored pack of blocks does not match its index")]
    NotAPack,
}
