//! Swarm file joining: from a root address, fetch the chunk tree depth-first and yield the data
//! chunks' payloads in order (bee `pkg/file/joiner`, unencrypted and without redundancy).
//!
//! Every chunk is hashed against its address, and the tree must have exactly the shape bee's
//! splitter gives a file of the root's span: an intermediate chunk of span `s` covers subtrees of
//! `4096 * 128^k` bytes (the largest such size below `s`), so its number of references and each
//! child's span follow from `s`. The output is therefore exactly `span` bytes, and recursion ends
//! after at most 8 levels, since spans shrink 128-fold per level.

use super::swarm_split::BRANCHES;
use bytes::Bytes;
use syncscope_proto::swarm::{
    chunk_address, Address, ChunkError, ADDRESS_SIZE, CHUNK_SIZE, SPAN_SIZE,
};
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JoinError {
    #[error(transparent)]
    Chunk(#[from] ChunkError),
    #[error("chunk has a span of {actual} where its parent implies {expected}")]
    SpanMismatch { expected: u64, actual: u64 },
    #[error("data chunk of span {span} holds {len} bytes")]
    DataLength { span: u64, len: usize },
    #[error(
        "intermediate chunk of span {span} holds {len} bytes of references, expected {expected}"
    )]
    References { span: u64, len: usize, expected: usize },
    #[error("file of {size} bytes is over the {limit}-byte limit")]
    TooLarge { size: u64, limit: u64 },
    #[error("no chunk is wanted: the file is complete")]
    NothingWanted,
    #[error("chunk {0} is not available")]
    Missing(Address),
}

/// A chunk still needed, with the span its parent implies (none for the root).
#[derive(Clone, Copy, Debug)]
pub(super) struct Wanted {
    pub(super) address: Address,
    pub(super) span: Option<u64>,
}

#[derive(Debug)]
struct Frame {
    children: Vec<Wanted>,
    next: usize,
}

/// Sans-IO joiner of one Swarm file: [`want`](Self::want) names the next chunk,
/// [`provide`](Self::provide) takes its `span || payload` and returns the file bytes it holds
/// (empty for an intermediate chunk). A bad chunk is refused with the joiner unchanged.
#[derive(Debug)]
pub struct SwarmJoiner {
    max_size: u64,
    stack: Vec<Frame>,
}

impl SwarmJoiner {
    /// `max_size` bounds the span the root may declare: repeated references let a few chunks
    /// describe an enormous file.
    pub fn new(root: Address, max_size: u64) -> Self {
        let root = Frame { children: vec![Wanted { address: root, span: None }], next: 0 };
        SwarmJoiner { max_size, stack: vec![root] }
    }

    pub fn want(&self) -> Option<&Address> {
        self.stack.last().map(|frame| &frame.children[frame.next].address)
    }

    pub fn provide(&mut self, data: Bytes) -> Result<Bytes, JoinError> {
        let frame = self.stack.last().ok_or(JoinError::NothingWanted)?;
        let wanted = frame.children[frame.next];
        let span = verified_span(&wanted.address, &data)?;
        match wanted.span {
            Some(expected) if expected != span => {
                return Err(JoinError::SpanMismatch { expected, actual: span });
            }
            None if span > self.max_size => {
                return Err(JoinError::TooLarge { size: span, limit: self.max_size });
            }
            _ => {}
        }
        let payload = data.slice(SPAN_SIZE..);
        let (output, children) = if span <= CHUNK_SIZE as u64 {
            if payload.len() as u64 != span {
                return Err(JoinError::DataLength { span, len: payload.len() });
            }
            (payload, Vec::new())
        } else {
            (Bytes::new(), children(span, &payload)?)
        };

        if let Some(frame) = self.stack.last_mut() {
            frame.next += 1;
        }
        if !children.is_empty() {
            self.stack.push(Frame { children, next: 0 });
        }
        while self.stack.last().is_some_and(|frame| frame.next == frame.children.len()) {
            self.stack.pop();
        }
        Ok(output)
    }
}

/// Joins a whole file from a chunk getter returning `span || payload`.
pub fn join_file(
    root: Address,
    max_size: u64,
    mut get: impl FnMut(&Address) -> Option<Bytes>,
) -> Result<Vec<u8>, JoinError> {
    let mut joiner = SwarmJoiner::new(root, max_size);
    let mut file = Vec::new();
    while let Some(&address) = joiner.want() {
        let data = get(&address).ok_or(JoinError::Missing(address))?;
        file.extend_from_slice(&joiner.provide(data)?);
    }
    Ok(file)
}

/// The span of `data` once it is known to hash to `address`.
fn verified_span(address: &Address, data: &[u8]) -> Result<u64, ChunkError> {
    let (span, payload) =
        data.split_first_chunk::<SPAN_SIZE>().ok_or(ChunkError::TooShort(data.len()))?;
    if payload.len() > CHUNK_SIZE {
        return Err(ChunkError::TooLong(payload.len()));
    }
    let span = u64::from_le_bytes(*span);
    let actual = chunk_address(span, payload);
    if actual != *address {
        return Err(ChunkError::AddressMismatch { claimed: *address, actual });
    }
    Ok(span)
}

