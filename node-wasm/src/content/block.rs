//! IPFS blocks: bytes named by a CID, how to check one against its CID, and which CIDs it links to.

use super::dag_pb::PbNode;
use bytes::Bytes;
use cid::{Cid, Version};
use multihash::Multihash;
use prost::Message;
use sha2::{Digest, Sha256, Sha512};
use thiserror::Error;

/// Multicodec of raw leaves: the block is file data.
pub const RAW: u64 = 0x55;
/// Multicodec of dag-pb nodes.
pub const DAG_PB: u64 = 0x70;
const SHA2_256: u64 = 0x12;
const SHA2_512: u64 = 0x13;

/// A block and its CID. Its data was hashed to make or check the CID: only [`Block::sha256`]
/// and [`Block::verified`] make one, so whoever is handed a `Block` need not hash it again.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Block {
    cid: Cid,
    data: Bytes,
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlockError {
    #[error("multihash {0:#x} is not supported (sha2-256 and sha2-512 are)")]
    UnsupportedHash(u64),
    #[error("block does not hash to {0}")]
    HashMismatch(Cid),
    #[error("codec {0:#x} is neither raw nor dag-pb")]
    UnsupportedCodec(u64),
    #[error("dag-pb block does not decode: {0}")]
    DagPb(#[from] prost::DecodeError),
    #[error("link {0} of a dag-pb block is not a CID")]
    BadLink(usize),
}

impl Block {
    /// The block holding `data` under a sha2-256 CID with this version and codec. A CIDv0 can only
    /// name dag-pb, so raw blocks are always CIDv1 (as in kubo).
    pub(crate) fn sha256(version: Version, codec: u64, data: Bytes) -> Block {
        let digest = Sha256::digest(&data);
        let hash = Multihash::wrap(SHA2_256, &digest).expect("a 32-byte digest fits a multihash");
        let cid = match (version, codec) {
            (Version::V0, DAG_PB) => Cid::new_v0(hash).expect("sha2-256 dag-pb is a valid CIDv0"),
            _ => Cid::new_v1(codec, hash),
        };
        Block { cid, data }
    }

    /// `data` under the CID it claims, refused if it does not hash to it.
    pub fn verified(cid: Cid, data: Bytes) -> Result<Block, BlockError> {
        verify_block(&cid, &data)?;
        Ok(Block { cid, data })
    }

    pub fn cid(&self) -> Cid {
        self.cid
    }

    pub fn data(&self) -> &Bytes {
        &self.data
    }

    pub fn into_parts(self) -> (Cid, Bytes) {
        (self.cid, self.data)
    }
}

/// Checks that `data` hashes to `cid`'s multihash.
pub fn verify_block(cid: &Cid, data: &[u8]) -> Result<(), BlockError> {
    let hash = cid.hash();
    let matches = match hash.code() {
        SHA2_256 => Sha256::digest(data)[..] == *hash.digest(),
        SHA2_512 => Sha512::digest(data)[..] == *hash.digest(),
        code => return Err(BlockError::UnsupportedHash(code)),
    };
    if matches {
        Ok(())
    } else {
        Err(BlockError::HashMismatch(*cid))
    }
}

/// The CIDs that a block links to, in link order: none for a raw block, the links of a dag-pb
/// node. It does not hash the block: call [`verify_block`] first on data from a peer.
///
/// A fetcher walks a file breadth-first with it: the root, then the root's links, then theirs.
pub fn block_links(cid: &Cid, data: &[u8]) -> Result<Vec<Cid>, BlockError> {
    match cid.codec() {
        RAW => Ok(Vec::new()),
        DAG_PB => PbNode::decode(data)?.links.iter().enumerate().map(link_cid).collect(),
        codec => Err(BlockError::UnsupportedCodec(codec)),
    }
}

pub(crate) fn link_cid((index, link): (usize, &super::dag_pb::PbLink)) -> Result<Cid, BlockError> {
    let bytes = link.hash.as_deref().ok_or(BlockError::BadLink(index))?;
    Cid::try_from(bytes).map_err(|_| BlockError::BadLink(index))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::dag_pb::PbLink;

    #[test]
    fn raw_cids_match_well_known_ones() {
        // The empty raw block, and "hello world\n" as boxo's examples/gateway/car/main_test.go
        // (TestFile) serves it.
        let empty = Block::sha256(Version::V1, RAW, Bytes::new());
        assert_eq!(
            empty.cid.to_string(),
            "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"
        );
        let hello = Block::sha256(Version::V0, RAW, Bytes::from_static(b"hello world\n"));
        assert_eq!(
            hello.cid.to_string(),
            "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4"
        );
    }

    #[test]
    fn verify_accepts_the_block_and_refuses_others() {
        let block = Block::sha256(Version::V1, RAW, Bytes::from_static(b"block"));
        verify_block(&block.cid, &block.data).unwrap();
        assert_eq!(verify_block(&block.cid, b"other"), Err(BlockError::HashMismatch(block.cid)));
        assert_eq!(verify_block(&block.cid, b""), Err(BlockError::HashMismatch(block.cid)));
    }

    #[test]
    fn verify_handles_sha2_512_and_refuses_unknown_hashes() {
        let digest = Sha512::digest(b"x");
        let cid = Cid::new_v1(RAW, Multihash::wrap(SHA2_512, &digest).unwrap());
        verify_block(&cid, b"x").unwrap();
        assert!(verify_block(&cid, b"y").is_err());
        let blake3 = Cid::new_v1(RAW, Multihash::wrap(0x1e, &[0; 32]).unwrap());
        assert_eq!(verify_block(&blake3, b"x"), Err(BlockError::UnsupportedHash(0x1e)));
    }

    #[test]
    fn links_of_raw_dag_pb_and_other_blocks() {
        let leaf = Block::sha256(Version::V1, RAW, Bytes::from_static(b"leaf"));
        assert_eq!(block_links(&leaf.cid, &leaf.data).unwrap(), vec![]);

        let link = |hash: Option<Vec<u8>>| PbLink { hash, name: Some(String::new()), tsize: None };
        let node = PbNode { data: None, links: vec![link(Some(leaf.cid.to_bytes())); 2] };
        let parent = Block::sha256(Version::V1, DAG_PB, node.encode_canonical().into());
        assert_eq!(block_links(&parent.cid, &parent.data).unwrap(), vec![leaf.cid, leaf.cid]);

        let bad = PbNode { data: None, links: vec![link(Some(leaf.cid.to_bytes())), link(None)] };
        let bad = Block::sha256(Version::V1, DAG_PB, bad.encode_canonical().into());
        assert_eq!(block_links(&bad.cid, &bad.data), Err(BlockError::BadLink(1)));

        let garbage = Block::sha256(Version::V1, DAG_PB, Bytes::from_static(&[0xff, 0xff]));
        assert!(matches!(block_links(&garbage.cid, &garbage.data), Err(BlockError::DagPb(_))));

        let cbor = Cid::new_v1(0x71, *leaf.cid.hash());
        assert_eq!(block_links(&cbor, b""), Err(BlockError::UnsupportedCodec(0x71)));
    }
}
