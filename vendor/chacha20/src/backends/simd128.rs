//! WebAssembly SIMD128 backend (syncscope patch): four blocks at a time, each block's state held
//! as four row vectors, the layout of the SSE2 and NEON backends.
//!
//! Wasm has no runtime feature detection, so this backend is chosen at compile time, when the
//! crate is built with `-C target-feature=+simd128`.

use crate::{Block, ChaChaCore, Unsigned};
use cipher::{
    consts::{U4, U64},
    BlockSizeUser, ParBlocks, ParBlocksSizeUser, StreamBackend,
};
use core::arch::wasm32::*;

pub(crate) struct Backend<'a, R: Unsigned>(pub(crate) &'a mut ChaChaCore<R>);

impl<'a, R: Unsigned> BlockSizeUser for Backend<'a, R> {
    type BlockSize = U64;
}

impl<'a, R: Unsigned> ParBlocksSizeUser for Backend<'a, R> {
    type ParBlocksSize = U4;
}

impl<'a, R: Unsigned> StreamBackend for Backend<'a, R> {
    #[inline(always)]
    fn gen_ks_block(&mut self, block: &mut Block) {
        let [rows] = keystream::<R, 1>(&self.0.state);
        store(rows, block);
        self.0.state[12] = self.0.state[12].wrapping_add(1);
    }

    #[inline(always)]
    fn gen_par_ks_blocks(&mut self, blocks: &mut ParBlocks<Self>) {
        let rows = keystream::<R, 4>(&self.0.state);
        for (rows, block) in rows.into_iter().zip(blocks.iter_mut()) {
            store(rows, block);
        }
        self.0.state[12] = self.0.state[12].wrapping_add(4);
    }
}

/// The keystream of the `N` blocks from the state's block counter on, each as four rows.
#[inline(always)]
fn keystream<R: Unsigned, const N: usize>(state: &[u32; 16]) -> [[v128; 4]; N] {
    let initial: [[v128; 4]; N] = core::array::from_fn(|i| rows(state, i as u32));
    let mut x = initial;
    for _ in 0..R::USIZE {
        // The blocks are independent, so each step runs across all of them before the next step:
        // the engine sees N independent chains instead of one long one.
        x.iter_mut().for_each(quarter_rounds);
        x.iter_mut().for_each(rows_to_diagonals);
        x.iter_mut().for_each(quarter_rounds);
        x.iter_mut().for_each(diagonals_to_rows);
    }
    for (block, initial) in x.iter_mut().zip(initial.iter()) {
        for (row, initial) in block.iter_mut().zip(initial.iter()) {
            *row = u32x4_add(*row, *initial);
        }
    }
    x
}

/// The state's four rows, with `ahead` added to the 32-bit block counter (word 12).
#[inline(always)]
fn rows(s: &[u32; 16], ahead: u32) -> [v128; 4] {
    [
        u32x4(s[0], s[1], s[2], s[3]),
        u32x4(s[4], s[5], s[6], s[7]),
        u32x4(s[8], s[9], s[10], s[11]),
        u32x4(s[12].wrapping_add(ahead), s[13], s[14], s[15]),
    ]
}

#[inline(always)]
fn store(rows: [v128; 4], block: &mut Block) {
    for (row, bytes) in rows.into_iter().zip(block.chunks_exact_mut(16)) {
        // SAFETY: `bytes` is 16 writable bytes, and wasm's v128.store has no alignment
        // requirement. Wasm is little-endian, so the lanes land as RFC 8439 serialises them.
        unsafe { v128_store(bytes.as_mut_ptr() as *mut v128, row) };
    }
}

/// The four quarter rounds on the columns of `[a, b, c, d]`, all at once.
#[inline(always)]
fn quarter_rounds([a, b, c, d]: &mut [v128; 4]) {
    *a = u32x4_add(*a, *b);
    *d = rotate_left_16(v128_xor(*d, *a));
    *c = u32x4_add(*c, *d);
    *b = rotate_left::<12, 20>(v128_xor(*b, *c));
    *a = u32x4_add(*a, *b);
    *d = rotate_left_8(v128_xor(*d, *a));
    *c = u32x4_add(*c, *d);
    *b = rotate_left::<7, 25>(v128_xor(*b, *c));
}

/// Shifts rows b, c and d left by 1, 2 and 3 words, so that the diagonals become columns.
#[inline(always)]
fn rows_to_diagonals([_, b, c, d]: &mut [v128; 4]) {
    *b = i32x4_shuffle::<1, 2, 3, 0>(*b, *b);
    *c = i32x4_shuffle::<2, 3, 0, 1>(*c, *c);
    *d = i32x4_shuffle::<3, 0, 1, 2>(*d, *d);
}

/// Undoes [`rows_to_diagonals`].
#[inline(always)]
fn diagonals_to_rows([_, b, c, d]: &mut [v128; 4]) {
    *b = i32x4_shuffle::<3, 0, 1, 2>(*b, *b);
    *c = i32x4_shuffle::<2, 3, 0, 1>(*c, *c);
    *d = i32x4_shuffle::<1, 2, 3, 0>(*d, *d);
}

/// Rotations by whole bytes are one byte shuffle.
#[inline(always)]
fn rotate_left_16(v: v128) -> v128 {
    i8x16_shuffle::<2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13>(v, v)
}

#[inline(always)]
fn rotate_left_8(v: v128) -> v128 {
    i8x16_shuffle::<3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14>(v, v)
}

#[inline(always)]
fn rotate_left<const L: u32, const R: u32>(v: v128) -> v128 {
    v128_or(u32x4_shl(v, L), u32x4_shr(v, R))
}
