//! Where a node keeps Swarm chunks: the [`ChunkStore`] that pull-sync's glue stores verified
//! chunks in and serves them from.
//!
//! What the pull-sync cores ask of it is synchronous: the reserve index (cursors and bin
//! contents) and presence checks are small enough to keep in memory in every backend. Chunk data
//! is only read to answer a peer's Want, and that read is asynchronous: in the browser the data
//! lives in IndexedDB. [`MemoryReserve`] holds the chunks themselves; the node's own store,
//! [`super::PersistedReserve`], keeps only the index in memory.

use std::future::ready;
use std::task::Waker;

use super::StoreError;
use crate::cond_send::BoxFuture;
use syncscope_proto::pullsync::{ChunkPresence, MemoryReserve, ReserveIndex};
use syncscope_proto::swarm::{Chunk, ChunkRef};

pub trait ChunkStore: ReserveIndex + ChunkPresence {
    /// Stores a chunk that was verified against its address. `Ok(false)` if it was already there.
    fn put(&mut self, chunk: Chunk) -> Result<bool, StoreError>;

    /// Reads `chunks`, in order, each `None` where it is not held under that stamp.
    fn read(
        &self,
        chunks: &[ChunkRef],
    ) -> BoxFuture<'static, Result<Vec<Option<Chunk>>, StoreError>>;

    /// Whether to pull more chunks now: a store that writes behind says no while its queue is
    /// full, and has `waker` woken as it drains. One that writes at once always takes more.
    fn accepts_more(&self, _waker: &Waker) -> bool {
        true
    }
}

impl ChunkStore for MemoryReserve {
    fn put(&mut self, chunk: Chunk) -> Result<bool, StoreError> {
        Ok(MemoryReserve::put(self, chunk).is_some())
    }

    fn read(
        &self,
        chunks: &[ChunkRef],
    ) -> BoxFuture<'static, Result<Vec<Option<Chunk>>, StoreError>> {
        Box::pin(ready(Ok(chunks.iter().map(|c| self.get(c)).collect())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use syncscope_proto::swarm::{Address, Stamp, STAMP_SIZE};

    #[test]
    fn memory_store_puts_once_and_serves_what_it_holds() {
        let stamp = Stamp::new(Bytes::from(vec![5; STAMP_SIZE])).unwrap();
        let chunk = Chunk::new(b"chunk", stamp).unwrap();
        let mut store = MemoryReserve::new(Address::ZERO, 1);
        assert!(ChunkStore::put(&mut store, chunk.clone()).unwrap());
        assert!(!ChunkStore::put(&mut store, chunk.clone()).unwrap());
        assert!(store.has(&chunk.chunk_ref()));
        let read = futures::executor::block_on(store.read(&[chunk.chunk_ref()])).unwrap();
        assert_eq!(read, vec![Some(chunk)]);
    }
}
