//! The two protobuf messages of a UnixFS file: dag-pb's `PBNode`/`PBLink` (ipld/specs
//! `specs/codecs/dag-pb/spec.md`) and UnixFS's `Data` (ipfs/specs `UNIXFS.md`), written by hand
//! for prost.
//!
//! dag-pb's canonical form puts the links (field 2) before the data (field 1), as go-ipfs and
//! js-ipfs always have. prost writes fields in tag order, so a node is encoded in two passes (links
//! only, then data only): protobuf concatenation is field-wise merging, so the two parts decode as
//! one message and the bytes are exactly what kubo and Helia hash.

use bytes::Bytes;
use prost::Message;

/// A dag-pb node. Encode it with [`PbNode::encode_canonical`], never with prost's `encode`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct PbNode {
    #[prost(bytes = "bytes", optional, tag = "1")]
    pub data: Option<Bytes>,
    #[prost(message, repeated, tag = "2")]
    pub links: Vec<PbLink>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct PbLink {
    /// Binary CID of the target.
    #[prost(bytes = "vec", optional, tag = "1")]
    pub hash: Option<Vec<u8>>,
    /// Always present, and empty, in file DAGs: kubo and Helia both write the empty string.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// Cumulative size of the target's whole DAG, blocks included.
    #[prost(uint64, optional, tag = "3")]
    pub tsize: Option<u64>,
}

impl PbNode {
    /// Links first, then data: dag-pb's canonical byte order.
    pub fn encode_canonical(self) -> Vec<u8> {
        let links = PbNode { data: None, links: self.links };
        let data = PbNode { data: self.data, links: Vec::new() };
        let mut out = links.encode_to_vec();
        out.extend_from_slice(&data.encode_to_vec());
        out
    }
}

/// UnixFS `Data.DataType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub(crate) enum DataType {
    Raw = 0,
    Directory = 1,
    File = 2,
    Metadata = 3,
    Symlink = 4,
    HamtShard = 5,
}

/// UnixFS `Data`, the payload of a file's dag-pb nodes. Fields 5 to 8 (hash type, fanout, mode,
/// mtime) do not concern file content and are skipped when decoding.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct UnixfsData {
    #[prost(enumeration = "DataType", required, tag = "1")]
    pub r#type: i32,
    #[prost(bytes = "bytes", optional, tag = "2")]
    pub data: Option<Bytes>,
    #[prost(uint64, optional, tag = "3")]
    pub filesize: Option<u64>,
    /// proto2 `repeated` without `packed`: one key per entry, as go-unixfs writes it.
    #[prost(uint64, repeated, packed = "false", tag = "4")]
    pub blocksizes: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use syncscope_proto::test_utils::hex;

    #[test]
    fn links_are_written_before_data() {
        let node = PbNode {
            data: Some(Bytes::from_static(&[0xaa])),
            links: vec![PbLink {
                hash: Some(vec![1, 2]),
                name: Some(String::new()),
                tsize: Some(3),
            }],
        };
        // 0x12 = field 2 (Links), length 8: Hash [1, 2], Name "", Tsize 3; then 0x0a = field 1.
        assert_eq!(node.clone().encode_canonical(), hex::decode("12080a020102120018030a01aa"));
        // prost's own order would put the data first; both decode to the same node.
        assert_eq!(PbNode::decode(&node.encode_to_vec()[..]).unwrap(), node);
        assert_eq!(PbNode::decode(&node.clone().encode_canonical()[..]).unwrap(), node);
    }

    // The empty UnixFS file, QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH, is the block
    // 0a 04 08 02 18 00: a node whose data is {Type: File, filesize: 0}.
    #[test]
    fn empty_file_node_bytes() {
        let data = UnixfsData {
            r#type: DataType::File as i32,
            data: None,
            filesize: Some(0),
            blocksizes: vec![],
        };
        let node = PbNode { data: Some(data.encode_to_vec().into()), links: vec![] };
        assert_eq!(node.encode_canonical(), hex::decode("0a0408021800"));
    }

    #[test]
    fn blocksizes_are_not_packed() {
        let data = UnixfsData {
            r#type: DataType::File as i32,
            data: None,
            filesize: Some(3),
            blocksizes: vec![1, 2],
        };
        assert_eq!(data.encode_to_vec(), hex::decode("0802180320012002"));
    }
}
