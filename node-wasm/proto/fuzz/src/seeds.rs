//! The seed corpus: real encoded messages and a recorded pull-sync exchange, so the fuzzers start
//! from inputs that get deep into the cores. Written to `seeds/<target>/` by
//! `cargo test --lib -- --ignored write_seeds` (from this folder); the fuzz runs read them.

use std::time::Duration;

use bytes::Bytes;
use prost::Message as _;
use syncscope_proto::bitswap::{
    raw_cid, Block, BlockPresence, Message, Presence, ProtocolVersion, WantEntry, WantType,
};
use syncscope_proto::framing::encode_frame;
use syncscope_proto::pullsync::{self, StreamAction, Transmit};
use syncscope_proto::swarm::Address;
use syncscope_proto::Core;
use web_time::Instant;

use crate::bitswap_node;
use crate::driver::{steps_to_next_deadline, Glue};
use crate::pullsync_node::{config, key_of, pool, Harness, Op, INITIAL_CHUNKS, OVERLAY};

/// Bitswap message bodies, one per version's way of carrying things.
pub fn bitswap_messages() -> Vec<(&'static str, Vec<u8>)> {
    let block = |data: &'static [u8]| Block::raw(Bytes::from_static(data));
    let (a, b) = (block(b"alpha"), block(b"beta"));
    let wants = Message {
        wantlist: vec![
            WantEntry::want(a.cid(), WantType::Have, 7, true),
            WantEntry::want(b.cid(), WantType::Block, 3, false),
            WantEntry::cancel(raw_cid(b"gamma")),
        ],
        full: true,
        ..Message::default()
    };
    let answer = Message {
        blocks: vec![a.clone(), b.clone()],
        presences: vec![
            BlockPresence { cid: a.cid(), presence: Presence::Have },
            BlockPresence { cid: b.cid(), presence: Presence::DontHave },
        ],
        pending_bytes: 1234,
        ..Message::default()
    };
    let body = |m: &Message, v| m.to_pb(v).encode_to_vec();
    vec![
        ("wantlist-1.2.0", body(&wants, ProtocolVersion::V1_2_0)),
        ("blocks-presences-1.2.0", body(&answer, ProtocolVersion::V1_2_0)),
        ("blocks-1.1.0", body(&answer, ProtocolVersion::V1_1_0)),
        // Raw data, addressed as CIDv0 by the receiver.
        ("raw-block-1.0.0", vec![0x12, 3, b'a', b'b', b'c']),
        ("empty", Vec::new()),
    ]
}

/// Streams of frames for the framing target: header (`max_len`, cut seed) then the stream.
pub fn frame_streams() -> Vec<(&'static str, Vec<u8>)> {
    let header = |max_len: u16, seed: u64| {
        let mut out = max_len.to_le_bytes().to_vec();
        out.extend(seed.to_le_bytes());
        out
    };
    let mut bitswap = header(4096, 0x1234_5678_9abc_def1);
    for (_, body) in bitswap_messages() {
        let mut prefix = Vec::new();
        prost::encode_length_delimiter(body.len(), &mut prefix).expect("a Vec grows");
        bitswap.extend(prefix);
        bitswap.extend(body);
    }
    let mut pullsync = header(4096, 0x0fed_cba9_8765_4321);
    let frames: [Vec<u8>; 3] = [
        encode_frame(&pullsync::Get { bin: 3, start: 300 }, 4096).expect("small"),
        encode_frame(&pullsync::Ack { cursors: vec![1; 32], epoch: 7 }, 4096).expect("small"),
        encode_frame(&pullsync::Want { bit_vector: vec![0xff; 2].into() }, 4096).expect("small"),
    ];
    for frame in frames {
        pullsync.extend(frame);
    }
    // A limit below the second frame's length, and a stream cut inside its last frame.
    let mut too_large = header(12, 7);
    too_large.extend(&pullsync[10..]);
    let mut truncated = header(4096, 3);
    truncated.extend(&bitswap[10..bitswap.len() - 3]);
    vec![
        ("bitswap", bitswap),
        ("pullsync", pullsync),
        ("too-large", too_large),
        ("truncated", truncated),
    ]
}

/// The peer in the recorded exchange.
pub const PEER: u8 = 1;
/// How the node under test is known to that peer.
const NODE: u8 = 0;

/// The overlay of [`PEER`]: a neighbour of [`OVERLAY`] (first byte differs in its last bit).
pub fn peer_overlay() -> Address {
    let mut overlay = OVERLAY;
    overlay.0[0] ^= 1;
    overlay
}

