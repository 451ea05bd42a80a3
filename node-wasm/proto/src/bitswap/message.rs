//! The Bitswap wire message (1.0.0 to 1.2.0) and its typed domain form.
//!
//! [`pb`] holds the protobuf structs exactly as ipfs/specs defines them. [`Message`] is what the
//! client and server exchange: CIDs are parsed, block prefixes resolved, and want types are enums.
//! Encoding is version-aware: a peer on 1.1.0 or older never sees want-have entries, presences or
//! pending bytes (boxo strips them the same way), and a 1.0.0 peer gets raw block data.

use bytes::Bytes;
use cid::{Cid, Version};
use multihash::Multihash;
use thiserror::Error;

use super::verify::{self, VerifyError};
use super::ProtocolVersion;
use crate::framing::{self, FrameError};

/// The dag-pb codec, which every 1.0.0 block (a CIDv0) has.
const DAG_PB: u64 = 0x70;

/// Largest message either side accepts or sends (the spec's 4 MiB).
pub const MAX_MESSAGE_SIZE: usize = 4 << 20;

/// Protobuf structs of the wire format, field numbers as in the spec.
pub mod pb {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Message {
        #[prost(message, optional, tag = "1")]
        pub wantlist: Option<Wantlist>,
        /// 1.0.0 only: raw block data.
        #[prost(bytes = "bytes", repeated, tag = "2")]
        pub blocks: Vec<bytes::Bytes>,
        /// 1.1.0 and later.
        #[prost(message, repeated, tag = "3")]
        pub payload: Vec<Block>,
        #[prost(message, repeated, tag = "4")]
        pub block_presences: Vec<BlockPresence>,
        #[prost(int32, tag = "5")]
        pub pending_bytes: i32,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Wantlist {
        #[prost(message, repeated, tag = "1")]
        pub entries: Vec<Entry>,
        #[prost(bool, tag = "2")]
        pub full: bool,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Entry {
        #[prost(bytes = "vec", tag = "1")]
        pub block: Vec<u8>,
        #[prost(int32, tag = "2")]
        pub priority: i32,
        #[prost(bool, tag = "3")]
        pub cancel: bool,
        #[prost(enumeration = "WantType", tag = "4")]
        pub want_type: i32,
        #[prost(bool, tag = "5")]
        pub send_dont_have: bool,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum WantType {
        Block = 0,
        Have = 1,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Block {
        /// CID prefix: version, codec, multihash code and multihash length as varints.
        #[prost(bytes = "vec", tag = "1")]
        pub prefix: Vec<u8>,
        #[prost(bytes = "bytes", tag = "2")]
        pub data: bytes::Bytes,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum BlockPresenceType {
        Have = 0,
        DontHave = 1,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BlockPresence {
        #[prost(bytes = "vec", tag = "1")]
        pub cid: Vec<u8>,
        #[prost(enumeration = "BlockPresenceType", tag = "2")]
        pub r#type: i32,
    }
}

/// What a wantlist entry asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WantType {
    Block,
    Have,
}

/// One wantlist entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantEntry {
    pub cid: Cid,
    pub priority: i32,
    pub cancel: bool,
    pub want_type: WantType,
    pub send_dont_have: bool,
}

impl WantEntry {
    pub fn want(cid: Cid, want_type: WantType, priority: i32, send_dont_have: bool) -> Self {
        Self { cid, priority, cancel: false, want_type, send_dont_have }
    }

    pub fn cancel(cid: Cid) -> Self {
        Self { cid, priority: 0, cancel: true, want_type: WantType::Block, send_dont_have: false }
    }
}

/// A block and the CID that addresses its data. Every way to build one hashes the data or takes it
/// from the node's own store, so whoever holds a `Block` need not hash it again. On the wire a
/// block's CID is derived from its data (a 1.1 prefix names only the hash function), so a peer
/// cannot send data under a CID it does not hash to: it can only send a block nobody asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    cid: Cid,
    data: Bytes,
}

impl Block {
    /// `data` under the CID it claims, refused if it does not hash to it.
    pub fn new(cid: Cid, data: Bytes) -> Result<Self, VerifyError> {
        verify::verify(&cid, &data)?;
        Ok(Self { cid, data })
    }

    /// `data` as a CIDv1 raw block with a sha2-256 multihash.
    pub fn raw(data: Bytes) -> Self {
        Self { cid: verify::raw_cid(&data), data }
    }

    /// A block of the server's store, which holds only blocks that were verified on the way in.
    pub(super) fn stored(cid: Cid, data: Bytes) -> Self {
        Self { cid, data }
    }

    pub fn cid(&self) -> Cid {
        self.cid
    }

    pub fn data(&self) -> &Bytes {
        &self.data
    }

    pub fn into_data(self) -> Bytes {
        self.data
    }
}

/// HAVE or DONT_HAVE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Presence {
    Have,
    DontHave,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockPresence {
    pub cid: Cid,
    pub presence: Presence,
}

/// A Bitswap message in domain form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message {
    pub wantlist: Vec<WantEntry>,
    /// The wantlist replaces the previous one rather than updating it.
    pub full: bool,
    pub blocks: Vec<Block>,
    pub presences: Vec<BlockPresence>,
    pub pending_bytes: i32,
}

/// Why a received message was refused.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("invalid CID in {field}")]
    BadCid { field: &'static str },
    #[error("invalid block prefix")]
    BadPrefix,
    #[error("block cannot be addressed: {0}")]
    Block(#[from] VerifyError),
    #[error("unknown enum value {value} in {field}")]
    BadEnum { field: &'static str, value: i32 },
}

impl Message {
    pub fn is_empty(&self) -> bool {
        self.wantlist.is_empty() && self.blocks.is_empty() && self.presences.is_empty()
    }

    /// Sum of the block data lengths.
    pub fn block_bytes(&self) -> usize {
        self.blocks.iter().map(|b| b.data.len()).sum()
    }

    /// The protobuf form as `version` carries it.
    pub fn to_pb(&self, version: ProtocolVersion) -> pb::Message {
        let have = version.supports_have();
        let entries: Vec<pb::Entry> = self
            .wantlist
            .iter()
            .filter(|e| have || e.cancel || e.want_type == WantType::Block)
            .map(|e| pb::Entry {
                block: e.cid.to_bytes(),
                priority: e.priority,
                cancel: e.cancel,
                want_type: match (have, e.want_type) {
                    (true, WantType::Have) => pb::WantType::Have as i32,
                    _ => pb::WantType::Block as i32,
                },
                send_dont_have: have && e.send_dont_have,
            })
            .collect();
        let wantlist =
            (!entries.is_empty() || self.full).then_some(pb::Wantlist { entries, full: self.full });
        let (blocks, payload) = if version.supports_block_prefix() {
            let payload = self
                .blocks
                .iter()
                .map(|b| pb::Block { prefix: prefix_of(&b.cid), data: b.data.clone() })
                .collect();
            (Vec::new(), payload)
        } else {
            (self.blocks.iter().map(|b| b.data.clone()).collect(), Vec::new())
        };
        let block_presences = if have {
            self.presences
                .iter()
                .map(|p| pb::BlockPresence {
                    cid: p.cid.to_bytes(),
                    r#type: match p.presence {
                        Presence::Have => pb::BlockPresenceType::Have as i32,
                        Presence::DontHave => pb::BlockPresenceType::DontHave as i32,
                    },
                })
                .collect()
        } else {
            Vec::new()
        };
        let pending_bytes = if have { self.pending_bytes } else { 0 };
        pb::Message { wantlist, blocks, payload, block_presences, pending_bytes }
    }

    /// One length-prefixed frame for a peer speaking `version`.
    pub fn encode_frame(&self, version: ProtocolVersion) -> Result<Vec<u8>, FrameError> {
        framing::encode_frame(&self.to_pb(version), MAX_MESSAGE_SIZE)
    }

    /// Bytes this message takes on the wire to a peer speaking `version`, prefix included.
    pub fn framed_len(&self, version: ProtocolVersion) -> usize {
        framing::framed_len(&self.to_pb(version))
    }

    /// Decodes the body of one frame. Raw 1.0.0 blocks are addressed as CIDv0; 1.1.0+ blocks are
    /// addressed by hashing their data as the prefix says. Fields a version does not define are
    /// accepted whatever the version, as boxo does.
    pub fn decode(body: &[u8]) -> Result<Self, DecodeError> {
        Self::hashed(Self::decode_unhashed(body)?)
    }

    /// The message with its blocks, each hashed here.
    fn hashed((mut message, blocks): (Self, Vec<WireBlock>)) -> Result<Self, DecodeError> {
        message.blocks = blocks.into_iter().map(WireBlock::hash).collect::<Result<_, _>>()?;
        Ok(message)
    }

    /// Decodes the body of one frame but leaves its blocks unhashed: the message without them,
    /// and the blocks to address, so that the hashing can be done elsewhere (the browser's own
    /// SHA-256, see [`WireBlock::with_sha2_256`]).
    pub fn decode_unhashed(body: &[u8]) -> Result<(Self, Vec<WireBlock>), DecodeError> {
        if body.len() > MAX_MESSAGE_SIZE {
            return Err(FrameError::TooLarge { len: body.len(), max: MAX_MESSAGE_SIZE }.into());
        }
        Self::from_pb(framing::decode_body::<pb::Message>(body)?)
    }

    /// Typed form of a decoded protobuf message, with its blocks unhashed.
    pub fn from_pb(msg: pb::Message) -> Result<(Self, Vec<WireBlock>), DecodeError> {
        let (wantlist, full) = match msg.wantlist {
            Some(w) => (w.entries.into_iter().map(want_from_pb).collect::<Result<_, _>>()?, w.full),
            None => (Vec::new(), false),
        };
        let mut blocks = Vec::with_capacity(msg.blocks.len() + msg.payload.len());
        for data in msg.blocks {
            blocks.push(WireBlock { prefix: Prefix::V0, data });
        }
        for b in msg.payload {
            blocks.push(WireBlock { prefix: Prefix::parse(&b.prefix)?, data: b.data });
        }
        let presences = msg
            .block_presences
            .into_iter()
            .map(|p| {
                let cid = parse_cid(&p.cid, "blockPresences.cid")?;
                let presence = match pb::BlockPresenceType::try_from(p.r#type) {
                    Ok(pb::BlockPresenceType::Have) => Presence::Have,
                    Ok(pb::BlockPresenceType::DontHave) => Presence::DontHave,
                    Err(_) => {
                        return Err(DecodeError::BadEnum {
                            field: "blockPresences.type",
                            value: p.r#type,
                        })
                    }
                };
                Ok(BlockPresence { cid, presence })
            })
            .collect::<Result<_, _>>()?;
        let message = Self {
            wantlist,
            full,
            blocks: Vec::new(),
            presences,
            pending_bytes: msg.pending_bytes,
        };
        Ok((message, blocks))
    }
}

/// A received block before its data is hashed: the data and how its CID is to be derived.
/// Hashing is what addresses, and so verifies, a block: a [`Block`] comes out only through
/// [`WireBlock::hash`] or [`WireBlock::with_sha2_256`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireBlock {
    prefix: Prefix,
    data: Bytes,
}

impl WireBlock {
    pub fn data(&self) -> &Bytes {
        &self.data
    }

