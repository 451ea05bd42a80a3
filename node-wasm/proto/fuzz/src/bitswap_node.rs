//! A Bitswap [`Node`] fed an arbitrary sequence of inputs: peers connecting (at any protocol
//! version) and leaving, messages from them (raw bodies through `Message::decode`, or built from
//! a pool of blocks: wants, cancels, blocks, corrupt blocks, presences), reads in progress and
//! writes done, sessions wanting, cancelling and closing, blocks arriving in the store, and the
//! clock. The harness answers the node as the glue does: it stores the blocks sessions receive,
//! loads the blocks the server asks for, reports server messages written, and disconnects a
//! misbehaving peer.
//!
//! It must never panic, never queue without end, and never leave its timer due once handled.
//! The input format is [`crate::pullsync_node`]'s: a config byte, then operations ([`Op`]).

use std::collections::HashMap;
use std::sync::OnceLock;

use arbitrary::{Result, Unstructured};
use bytes::Bytes;
use cid::Cid;
use syncscope_proto::bitswap::{
    Block, BlockPresence, ClientMode, Config, Event, Message, Node, Presence, ProtocolVersion,
    SessionId, Transmit, WantEntry, WantType,
};
use syncscope_proto::Core;
use web_time::Instant;

use crate::driver::{self, Glue};

/// Blocks the operations name by index (modulo the pool size).
pub const POOL: usize = 32;
/// Most entries of one kind in a built message.
const MAX_ENTRIES: u8 = 16;

pub fn pool() -> &'static [Block] {
    static BLOCKS: OnceLock<Vec<Block>> = OnceLock::new();
    BLOCKS.get_or_init(|| {
        (0..POOL)
            .map(|i| Block::raw(Bytes::from(format!("block {i} ").repeat(1 + i % 7))))
            .collect()
    })
}

fn block(index: u8) -> &'static Block {
    &pool()[usize::from(index) % POOL]
}

/// One want, cancel or presence entry of a built message: a pool index and flag bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub index: u8,
    pub flags: u8,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Connect {
        peer: u8,
        version: u8,
    },
    Disconnect {
        peer: u8,
    },
    /// A message body as received, decoded as the glue decodes it.
    Raw {
        peer: u8,
        body: Vec<u8>,
    },
    /// A message built from the pool. Want flags: bit 0 cancel, bit 1 want-have, bit 2
    /// send-dont-have, bits 3.. the priority; block flags: bit 0 corrupt data; presence flags:
    /// bit 0 DONT_HAVE.
    Built {
        peer: u8,
        full: bool,
        wants: Vec<Entry>,
        blocks: Vec<Entry>,
        presences: Vec<Entry>,
    },
    Progress {
        peer: u8,
    },
    Sent {
        peer: u8,
    },
    NewSession,
    /// Session `session` (an index into the sessions made so far) wants these blocks.
    Want {
        session: u8,
        blocks: Vec<u8>,
    },
    Cancel {
        session: u8,
        blocks: Vec<u8>,
    },
    CloseSession {
        session: u8,
    },
    /// Block `index` arrives in the store from elsewhere.
    AddBlock {
        index: u8,
    },
    Advance {
        millis: u16,
    },
    Timeout,
}

fn entries(u: &mut Unstructured<'_>) -> Result<Vec<Entry>> {
    let n = u.arbitrary::<u8>()? % (MAX_ENTRIES + 1);
    (0..n).map(|_| Ok(Entry { index: u.arbitrary()?, flags: u.arbitrary()? })).collect()
}

fn indices(u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
    let n = u.arbitrary::<u8>()? % (MAX_ENTRIES + 1);
    (0..n).map(|_| u.arbitrary()).collect()
}

impl Op {
    const KINDS: u8 = 13;

