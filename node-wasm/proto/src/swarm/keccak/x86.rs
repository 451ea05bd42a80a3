//! Multi-way Keccak-f[1600] for x86-64: 8 states at once with AVX-512 (one state per 64-bit lane
//! of a 512-bit register, rotations and three-input logic in single instructions) or 4 at once
//! with AVX2. The path is chosen at run time; without AVX2 the caller falls back to scalar.
//!
//! This is the only target-specific code of the cores. Tests check it against the `keccak`
//! crate's permutation on random states and against the scalar hash on random inputs.

use std::arch::x86_64::*;

/// Round constants of Keccak-f[1600].
const RC: [u64; 24] = [
    0x0000000000000001,
    0x0000000000008082,
    0x800000000000808a,
    0x8000000080008000,
    0x000000000000808b,
    0x0000000080000001,
    0x8000000080008081,
    0x8000000000008009,
    0x000000000000008a,
    0x0000000000000088,
    0x0000000080008009,
    0x000000008000000a,
    0x000000008000808b,
    0x800000000000008b,
    0x8000000000008089,
    0x8000000000008003,
    0x8000000000008002,
    0x8000000000000080,
    0x000000000000800a,
    0x800000008000000a,
    0x8000000080008081,
    0x8000000000008080,
    0x0000000080000001,
    0x8000000080008008,
];

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

