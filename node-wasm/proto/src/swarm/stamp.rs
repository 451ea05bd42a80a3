//! Postage stamps, carried opaquely: syncscope stores and forwards them but does not check the
//! batch or the signature. Only their layout is used (bee `pkg/postage/stamp.go`):
//! batch ID (32) | index (8) | timestamp (8) | signature (65).

use super::keccak::keccak256;
use bytes::Bytes;
use thiserror::Error;

pub const STAMP_SIZE: usize = 113;
const BATCH_ID_SIZE: usize = 32;

/// A serialised postage stamp, with its hash computed once: offers name chunks by it, so stores
/// and both cores compare it for every chunk.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Stamp {
    bytes: Bytes,
    hash: [u8; 32],
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StampError {
    #[error("stamp of {0} bytes, expected 113")]
    Length(usize),
}

impl Stamp {
    pub fn new(bytes: Bytes) -> Result<Self, StampError> {
        match bytes.len() {
            STAMP_SIZE => Ok(Stamp { hash: keccak256(&[&bytes]), bytes }),
            len => Err(StampError::Length(len)),
        }
    }

    pub fn as_bytes(&self) -> &Bytes {
        &self.bytes
    }

    pub fn batch_id(&self) -> [u8; 32] {
        let mut id = [0; BATCH_ID_SIZE];
        id.copy_from_slice(&self.bytes[..BATCH_ID_SIZE]);
        id
    }

    /// keccak256 of the serialised stamp: what offers carry as `StampHash`.
    pub fn hash(&self) -> [u8; 32] {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_is_checked() {
        assert_eq!(Stamp::new(Bytes::from_static(&[0; 112])), Err(StampError::Length(112)));
        assert!(Stamp::new(Bytes::from(vec![0; STAMP_SIZE])).is_ok());
    }

    #[test]
    fn batch_id_is_the_first_32_bytes_and_hash_covers_all() {
        let mut raw = vec![9u8; STAMP_SIZE];
        raw[..32].copy_from_slice(&[1; 32]);
        let stamp = Stamp::new(Bytes::from(raw.clone())).unwrap();
        assert_eq!(stamp.batch_id(), [1; 32]);
        assert_eq!(stamp.hash(), keccak256(&[&raw]));
        raw[112] = 0;
        assert_ne!(Stamp::new(Bytes::from(raw)).unwrap().hash(), stamp.hash());
    }
}
