// syncscope patch: the hash and cipher of Noise_XX_25519_ChaChaPoly_SHA256 for wasm builds.
//
// Upstream asks snow's default resolver for these, which links snow's whole primitive set
// (SHA-512 among them) against sha2 0.10. ed25519-dalek 3, which every libp2p identity
// links, brings sha2 0.11; implementing snow's traits here on sha2 0.11 leaves a single
// SHA-2 in the page.

use chacha20poly1305::{ChaCha20Poly1305, KeyInit, aead::AeadInPlace};
use sha2::Digest as _;
use snow::{
    params::{CipherChoice, HashChoice},
    types::{Cipher, Hash},
};

const TAG_LEN: usize = 16;

pub(crate) fn hash(choice: &HashChoice) -> Option<Box<dyn Hash>> {
    match choice {
        HashChoice::SHA256 => Some(Box::<Sha256>::default()),
        _ => None,
    }
}

pub(crate) fn cipher(choice: &CipherChoice) -> Option<Box<dyn Cipher>> {
    match choice {
        CipherChoice::ChaChaPoly => Some(Box::<ChaChaPoly>::default()),
        _ => None,
    }
}

#[derive(Default)]
struct Sha256(sha2::Sha256);

impl Hash for Sha256 {
    fn name(&self) -> &'static str {
        "SHA256"
    }

    fn block_len(&self) -> usize {
        64
    }

    fn hash_len(&self) -> usize {
        32
    }

    fn reset(&mut self) {
        self.0 = sha2::Sha256::default();
    }

    fn input(&mut self, data: &[u8]) {
        self.0.update(data);
    }

    fn result(&mut self, out: &mut [u8]) {
        out[..32].copy_from_slice(&self.0.finalize_reset());
    }
}

#[derive(Default)]
struct ChaChaPoly {
    key: [u8; 32],
}

impl ChaChaPoly {
    fn aead(&self) -> ChaCha20Poly1305 {
        ChaCha20Poly1305::new(&self.key.into())
    }
}

/// The Noise spec's ChaChaPoly nonce: 32 zero bits, then the counter little-endian.
fn nonce(n: u64) -> chacha20poly1305::Nonce {
    let mut bytes = [0u8; 12];
    bytes[4..].copy_from_slice(&n.to_le_bytes());
    bytes.into()
}

impl Cipher for ChaChaPoly {
    fn name(&self) -> &'static str {
        "ChaChaPoly"
    }

    fn set(&mut self, key: &[u8; 32]) {
        self.key = *key;
    }

    fn encrypt(&self, nonce_n: u64, authtext: &[u8], plaintext: &[u8], out: &mut [u8]) -> usize {
        let len = plaintext.len();
        out[..len].copy_from_slice(plaintext);
        let tag = self
            .aead()
            .encrypt_in_place_detached(&nonce(nonce_n), authtext, &mut out[..len])
            .expect("ChaCha20Poly1305 encrypts any message snow frames (at most 64 KiB)");
        out[len..len + TAG_LEN].copy_from_slice(&tag);
        len + TAG_LEN
    }

    fn decrypt(
        &self,
        nonce_n: u64,
        authtext: &[u8],
        ciphertext: &[u8],
        out: &mut [u8],
    ) -> Result<usize, snow::Error> {
        let len = ciphertext
            .len()
            .checked_sub(TAG_LEN)
            .ok_or(snow::Error::Decrypt)?;
        out[..len].copy_from_slice(&ciphertext[..len]);
        self.aead()
            .decrypt_in_place_detached(
                &nonce(nonce_n),
                authtext,
                &mut out[..len],
                ciphertext[len..].into(),
            )
            .map_err(|_| snow::Error::Decrypt)?;
        Ok(len)
    }
}
