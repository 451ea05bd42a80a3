//! The binary Merkle tree hash of a chunk (bee `pkg/bmt`): the payload is zero-padded to 128
//! segments of 32 bytes, segments are hashed pairwise with keccak256 up to one root, and the chunk
//! address is keccak256(span || root).
//!
//! This is the hot path of chunk verification, so it hashes on the stack without allocating, a
//! whole tree level at a time through [`keccak256_pairs`] (SIMD where the CPU has it): 127
//! permutations for a full chunk's tree plus one for the address. Subtrees made only of padding
//! are not rehashed level by level; their hash is carried up as one value per level.

use super::address::Address;
use super::keccak::{keccak256, keccak256_pairs};

/// Most payload bytes in a chunk: the BMT's 128 segments of 32 bytes.
pub const CHUNK_SIZE: usize = 4096;

const SEGMENT: usize = 32;
/// Leaves of the tree: two segments each.
const LEAVES: usize = CHUNK_SIZE / (2 * SEGMENT);

/// BMT root of `payload`. Bytes past [`CHUNK_SIZE`] are ignored: callers check the length.
pub fn bmt_root(payload: &[u8]) -> [u8; 32] {
    let payload = &payload[..payload.len().min(CHUNK_SIZE)];
    let mut pairs = [[0u8; 2 * SEGMENT]; LEAVES];
    pairs.as_flattened_mut()[..payload.len()].copy_from_slice(payload);
    let mut filled = payload.len().div_ceil(2 * SEGMENT).max(1);
    let mut nodes = [[0u8; SEGMENT]; LEAVES];
    keccak256_pairs(&pairs[..filled], &mut nodes[..filled]);
    // Hash of an all-padding subtree at the current level; only needed for short payloads.
    let mut padding = (filled < LEAVES).then(|| keccak256(&[&[0; 2 * SEGMENT]]));
    let mut width = LEAVES;
    while width > 1 {
        let next = filled.div_ceil(2);
        if let Some(pad) = padding.filter(|_| filled % 2 == 1) {
            nodes[filled] = pad;
        }
        pairs.as_flattened_mut()[..next * 2 * SEGMENT]
            .copy_from_slice(nodes[..2 * next].as_flattened());
        keccak256_pairs(&pairs[..next], &mut nodes[..next]);
        padding = padding.map(|pad| keccak256(&[&pad, &pad]));
        filled = next;
        width /= 2;
    }
    nodes[0]
}

/// Address of a content-addressed chunk with this span and payload.
pub fn chunk_address(span: u64, payload: &[u8]) -> Address {
    Address(keccak256(&[&span.to_le_bytes(), &bmt_root(payload)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_utils::{bee_vectors, hex};

    /// Straightforward BMT over an explicit, fully materialised tree, to check the in-place one.
    fn reference_root(payload: &[u8]) -> [u8; 32] {
        let mut data = payload.to_vec();
        data.resize(CHUNK_SIZE, 0);
        let mut level: Vec<[u8; 32]> = data.chunks(64).map(|b| keccak256(&[b])).collect();
        while level.len() > 1 {
            level = level.chunks(2).map(|p| keccak256(&[&p[0], &p[1]])).collect();
        }
        level[0]
    }

    fn address_of(payload: &[u8]) -> String {
        chunk_address(payload.len() as u64, payload).to_string()
    }

    #[test]
    fn keccak256_is_the_legacy_keccak() {
        // keccak256("") as used by Ethereum, not SHA3-256("").
        assert_eq!(
            keccak256(&[]).to_vec(),
            hex::decode("c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
        );
    }

    #[test]
    fn in_place_tree_matches_the_reference_tree() {
        let data: Vec<u8> = (0..CHUNK_SIZE).map(|i| (i * 7 + 3) as u8).collect();
        for len in [0, 1, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000, 2048, 2049, 4095, 4096] {
            assert_eq!(bmt_root(&data[..len]), reference_root(&data[..len]), "length {len}");
        }
    }

    // bee pkg/file/pipeline/builder/builder_test.go, TestEmpty and TestHelloWorld.
    #[test]
    fn bee_vectors_from_the_pipeline_builder_tests() {
        assert_eq!(
            address_of(b""),
            "b34ca8c22b9e982354f9c7f50b470d66db428d880c8a904d5fe4ec9713171526"
        );
        assert_eq!(
            address_of(b"hello world"),
            "92672a471f4419b255d7cb0cf313474a6f5856fb347c5ece85fb706d644b630f"
        );
    }

    // bee pkg/cac/cac_test.go, TestNewCAC and TestValid.
    #[test]
    fn bee_vectors_from_the_cac_tests() {
        assert_eq!(
            address_of(b"greaterthanspan"),
            "27913f1bdb6e8e52cbd5a5fd4ab577c857287edf6969b41efe926b51de0f4f23"
        );
        assert_eq!(
            address_of(b"foo"),
            "2387e8e7d8a48c2a9339c97c1dc3461a9a7aa07e994c5cb8b38fd7c1b3e6ea48"
        );
    }

    // bee's file vectors 0 to 6, one chunk each (6 is one full 4096-byte chunk): their addresses
    // are BMT roots.
    #[test]
    fn bee_vectors_from_the_file_testing_package() {
        for &(len, expected) in &bee_vectors::FILE_VECTORS[..7] {
            assert_eq!(address_of(&bee_vectors::sequential(len)), expected, "length {len}");
        }
    }
}