    pub fn read(u: &mut Unstructured<'_>) -> Result<Op> {
        Ok(match u.arbitrary::<u8>()? % Self::KINDS {
            0 => Op::Connect { peer: u.arbitrary()?, version: u.arbitrary()? },
            1 => Op::Disconnect { peer: u.arbitrary()? },
            2 => {
                let peer = u.arbitrary()?;
                let len = usize::from(u.arbitrary::<u16>()?);
                Op::Raw { peer, body: u.bytes(len.min(u.len()))?.to_vec() }
            }
            3 => Op::Built {
                peer: u.arbitrary()?,
                full: u.arbitrary()?,
                wants: entries(u)?,
                blocks: entries(u)?,
                presences: entries(u)?,
            },
            4 => Op::Progress { peer: u.arbitrary()? },
            5 => Op::Sent { peer: u.arbitrary()? },
            6 => Op::NewSession,
            7 => Op::Want { session: u.arbitrary()?, blocks: indices(u)? },
            8 => Op::Cancel { session: u.arbitrary()?, blocks: indices(u)? },
            9 => Op::CloseSession { session: u.arbitrary()? },
            10 => Op::AddBlock { index: u.arbitrary()? },
            11 => Op::Advance { millis: u.arbitrary()? },
            _ => Op::Timeout,
        })
    }

    /// The bytes [`Op::read`] reads back as this operation (at most 16 entries of each kind and
    /// `u16::MAX` bytes of body).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let entries = |out: &mut Vec<u8>, entries: &[Entry]| {
            out.push(entries.len() as u8);
            entries.iter().for_each(|e| out.extend([e.index, e.flags]));
        };
        let indices = |out: &mut Vec<u8>, indices: &[u8]| {
            out.push(indices.len() as u8);
            out.extend(indices);
        };
        match self {
            Op::Connect { peer, version } => out.extend([0, *peer, *version]),
            Op::Disconnect { peer } => out.extend([1, *peer]),
            Op::Raw { peer, body } => {
                out.extend([2, *peer]);
                let len = u16::try_from(body.len()).expect("at most u16::MAX bytes per body");
                out.extend(len.to_le_bytes());
                out.extend(body);
            }
            Op::Built { peer, full, wants, blocks, presences } => {
                out.extend([3, *peer, u8::from(*full)]);
                entries(out, wants);
                entries(out, blocks);
                entries(out, presences);
            }
            Op::Progress { peer } => out.extend([4, *peer]),
            Op::Sent { peer } => out.extend([5, *peer]),
            Op::NewSession => out.push(6),
            Op::Want { session, blocks } => {
                out.extend([7, *session]);
                indices(out, blocks);
            }
            Op::Cancel { session, blocks } => {
                out.extend([8, *session]);
                indices(out, blocks);
            }
            Op::CloseSession { session } => out.extend([9, *session]),
            Op::AddBlock { index } => out.extend([10, *index]),
            Op::Advance { millis } => {
                out.push(11);
                out.extend(millis.to_le_bytes());
            }
            Op::Timeout => out.push(12),
        }
    }
}

/// The message a [`Op::Built`] describes.
pub fn built(full: bool, wants: &[Entry], blocks: &[Entry], presences: &[Entry]) -> Message {
    let wantlist = wants
        .iter()
        .map(|e| {
            let cid = block(e.index).cid();
            if e.flags & 1 != 0 {
                return WantEntry::cancel(cid);
            }
            let want_type = if e.flags & 2 != 0 { WantType::Have } else { WantType::Block };
            WantEntry::want(cid, want_type, i32::from(e.flags >> 3), e.flags & 4 != 0)
        })
        .collect();
    let blocks = blocks
        .iter()
        .map(|e| {
            // Corrupt data is addressed by its own hash on the wire: a block nobody asked for.
            if e.flags & 1 != 0 {
                return Block::raw(Bytes::from_static(b"corrupt"));
            }
            block(e.index).clone()
        })
        .collect();
    let presences = presences
        .iter()
        .map(|e| {
            let presence = if e.flags & 1 != 0 { Presence::DontHave } else { Presence::Have };
            BlockPresence { cid: block(e.index).cid(), presence }
        })
        .collect();
    Message { wantlist, full, blocks, presences, pending_bytes: 0 }
}

/// The node's config from one byte: client mode and a few limits.
pub fn config(byte: u8) -> Config {
    let mode = if byte & 1 != 0 { ClientMode::Legacy } else { ClientMode::Sessions };
    let mut config = Config::new(mode).with_rng_seed(u64::from(byte));
    if byte & 2 != 0 {
        config = config.with_max_outstanding_bytes_per_peer(256);
    }
    if byte & 4 != 0 {
        config = config.with_max_queued_wants_per_peer(4);
    }
    if byte & 8 != 0 {
        config = config.with_target_message_size(128);
    }
    config
}

