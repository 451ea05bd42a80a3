//! Two-way Keccak-f[1600] for WebAssembly SIMD128 (one state per 64-bit lane of a 128-bit
//! vector), chosen at compile time: the page is built with `+simd128`. In V8 it permutes about
//! five times as fast as the `keccak` crate's portable code, whose loops over table indices keep
//! the state in linear memory.
//!
//! The permutation itself is [`super::multiway`]'s, shared with x86-64. The wasm32 tests of
//! `syncscope-node` (`tests/keccak_wasm.rs`) check it against the portable hash.

use super::multiway::keccak_f;
use core::arch::wasm32::v128;

pub(super) fn path() -> &'static str {
    "simd128 (2-way)"
}

/// Hashes `inputs` into `out`, two at a time; returns how many it hashed (all of them).
pub(super) fn keccak256_pairs(inputs: &[[u8; 64]], out: &mut [[u8; 32]]) -> usize {
    pairs(inputs, out)
}

pub(super) const LANES: usize = 2;
/// Half a batch (the other lane idle) still costs less than the portable permutation.
const MIN_PARTIAL: usize = 1;

mod isa {
    use core::arch::wasm32::*;

    #[inline]
    pub fn xor(a: v128, b: v128) -> v128 {
        v128_xor(a, b)
    }

    #[inline]
    pub fn xor3(a: v128, b: v128, c: v128) -> v128 {
        v128_xor(v128_xor(a, b), c)
    }

    /// `a ^ (!b & c)`.
    #[inline]
    pub fn chi(a: v128, b: v128, c: v128) -> v128 {
        v128_xor(a, v128_andnot(c, b))
    }

    /// WebAssembly shifts by the count modulo 64, so a rotation by 0 is `a | a`.
    #[inline]
    pub fn rol(a: v128, n: u32) -> v128 {
        v128_or(i64x2_shl(a, n), u64x2_shr(a, 64 - n))
    }

    #[inline]
    pub fn splat(v: u64) -> v128 {
        u64x2_splat(v)
    }

    #[inline]
    pub fn load(words: &[u64; 2]) -> v128 {
        u64x2(words[0], words[1])
    }

    #[inline]
    pub fn store(v: v128, words: &mut [u64; 2]) {
        *words = [u64x2_extract_lane::<0>(v), u64x2_extract_lane::<1>(v)];
    }
}

keccak_f!(isa, "simd128", v128);