/// The node under test and a peer holding the rest of the pool sync from each other over a
/// perfect wire for `seconds` of virtual time. Returns the fuzz input that replays everything
/// the node received (config byte, then operations) and the node as it ended.
pub fn recorded_exchange(config_byte: u8, seconds: u64) -> (Vec<u8>, Harness) {
    let mut node = Harness::new(config(config_byte), OVERLAY, &pool()[..INITIAL_CHUNKS]);
    let mut peer = Harness::new(config(config_byte), peer_overlay(), &pool()[INITIAL_CHUNKS..]);
    peer.now = node.now;
    let end = node.now + Duration::from_secs(seconds);
    node.transmits = Some(Vec::new());
    peer.transmits = Some(Vec::new());

    let mut input = vec![config_byte];
    peer.apply(&Op::Connect { peer: NODE, overlay: OVERLAY.0 });
    record(&mut node, &mut input, Op::Connect { peer: PEER, overlay: peer_overlay().0 });
    exchange(&mut node, &mut peer, end, &mut input, ops_at_other_end);
    (input, node)
}

/// What one side's transmit is at the other end, coming from peer `from`.
fn ops_at_other_end(t: Transmit<u8>, from: u8) -> Vec<Op> {
    let key = key_of(t.stream.remote());
    match t.action {
        StreamAction::Open(protocol) => {
            let index = pullsync::Protocol::ALL.iter().position(|&p| p == protocol);
            vec![Op::Opened { peer: from, key, protocol: index.unwrap_or_default() as u8 }]
        }
        StreamAction::Send(data) => data
            .chunks(usize::from(u16::MAX))
            .map(|piece| Op::Data { peer: from, key, data: piece.to_vec() })
            .collect(),
        StreamAction::Finish => vec![Op::Finished { peer: from, key }],
        StreamAction::Reset => vec![Op::Reset { peer: from, key }],
    }
}

/// The node under test (holding the first quarter of the Bitswap pool) and a peer holding the
/// rest fetch from each other over a perfect wire at `version` for `seconds` of virtual time:
/// the node's session wants the peer's first half, the peer's wants the node's blocks. Returns
/// the fuzz input replaying what the node received, and the node as it ended.
pub fn recorded_bitswap(
    config_byte: u8,
    version: u8,
    seconds: u64,
) -> (Vec<u8>, bitswap_node::Harness) {
    use bitswap_node::{config, pool, Harness, Op, POOL};
    let (mine, theirs) = pool().split_at(POOL / 4);
    let mut node = Harness::new(config(config_byte), mine);
    let mut peer = Harness::new(config(config_byte), theirs);
    peer.now = node.now;
    let end = node.now + Duration::from_secs(seconds);
    node.transmits = Some(Vec::new());
    peer.transmits = Some(Vec::new());
    let protocol = ProtocolVersion::ALL[usize::from(version) % 4];

    let mut input = vec![config_byte];
    peer.apply(&Op::Connect { peer: NODE, version });
    record(&mut node, &mut input, Op::Connect { peer: PEER, version });
    record(&mut node, &mut input, Op::NewSession);
    let wanted: Vec<u8> = (POOL / 4..POOL * 5 / 8).map(|i| i as u8).collect();
    record(&mut node, &mut input, Op::Want { session: 0, blocks: wanted });
    peer.apply(&Op::NewSession);
    peer.apply(&Op::Want { session: 0, blocks: (0..POOL as u8 / 4).collect() });
    // As it crosses the wire: encoded for the version, then decoded.
    let over_the_wire = |(_, msg): (u8, Message), from| {
        vec![Op::Raw { peer: from, body: msg.to_pb(protocol).encode_to_vec() }]
    };
    exchange(&mut node, &mut peer, end, &mut input, over_the_wire);
    (input, node)
}

/// Every seed, by target and name.
pub fn all() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let mut seeds = Vec::new();
    for (name, body) in bitswap_messages() {
        seeds.push(("bitswap_message", name, body));
    }
    for (name, config_byte, version) in
        [("sessions-1.2.0", 0, 0), ("legacy-1.2.0", 1, 0), ("sessions-1.1.0", 0, 1)]
    {
        seeds.push(("bitswap_node", name, recorded_bitswap(config_byte, version, 3).0));
    }
    for (name, stream) in frame_streams() {
        seeds.push(("framing", name, stream));
    }
    for (name, config_byte) in [("streamed", 0), ("batched", 1), ("rate-limited-small-pages", 6)] {
        seeds.push(("pullsync_node", name, recorded_exchange(config_byte, 4).0));
    }
    seeds
}

