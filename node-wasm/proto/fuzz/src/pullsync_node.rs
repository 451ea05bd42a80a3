//! A pull-sync [`Node`] fed an arbitrary sequence of inputs: peers connecting and leaving, events
//! on their streams (raw bytes, the end of a stream, a reset), the clock moving and timers
//! firing, chunks arriving in the reserve, the storage radius and the socket backlog changing.
//! The harness answers the node as the glue does: it stores the chunks the puller hands on, reads
//! the chunks the server wants, and disconnects a peer whose misbehaviour calls for it.
//!
//! It must never panic, never queue without end, and never leave its timer due once handled
//! (a glue would spin on it).
//!
//! The input is read with `arbitrary::Unstructured`: one config byte, then operations, each an
//! opcode byte and its fields (see [`Op`]); [`Op::encode`] writes the same bytes, which is how
//! [`crate::seeds`] records a real exchange as a seed.

use std::sync::OnceLock;

use arbitrary::{Result, Unstructured};
use bytes::Bytes;
use syncscope_proto::pullsync::{
    Config, DeliveryMode, Event, MemoryIntervalStore, MemoryReserve, Node, Protocol, RateLimit,
    StreamEvent, StreamId, StreamKey, Transmit,
};
use syncscope_proto::swarm::{Address, Chunk, Stamp, STAMP_SIZE};
use syncscope_proto::Core;
use web_time::Instant;

use crate::driver::{self, Glue};

/// The overlay of the node under test.
pub const OVERLAY: Address = Address([0x5a; 32]);
/// Chunks the harness can put into the reserve ([`Op::Store`]); the node starts with the first
/// [`INITIAL_CHUNKS`], the peer in the recorded seeds with the rest.
pub const POOL: usize = 48;
pub const INITIAL_CHUNKS: usize = 16;
pub type FuzzNode = Node<u8, MemoryIntervalStore, MemoryReserve>;

/// One input to the node. Stream keys are `u16`s: bit 15 set names an inbound stream (the
/// node's server), clear an outbound one (its puller), and the other bits the stream number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Connect {
        peer: u8,
        overlay: [u8; 32],
    },
    Disconnect {
        peer: u8,
    },
    Opened {
        peer: u8,
        key: u16,
        protocol: u8,
    },
    Data {
        peer: u8,
        key: u16,
        data: Vec<u8>,
    },
    Finished {
        peer: u8,
        key: u16,
    },
    Reset {
        peer: u8,
        key: u16,
    },
    /// The clock moves this many milliseconds; a due timer fires.
    Advance {
        millis: u16,
    },
    /// The clock jumps to the node's timer, which fires.
    Timeout,
    /// Chunk `index` of the pool (modulo its size) arrives in the reserve.
    Store {
        index: u8,
    },
    Radius {
        radius: u8,
    },
    Backlog {
        bytes: u32,
    },
}

impl Op {
    const KINDS: u8 = 11;

    pub fn read(u: &mut Unstructured<'_>) -> Result<Op> {
        let kind = u.arbitrary::<u8>()? % Self::KINDS;
        Ok(match kind {
            0 => Op::Connect { peer: u.arbitrary()?, overlay: u.arbitrary()? },
            1 => Op::Disconnect { peer: u.arbitrary()? },
            2 => Op::Opened { peer: u.arbitrary()?, key: u.arbitrary()?, protocol: u.arbitrary()? },
            3 => {
                let (peer, key) = (u.arbitrary()?, u.arbitrary()?);
                let len = usize::from(u.arbitrary::<u16>()?);
                Op::Data { peer, key, data: u.bytes(len.min(u.len()))?.to_vec() }
            }
            4 => Op::Finished { peer: u.arbitrary()?, key: u.arbitrary()? },
            5 => Op::Reset { peer: u.arbitrary()?, key: u.arbitrary()? },
            6 => Op::Advance { millis: u.arbitrary()? },
            7 => Op::Timeout,
            8 => Op::Store { index: u.arbitrary()? },
            9 => Op::Radius { radius: u.arbitrary()? },
            _ => Op::Backlog { bytes: u.arbitrary()? },
        })
    }

