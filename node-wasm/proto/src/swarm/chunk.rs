//! Content-addressed chunks (bee `pkg/cac`): an 8-byte little-endian span followed by up to 4096
//! bytes of payload, addressed by their BMT hash.

use super::address::Address;
use super::bmt::{chunk_address, CHUNK_SIZE};
use super::stamp::Stamp;
use bytes::{BufMut, Bytes, BytesMut};
use thiserror::Error;

pub const SPAN_SIZE: usize = 8;

/// A verified content-addressed chunk with its postage stamp. Its data (`span || payload`) is a
/// shared [`Bytes`] so that passing a chunk from the wire to the store copies nothing.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Chunk {
    address: Address,
    data: Bytes,
    stamp: Stamp,
}

/// What an offer names: the address and which stamp the chunk is stored under.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ChunkRef {
    pub address: Address,
    pub batch_id: [u8; 32],
    pub stamp_hash: [u8; 32],
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChunkError {
    #[error("chunk data of {0} bytes is shorter than the 8-byte span")]
    TooShort(usize),
    #[error("chunk payload of {0} bytes exceeds 4096")]
    TooLong(usize),
    #[error("chunk data hashes to {actual}, not to its address {claimed}")]
    AddressMismatch { claimed: Address, actual: Address },
}

impl Chunk {
    /// Builds the chunk holding `payload`, with the span set to its length.
    pub fn new(payload: &[u8], stamp: Stamp) -> Result<Self, ChunkError> {
        if payload.len() > CHUNK_SIZE {
            return Err(ChunkError::TooLong(payload.len()));
        }
        let mut data = BytesMut::with_capacity(SPAN_SIZE + payload.len());
        data.put_u64_le(payload.len() as u64);
        data.put_slice(payload);
        let address = chunk_address(payload.len() as u64, payload);
        Ok(Chunk { address, data: data.freeze(), stamp })
    }

    /// Accepts `data` (`span || payload`) only if it hashes to `address`.
    pub fn verify(address: Address, data: Bytes, stamp: Stamp) -> Result<Self, ChunkError> {
        let actual = address_of(&data)?;
        if actual != address {
            return Err(ChunkError::AddressMismatch { claimed: address, actual });
        }
        Ok(Chunk { address, data, stamp })
    }

    pub fn address(&self) -> Address {
        self.address
    }

    /// `span || payload`, as carried by a Delivery.
    pub fn data(&self) -> &Bytes {
        &self.data
    }

    pub fn span(&self) -> u64 {
        let mut span = [0; SPAN_SIZE];
        span.copy_from_slice(&self.data[..SPAN_SIZE]);
        u64::from_le_bytes(span)
    }

    pub fn payload(&self) -> &[u8] {
        &self.data[SPAN_SIZE..]
    }

    pub fn stamp(&self) -> &Stamp {
        &self.stamp
    }

    pub fn chunk_ref(&self) -> ChunkRef {
        ChunkRef {
            address: self.address,
            batch_id: self.stamp.batch_id(),
            stamp_hash: self.stamp.hash(),
        }
    }
}

