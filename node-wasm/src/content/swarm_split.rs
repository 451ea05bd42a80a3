//! Swarm file splitting as bee does it unencrypted (`pkg/file/pipeline/hashtrie`): data chunks of
//! 4096 bytes, then intermediate chunks whose payload is up to 128 child addresses and whose span
//! is the number of file bytes under them, up to a single root.
//!
//! Two rules give bee's exact tree. A level is wrapped as soon as it holds 128 references. When
//! the file ends, a level left with a single reference is not wrapped: that reference is carried
//! up to the level above (so a file of 129 chunks has a root with one full intermediate chunk and
//! one data chunk under it).

use bytes::{BufMut, BytesMut};
use std::collections::VecDeque;
use syncscope_proto::swarm::{
    chunk_address, Address, Chunk, Stamp, ADDRESS_SIZE, CHUNK_SIZE, SPAN_SIZE,
};

/// References per intermediate chunk: one chunk's worth of addresses.
pub const BRANCHES: usize = CHUNK_SIZE / ADDRESS_SIZE;

/// A finished split: the root address and the chunks that had not been polled yet (all of them,
/// if none was).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitFile {
    pub root: Address,
    /// File bytes split.
    pub size: u64,
    pub chunks: Vec<Chunk>,
}

/// A chunk as its parent records it.
#[derive(Clone, Copy, Debug)]
struct Reference {
    span: u64,
    address: Address,
}

/// Streaming splitter: [`write`](Self::write) bytes in any pieces, take finished chunks with
/// [`poll_chunk`](Self::poll_chunk), then [`finish`](Self::finish). Every chunk carries `stamp`,
/// opaquely. It holds one partial chunk and under 128 references per level; polled chunks leave.
#[derive(Debug)]
pub struct SwarmSplitter {
    stamp: Stamp,
    partial: BytesMut,
    /// `levels[0]` refers to data chunks, `levels[i]` to intermediate chunks of height `i`.
    levels: Vec<Vec<Reference>>,
    ready: VecDeque<Chunk>,
    size: u64,
}

impl SwarmSplitter {
    pub fn new(stamp: Stamp) -> Self {
        SwarmSplitter {
            stamp,
            partial: BytesMut::with_capacity(CHUNK_SIZE),
            levels: Vec::new(),
            ready: VecDeque::new(),
            size: 0,
        }
    }

    pub fn write(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let take = (CHUNK_SIZE - self.partial.len()).min(data.len());
            self.partial.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.partial.len() == CHUNK_SIZE {
                self.add_data_chunk();
            }
        }
    }

    /// The next finished chunk, data chunks in file order, children before parents.
    pub fn poll_chunk(&mut self) -> Option<Chunk> {
        self.ready.pop_front()
    }

    pub fn finish(mut self) -> SplitFile {
        // An empty file is one chunk with an empty payload, as in bee.
        if !self.partial.is_empty() || self.levels.is_empty() {
            self.add_data_chunk();
        }
        let mut height = 0;
        let root = loop {
            let top = height + 1 == self.levels.len();
            match self.levels[height].as_slice() {
                [root] if top => break root.address,
                [] => {}
                [single] => {
                    let single = *single;
                    self.levels[height].clear();
                    self.push_reference(height + 1, single);
                }
                _ => self.wrap_level(height),
            }
            height += 1;
        };
        SplitFile { root, size: self.size, chunks: self.ready.into() }
    }

    fn add_data_chunk(&mut self) {
        let payload = self.partial.split();
        self.partial.reserve(CHUNK_SIZE);
        self.size += payload.len() as u64;
        let chunk = Chunk::new(&payload, self.stamp.clone())
            .expect("a data chunk is never longer than CHUNK_SIZE");
        self.push_ready(0, payload.len() as u64, chunk);
    }

    fn push_reference(&mut self, height: usize, reference: Reference) {
        if self.levels.len() == height {
            self.levels.push(Vec::with_capacity(BRANCHES));
        }
        self.levels[height].push(reference);
        if self.levels[height].len() == BRANCHES {
            self.wrap_level(height);
        }
    }

    /// Replaces the references at `height` with one intermediate chunk, referenced from above.
    fn wrap_level(&mut self, height: usize) {
        let children = std::mem::take(&mut self.levels[height]);
        let span = children.iter().map(|c| c.span).sum();
        let mut data = BytesMut::with_capacity(SPAN_SIZE + children.len() * ADDRESS_SIZE);
        data.put_u64_le(span);
        children.iter().for_each(|c| data.put_slice(c.address.as_bytes()));
        let address = chunk_address(span, &data[SPAN_SIZE..]);
        // `Chunk` only comes from verified data, which hashes these bytes a second time: one
        // chunk in 128 is an intermediate one, so the cost stays under 1 %.
        let chunk = Chunk::verify(address, data.freeze(), self.stamp.clone())
            .expect("a chunk verifies against the address computed from it");
        self.push_ready(height + 1, span, chunk);
    }

    fn push_ready(&mut self, height: usize, span: u64, chunk: Chunk) {
        let reference = Reference { span, address: chunk.address() };
        self.ready.push_back(chunk);
        self.push_reference(height, reference);
    }
}