    /// The bytes [`Op::read`] reads back as this operation (`Data` of at most `u16::MAX` bytes).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let stream = |out: &mut Vec<u8>, kind: u8, peer: u8, key: u16| {
            out.extend([kind, peer]);
            out.extend(key.to_le_bytes());
        };
        match self {
            Op::Connect { peer, overlay } => {
                out.extend([0, *peer]);
                out.extend(overlay);
            }
            Op::Disconnect { peer } => out.extend([1, *peer]),
            Op::Opened { peer, key, protocol } => {
                stream(out, 2, *peer, *key);
                out.push(*protocol);
            }
            Op::Data { peer, key, data } => {
                stream(out, 3, *peer, *key);
                let len = u16::try_from(data.len()).expect("at most u16::MAX bytes per Data");
                out.extend(len.to_le_bytes());
                out.extend(data);
            }
            Op::Finished { peer, key } => stream(out, 4, *peer, *key),
            Op::Reset { peer, key } => stream(out, 5, *peer, *key),
            Op::Advance { millis } => {
                out.push(6);
                out.extend(millis.to_le_bytes());
            }
            Op::Timeout => out.push(7),
            Op::Store { index } => out.extend([8, *index]),
            Op::Radius { radius } => out.extend([9, *radius]),
            Op::Backlog { bytes } => {
                out.push(10);
                out.extend(bytes.to_le_bytes());
            }
        }
    }
}

/// The stream key a `u16` names.
pub fn stream_key(key: u16) -> StreamKey {
    let id = StreamId(u64::from(key & 0x7fff));
    if key & 0x8000 != 0 {
        StreamKey::Inbound(id)
    } else {
        StreamKey::Outbound(id)
    }
}

/// The `u16` that names `key` (its number modulo 2^15).
pub fn key_of(key: StreamKey) -> u16 {
    let id = (key.id().0 & 0x7fff) as u16;
    match key {
        StreamKey::Inbound(_) => id | 0x8000,
        StreamKey::Outbound(_) => id,
    }
}

/// The node's config from one byte: delivery mode, rate limit, page size and backlog limit.
pub fn config(byte: u8) -> Config {
    let mut config = Config::default();
    if byte & 1 != 0 {
        config = config.with_delivery(DeliveryMode::Batched);
    }
    if byte & 2 != 0 {
        config = config.with_rate_limit(Some(RateLimit { chunks_per_second: 50, burst: 10 }));
    }
    if byte & 4 != 0 {
        config = config.with_max_page(usize::from(byte >> 5) + 1);
    }
    if byte & 8 != 0 {
        config = config.with_max_backlog(4096);
    }
    if byte & 16 != 0 {
        config = config.with_max_inbound_streams(2);
    }
    config
}

/// Chunks of 0 to 600 random-looking bytes with their own stamps, made once per process.
pub fn pool() -> &'static [Chunk] {
    static POOL_CHUNKS: OnceLock<Vec<Chunk>> = OnceLock::new();
    POOL_CHUNKS.get_or_init(|| {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..POOL)
            .map(|_| {
                let len = (next() % 600) as usize;
                let payload: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                let stamp: Vec<u8> = (0..STAMP_SIZE).map(|_| next() as u8).collect();
                let stamp = Stamp::new(Bytes::from(stamp)).expect("a stamp of STAMP_SIZE bytes");
                Chunk::new(&payload, stamp).expect("a payload under 4096 bytes")
            })
            .collect()
    })
}

/// The node under test and the glue's part around it.
pub struct Harness {
    pub node: FuzzNode,
    pub now: Instant,
    /// What the node asked the glue to do, when recording (for [`crate::seeds`]).
    pub transmits: Option<Vec<Transmit<u8>>>,
    /// Chunks the puller handed on.
    pub received: usize,
    /// A chunk was stored since the server was last told.
    stored: bool,
}

