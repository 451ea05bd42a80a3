//! The `BlockStore` conformance suite over the native backends.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)

mod block_store_suite;

use syncscope_node::store::MemoryBlockStore;

#[test]
fn memory_store_conforms() {
    futures::executor::block_on(block_store_suite::conformance(MemoryBlockStore::new()));
}
