//! CARv1 files (<https://ipld.io/specs/transport/car/carv1/>): how the IPFS ecosystem moves a DAG
//! without a network. kubo's `dag export` and `dag import`, and Helia's `@helia/car`, read and
//! write them.
//!
//! A CAR is a varint-prefixed DAG-CBOR header `{roots, version: 1}`, then sections of
//! `varint(len) | CID | block`. Reading one verifies every block against its CID: a CAR is data
//! from a stranger like any peer's.

mod header;

use bytes::Bytes;
use cid::Cid;
use thiserror::Error;

use super::block::{Block, BlockError};
use header::Header;

/// The largest section read: a block as large as Bitswap carries (boxo's 2 MiB limit) and its CID.
pub const MAX_SECTION: usize = 2 * 1024 * 1024 + 128;
/// The largest header read: room for thousands of roots, not for a header that is mostly junk.
const MAX_HEADER: usize = 1024 * 1024;

/// A CAR read and verified: its roots, and its blocks in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Car {
    pub roots: Vec<Cid>,
    pub blocks: Vec<Block>,
}

/// Why bytes are not a CAR this node can take.
#[derive(Debug, Error, Clone)]
#[non_exhaustive]
pub enum CarError {
    #[error("the CAR ends in the middle of a {0}")]
    Truncated(&'static str),
    #[error("the CAR's {what} is {len} bytes long, more than the {max} allowed")]
    TooLarge { what: &'static str, len: u64, max: usize },
    #[error("the CAR header is not DAG-CBOR {{roots, version}}: {0}")]
    Header(&'static str),
    #[error("CAR version {0} is not supported (CARv1 is: kubo's `ipfs dag export` writes it)")]
    Version(u64),
    #[error("section {0} of the CAR does not start with a CID")]
    Cid(usize),
    /// A block and why it was rejected (boxed: a CID is large).
    #[error("block {} in the CAR is rejected: {}", .0.0, .0.1)]
    Block(Box<(Cid, BlockError)>),
}

/// Writes a CARv1 of `blocks` under `roots`.
pub fn write_car<'a>(roots: &[Cid], blocks: impl IntoIterator<Item = (Cid, &'a [u8])>) -> Vec<u8> {
    let header = Header { roots: roots.to_vec(), version: 1 }.encode();
    let mut out = Vec::new();
    push_varint(&mut out, header.len() as u64);
    out.extend_from_slice(&header);
    for (cid, data) in blocks {
        let cid = cid.to_bytes();
        push_varint(&mut out, (cid.len() + data.len()) as u64);
        out.extend_from_slice(&cid);
        out.extend_from_slice(data);
    }
    out
}

/// Reads a CARv1, verifying every block against its CID.
pub fn read_car(data: &Bytes) -> Result<Car, CarError> {
    let mut rest = data.clone();
    let header = section(&mut rest, "header", MAX_HEADER)?.ok_or(CarError::Truncated("header"))?;
    let header = Header::decode(&header).map_err(CarError::Header)?;
    if header.version != 1 {
        return Err(CarError::Version(header.version));
    }
    let mut blocks = Vec::new();
    while let Some(section) = section(&mut rest, "block", MAX_SECTION)? {
        let cid = cid_prefix(&section).ok_or(CarError::Cid(blocks.len()))?;
        let block = section.slice(cid.encoded_len()..);
        let block =
            Block::verified(cid, block).map_err(|error| CarError::Block(Box::new((cid, error))))?;
        blocks.push(block);
    }
    Ok(Car { roots: header.roots, blocks })
}

/// The next varint-prefixed section of `rest`, or `None` at the end.
fn section(rest: &mut Bytes, what: &'static str, max: usize) -> Result<Option<Bytes>, CarError> {
    if rest.is_empty() {
        return Ok(None);
    }
    let (len, tail) =
        unsigned_varint::decode::u64(rest).map_err(|_| CarError::Truncated("length prefix"))?;
    if len > max as u64 {
        return Err(CarError::TooLarge { what, len, max });
    }
    let start = rest.len() - tail.len();
    let end = start + len as usize;
    if end > rest.len() {
        return Err(CarError::Truncated(what));
    }
    let section = rest.slice(start..end);
    *rest = rest.slice(end..);
    Ok(Some(section))
}

fn cid_prefix(section: &[u8]) -> Option<Cid> {
    Cid::read_bytes(section).ok()
}

fn push_varint(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(unsigned_varint::encode::u64(
        n,
        &mut unsigned_varint::encode::u64_buffer(),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::{import_bytes, ImportConfig};

    fn sample() -> (Cid, Vec<Block>) {
        let data: Vec<u8> = (0..600_000u32).map(|i| (i % 251) as u8).collect();
        let file = import_bytes(&data, ImportConfig::default()).unwrap();
        (file.root, file.blocks)
    }

    fn car_of(root: Cid, blocks: &[Block]) -> Bytes {
        write_car(&[root], blocks.iter().map(|b| (b.cid(), &b.data()[..]))).into()
    }

    #[test]
    fn a_written_car_reads_back_with_its_roots_and_blocks() {
        let (root, blocks) = sample();
        let car = read_car(&car_of(root, &blocks)).unwrap();
        assert_eq!((car.roots, car.blocks), (vec![root], blocks));
    }

    /// The header of a CAR kubo wrote for bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku
    /// (the empty raw block): `{"roots": [CID], "version": 1}` in DAG-CBOR, keys sorted by length.
    #[test]
    fn the_header_is_the_dag_cbor_every_implementation_writes() {
        let empty: Cid =
            "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku".parse().unwrap();
        let car = write_car(&[empty], [(empty, &b""[..])]);
        let expected_header = [
            &[0x3a, 0xa2, 0x65][..],
            b"roots",
            &[0x81, 0xd8, 0x2a, 0x58, 0x25, 0x00],
            &empty.to_bytes(),
            &[0x67],
            b"version",
            &[0x01],
        ]
        .concat();
        assert_eq!(&car[..expected_header.len()], &expected_header[..]);
    }

    #[test]
    fn a_block_that_does_not_match_its_cid_is_rejected() {
        let (root, blocks) = sample();
        let mut bad = blocks[1].data().to_vec();
        bad[0] ^= 1;
        let cid = blocks[1].cid();
        let sections =
            blocks.iter().map(|b| (b.cid(), if b.cid() == cid { &bad[..] } else { &b.data()[..] }));
        match read_car(&write_car(&[root], sections).into()) {
            Err(CarError::Block(rejected)) => {
                assert!(matches!(*rejected, (c, BlockError::HashMismatch(_)) if c == cid))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn truncated_oversized_and_foreign_cars_get_their_own_errors() {
        let (root, blocks) = sample();
        let car = car_of(root, &blocks);
        assert!(matches!(read_car(&car.slice(..car.len() - 1)), Err(CarError::Truncated("block"))));
        assert!(matches!(read_car(&Bytes::new()), Err(CarError::Truncated("header"))));
        let mut huge = Vec::new();
        push_varint(&mut huge, 1 << 40);
        assert!(matches!(read_car(&huge.into()), Err(CarError::TooLarge { what: "header", .. })));
        let v2 = Header { roots: vec![], version: 2 }.encode();
        let mut car2 = Vec::new();
        push_varint(&mut car2, v2.len() as u64);
        car2.extend_from_slice(&v2);
        assert!(matches!(read_car(&car2.into()), Err(CarError::Version(2))));
        let mut junk = Vec::new();
        push_varint(&mut junk, 3);
        junk.extend_from_slice(&[0xff, 0xff, 0xff]);
        assert!(matches!(read_car(&junk.into()), Err(CarError::Header(_))));
    }
}
