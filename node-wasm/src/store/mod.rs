//! Where a node keeps its data: verified Bitswap blocks ([`BlockStore`]) and pull-sync chunks
//! ([`ChunkStore`]), in memory for now, and byte values in the browser's IndexedDB.

mod blocks;
mod chunks;
#[cfg(target_arch = "wasm32")]
mod indexed_db;
mod indexed_db_error;

pub use blocks::{BlockStore, MemoryBlockStore};
pub use chunks::ChunkStore;
#[cfg(target_arch = "wasm32")]
pub use indexed_db::IndexedDbStore;
pub use indexed_db_error::{IndexedDbError, IndexedDbErrorKind, IndexedDbOp};

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The browser's IndexedDB refused or failed an operation.
    #[error("storage backend failed: IndexedDB {0}")]
    IndexedDb(#[from] IndexedDbError),
    /// What the backend gave back is not what the store writes.
    #[error("stored data is corrupt: {0}")]
    Corrupt(Corruption),
}

/// How stored data fails to be what the store wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Corruption {
    #[error("a stored value is not a byte array")]
    NotBytes,
}
