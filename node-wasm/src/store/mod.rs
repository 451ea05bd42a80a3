//! Where a node keeps its data: IndexedDB in the browser.

#[cfg(target_arch = "wasm32")]
mod indexed_db;

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