/// A harness that can be recorded against a peer of its kind.
trait Recorded: Glue {
    type Op;
    /// What it sends, as recorded in its `transmits`.
    type Sent;
    fn advance(millis: u16) -> Self::Op;
    fn encode(op: &Self::Op, out: &mut Vec<u8>);
    fn apply(&mut self, op: &Self::Op);
    fn take_sent(&mut self) -> Vec<Self::Sent>;
}

impl Recorded for Harness {
    type Op = Op;
    type Sent = Transmit<u8>;

    fn advance(millis: u16) -> Op {
        Op::Advance { millis }
    }

    fn encode(op: &Op, out: &mut Vec<u8>) {
        op.encode(out);
    }

    fn apply(&mut self, op: &Op) {
        Harness::apply(self, op);
    }

    fn take_sent(&mut self) -> Vec<Transmit<u8>> {
        self.transmits.replace(Vec::new()).unwrap_or_default()
    }
}

impl Recorded for bitswap_node::Harness {
    type Op = bitswap_node::Op;
    type Sent = (u8, Message);

    fn advance(millis: u16) -> bitswap_node::Op {
        bitswap_node::Op::Advance { millis }
    }

    fn encode(op: &bitswap_node::Op, out: &mut Vec<u8>) {
        op.encode(out);
    }

    fn apply(&mut self, op: &bitswap_node::Op) {
        bitswap_node::Harness::apply(self, op);
    }

    fn take_sent(&mut self) -> Vec<(u8, Message)> {
        self.transmits.replace(Vec::new()).unwrap_or_default()
    }
}

/// Applies `op` to the node under test and records it as fuzz input.
fn record<H: Recorded>(node: &mut H, input: &mut Vec<u8>, op: H::Op) {
    H::encode(&op, input);
    node.apply(&op);
}

/// Carries what the two send each other over a perfect wire (`at_other_end` says what a sent
/// item is on arrival, from whom), and lets time pass when both are quiet, until no deadline of
/// either comes by `end`. What reaches `node` is recorded in `input`.
fn exchange<H: Recorded>(
    node: &mut H,
    peer: &mut H,
    end: Instant,
    input: &mut Vec<u8>,
    at_other_end: impl Fn(H::Sent, u8) -> Vec<H::Op>,
) {
    loop {
        let (from_node, from_peer) = (node.take_sent(), peer.take_sent());
        if from_node.is_empty() && from_peer.is_empty() {
            let deadlines = [node.core().poll_timeout(), peer.core().poll_timeout()];
            let Some(steps) = steps_to_next_deadline(deadlines, *node.clock(), end) else {
                return;
            };
            for millis in steps {
                peer.apply(&H::advance(millis));
                record(node, input, H::advance(millis));
            }
            continue;
        }
        for op in from_node.into_iter().flat_map(|sent| at_other_end(sent, NODE)) {
            peer.apply(&op);
        }
        for op in from_peer.into_iter().flat_map(|sent| at_other_end(sent, PEER)) {
            record(node, input, op);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn seeds_dir() -> &'static Path {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/seeds"))
    }

    /// Rewrites `seeds/`: run after a change to the cores or to an input format.
    #[test]
    #[ignore]
    fn write_seeds() {
        for (target, name, bytes) in all() {
            let dir = seeds_dir().join(target);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(name), bytes).unwrap();
        }
    }

    #[test]
    fn the_recorded_bitswap_exchange_fetches_blocks() {
        let (input, node) = recorded_bitswap(0, 0, 3);
        assert!(node.received > 0, "the node received no block");
        crate::bitswap_node::run(&input);
    }

    #[test]
    fn the_recorded_exchange_syncs_chunks_and_replays_alike() {
        let (input, node) = recorded_exchange(0, 4);
        assert!(node.received > 0, "the node received no chunk");
        crate::pullsync_node::run(&input);
    }

    /// The committed seeds exist and run. They are not compared with fresh ones: the recorded
    /// exchange differs from process to process (the cores iterate `HashMap`s, whose order is
    /// seeded per process), though every recording is a real exchange.
    #[test]
    fn committed_seeds_run() {
        for (target, name, _) in all() {
            let committed = std::fs::read(seeds_dir().join(target).join(name)).unwrap();
            match target {
                "bitswap_message" => crate::bitswap_message::run(&committed),
                "bitswap_node" => crate::bitswap_node::run(&committed),
                "framing" => crate::framing::run(&committed),
                _ => crate::pullsync_node::run(&committed),
            }
        }
    }
}
