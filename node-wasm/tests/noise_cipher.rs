//! The ChaCha20 under the browser node's Noise sessions (vendor/chacha20's SIMD128 backend in
//! wasm32) gives RFC 8439's keystream, block by block and four blocks at a time, however a
//! caller slices the stream. A wrong keystream would still round-trip between two browser nodes,
//! so it is checked against RFC 8439 and against rand_chacha's independent scalar ChaCha20.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)
#![cfg(target_arch = "wasm32")]

use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use chacha20::ChaCha20;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use syncscope_proto::test_utils::hex;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

// RFC 8439 section 2.4.2: 114 bytes from block counter 1, with a nonce that is not zero.
#[wasm_bindgen_test]
fn rfc_8439_encryption_vector() {
    let key: Vec<u8> = (0..32).collect();
    let nonce = hex::decode("000000000000004a00000000");
    let mut data = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip \
        for the future, sunscreen would be it."
        .to_vec();
    let mut cipher = ChaCha20::new(key.as_slice().into(), nonce.as_slice().into());
    cipher.seek(64u32);
    cipher.apply_keystream(&mut data);
    assert_eq!(
        data,
        hex::decode(
            "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b\
             f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8\
             07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736\
             5af90bbf74a35be6b40b8eedf2785e42874d"
        )
    );
}

/// Pieces that start and end inside a block, on block edges, and span four-block batches.
const PIECES: [usize; 12] = [1, 63, 64, 65, 255, 256, 257, 1000, 4096, 1, 64 * 1024, 3];

#[wasm_bindgen_test]
fn keystream_matches_an_independent_chacha20_however_it_is_sliced() {
    for seed in 0..4u8 {
        let key = [seed.wrapping_mul(37); 32];
        let total = PIECES.iter().sum();
        let mut expected = vec![0; total];
        ChaCha20Rng::from_seed(key).fill_bytes(&mut expected);

        let mut cipher = ChaCha20::new(&key.into(), &[0; 12].into());
        let mut stream = vec![0; total];
        let mut at = 0;
        for piece in PIECES {
            cipher.apply_keystream(&mut stream[at..at + piece]);
            at += piece;
        }
        assert_eq!(stream, expected, "key byte {}", key[0]);
    }
}
