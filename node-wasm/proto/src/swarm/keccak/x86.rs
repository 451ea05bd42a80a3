//! Multi-way Keccak-f[1600] for x86-64: 8 states at once with AVX-512 (one state per 64-bit lane
//! of a 512-bit register, rotations and three-input logic in single instructions) or 4 at once
//! with AVX2. The path is chosen at run time; without AVX2 the caller falls back to scalar.
//!
//! The permutation itself is [`super::multiway`]'s, shared with wasm32. Tests check it against
//! the `keccak` crate's permutation on random states and against the scalar hash on random
//! inputs.

use super::multiway::keccak_f;
use std::arch::x86_64::*;

pub(super) fn path() -> &'static str {
    if is_x86_feature_detected!("avx512f") {
        "avx512 (8-way)"
    } else if is_x86_feature_detected!("avx2") {
        "avx2 (4-way)"
    } else {
        "scalar"
    }
}

/// Hashes as many of `inputs` as fill whole SIMD batches, plus a last partial batch when that
/// still beats the scalar path; returns how many it hashed.
pub(super) fn keccak256_pairs(inputs: &[[u8; 64]], out: &mut [[u8; 32]]) -> usize {
    if is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU supports AVX-512F.
        unsafe { avx512::pairs(inputs, out) }
    } else if is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2.
        unsafe { avx2::pairs(inputs, out) }
    } else {
        0
    }
}

mod avx512 {
    use super::*;

    pub(super) const LANES: usize = 8;
    /// A partial batch of 2 or more costs less than hashing them one by one.
    const MIN_PARTIAL: usize = 2;

    mod isa {
        use std::arch::x86_64::*;

        #[target_feature(enable = "avx512f")]
        #[inline]
        pub fn xor(a: __m512i, b: __m512i) -> __m512i {
            _mm512_xor_si512(a, b)
        }

        #[target_feature(enable = "avx512f")]
        #[inline]
        pub fn xor3(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
            _mm512_ternarylogic_epi64::<0x96>(a, b, c)
        }

        /// `a ^ (!b & c)`.
        #[target_feature(enable = "avx512f")]
        #[inline]
        pub fn chi(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
            _mm512_ternarylogic_epi64::<0xd2>(a, b, c)
        }

        #[target_feature(enable = "avx512f")]
        #[inline]
        pub fn rol(a: __m512i, n: u32) -> __m512i {
            _mm512_rolv_epi64(a, _mm512_set1_epi64(i64::from(n)))
        }

        #[target_feature(enable = "avx512f")]
        #[inline]
        pub fn splat(v: u64) -> __m512i {
            _mm512_set1_epi64(v as i64)
        }

        #[target_feature(enable = "avx512f")]
        #[inline]
        pub fn load(words: &[u64; 8]) -> __m512i {
            // SAFETY: reads exactly the 64 bytes of `words`; unaligned loads are allowed.
            unsafe { _mm512_loadu_si512(words.as_ptr().cast()) }
        }

        #[target_feature(enable = "avx512f")]
        #[inline]
        pub fn store(v: __m512i, words: &mut [u64; 8]) {
            // SAFETY: writes exactly the 64 bytes of `words`; unaligned stores are allowed.
            unsafe { _mm512_storeu_si512(words.as_mut_ptr().cast(), v) }
        }
    }

    keccak_f!(isa, "avx512f", __m512i);
}

mod avx2 {
    use super::*;

    pub(super) const LANES: usize = 4;
    const MIN_PARTIAL: usize = 2;

    mod isa {
        use std::arch::x86_64::*;

        #[target_feature(enable = "avx2")]
        #[inline]
        pub fn xor(a: __m256i, b: __m256i) -> __m256i {
            _mm256_xor_si256(a, b)
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        pub fn xor3(a: __m256i, b: __m256i, c: __m256i) -> __m256i {
            _mm256_xor_si256(_mm256_xor_si256(a, b), c)
        }

        /// `a ^ (!b & c)`.
        #[target_feature(enable = "avx2")]
        #[inline]
        pub fn chi(a: __m256i, b: __m256i, c: __m256i) -> __m256i {
            _mm256_xor_si256(a, _mm256_andnot_si256(b, c))
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        pub fn rol(a: __m256i, n: u32) -> __m256i {
            if n == 0 {
                return a;
            }
            let left = _mm256_sllv_epi64(a, _mm256_set1_epi64x(i64::from(n)));
            let right = _mm256_srlv_epi64(a, _mm256_set1_epi64x(i64::from(64 - n)));
            _mm256_or_si256(left, right)
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        pub fn splat(v: u64) -> __m256i {
            _mm256_set1_epi64x(v as i64)
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        pub fn load(words: &[u64; 4]) -> __m256i {
            // SAFETY: reads exactly the 32 bytes of `words`; unaligned loads are allowed.
            unsafe { _mm256_loadu_si256(words.as_ptr().cast()) }
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        pub fn store(v: __m256i, words: &mut [u64; 4]) {
            // SAFETY: writes exactly the 32 bytes of `words`; unaligned stores are allowed.
            unsafe { _mm256_storeu_si256(words.as_mut_ptr().cast(), v) }
        }
    }

    keccak_f!(isa, "avx2", __m256i);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngCore, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_states<const N: usize>(seed: u64) -> [[u64; 25]; N] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        std::array::from_fn(|_| std::array::from_fn(|_| rng.next_u64()))
    }

    fn scalar<const N: usize>(mut states: [[u64; 25]; N]) -> [[u64; 25]; N] {
        keccak::Keccak::new().with_f1600(|f1600| states.iter_mut().for_each(f1600));
        states
    }

    #[test]
    fn avx512_permutation_matches_the_keccak_crate() {
        if !is_x86_feature_detected!("avx512f") {
            return;
        }
        for seed in 0..20 {
            let mut states = random_states::<8>(seed);
            let expected = scalar(states);
            avx512::permute(&mut states);
            assert_eq!(states, expected);
        }
    }

    #[test]
    fn avx2_permutation_matches_the_keccak_crate() {
        if !is_x86_feature_detected!("avx2") {
            return;
        }
        for seed in 0..20 {
            let mut states = random_states::<4>(seed);
            let expected = scalar(states);
            avx2::permute(&mut states);
            assert_eq!(states, expected);
        }
    }

    #[test]
    fn avx2_pairs_match_the_scalar_path_even_where_avx512_would_be_chosen() {
        if !is_x86_feature_detected!("avx2") {
            return;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for n in 0..20 {
            let inputs: Vec<[u8; 64]> = (0..n)
                .map(|_| {
                    let mut p = [0u8; 64];
                    rng.fill_bytes(&mut p);
                    p
                })
                .collect();
            let mut fast = vec![[0u8; 32]; n];
            let mut slow = vec![[0u8; 32]; n];
            // SAFETY: AVX2 was detected above.
            let done = unsafe { avx2::pairs(&inputs, &mut fast) };
            super::super::keccak256_pairs_scalar(&inputs[..done], &mut slow[..done]);
            assert_eq!(fast[..done], slow[..done], "{n} pairs");
        }
    }
}