/// Splits `data` in one go.
pub fn split_bytes(data: &[u8], stamp: Stamp) -> SplitFile {
    let mut splitter = SwarmSplitter::new(stamp);
    splitter.write(data);
    splitter.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::demo::demo_stamp;
    use syncscope_proto::test_utils::bee_vectors;
    use syncscope_proto::test_utils::hex;

    fn check_bee_vectors(vectors: &[(usize, &str)]) {
        let longest = vectors.iter().map(|v| v.0).max().unwrap_or(0);
        let data = bee_vectors::sequential(longest);
        for &(len, expected) in vectors {
            let mut splitter = SwarmSplitter::new(demo_stamp(0));
            splitter.write(&data[..len]);
            while splitter.poll_chunk().is_some() {}
            let split = splitter.finish();
            assert_eq!(split.root.to_string(), expected, "length {len}");
            assert_eq!(split.size, len as u64);
        }
    }

    #[test]
    fn bee_file_vectors_up_to_two_levels() {
        check_bee_vectors(&bee_vectors::FILE_VECTORS[..19]);
    }

    /// The two 64 MiB vectors, the only ones with three levels, take seconds of BMT hashing in a
    /// debug build: `cargo test --release` runs them.
    #[test]
    #[cfg_attr(debug_assertions, ignore = "64 MiB of BMT hashing; runs under cargo test --release")]
    fn bee_file_vectors_of_three_levels() {
        check_bee_vectors(&bee_vectors::FILE_VECTORS[19..]);
    }

    #[test]
    fn a_lone_reference_is_carried_up_not_wrapped() {
        // 129 data chunks: one full intermediate chunk, then the last data chunk directly under
        // the root.
        let split = split_bytes(&bee_vectors::sequential(CHUNK_SIZE * 129), demo_stamp(0));
        assert_eq!(split.chunks.len(), 129 + 1 + 1);
        let root = split.chunks.last().unwrap();
        assert_eq!((root.address(), root.span()), (split.root, 129 * CHUNK_SIZE as u64));
        // The intermediate chunk is written as soon as its 128th reference arrives.
        let full = &split.chunks[128];
        let last_data = &split.chunks[129];
        assert_eq!(full.span(), 128 * CHUNK_SIZE as u64);
        assert_eq!(root.payload(), [full.address().0, last_data.address().0].concat());
    }

    #[test]
    fn the_empty_file_is_one_empty_chunk() {
        // bee pkg/file/pipeline/builder/builder_test.go, TestEmpty.
        let split = split_bytes(b"", demo_stamp(0));
        assert_eq!(
            split.root.to_string(),
            "b34ca8c22b9e982354f9c7f50b470d66db428d880c8a904d5fe4ec9713171526"
        );
        assert_eq!(split.chunks.len(), 1);
        assert_eq!(split.chunks[0].data().to_vec(), hex::decode("0000000000000000"));
    }

    #[test]
    fn writes_in_any_pieces_give_the_same_chunks() {
        let data = bee_vectors::sequential(CHUNK_SIZE * 130 + 77);
        let whole = split_bytes(&data, demo_stamp(1));
        let mut splitter = SwarmSplitter::new(demo_stamp(1));
        let mut chunks = Vec::new();
        for piece in data.chunks(1000) {
            splitter.write(piece);
            chunks.extend(std::iter::from_fn(|| splitter.poll_chunk()));
        }
        let mut finished = splitter.finish();
        chunks.append(&mut finished.chunks);
        assert_eq!(finished.root, whole.root);
        assert_eq!(chunks, whole.chunks);
        assert!(chunks.iter().all(|c| c.stamp() == &demo_stamp(1)));
    }
}
