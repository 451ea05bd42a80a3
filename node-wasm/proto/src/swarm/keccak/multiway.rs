//! Keccak-f[1600] on several states at once, one state per 64-bit lane of a SIMD vector,
//! written once as a macro for every instruction set that has such vectors: AVX-512 and AVX2 on
//! x86-64 ([`super::x86`]), SIMD128 in WebAssembly ([`super::wasm`]).

/// Round constants of Keccak-f[1600].
pub(super) const RC: [u64; 24] = [
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
            for rc in crate::swarm::keccak::multiway::RC {
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
            state[8] = $isa::splat(crate::swarm::keccak::PAD_FIRST);
            state[16] = $isa::splat(crate::swarm::keccak::PAD_LAST);
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

pub(super) use keccak_f;
