//! The Want bit vector: bit i (least significant bit first within each byte) asks for the i-th
//! offered chunk, and the vector is `len / 8 + 1` bytes long, as bee's `pkg/bitvector` makes it.

use bytes::Bytes;
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WantError {
    #[error("want bit vector of {actual} bytes for an offer of {offered}, expected {expected}")]
    Length { offered: usize, expected: usize, actual: usize },
    #[error("want bit {bit} set for an offer of {offered} chunks")]
    OutOfRange { offered: usize, bit: usize },
}

/// Bit vector length for an offer of `offered` chunks.
pub fn want_len(offered: usize) -> usize {
    offered / 8 + 1
}

/// Builds the vector from the wanted flags, one per offered chunk.
pub fn encode_want(wanted: impl ExactSizeIterator<Item = bool>) -> Bytes {
    let mut bits = vec![0u8; want_len(wanted.len())];
    for (i, want) in wanted.enumerate() {
        if want {
            bits[i / 8] |= 1 << (i % 8);
        }
    }
    Bytes::from(bits)
}

/// Indices of the wanted chunks of an offer of `offered` chunks, in offer order.
pub fn decode_want(bits: &[u8], offered: usize) -> Result<Vec<usize>, WantError> {
    let expected = want_len(offered);
    if bits.len() != expected {
        return Err(WantError::Length { offered, expected, actual: bits.len() });
    }
    let set = |i: usize| bits[i / 8] & (1 << (i % 8)) != 0;
    if let Some(bit) = (offered..expected * 8).find(|&i| set(i)) {
        return Err(WantError::OutOfRange { offered, bit });
    }
    Ok((0..offered).filter(|&i| set(i)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsb_first_and_len_over_8_plus_1() {
        let bits =
            encode_want([true, false, true, false, false, false, false, false, true].into_iter());
        assert_eq!(&bits[..], &[0b0000_0101, 0b0000_0001]);
        // A multiple of 8 still gets the extra byte, as bee's bitvector.New does.
        assert_eq!(encode_want([true; 8].into_iter()).len(), 2);
        assert_eq!(decode_want(&bits, 9).unwrap(), vec![0, 2, 8]);
    }

    #[test]
    fn wrong_length_is_an_error() {
        assert_eq!(
            decode_want(&[0xff], 9),
            Err(WantError::Length { offered: 9, expected: 2, actual: 1 })
        );
        assert_eq!(
            decode_want(&[0, 0, 0], 9),
            Err(WantError::Length { offered: 9, expected: 2, actual: 3 })
        );
    }

    #[test]
    fn bits_past_the_offer_are_an_error() {
        assert_eq!(
            decode_want(&[0b1000_0000], 3),
            Err(WantError::OutOfRange { offered: 3, bit: 7 })
        );
    }
}
