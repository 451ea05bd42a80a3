//! The `BlockStore` conformance suite over the native backends.

mod block_store_suite;

use syncscope_node::store::MemoryBlockStore;

#[test]
fn memory_store_conforms() {
    futures::executor::block_on(block_store_suite::conformance(MemoryBlockStore::new()));
}
