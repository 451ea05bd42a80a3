//! Helpers for tests of the cores and of what is built on them, in this crate and (with the
//! `test-utils` feature) in others.

pub mod bee_vectors;

/// A one-field message, for tests of framing and of what is built on it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Probe {
    #[prost(bytes = "vec", tag = "1")]
    pub data: Vec<u8>,
}

pub mod hex {
    /// Decodes a hex string in tests; panics on bad input.
    pub fn decode(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("test vectors are valid hex"))
            .collect()
    }
}

/// Random chunks, each with its own stamp, that fall into `bin` of `overlay`: what a pull-sync
/// server holding them offers in that bin.
pub fn chunks_in_bin(
    rng: &mut impl rand::RngCore,
    overlay: crate::swarm::Address,
    bin: u8,
    n: usize,
    size: usize,
) -> Vec<crate::swarm::Chunk> {
    use crate::swarm::{Chunk, Stamp, STAMP_SIZE};
    let mut out = Vec::with_capacity(n);
    let mut payload = vec![0u8; size];
    while out.len() < n {
        rng.fill_bytes(&mut payload);
        let mut stamp = vec![0u8; STAMP_SIZE];
        rng.fill_bytes(&mut stamp);
        let stamp = Stamp::new(bytes::Bytes::from(stamp)).expect("a stamp of the right size");
        let chunk = Chunk::new(&payload, stamp).expect("a payload of at most 4096 bytes");
        if overlay.proximity(&chunk.address()) == bin {
            out.push(chunk);
        }
    }
    out
}
