//! Addresses and proximity (bee `pkg/swarm/proximity.go`).

use std::fmt;
use thiserror::Error;

pub const ADDRESS_SIZE: usize = 32;
/// Highest proximity order bee distinguishes: addresses sharing 31 or more leading bits are in bin 31.
pub const MAX_PO: u8 = 31;
/// Number of bins: one per proximity order 0..=MAX_PO.
pub const MAX_BINS: u8 = MAX_PO + 1;

/// A chunk address or a node's overlay address: both live in the same 256-bit space.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Address(pub [u8; ADDRESS_SIZE]);

#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddressError {
    #[error("address of {0} bytes, expected 32")]
    Length(usize),
    #[error("address is not 64 hex digits")]
    NotHex,
}

impl Address {
    pub const ZERO: Address = Address([0; ADDRESS_SIZE]);

    pub fn from_slice(bytes: &[u8]) -> Result<Self, AddressError> {
        let array = bytes.try_into().map_err(|_| AddressError::Length(bytes.len()))?;
        Ok(Address(array))
    }

    pub fn as_bytes(&self) -> &[u8; ADDRESS_SIZE] {
        &self.0
    }

    pub fn is_zero(&self) -> bool {
        *self == Self::ZERO
    }

    /// Number of leading bits shared with `other`, capped at [`MAX_PO`] (bee's `swarm.Proximity`).
    pub fn proximity(&self, other: &Address) -> u8 {
        let prefix = |a: &Address| u32::from_be_bytes([a.0[0], a.0[1], a.0[2], a.0[3]]);
        let shared = (prefix(self) ^ prefix(other)).leading_zeros();
        shared.min(u32::from(MAX_PO)) as u8
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// 64 hex digits, as [`Display`](fmt::Display) writes it.
impl std::str::FromStr for Address {
    type Err = AddressError;

    fn from_str(text: &str) -> Result<Self, AddressError> {
        if text.len() != 2 * ADDRESS_SIZE || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(AddressError::NotHex);
        }
        let mut address = Address::ZERO;
        for (byte, digits) in address.0.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
            let digits = std::str::from_utf8(digits).map_err(|_| AddressError::NotHex)?;
            *byte = u8::from_str_radix(digits, 16).map_err(|_| AddressError::NotHex)?;
        }
        Ok(address)
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Eight hex digits identify a chunk in logs; the full form is in Display.
        self.0[..4].iter().try_for_each(|b| write!(f, "{b:02x}"))?;
        f.write_str("..")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_prefix(prefix: [u8; 4]) -> Address {
        let mut a = [0xaa; 32];
        a[..4].copy_from_slice(&prefix);
        Address(a)
    }

    #[test]
    fn parses_what_it_displays_and_nothing_else() {
        let address = with_prefix([0, 0x7f, 0x80, 0xff]);
        assert_eq!(address.to_string().parse::<Address>(), Ok(address));
        assert_eq!(address.to_string().to_uppercase().parse::<Address>(), Ok(address));
        for bad in ["", "00", &"+f".repeat(32), &"g0".repeat(32), &"00".repeat(33)] {
            assert_eq!(bad.parse::<Address>(), Err(AddressError::NotHex), "{bad}");
        }
    }

    #[test]
    fn proximity_counts_leading_equal_bits() {
        let zero = with_prefix([0, 0, 0, 0]);
        assert_eq!(zero.proximity(&with_prefix([0x80, 0, 0, 0])), 0);
        assert_eq!(zero.proximity(&with_prefix([0x40, 0, 0, 0])), 1);
        assert_eq!(zero.proximity(&with_prefix([0x01, 0, 0, 0])), 7);
        assert_eq!(zero.proximity(&with_prefix([0, 0x80, 0, 0])), 8);
        assert_eq!(zero.proximity(&with_prefix([0, 0, 0, 0x02])), 30);
    }

    #[test]
    fn proximity_is_capped_at_max_po_like_bee() {
        let zero = with_prefix([0, 0, 0, 0]);
        // Differing only in the last bit of the 4-byte prefix, or not at all, is bin 31.
        assert_eq!(zero.proximity(&with_prefix([0, 0, 0, 1])), MAX_PO);
        assert_eq!(zero.proximity(&zero), MAX_PO);
        let mut far = zero;
        far.0[31] = 0xff;
        assert_eq!(zero.proximity(&far), MAX_PO);
    }

    #[test]
    fn from_slice_checks_length() {
        assert_eq!(Address::from_slice(&[1; 31]), Err(AddressError::Length(31)));
        assert_eq!(Address::from_slice(&[1; 32]).unwrap(), Address([1; 32]));
    }
}
