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