/// The children of an intermediate chunk of `span` bytes (more than one chunk's worth), checked
/// against the number of references bee's splitter writes for that span.
pub(super) fn children(span: u64, references: &[u8]) -> Result<Vec<Wanted>, JoinError> {
    let subtree = subtree_span(span);
    let expected = span.div_ceil(subtree) as usize;
    if references.len() != expected * ADDRESS_SIZE {
        let len = references.len();
        return Err(JoinError::References { span, len, expected: expected * ADDRESS_SIZE });
    }
    let wanted = references.chunks_exact(ADDRESS_SIZE).zip(0u64..).map(|(reference, i)| {
        let mut address = Address::ZERO;
        address.0.copy_from_slice(reference);
        Wanted { address, span: Some((span - i * subtree).min(subtree)) }
    });
    Ok(wanted.collect())
}

/// File bytes under each full child of an intermediate chunk of `span` bytes: the smallest
/// `4096 * 128^k` of which 128 cover `span`.
fn subtree_span(span: u64) -> u64 {
    let mut subtree = CHUNK_SIZE as u64;
    while subtree.saturating_mul(BRANCHES as u64) < span {
        subtree *= BRANCHES as u64;
    }
    subtree
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::demo::demo_stamp;
    use crate::content::swarm_split::split_bytes;
    use bytes::{BufMut, BytesMut};
    use rand::{Rng, SeedableRng};
    use std::collections::HashMap;

    type Store = HashMap<Address, Bytes>;

    fn split(data: &[u8]) -> (Address, Store) {
        let split = split_bytes(data, demo_stamp(0));
        (split.root, split.chunks.iter().map(|c| (c.address(), c.data().clone())).collect())
    }

    fn join(root: Address, store: &Store, max_size: u64) -> Result<Vec<u8>, JoinError> {
        join_file(root, max_size, |address| store.get(address).cloned())
    }

    /// `span || payload` and its address.
    fn chunk(span: u64, payload: &[u8]) -> (Address, Bytes) {
        let mut data = BytesMut::new();
        data.put_u64_le(span);
        data.put_slice(payload);
        (chunk_address(span, payload), data.freeze())
    }

    fn intermediate(span: u64, children: &[Address]) -> (Address, Bytes) {
        chunk(span, &children.iter().flat_map(|a| a.0).collect::<Vec<u8>>())
    }

    #[test]
    fn round_trips_files_of_every_shape() {
        let data: Vec<u8> = (0..CHUNK_SIZE * 260).map(|i| (i * 7 % 253) as u8).collect();
        let c = CHUNK_SIZE;
        for len in [0, 1, c - 1, c, c + 1, 2 * c, 128 * c, 128 * c + 1, 129 * c, 256 * c + 5] {
            let (root, store) = split(&data[..len]);
            assert_eq!(join(root, &store, u64::MAX).unwrap(), &data[..len], "{len} bytes");
        }
    }

    #[test]
    fn a_corrupt_chunk_is_refused_and_the_right_one_still_accepted() {
        let data: Vec<u8> = (0..CHUNK_SIZE * 3 + 9).map(|i| i as u8).collect();
        let (root, store) = split(&data);
        let mut joiner = SwarmJoiner::new(root, u64::MAX);
        let mut out = Vec::new();
        while let Some(address) = joiner.want().copied() {
            let good = store[&address].clone();
            let mut bad = good.to_vec();
            bad[SPAN_SIZE] ^= 0x80;
            let refused = joiner.provide(bad.into());
            assert!(matches!(refused, Err(JoinError::Chunk(ChunkError::AddressMismatch { .. }))));
            assert_eq!(joiner.want(), Some(&address));
            out.extend_from_slice(&joiner.provide(good).unwrap());
        }
        assert_eq!(out, data);
        assert_eq!(joiner.provide(Bytes::new()), Err(JoinError::NothingWanted));
    }

    #[test]
    fn malformed_chunks_are_refused() {
        let some = Address([1; 32]);
        let mut joiner = SwarmJoiner::new(some, u64::MAX);
        assert_eq!(
            joiner.provide(Bytes::from_static(&[0; 7])),
            Err(ChunkError::TooShort(7).into())
        );
        let long = Bytes::from(vec![0; SPAN_SIZE + CHUNK_SIZE + 1]);
        assert_eq!(joiner.provide(long), Err(ChunkError::TooLong(CHUNK_SIZE + 1).into()));

        // A data chunk whose payload is shorter than its span.
        let (short, data) = chunk(10, b"12345");
        let store = Store::from([(short, data)]);
        assert_eq!(join(short, &store, u64::MAX), Err(JoinError::DataLength { span: 10, len: 5 }));
    }

    #[test]
    fn the_tree_must_have_the_shape_its_span_implies() {
        let (leaf, leaf_data) = chunk(CHUNK_SIZE as u64, &[3; CHUNK_SIZE]);
        let (small, small_data) = chunk(100, &[4; 100]);
        let span = 2 * CHUNK_SIZE as u64;
        let store = Store::from([(leaf, leaf_data), (small, small_data)]);

        let (root, root_data) = intermediate(span, &[leaf, small]);
        let mut with_root = store.clone();
        with_root.insert(root, root_data);
        assert_eq!(
            join(root, &with_root, u64::MAX),
            Err(JoinError::SpanMismatch { expected: CHUNK_SIZE as u64, actual: 100 })
        );

        let (root, root_data) = intermediate(3 * CHUNK_SIZE as u64, &[leaf, leaf]);
        let mut with_root = store.clone();
        with_root.insert(root, root_data);
        assert_eq!(
            join(root, &with_root, u64::MAX),
            Err(JoinError::References { span: 3 * CHUNK_SIZE as u64, len: 64, expected: 96 })
        );

        let (root, root_data) = intermediate(span, &[leaf, leaf]);
        let mut with_root = store;
        with_root.insert(root, root_data);
        assert_eq!(join(root, &with_root, u64::MAX).unwrap(), [3; 2 * CHUNK_SIZE]);
    }

    #[test]
    fn a_root_declaring_more_than_the_limit_is_refused() {
        // 128 references to one intermediate chunk of 128 references to one data chunk: three
        // chunks that declare 64 MiB, refused before anything under the root is fetched.
        let (leaf, leaf_data) = chunk(CHUNK_SIZE as u64, &[0; CHUNK_SIZE]);
        let (middle, middle_data) = intermediate(128 * CHUNK_SIZE as u64, &[leaf; 128]);
        let (root, root_data) = intermediate(128 * 128 * CHUNK_SIZE as u64, &[middle; 128]);
        let store = Store::from([(leaf, leaf_data), (middle, middle_data), (root, root_data)]);
        assert_eq!(
            join(root, &store, 1 << 20),
            Err(JoinError::TooLarge { size: 1 << 26, limit: 1 << 20 })
        );
        let mut joiner = SwarmJoiner::new(root, 1 << 20);
        assert!(joiner.provide(store[&root].clone()).is_err());
        assert_eq!(join(middle, &store, 1 << 19).unwrap().len(), 1 << 19);
    }

    #[test]
    fn a_missing_chunk_is_named() {
        let (root, mut store) = split(&[1; 3 * CHUNK_SIZE]);
        store.retain(|address, _| *address == root);
        let first_child = Address::from_slice(&store[&root][SPAN_SIZE..SPAN_SIZE + 32]).unwrap();
        assert_eq!(join(root, &store, u64::MAX), Err(JoinError::Missing(first_child)));
    }

    #[test]
    fn subtree_spans() {
        let c = CHUNK_SIZE as u64;
        assert_eq!(subtree_span(c + 1), c);
        assert_eq!(subtree_span(128 * c), c);
        assert_eq!(subtree_span(128 * c + 1), 128 * c);
        assert_eq!(subtree_span(128 * 128 * c + 1), 128 * 128 * c);
        assert_eq!(subtree_span(u64::MAX), c << 49);
    }

    /// Random edits of a real intermediate chunk, re-addressed so that they pass the hash check:
    /// the joiner refuses or accepts them without panicking, and what it accepts is exactly as
    /// long as the root's span.
    #[test]
    fn mangled_chunks_never_panic() {
        // A root over 6 data chunks: joining a bigger tree takes long in a debug build. Edits of
        // the span also make it claim deeper trees.
        let data: Vec<u8> = (0..CHUNK_SIZE * 5 + 10).map(|i| (i % 251) as u8).collect();
        let split = split_bytes(&data, demo_stamp(0));
        let mut store: Store =
            split.chunks.iter().map(|c| (c.address(), c.data().clone())).collect();
        let root = store[&split.root].clone();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let (mut accepted, mut refused) = (0, 0);
        for _ in 0..300 {
            let mut bytes = root.to_vec();
            let at = rng.random_range(0..bytes.len());
            match rng.random_range(0..4) {
                0 => bytes[at] ^= 1 << rng.random_range(0..8),
                1 => bytes[rng.random_range(0..SPAN_SIZE)] = rng.random(),
                2 => bytes.truncate(at),
                _ => bytes.truncate(SPAN_SIZE + (at / 32) * 32),
            }
            let Some((span, payload)) = bytes.split_first_chunk::<SPAN_SIZE>() else { continue };
            let address = chunk_address(u64::from_le_bytes(*span), payload);
            store.insert(address, Bytes::from(bytes.clone()));
            let mut joiner = SwarmJoiner::new(address, 1 << 24);
            let mut produced = 0u64;
            let outcome = loop {
                let Some(wanted) = joiner.want().copied() else { break Ok(()) };
                let Some(chunk) = store.get(&wanted).cloned() else { break Err(()) };
                match joiner.provide(chunk) {
                    Ok(data) => produced += data.len() as u64,
                    Err(_) => break Err(()),
                }
            };
            match outcome {
                Ok(()) => {
                    assert_eq!(produced, u64::from_le_bytes(*span));
                    accepted += 1;
                }
                Err(()) => refused += 1,
            }
        }
        assert!(accepted > 0 && refused > 0, "accepted {accepted}, refused {refused}");
    }
}
