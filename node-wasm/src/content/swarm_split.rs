//! Swarm file splitting as bee does it unencrypted (`pkg/file/pipeline/hashtrie`): data chunks of
//! 4096 bytes, then intermediate chunks whose payload is up to 128 child addresses and whose span
//! is the number of file bytes under them, up to a single root.
//!
//! Two rules give bee's exact tree. A level is wrapped as soon as it holds 128 references. When
//! the file ends, a level left with a single reference is not wrapped: that reference is carried
//! up to the level above (so a file of 129 chunks has a root with one full intermediate chunk and
//! one data chunk under it).

use crate::proto::swarm::{
    chunk_address, Address, Chunk, Stamp, ADDRESS_SIZE, CHUNK_SIZE, SPAN_SIZE,
};
use bytes::{BufMut, BytesMut};
use std::collections::VecDeque;

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
    use crate::proto::swarm::hex;

    fn bee_sequential(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 255) as u8).collect()
    }

    const C: usize = CHUNK_SIZE;

    // bee pkg/file/testing/vector.go (fileLengths and fileExpectHashHex), all 21 vectors; the
    // lengths that file comments out are listed in full in bee's
    // pkg/file/splitter/internal/job_test.go, which runs every one of them. The data is
    // go-mockbytes' sequential bytes, byte i being i mod 255.
    const BEE_VECTORS: [(usize, &str); 21] = [
        (31, "ece86edb20669cc60d142789d464d57bdf5e33cb789d443f608cbd81cfa5697d"),
        (32, "0be77f0bb7abc9cd0abed640ee29849a3072ccfd1020019fe03658c38f087e02"),
        (33, "3463b46d4f9d5bfcbf9a23224d635e51896c1daef7d225b86679db17c5fd868e"),
        (63, "95510c2ff18276ed94be2160aed4e69c9116573b6f69faaeed1b426fea6a3db8"),
        (64, "490072cc55b8ad381335ff882ac51303cc069cbcb8d8d3f7aa152d9c617829fe"),
        (65, "541552bae05e9a63a6cb561f69edf36ffe073e441667dbf7a0e9a3864bb744ea"),
        (C, "c10090961e7682a10890c334d759a28426647141213abda93b096b892824d2ef"),
        (C + 31, "91699c83ed93a1f87e326a29ccd8cc775323f9e7260035a5f014c975c5f3cd28"),
        (C + 32, "73759673a52c1f1707cbb61337645f4fcbd209cdc53d7e2cedaaa9f44df61285"),
        (C + 63, "db1313a727ffc184ae52a70012fbbf7235f551b9f2d2da04bf476abe42a3cb42"),
        (C + 64, "ade7af36ac0c7297dc1c11fd7b46981b629c6077bce75300f85b02a6153f161b"),
        (C * 2, "29a5fb121ce96194ba8b7b823a1f9c6af87e1791f824940a53b5a7efe3f790d9"),
        (C * 2 + 32, "61416726988f77b874435bdd89a419edc3861111884fd60e8adf54e2f299efd6"),
        (C * 128, "3047d841077898c26bbe6be652a2ec590a5d9bd7cd45d290ea42511b48753c09"),
        (C * 128 + 31, "e5c76afa931e33ac94bce2e754b1bb6407d07f738f67856783d93934ca8fc576"),
        (C * 128 + 32, "485a526fc74c8a344c43a4545a5987d17af9ab401c0ef1ef63aefcc5c2c086df"),
        (C * 128 + 64, "624b2abb7aefc0978f891b2a56b665513480e5dc195b4a66cd8def074a6d2e94"),
        (C * 129, "b8e1804e37a064d28d161ab5f256cc482b1423d5cd0a6b30fde7b0f51ece9199"),
        (C * 130, "59de730bf6c67a941f3b2ffa2f920acfaa1713695ad5deea12b4a121e5f23fa1"),
        (C * 128 * 128, "522194562123473dcfd7a457b18ee7dee8b7db70ed3cfa2b73f348a992fdfd3b"),
        (C * 128 * 128 + 32, "ed0cc44c93b14fef2d91ab3a3674eeb6352a42ac2f0bbe524711824aae1e7bcc"),
    ];

    fn check_bee_vectors(vectors: &[(usize, &str)]) {
        let longest = vectors.iter().map(|v| v.0).max().unwrap_or(0);
        let data = bee_sequential(longest);
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
        check_bee_vectors(&BEE_VECTORS[..19]);
    }

    /// The two 64 MiB vectors, the only ones with three levels, take seconds of BMT hashing in a
    /// debug build: `cargo test --release` runs them.
    #[test]
    #[cfg_attr(debug_assertions, ignore = "64 MiB of BMT hashing; runs under cargo test --release")]
    fn bee_file_vectors_of_three_levels() {
        check_bee_vectors(&BEE_VECTORS[19..]);
    }

    #[test]
    fn a_lone_reference_is_carried_up_not_wrapped() {
        // 129 data chunks: one full intermediate chunk, then the last data chunk directly under
        // the root.
        let split = split_bytes(&bee_sequential(CHUNK_SIZE * 129), demo_stamp(0));
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
        let data = bee_sequential(CHUNK_SIZE * 130 + 77);
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
