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
use syncscope_proto::swarm::{Address, Chunk, ChunkRef};

pub trait ChunkStore: ReserveIndex + ChunkPresence {
    /// Stores a chunk that was verified against its address. `Ok(false)` if it was already there.
    fn put(&mut self, chunk: Chunk) -> Result<bool, StoreError>;

    /// Takes the chunks at `addresses` out of the store, wherever they are held; returns how
    /// many were. Their bin IDs are not given again.
    fn remove(&mut self, addresses: &[Address]) -> usize;

    /// Reads `chunks`, in order, each `None` where it is not held under that stamp.
    fn read(
        &self,
        chunks: &[ChunkRef],
    ) -> BoxFuture<'static, Result<Vec<Option<Chunk>>, StoreError>>;

    /// The chunk held at `address`, under whichever stamp.
    fn chunk_ref(&self, address: &Address) -> Option<ChunkRef>;

    /// Reads the chunks at `addresses`, in order, each `None` where none is held.
    fn read_at(
        &self,
        addresses: &[Address],
    ) -> BoxFuture<'static, Result<Vec<Option<Chunk>>, StoreError>> {
        let refs: Vec<Option<ChunkRef>> = addresses.iter().map(|a| self.chunk_ref(a)).collect();
        let read = self.read(&refs.iter().flatten().copied().collect::<Vec<_>>());
        Box::pin(async move {
            let mut read = read.await?.into_iter();
            Ok(refs.iter().map(|r| r.and_then(|_| read.next().flatten())).collect())
        })
    }

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

    fn remove(&mut self, addresses: &[Address]) -> usize {
        MemoryReserve::remove(self, addresses).len()
    }

    fn chunk_ref(&self, address: &Address) -> Option<ChunkRef> {
        MemoryReserve::chunk_ref(self, address)
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
    use syncscope_proto::swarm::{Stamp, STAMP_SIZE};

    #[test]
    fn memory_store_puts_once_serves_what_it_holds_and_removes() {
        let stamp = Stamp::new(Bytes::from(vec![5; STAMP_SIZE])).unwrap();
        let chunk = Chunk::new(b"chunk", stamp).unwrap();
        let mut store = MemoryReserve::new(Address::ZERO, 1);
        assert!(ChunkStore::put(&mut store, chunk.clone()).unwrap());
        assert!(!ChunkStore::put(&mut store, chunk.clone()).unwrap());
        assert!(store.has(&chunk.chunk_ref()));
        let read = futures::executor::block_on(store.read(&[chunk.chunk_ref()])).unwrap();
        assert_eq!(read, vec![Some(chunk.clone())]);
        let at = futures::executor::block_on(store.read_at(&[Address::ZERO, chunk.address()]));
        assert_eq!(at.unwrap(), vec![None, Some(chunk.clone())]);
        assert_eq!(ChunkStore::remove(&mut store, &[chunk.address(), Address::ZERO]), 1);
        assert!(!store.has(&chunk.chunk_ref()));
    }
}