/// Address that `span || payload` hashes to.
fn address_of(data: &[u8]) -> Result<Address, ChunkError> {
    if data.len() < SPAN_SIZE {
        return Err(ChunkError::TooShort(data.len()));
    }
    let (span, payload) = data.split_at(SPAN_SIZE);
    if payload.len() > CHUNK_SIZE {
        return Err(ChunkError::TooLong(payload.len()));
    }
    let span = u64::from_le_bytes(span.try_into().map_err(|_| ChunkError::TooShort(data.len()))?);
    Ok(chunk_address(span, payload))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swarm::STAMP_SIZE;
    use crate::test_utils::hex;

    fn stamp() -> Stamp {
        Stamp::new(Bytes::from(vec![3; STAMP_SIZE])).unwrap()
    }

    fn verify_hex(address: &str, data: Vec<u8>) -> Result<Chunk, ChunkError> {
        Chunk::verify(
            Address::from_slice(&hex::decode(address)).unwrap(),
            Bytes::from(data),
            stamp(),
        )
    }

    // bee pkg/storage/testing/chunk.go, fixtureChunks "0025" and "7000": intermediate chunks whose
    // span (72) is not their payload length.
    #[test]
    fn bee_fixture_chunks_verify() {
        let mut c0025 = vec![72, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0];
        c0025.extend_from_slice(&[
            149, 179, 31, 244, 146, 247, 129, 123, 132, 248, 215, 77, 44, 47, 91, 248, 229, 215,
            89, 156, 210, 243, 3, 110, 204, 74, 101, 119, 53, 53, 145, 188, 193, 153, 130, 197, 83,
            152, 36, 140, 150, 209, 191, 214, 193, 4, 144, 121, 32, 45, 205, 220, 59, 227, 28, 43,
            161, 51, 108, 14, 106, 180, 135, 2,
        ]);
        let chunk =
            verify_hex("0025737be11979e91654dffd2be817ac1e52a2dadb08c97a7cef12f937e707bc", c0025)
                .unwrap();
        assert_eq!(chunk.span(), 72);
        assert_eq!(chunk.payload().len(), 72);

        let mut c7000 = vec![72, 0, 0, 0, 0, 0, 0, 0, 124, 59, 0, 0, 0, 0, 0, 0];
        c7000.extend_from_slice(&[
            44, 67, 19, 101, 42, 213, 4, 209, 212, 189, 107, 244, 111, 22, 230, 24, 245, 103, 227,
            165, 88, 74, 50, 11, 143, 197, 220, 118, 175, 24, 169, 193, 15, 40, 225, 196, 246, 151,
            1, 45, 86, 7, 36, 99, 156, 86, 83, 29, 46, 207, 115, 112, 126, 88, 101, 128, 153, 113,
            30, 27, 50, 232, 77, 215,
        ]);
        verify_hex("70002115a015d40a1f5ef68c29d072f06fae58854934c1cb399fcb63cf336127", c7000)
            .unwrap();
    }

    // bee pkg/cac/cac_test.go TestInvalid: "foo" under an address that is not its own.
    #[test]
    fn wrong_address_is_refused() {
        let mut data = 3u64.to_le_bytes().to_vec();
        data.extend_from_slice(b"foo");
        let err = verify_hex(
            "0000e8e7d8a48c2a9339c97c1dc3461a9a7aa07e994c5cb8b38fd7c1b3e6ea48",
            data.clone(),
        );
        assert!(matches!(err, Err(ChunkError::AddressMismatch { .. })));
        verify_hex("2387e8e7d8a48c2a9339c97c1dc3461a9a7aa07e994c5cb8b38fd7c1b3e6ea48", data)
            .unwrap();
    }

    #[test]
    fn bad_lengths_are_refused() {
        let addr = "2387e8e7d8a48c2a9339c97c1dc3461a9a7aa07e994c5cb8b38fd7c1b3e6ea48";
        assert_eq!(verify_hex(addr, b"small".to_vec()), Err(ChunkError::TooShort(5)));
        assert_eq!(
            verify_hex(addr, vec![0; SPAN_SIZE + CHUNK_SIZE + 1]),
            Err(ChunkError::TooLong(4097))
        );
        assert_eq!(Chunk::new(&[0; CHUNK_SIZE + 1], stamp()), Err(ChunkError::TooLong(4097)));
    }

    #[test]
    fn new_chunk_round_trips_through_verify() {
        let chunk = Chunk::new(b"greaterthanspan", stamp()).unwrap();
        assert_eq!(chunk.span(), 15);
        let again = Chunk::verify(chunk.address(), chunk.data().clone(), stamp()).unwrap();
        assert_eq!(again, chunk);
        assert_eq!(chunk.chunk_ref().stamp_hash, stamp().hash());
    }
}
