//! Block verification: hash the data with the CID's multihash function and compare digests.
//!
//! Supported functions: identity, sha2-256, sha2-512, sha3-256, sha3-512 and keccak-256. A block
//! addressed by any other function cannot be verified and is therefore never accepted.

use cid::Cid;
use multihash::Multihash;
use sha2::Digest;
use thiserror::Error;

pub const IDENTITY: u64 = 0x00;
pub const SHA2_256: u64 = 0x12;
pub const SHA2_512: u64 = 0x13;
pub const SHA3_512: u64 = 0x14;
pub const SHA3_256: u64 = 0x16;
pub const KECCAK_256: u64 = 0x1b;
/// The raw codec, used for the simulator's random blocks.
pub const RAW: u64 = 0x55;

/// Why a block does not match its address.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyError {
    #[error("unsupported multihash function 0x{0:x}")]
    UnsupportedHash(u64),
    #[error("block data does not hash to its CID")]
    Mismatch,
}

/// Full digest of `data` under the multihash function `code`.
pub fn digest(code: u64, data: &[u8]) -> Result<Vec<u8>, VerifyError> {
    Ok(match code {
        IDENTITY => data.to_vec(),
        SHA2_256 => sha2::Sha256::digest(data).to_vec(),
        SHA2_512 => sha2::Sha512::digest(data).to_vec(),
        SHA3_256 => sha3::Sha3_256::digest(data).to_vec(),
        SHA3_512 => sha3::Sha3_512::digest(data).to_vec(),
        KECCAK_256 => sha3::Keccak256::digest(data).to_vec(),
        other => return Err(VerifyError::UnsupportedHash(other)),
    })
}

/// Multihash of `data` under `code`, truncated to `len` bytes as a CID prefix may ask.
pub fn multihash(code: u64, len: usize, data: &[u8]) -> Result<Multihash<64>, VerifyError> {
    let full = digest(code, data)?;
    let len = len.min(full.len());
    Multihash::wrap(code, &full[..len]).map_err(|_| VerifyError::Mismatch)
}

/// Checks that `data` is the block `cid` addresses.
pub fn verify(cid: &Cid, data: &[u8]) -> Result<(), VerifyError> {
    let hash = cid.hash();
    let expected = multihash(hash.code(), hash.digest().len(), data)?;
    if expected.digest() == hash.digest() && hash.digest().len() == usize::from(hash.size()) {
        Ok(())
    } else {
        Err(VerifyError::Mismatch)
    }
}

/// A CIDv1 with the raw codec and a sha2-256 multihash of `data`.
pub fn raw_cid(data: &[u8]) -> Cid {
    let digest = sha2::Sha256::digest(data);
    // A 32-byte digest always fits the 64-byte multihash.
    let hash = Multihash::wrap(SHA2_256, &digest).unwrap_or_default();
    Cid::new_v1(RAW, hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_matching_data_for_every_supported_function() {
        for code in [IDENTITY, SHA2_256, SHA2_512, SHA3_256, SHA3_512, KECCAK_256] {
            let data = b"syncscope block";
            let cid = Cid::new_v1(RAW, multihash(code, 64, data).unwrap());
            assert_eq!(verify(&cid, data), Ok(()), "code 0x{code:x}");
            assert_eq!(verify(&cid, b"other data"), Err(VerifyError::Mismatch), "code 0x{code:x}");
        }
    }

    #[test]
    fn refuses_unknown_functions() {
        let cid = Cid::new_v1(RAW, Multihash::wrap(0x1e, &[0; 32]).unwrap());
        assert_eq!(verify(&cid, b"x"), Err(VerifyError::UnsupportedHash(0x1e)));
    }

    #[test]
    fn raw_cid_is_sha2_256() {
        let cid = raw_cid(b"abc");
        assert_eq!(cid.hash().code(), SHA2_256);
        assert_eq!(verify(&cid, b"abc"), Ok(()));
    }
}
