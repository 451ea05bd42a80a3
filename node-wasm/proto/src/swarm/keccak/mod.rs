//! keccak256 for chunk hashing. General messages go through the `sha3` crate; the BMT's 64-byte
//! node pairs, which are almost all of a chunk's hashing, go through [`keccak256_pairs`], which
//! hashes many pairs at once with SIMD where the target has it (x86-64 with AVX2 or AVX-512,
//! detected at run time, in [`x86`]; wasm32 built with SIMD128, as the page is, in [`wasm`]) and
//! one at a time with the `keccak` crate's permutation everywhere else.

#[cfg(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")))]
mod multiway;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm;
#[cfg(target_arch = "x86_64")]
mod x86;

// The one place that picks the SIMD path for this target.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use wasm as simd;
#[cfg(target_arch = "x86_64")]
use x86 as simd;
#[cfg(not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))))]
mod simd {
    pub(super) fn keccak256_pairs(_: &[[u8; 64]], _: &mut [[u8; 32]]) -> usize {
        0
    }

    pub(super) fn path() -> &'static str {
        "scalar"
    }
}

use sha3::{Digest, Keccak256};

/// keccak256 (the pre-standard padding Ethereum and Swarm use) of the concatenated parts.
pub fn keccak256(parts: &[&[u8]]) -> [u8; 32] {
    let mut hasher = Keccak256::new();
    parts.iter().for_each(|p| hasher.update(p));
    hasher.finalize().into()
}

/// keccak256 of each 64-byte input into the output at the same index; extra inputs or outputs
/// are left alone.
pub fn keccak256_pairs(inputs: &[[u8; 64]], out: &mut [[u8; 32]]) {
    let n = inputs.len().min(out.len());
    // The SIMD path hashes a prefix and says how long it was.
    let done = simd::keccak256_pairs(&inputs[..n], &mut out[..n]);
    keccak256_pairs_scalar(&inputs[done..n], &mut out[done..n]);
}

/// The portable path of [`keccak256_pairs`]: one permutation at a time.
pub fn keccak256_pairs_scalar(inputs: &[[u8; 64]], out: &mut [[u8; 32]]) {
    keccak::Keccak::new().with_f1600(|f1600| {
        for (input, digest) in inputs.iter().zip(out) {
            let mut state = absorb_pair(input);
            f1600(&mut state);
            *digest = squeeze(&state);
        }
    });
}

/// Which SIMD path [`keccak256_pairs`] takes on this CPU, for benchmark output.
pub fn simd_path() -> &'static str {
    simd::path()
}

/// The sponge state after absorbing one 64-byte message: 8 lanes of data, then keccak's
/// `0x01 .. 0x80` padding at the end of the 136-byte rate.
fn absorb_pair(input: &[u8; 64]) -> [u64; 25] {
    let mut state = [0u64; 25];
    for (lane, word) in state.iter_mut().zip(input.chunks_exact(8)) {
        *lane = u64::from_le_bytes(word.try_into().unwrap_or_default());
    }
    state[8] = PAD_FIRST;
    state[16] = PAD_LAST;
    state
}

fn squeeze(state: &[u64; 25]) -> [u8; 32] {
    let mut digest = [0u8; 32];
    for (bytes, lane) in digest.chunks_exact_mut(8).zip(state) {
        bytes.copy_from_slice(&lane.to_le_bytes());
    }
    digest
}

/// Padding lanes of a 64-byte message: byte 64 gets 0x01, byte 135 (the rate's last) gets 0x80.
const PAD_FIRST: u64 = 0x01;
const PAD_LAST: u64 = 0x80 << 56;

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngCore, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_pairs(n: usize, seed: u64) -> Vec<[u8; 64]> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let mut p = [0u8; 64];
                rng.fill_bytes(&mut p);
                p
            })
            .collect()
    }

    #[test]
    fn scalar_pairs_match_sha3() {
        let inputs = random_pairs(5, 1);
        let mut out = vec![[0u8; 32]; 5];
        keccak256_pairs_scalar(&inputs, &mut out);
        for (input, digest) in inputs.iter().zip(&out) {
            assert_eq!(*digest, keccak256(&[input]));
        }
    }

    #[test]
    fn every_batch_size_matches_the_scalar_path() {
        for n in 0..=70 {
            let inputs = random_pairs(n, n as u64);
            let mut fast = vec![[0u8; 32]; n];
            let mut slow = vec![[0u8; 32]; n];
            keccak256_pairs(&inputs, &mut fast);
            keccak256_pairs_scalar(&inputs, &mut slow);
            assert_eq!(fast, slow, "{n} pairs on the {} path", simd_path());
        }
    }
}
