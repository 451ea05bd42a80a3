//! The BMT's pair hashing in wasm32 takes `syncscope-proto`'s SIMD128 path, two permutations at
//! once; every batch size, odd ones with an idle lane included, must give what the portable
//! keccak256 gives, or chunk addresses would differ between the page and native peers.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)
#![cfg(target_arch = "wasm32")]

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use syncscope_proto::swarm::{keccak256, keccak256_pairs, simd_path};
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn the_page_hashes_pairs_on_the_simd128_path() {
    assert_eq!(simd_path(), "simd128 (2-way)");
}

#[wasm_bindgen_test]
fn every_batch_size_matches_the_portable_keccak256() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    for n in 0..=70 {
        let inputs: Vec<[u8; 64]> = (0..n)
            .map(|_| {
                let mut pair = [0u8; 64];
                rng.fill_bytes(&mut pair);
                pair
            })
            .collect();
        let mut digests = vec![[0u8; 32]; n];
        keccak256_pairs(&inputs, &mut digests);
        for (input, digest) in inputs.iter().zip(&digests) {
            assert_eq!(*digest, keccak256(&[input]), "{n} pairs");
        }
    }
}