    /// Whether the CID takes the full sha2-256 digest of the data, which a caller may compute
    /// by other means than this crate's.
    pub fn is_sha2_256(&self) -> bool {
        self.prefix.code == verify::SHA2_256 && self.prefix.len == 32
    }

    /// The block, addressed by hashing its data as the prefix says.
    pub fn hash(self) -> Result<Block, DecodeError> {
        let hash = verify::multihash(self.prefix.code, self.prefix.len, &self.data)?;
        Ok(Block { cid: self.prefix.cid(hash)?, data: self.data })
    }

    /// The block, addressed by `digest`, which the caller computed as the sha2-256 of
    /// [`Self::data`]. Refused when the prefix asks for anything else.
    pub fn with_sha2_256(self, digest: &[u8; 32]) -> Result<Block, DecodeError> {
        if !self.is_sha2_256() {
            return Err(DecodeError::BadPrefix);
        }
        let hash = Multihash::wrap(verify::SHA2_256, digest).map_err(|_| DecodeError::BadPrefix)?;
        Ok(Block { cid: self.prefix.cid(hash)?, data: self.data })
    }
}

/// The 1.1 block prefix, parsed: the CID version, codec, multihash code and digest length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Prefix {
    version: Version,
    codec: u64,
    code: u64,
    len: usize,
}

impl Prefix {
    /// A 1.0.0 block: CIDv0, dag-pb and sha2-256.
    const V0: Prefix =
        Prefix { version: Version::V0, codec: DAG_PB, code: verify::SHA2_256, len: 32 };

    fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut rest = bytes;
        let mut fields = [0u64; 4];
        for field in &mut fields {
            let (v, tail) =
                unsigned_varint::decode::u64(rest).map_err(|_| DecodeError::BadPrefix)?;
            *field = v;
            rest = tail;
        }
        let [version, codec, code, len] = fields;
        let len = usize::try_from(len).map_err(|_| DecodeError::BadPrefix)?;
        if !rest.is_empty() || len > 64 {
            return Err(DecodeError::BadPrefix);
        }
        let version = Version::try_from(version).map_err(|_| DecodeError::BadPrefix)?;
        Ok(Prefix { version, codec, code, len })
    }

    fn cid(&self, hash: Multihash<64>) -> Result<Cid, DecodeError> {
        Cid::new(self.version, self.codec, hash).map_err(|_| DecodeError::BadPrefix)
    }
}

fn want_from_pb(e: pb::Entry) -> Result<WantEntry, DecodeError> {
    let want_type = match pb::WantType::try_from(e.want_type) {
        Ok(pb::WantType::Block) => WantType::Block,
        Ok(pb::WantType::Have) => WantType::Have,
        Err(_) => return Err(DecodeError::BadEnum { field: "entry.wantType", value: e.want_type }),
    };
    Ok(WantEntry {
        cid: parse_cid(&e.block, "entry.block")?,
        priority: e.priority,
        cancel: e.cancel,
        want_type,
        send_dont_have: e.send_dont_have,
    })
}