/// The permutation on `LANES` states held lane-wise (rho rotations `[0, 1, 62, 28, 27, 36, 44, 6,
/// 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14]` for lane `x + 5y`, which pi
/// moves to `y + 5((2x + 3y) mod 5)`), one vector per state word, written once for
/// any vector type whose module provides `xor`, `xor3`, `chi`, `rol` and `splat`.
macro_rules! keccak_f {
    ($isa:ident, $feature:literal, $vec:ty) => {
        // Unrolled by hand (generated from the RHO and PI tables) so that the state stays in
        // registers: a loop over table indices keeps it in memory and runs at half the speed.
        #[target_feature(enable = $feature)]
        fn keccak_f(a: &mut [$vec; 25]) {
            let mut s = *a;
            for rc in RC {
                let c0 = $isa::xor3($isa::xor3(s[0], s[5], s[10]), s[15], s[20]);
                let c1 = $isa::xor3($isa::xor3(s[1], s[6], s[11]), s[16], s[21]);
                let c2 = $isa::xor3($isa::xor3(s[2], s[7], s[12]), s[17], s[22]);
                let c3 = $isa::xor3($isa::xor3(s[3], s[8], s[13]), s[18], s[23]);
                let c4 = $isa::xor3($isa::xor3(s[4], s[9], s[14]), s[19], s[24]);
                let (l0, r0) = (c4, $isa::rol(c1, 1));
                let (l1, r1) = (c0, $isa::rol(c2, 1));
                let (l2, r2) = (c1, $isa::rol(c3, 1));
                let (l3, r3) = (c2, $isa::rol(c4, 1));
                let (l4, r4) = (c3, $isa::rol(c0, 1));
                let t0 = $isa::xor3(s[0], l0, r0);
                let t1 = $isa::xor3(s[1], l1, r1);
                let t2 = $isa::xor3(s[2], l2, r2);
                let t3 = $isa::xor3(s[3], l3, r3);
                let t4 = $isa::xor3(s[4], l4, r4);
                let t5 = $isa::xor3(s[5], l0, r0);
                let t6 = $isa::xor3(s[6], l1, r1);
                let t7 = $isa::xor3(s[7], l2, r2);
                let t8 = $isa::xor3(s[8], l3, r3);
                let t9 = $isa::xor3(s[9], l4, r4);
                let t10 = $isa::xor3(s[10], l0, r0);
                let t11 = $isa::xor3(s[11], l1, r1);
                let t12 = $isa::xor3(s[12], l2, r2);
                let t13 = $isa::xor3(s[13], l3, r3);
                let t14 = $isa::xor3(s[14], l4, r4);
                let t15 = $isa::xor3(s[15], l0, r0);
                let t16 = $isa::xor3(s[16], l1, r1);
                let t17 = $isa::xor3(s[17], l2, r2);
                let t18 = $isa::xor3(s[18], l3, r3);
                let t19 = $isa::xor3(s[19], l4, r4);
                let t20 = $isa::xor3(s[20], l0, r0);
                let t21 = $isa::xor3(s[21], l1, r1);
                let t22 = $isa::xor3(s[22], l2, r2);
                let t23 = $isa::xor3(s[23], l3, r3);
                let t24 = $isa::xor3(s[24], l4, r4);
                let b0 = $isa::rol(t0, 0);
                let b1 = $isa::rol(t6, 44);
                let b2 = $isa::rol(t12, 43);
                let b3 = $isa::rol(t18, 21);
                let b4 = $isa::rol(t24, 14);
                let b5 = $isa::rol(t3, 28);
                let b6 = $isa::rol(t9, 20);
                let b7 = $isa::rol(t10, 3);
                let b8 = $isa::rol(t16, 45);
                let b9 = $isa::rol(t22, 61);
                let b10 = $isa::rol(t1, 1);
                let b11 = $isa::rol(t7, 6);
                let b12 = $isa::rol(t13, 25);
                let b13 = $isa::rol(t19, 8);
                let b14 = $isa::rol(t20, 18);
                let b15 = $isa::rol(t4, 27);
                let b16 = $isa::rol(t5, 36);
                let b17 = $isa::rol(t11, 10);
                let b18 = $isa::rol(t17, 15);
                let b19 = $isa::rol(t23, 56);
                let b20 = $isa::rol(t2, 62);
                let b21 = $isa::rol(t8, 55);
                let b22 = $isa::rol(t14, 39);
                let b23 = $isa::rol(t15, 41);
                let b24 = $isa::rol(t21, 2);
                s[0] = $isa::chi(b0, b1, b2);
                s[1] = $isa::chi(b1, b2, b3);
                s[2] = $isa::chi(b2, b3, b4);
                s[3] = $isa::chi(b3, b4, b0);
                s[4] = $isa::chi(b4, b0, b1);
                s[5] = $isa::chi(b5, b6, b7);
                s[6] = $isa::chi(b6, b7, b8);
                s[7] = $isa::chi(b7, b8, b9);
                s[8] = $isa::chi(b8, b9, b5);
                s[9] = $isa::chi(b9, b5, b6);
                s[10] = $isa::chi(b10, b11, b12);
                s[11] = $isa::chi(b11, b12, b13);
                s[12] = $isa::chi(b12, b13, b14);
                s[13] = $isa::chi(b13, b14, b10);
                s[14] = $isa::chi(b14, b10, b11);
                s[15] = $isa::chi(b15, b16, b17);
                s[16] = $isa::chi(b16, b17, b18);
                s[17] = $isa::chi(b17, b18, b19);
                s[18] = $isa::chi(b18, b19, b15);
                s[19] = $isa::chi(b19, b15, b16);
                s[20] = $isa::chi(b20, b21, b22);
                s[21] = $isa::chi(b21, b22, b23);
                s[22] = $isa::chi(b22, b23, b24);
                s[23] = $isa::chi(b23, b24, b20);
                s[24] = $isa::chi(b24, b20, b21);
                s[0] = $isa::xor(s[0], $isa::splat(rc));
            }
            *a = s;
        }

        /// Absorbs `LANES` pairs (a short batch is padded with zeros), permutes and squeezes.
        #[target_feature(enable = $feature)]
        fn hash_batch(inputs: &[[u8; 64]], out: &mut [[u8; 32]]) {
            let mut state = [$isa::splat(0); 25];
            let mut words = [0u64; LANES];
            for (w, lane) in state.iter_mut().take(8).enumerate() {
                for (s, input) in inputs.iter().enumerate() {
                    let bytes = [
                        input[8 * w],
                        input[8 * w + 1],
                        input[8 * w + 2],
                        input[8 * w + 3],
                        input[8 * w + 4],
                        input[8 * w + 5],
                        input[8 * w + 6],
                        input[8 * w + 7],
                    ];
                    words[s] = u64::from_le_bytes(bytes);
                }
                *lane = $isa::load(&words);
            }
            state[8] = $isa::splat(super::super::PAD_FIRST);
            state[16] = $isa::splat(super::super::PAD_LAST);
            keccak_f(&mut state);
            for (w, lane) in state.iter().take(4).enumerate() {
                $isa::store(*lane, &mut words);
                for (s, digest) in out.iter_mut().enumerate() {
                    digest[8 * w..8 * w + 8].copy_from_slice(&words[s].to_le_bytes());
                }
            }
        }

        /// Whole batches, then a partial one if at least `MIN_PARTIAL` pairs remain.
        #[target_feature(enable = $feature)]
        pub(super) fn pairs(inputs: &[[u8; 64]], out: &mut [[u8; 32]]) -> usize {
            let mut done = 0;
            for (batch, digests) in inputs.chunks(LANES).zip(out.chunks_mut(LANES)) {
                if batch.len() < MIN_PARTIAL {
                    break;
                }
                hash_batch(batch, digests);
                done += batch.len();
            }
            done
        }

        #[cfg(test)]
        pub(super) fn permute(states: &mut [[u64; 25]; LANES]) {
            let mut a = [[0u64; LANES]; 25];
            for (w, words) in a.iter_mut().enumerate() {
                for (s, state) in states.iter().enumerate() {
                    words[s] = state[w];
                }
            }
            // SAFETY: only called by tests after checking the CPU feature.
            unsafe {
                let mut v = [$isa::splat(0); 25];
                for (lane, words) in v.iter_mut().zip(&a) {
                    *lane = $isa::load(words);
                }
                keccak_f(&mut v);
                for (lane, words) in v.iter().zip(&mut a) {
                    $isa::store(*lane, words);
                }
            }
            for (w, words) in a.iter().enumerate() {
                for (s, state) in states.iter_mut().enumerate() {
                    state[w] = words[s];
                }
            }
        }
    };
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
