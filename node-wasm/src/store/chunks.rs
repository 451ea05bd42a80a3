//! Where a node keeps Swarm chunks: the [`ChunkStore`] that pull-sync's glue stores verified
//! chunks in and serves them from.
//!
//! Everything the pull-sync cores ask of it is synchronous: the reserve index (cursors and bin
//! contents) and presence checks are small enough to keep in memory in every backend. Chunk data
//! is read only to answer a peer's Want. The memory store ([`MemoryReserve`]) runs natively and in
//! the browser; disk and IndexedDB backends come with the node issues and will keep their index in
//! memory the same way.

use super::StoreError;
use syncscope_proto::pullsync::{ChunkPresence, MemoryReserve, ReserveIndex};
use syncscope_proto::swarm::{Chunk, ChunkRef};

pub trait ChunkStore: ReserveIndex + ChunkPresence {
    /// Stores a chunk that was verified against its address. `Ok(false)` if it was already there.
    fn put(&mut self, chunk: Chunk) -> Result<bool, StoreError>;

    /// The chunk `chunk` names, if stored under that stamp.
    fn get(&self, chunk: &ChunkRef) -> Result<Option<Chunk>, StoreError>;
}

impl ChunkStore for MemoryReserve {
    fn put(&mut self, chunk: Chunk) -> Result<bool, StoreError> {
        Ok(MemoryReserve::put(self, chunk).is_some())
    }

    fn get(&self, chunk: &ChunkRef) -> Result<Option<Chunk>, StoreError> {
        Ok(MemoryReserve::get(self, chunk))
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
        assert_eq!(ChunkStore::get(&store, &chunk.chunk_ref()).unwrap(), Some(chunk));
    }
}