fn parse_cid(bytes: &[u8], field: &'static str) -> Result<Cid, DecodeError> {
    Cid::try_from(bytes).map_err(|_| DecodeError::BadCid { field })
}

/// The 1.1 block prefix: version, codec, multihash code, digest length, each an unsigned varint.
pub fn prefix_of(cid: &Cid) -> Vec<u8> {
    let mut out = Vec::with_capacity(8);
    let version = match cid.version() {
        Version::V0 => 0,
        Version::V1 => 1,
    };
    let hash = cid.hash();
    for v in [version, cid.codec(), hash.code(), u64::from(hash.size())] {
        let mut buf = unsigned_varint::encode::u64_buffer();
        out.extend_from_slice(unsigned_varint::encode::u64(v, &mut buf));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::FrameDecoder;
    use multihash::Multihash;

    fn block(data: &'static [u8]) -> Block {
        Block::raw(Bytes::from_static(data))
    }

    fn sample() -> Message {
        let a = block(b"alpha");
        let b = block(b"beta");
        Message {
            wantlist: vec![
                WantEntry::want(a.cid, WantType::Have, 7, true),
                WantEntry::want(b.cid, WantType::Block, 3, false),
                WantEntry::cancel(verify::raw_cid(b"gamma")),
            ],
            full: false,
            blocks: vec![a.clone(), b.clone()],
            presences: vec![
                BlockPresence { cid: a.cid, presence: Presence::Have },
                BlockPresence { cid: b.cid, presence: Presence::DontHave },
            ],
            pending_bytes: 1234,
        }
    }

    fn round_trip(msg: &Message, version: ProtocolVersion) -> Message {
        let frame = msg.encode_frame(version).unwrap();
        assert_eq!(frame.len(), msg.framed_len(version));
        let mut dec = FrameDecoder::new(MAX_MESSAGE_SIZE);
        dec.extend(&frame);
        Message::decode(&dec.next_frame().unwrap().unwrap()).unwrap()
    }

    #[test]
    fn v1_2_round_trip_keeps_everything() {
        assert_eq!(round_trip(&sample(), ProtocolVersion::V1_2_0), sample());
    }

    #[test]
    fn v1_1_strips_have_wants_presences_and_pending_bytes() {
        let got = round_trip(&sample(), ProtocolVersion::V1_1_0);
        let want = sample();
        assert_eq!(got.wantlist, want.wantlist[1..].to_vec());
        assert_eq!(got.blocks, want.blocks);
        assert!(got.presences.is_empty());
        assert_eq!(got.pending_bytes, 0);
    }

    #[test]
    fn v1_0_and_bare_send_raw_blocks_addressed_as_cidv0() {
        let mut msg = Message::default();
        let data = Bytes::from_static(b"dag-pb node");
        let cid = Cid::new_v0(verify::multihash(verify::SHA2_256, 32, &data).unwrap()).unwrap();
        msg.blocks.push(Block::new(cid, data).unwrap());
        for v in [ProtocolVersion::V1_0_0, ProtocolVersion::Legacy] {
            let pb = msg.to_pb(v);
            assert_eq!(pb.blocks.len(), 1);
            assert!(pb.payload.is_empty());
            assert_eq!(round_trip(&msg, v), msg);
        }
    }

    #[test]
    fn cidv0_prefix_round_trips() {
        let data = b"v0 block";
        let cid = Cid::new_v0(verify::multihash(verify::SHA2_256, 32, data).unwrap()).unwrap();
        assert_eq!(prefix_of(&cid), vec![0x00, 0x70, 0x12, 0x20]);
        let block = WireBlock {
            prefix: Prefix::parse(&prefix_of(&cid)).unwrap(),
            data: Bytes::from_static(data),
        };
        assert_eq!(block.hash().map(|b| b.cid()), Ok(cid));
    }

    /// A message written out byte by byte from the proto definition, then decoded field by field.
    #[test]
    fn decodes_hand_built_bytes() {
        let data = b"hi";
        let cid = verify::raw_cid(data);
        let cid_bytes = cid.to_bytes();
        assert_eq!(cid_bytes.len(), 36);
        let mut entry = vec![0x0a, 36];
        entry.extend_from_slice(&cid_bytes);
        entry.extend_from_slice(&[0x10, 5]); // priority = 5
        entry.extend_from_slice(&[0x20, 1]); // wantType = Have
        entry.extend_from_slice(&[0x28, 1]); // sendDontHave = true
        let mut wantlist = vec![0x0a, entry.len() as u8];
        wantlist.extend_from_slice(&entry);
        wantlist.extend_from_slice(&[0x10, 1]); // full = true
        let prefix = [0x01, 0x55, 0x12, 0x20]; // CIDv1, raw, sha2-256, 32 bytes
        let mut payload = vec![0x0a, 4];
        payload.extend_from_slice(&prefix);
        payload.extend_from_slice(&[0x12, 2, b'h', b'i']);
        let mut presence = vec![0x0a, 36];
        presence.extend_from_slice(&cid_bytes);
        presence.extend_from_slice(&[0x10, 1]); // DontHave
        let mut body = vec![0x0a, wantlist.len() as u8];
        body.extend_from_slice(&wantlist);
        body.extend_from_slice(&[0x1a, payload.len() as u8]);
        body.extend_from_slice(&payload);
        body.extend_from_slice(&[0x22, presence.len() as u8]);
        body.extend_from_slice(&presence);
        body.extend_from_slice(&[0x28, 0x90, 0x4e]); // pendingBytes = 10000

        let msg = Message::decode(&body).unwrap();
        assert!(msg.full);
        assert_eq!(msg.wantlist, vec![WantEntry::want(cid, WantType::Have, 5, true)]);
        assert_eq!(msg.blocks, vec![Block::new(cid, Bytes::from_static(data)).unwrap()]);
        assert_eq!(msg.presences, vec![BlockPresence { cid, presence: Presence::DontHave }]);
        assert_eq!(msg.pending_bytes, 10000);
    }

    #[test]
    fn decodes_hand_built_v1_0_raw_block() {
        let body = [0x12, 3, b'a', b'b', b'c'];
        let msg = Message::decode(&body).unwrap();
        assert_eq!(msg.blocks.len(), 1);
        assert_eq!(msg.blocks[0].cid.version(), Version::V0);
        assert_eq!(verify::verify(&msg.blocks[0].cid, b"abc"), Ok(()));
    }

    #[test]
    fn a_block_is_refused_under_a_cid_its_data_does_not_hash_to() {
        let cid = verify::raw_cid(b"alpha");
        assert_eq!(Block::new(cid, Bytes::from_static(b"beta")), Err(VerifyError::Mismatch));
        assert_eq!(Block::new(cid, Bytes::from_static(b"alpha")).map(|b| b.cid()), Ok(cid));
    }

    #[test]
    fn data_sent_under_a_wanted_blocks_prefix_arrives_under_its_own_cid() {
        let wanted = verify::raw_cid(b"wanted");
        let forged = pb::Block { prefix: prefix_of(&wanted), data: Bytes::from_static(b"forged") };
        let msg = Message::from_pb(pb::Message { payload: vec![forged], ..Default::default() });
        assert_eq!(
            Message::hashed(msg.unwrap()).unwrap().blocks[0].cid(),
            verify::raw_cid(b"forged")
        );
    }

    #[test]
    fn a_sha2_256_digest_computed_elsewhere_addresses_a_block_as_hashing_here_does() {
        let data = Bytes::from_static(b"leaf");
        let v1 = pb::Block { prefix: prefix_of(&verify::raw_cid(&data)), data: data.clone() };
        let msg =
            pb::Message { blocks: vec![data.clone()], payload: vec![v1], ..Default::default() };
        let (_, blocks) = Message::from_pb(msg).unwrap();
        let digest: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(&data).into();
        for b in blocks {
            assert!(b.is_sha2_256());
            assert_eq!(b.clone().with_sha2_256(&digest), b.hash());
        }
    }

    #[test]
    fn a_sha2_256_digest_cannot_address_a_block_under_another_function() {
        let data = Bytes::from_static(b"leaf");
        let sha3 =
            Cid::new_v1(verify::RAW, verify::multihash(verify::SHA3_256, 32, &data).unwrap());
        let msg = pb::Message {
            payload: vec![pb::Block { prefix: prefix_of(&sha3), data: data.clone() }],
            ..Default::default()
        };
        let (_, mut blocks) = Message::from_pb(msg).unwrap();
        let b = blocks.remove(0);
        assert!(!b.is_sha2_256());
        let digest: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(&data).into();
        assert_eq!(b.clone().with_sha2_256(&digest), Err(DecodeError::BadPrefix));
        assert_eq!(b.hash().map(|b| b.cid()), Ok(sha3));
    }

    #[test]
    fn refuses_messages_over_4_mib() {
        let mut msg = Message::default();
        let data = Bytes::from(vec![0u8; MAX_MESSAGE_SIZE]);
        msg.blocks.push(Block::raw(data));
        assert!(matches!(
            msg.encode_frame(ProtocolVersion::V1_2_0),
            Err(FrameError::TooLarge { max: MAX_MESSAGE_SIZE, .. })
        ));
        let body = vec![0u8; MAX_MESSAGE_SIZE + 1];
        assert!(matches!(
            Message::decode(&body),
            Err(DecodeError::Frame(FrameError::TooLarge { max: MAX_MESSAGE_SIZE, .. }))
        ));
    }

    #[test]
    fn refuses_bad_cids_prefixes_and_enums() {
        let bad_entry = pb::Message {
            wantlist: Some(pb::Wantlist {
                entries: vec![pb::Entry { block: vec![1, 2, 3], ..Default::default() }],
                full: false,
            }),
            ..Default::default()
        };
        let decoded = |m: pb::Message| Message::from_pb(m).and_then(Message::hashed);
        assert_eq!(decoded(bad_entry), Err(DecodeError::BadCid { field: "entry.block" }));
        let bad_prefix = pb::Message {
            payload: vec![pb::Block { prefix: vec![0x01, 0x55], data: Bytes::new() }],
            ..Default::default()
        };
        assert_eq!(decoded(bad_prefix), Err(DecodeError::BadPrefix));
        let bad_hash = pb::Message {
            payload: vec![pb::Block { prefix: vec![0x01, 0x55, 0x1e, 0x20], data: Bytes::new() }],
            ..Default::default()
        };
        assert_eq!(decoded(bad_hash), Err(DecodeError::Block(VerifyError::UnsupportedHash(0x1e))));
        let bad_enum = pb::Message {
            block_presences: vec![pb::BlockPresence {
                cid: verify::raw_cid(b"x").to_bytes(),
                r#type: 9,
            }],
            ..Default::default()
        };
        assert!(matches!(decoded(bad_enum), Err(DecodeError::BadEnum { .. })));
        assert!(Multihash::<64>::wrap(0x12, &[0; 65]).is_err());
    }
}
