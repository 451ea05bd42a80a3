//! Where a node keeps its data: verified Bitswap blocks ([`BlockStore`]) and pull-sync chunks
//! ([`ChunkStore`]), in memory for now, and byte values in the browser's IndexedDB.

mod blocks;
mod chunks;
#[cfg(target_arch = "wasm32")]
mod indexed_db;

pub use blocks::{BlockStore, MemoryBlockStore};
pub use chunks::ChunkStore;
#[cfg(target_arch = "wasm32")]
pub use indexed_db::IndexedDbStore;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("storage backend failed: {0}")]
    Backend(String),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
}