pub struct Harness {
    pub node: Node<u8>,
    pub now: Instant,
    sessions: Vec<SessionId>,
    /// What the glue's store holds.
    stored: HashMap<Cid, Bytes>,
    /// Messages the node sent, when recording (for [`crate::seeds`]).
    pub transmits: Option<Vec<(u8, Message)>>,
    /// Blocks sessions received.
    pub received: usize,
}

impl Harness {
    pub fn new(config: Config, blocks: &[Block]) -> Self {
        let mut harness = Harness {
            node: Node::new(config),
            now: Instant::now(),
            sessions: Vec::new(),
            stored: HashMap::new(),
            transmits: None,
            received: 0,
        };
        for b in blocks {
            harness.store(b.clone());
        }
        harness
    }

    fn store(&mut self, block: Block) {
        self.node.add_block(block.cid(), block.data().len());
        self.stored.insert(block.cid(), block.into_data());
    }

    fn session(&self, index: u8) -> Option<SessionId> {
        (!self.sessions.is_empty()).then(|| self.sessions[usize::from(index) % self.sessions.len()])
    }

    pub fn apply(&mut self, op: &Op) {
        let now = self.now;
        let cids = |indices: &[u8]| indices.iter().map(|&i| block(i).cid()).collect::<Vec<_>>();
        match op {
            Op::Connect { peer, version } => {
                let version = ProtocolVersion::ALL[usize::from(*version) % 4];
                self.node.peer_connected(now, *peer, version);
            }
            Op::Disconnect { peer } => self.node.peer_disconnected(now, *peer),
            Op::Raw { peer, body } => {
                if let Ok(msg) = Message::decode(body) {
                    self.node.handle_input(now, *peer, msg);
                }
            }
            Op::Built { peer, full, wants, blocks, presences } => {
                self.node.handle_input(now, *peer, built(*full, wants, blocks, presences));
            }
            Op::Progress { peer } => self.node.handle_progress(now, *peer),
            Op::Sent { peer } => self.node.handle_sent(*peer),
            Op::NewSession => {
                let session = self.node.new_session(now);
                self.sessions.push(session);
            }
            Op::Want { session, blocks } => {
                if let Some(session) = self.session(*session) {
                    self.node.want(now, session, cids(blocks));
                }
            }
            Op::Cancel { session, blocks } => {
                if let Some(session) = self.session(*session) {
                    self.node.cancel(now, session, cids(blocks));
                }
            }
            Op::CloseSession { session } => {
                if let Some(session) = self.session(*session) {
                    self.node.close_session(now, session);
                }
            }
            Op::AddBlock { index } => self.store(block(*index).clone()),
            Op::Advance { millis } => driver::advance(self, *millis),
            Op::Timeout => driver::to_deadline(self),
        }
        driver::drain(self);
    }

    pub fn node_timeout(&self) -> Option<Instant> {
        self.node.poll_timeout()
    }

    /// A message straight from another node's transmit (for recording).
    pub fn deliver(&mut self, peer: u8, msg: Message) {
        self.node.handle_input(self.now, peer, msg);
        driver::drain(self);
    }
}

impl Glue for Harness {
    type Core = Node<u8>;

    fn core(&mut self) -> &mut Node<u8> {
        &mut self.node
    }

    fn clock(&mut self) -> &mut Instant {
        &mut self.now
    }

    fn on_transmit(&mut self, t: Transmit<u8>) {
        if t.from_server {
            self.node.handle_sent(t.peer);
        }
        if let Some(recorded) = &mut self.transmits {
            recorded.push((t.peer, t.msg));
        }
    }

    fn on_event(&mut self, event: Event<u8>) {
        match event {
            Event::Block { block, .. } => {
                self.received += 1;
                self.store(block);
            }
            Event::Load(cid) => {
                let data = self.stored.get(&cid).cloned();
                self.node.block_loaded(cid, data);
            }
            Event::Misbehaved { peer, .. } => self.node.peer_disconnected(self.now, peer),
        }
    }
}

/// Runs one fuzz input: a config byte, then operations until the input is used up.
pub fn run(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(config_byte) = u.arbitrary::<u8>() else { return };
    let mut harness = Harness::new(config(config_byte), &pool()[..POOL / 4]);
    while !u.is_empty() {
        let Ok(op) = Op::read(&mut u) else { return };
        harness.apply(&op);
    }
}