impl Harness {
    pub fn new(config: Config, overlay: Address, chunks: &[Chunk]) -> Self {
        let mut reserve = MemoryReserve::new(overlay, 1);
        for chunk in chunks {
            reserve.put(chunk.clone());
        }
        let node = Node::new(config, overlay, MemoryIntervalStore::default(), reserve);
        Harness { node, now: Instant::now(), transmits: None, received: 0, stored: false }
    }

    pub fn apply(&mut self, op: &Op) {
        let now = self.now;
        match op {
            Op::Connect { peer, overlay } => {
                self.node.peer_connected(now, *peer, Address(*overlay));
            }
            Op::Disconnect { peer } => self.node.peer_disconnected(now, *peer),
            Op::Opened { peer, key, protocol } => {
                let protocol = Protocol::ALL[usize::from(*protocol) % Protocol::ALL.len()];
                self.input(*peer, *key, StreamEvent::Opened(protocol));
            }
            Op::Data { peer, key, data } => {
                self.input(*peer, *key, StreamEvent::Data(Bytes::copy_from_slice(data)));
            }
            Op::Finished { peer, key } => self.input(*peer, *key, StreamEvent::Finished),
            Op::Reset { peer, key } => self.input(*peer, *key, StreamEvent::Reset),
            Op::Advance { millis } => driver::advance(self, *millis),
            Op::Timeout => driver::to_deadline(self),
            Op::Store { index } => {
                let chunk = &pool()[usize::from(*index) % POOL];
                self.node.reserve_mut().put(chunk.clone());
                self.node.handle_reserve_changed(now);
            }
            Op::Radius { radius } => self.node.set_storage_radius(now, *radius),
            Op::Backlog { bytes } => {
                self.node.set_backlog(*bytes as usize);
            }
        }
        driver::drain(self);
    }

    /// The node's timer.
    pub fn node_timeout(&self) -> Option<Instant> {
        self.node.poll_timeout()
    }

    fn input(&mut self, peer: u8, key: u16, event: StreamEvent) {
        self.node.handle_input(self.now, peer, (stream_key(key), event));
    }
}

impl Glue for Harness {
    type Core = FuzzNode;

    fn core(&mut self) -> &mut FuzzNode {
        &mut self.node
    }

    fn clock(&mut self) -> &mut Instant {
        &mut self.now
    }

    fn on_transmit(&mut self, transmit: Transmit<u8>) {
        if let Some(recorded) = &mut self.transmits {
            recorded.push(transmit);
        }
    }

    fn on_event(&mut self, event: Event<u8>) {
        match event {
            Event::Chunk { chunk, .. } => {
                self.received += 1;
                self.node.reserve_mut().put(chunk);
                self.stored = true;
            }
            Event::ChunksWanted { peer, stream, chunks } => {
                let reserve = self.node.reserve();
                let found = chunks.iter().map(|c| reserve.get(c)).collect();
                // `NotWaiting`: the stream was reset meanwhile, as in the glue.
                let _ = self.node.provide_chunks(peer, stream, found);
            }
            Event::Misbehaved { peer, error } => {
                if error.disconnects() {
                    self.node.peer_disconnected(self.now, peer);
                }
            }
            Event::IntervalSynced { .. } | Event::IntervalStoreFailed { .. } => {}
        }
    }

    /// One notice to the server for all the chunks stored in a round, as the glue gives it.
    fn settle(&mut self) {
        if std::mem::take(&mut self.stored) {
            self.node.handle_reserve_changed(self.now);
        }
    }
}

/// Runs one fuzz input: a config byte, then operations until the input is used up.
pub fn run(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(config_byte) = u.arbitrary::<u8>() else { return };
    let mut harness = Harness::new(config(config_byte), OVERLAY, &pool()[..INITIAL_CHUNKS]);
    while !u.is_empty() {
        let Ok(op) = Op::read(&mut u) else { return };
        harness.apply(&op);
    }
}
