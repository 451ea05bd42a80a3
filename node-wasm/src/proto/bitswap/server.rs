//! The server engine: per-peer ledgers, response packing and fair scheduling.
//!
//! Block access is split so the engine works the same in a single-threaded browser and in tokio:
//! the engine keeps an index of the blocks the node holds and their sizes ([`Server::add_block`],
//! [`Server::remove_block`]), which answers HAVE/DONT_HAVE at once; block *data* is asked for only
//! when a response is being packed, through [`ServerEvent::Load`], and handed back with
//! [`Server::block_loaded`], however long the store takes. At most
//! `max_outstanding_bytes_per_peer` is packed or in flight per peer, so memory stays bounded; the
//! glue reports each message written with [`Server::handle_sent`].
//!
//! Rules: want-block is answered with the block; want-have with HAVE, or with the block itself
//! when it is at most `max_inline_block_size`; a missing block gets DONT_HAVE only when the entry
//! set `sendDontHave`, and the want stays so the block goes out if it arrives later. A response
//! is closed once it reaches `target_message_size` (the block that crosses it is included).
//! Peers with work take turns, one response each.

use std::collections::{BTreeMap, HashMap, VecDeque};

use bytes::Bytes;
use cid::Cid;
use web_time::Instant;

use super::message::{Block, BlockPresence, Message, Presence, WantType};
use super::stats::Stats;
use super::wantlist::{Added, Response, Task, Wantlist};
use super::{Config, ProtocolVersion};

/// What the server needs from the glue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEvent {
    /// Read this block from the store and call [`Server::block_loaded`].
    Load(Cid),
}

#[derive(Debug)]
struct Ledger {
    version: ProtocolVersion,
    wantlist: Wantlist,
    /// Bytes of messages handed out and not yet reported sent, oldest first.
    in_flight: VecDeque<usize>,
    /// Bytes packed (loading or in flight): capped by `max_outstanding_bytes_per_peer`.
    outstanding: usize,
    /// Responses waiting for block data, in the order they go out. Several may load at once,
    /// so a slow store is read in parallel up to the outstanding cap.
    packing: VecDeque<Packing>,
    scheduled: bool,
}

#[derive(Debug)]
struct Packing {
    blocks: Vec<(Cid, Option<Bytes>)>,
    presences: Vec<BlockPresence>,
    bytes: usize,
    pending_bytes: usize,
}

impl Packing {
    fn is_ready(&self) -> bool {
        self.blocks.iter().all(|(_, d)| d.is_some())
    }
}

/// Presence answers take about a CID plus a few bytes of framing.
const PRESENCE_SIZE: usize = 42;

#[derive(Debug)]
pub struct Server<P> {
    config: Config,
    index: HashMap<Cid, usize>,
    ledgers: BTreeMap<P, Ledger>,
    /// Peers waiting for blocks that this node does not have yet.
    watchers: HashMap<Cid, Vec<P>>,
    /// Blocks being loaded and the peers whose responses need them.
    loading: HashMap<Cid, Vec<P>>,
    turns: VecDeque<P>,
    transmits: VecDeque<(P, Message)>,
    events: VecDeque<ServerEvent>,
    stats: Stats<P>,
}

impl<P: Copy + Ord + std::hash::Hash + std::fmt::Debug> Server<P> {
    pub fn new(config: Config) -> Self {
        Self {
            config,
            index: HashMap::new(),
            ledgers: BTreeMap::new(),
            watchers: HashMap::new(),
            loading: HashMap::new(),
            turns: VecDeque::new(),
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            stats: Stats::default(),
        }
    }

    pub fn stats(&self) -> &Stats<P> {
        &self.stats
    }

    pub fn has_block(&self, cid: &Cid) -> bool {
        self.index.contains_key(cid)
    }

    pub fn peer_connected(&mut self, peer: P, version: ProtocolVersion) {
        let cap = self.config.max_queued_wants_per_peer;
        self.ledgers.entry(peer).and_modify(|l| l.version = version).or_insert_with(|| Ledger {
            version,
            wantlist: Wantlist::new(cap),
            in_flight: VecDeque::new(),
            outstanding: 0,
            packing: VecDeque::new(),
            scheduled: false,
        });
    }

    pub fn peer_disconnected(&mut self, peer: P) {
        self.ledgers.remove(&peer);
        self.turns.retain(|p| *p != peer);
        self.transmits.retain(|(p, _)| *p != peer);
    }

    /// The node now holds `cid` (`size` bytes): peers that wanted it get it.
    pub fn add_block(&mut self, cid: Cid, size: usize) {
        self.index.insert(cid, size);
        for peer in self.watchers.remove(&cid).unwrap_or_default() {
            self.answer(peer, cid);
        }
        self.schedule();
    }

    pub fn remove_block(&mut self, cid: &Cid) {
        self.index.remove(cid);
    }

    /// The wantlist part of a message from `peer`. Blocks and presences are the client's.
    pub fn handle_message(&mut self, _now: Instant, peer: P, msg: &Message) {
        if !self.ledgers.contains_key(&peer) {
            self.peer_connected(peer, ProtocolVersion::V1_2_0);
        }
        if msg.full {
            if let Some(l) = self.ledgers.get_mut(&peer) {
                l.wantlist.clear();
            }
        }
        for entry in &msg.wantlist {
            let Some(ledger) = self.ledgers.get_mut(&peer) else { return };
            if entry.cancel {
                ledger.wantlist.remove(&entry.cid);
                continue;
            }
            match ledger.wantlist.add(entry) {
                Added::Changed => self.answer(peer, entry.cid),
                Added::Unchanged => {}
                Added::Refused => self.stats.record(peer, |c| c.refused_wants += 1),
            }
        }
        self.schedule();
    }

    /// Queues the answer to `peer`'s want for `cid`, or watches for the block.
    fn answer(&mut self, peer: P, cid: Cid) {
        let inline = self.config.max_inline_block_size;
        let Some(ledger) = self.ledgers.get_mut(&peer) else { return };
        let Some(want_type) = ledger.wantlist.want_type(&cid) else { return };
        match self.index.get(&cid) {
            Some(&size) => {
                let response = match want_type {
                    WantType::Block => Response::Block,
                    WantType::Have if size <= inline => Response::Block,
                    WantType::Have => Response::Have,
                };
                ledger.wantlist.queue(cid, response, size);
            }
            None => {
                if ledger.version.supports_have() && ledger.wantlist.sends_dont_have(&cid) {
                    ledger.wantlist.queue(cid, Response::DontHave, PRESENCE_SIZE);
                }
                let watchers = self.watchers.entry(cid).or_default();
                if !watchers.contains(&peer) {
                    watchers.push(peer);
                }
            }
        }
        self.take_turn(peer);
    }

    fn take_turn(&mut self, peer: P) {
        if let Some(l) = self.ledgers.get_mut(&peer) {
            if !l.scheduled && l.wantlist.has_tasks() {
                l.scheduled = true;
                self.turns.push_back(peer);
            }
        }
    }

    /// The glue finished writing the oldest message it took for `peer`.
    pub fn handle_sent(&mut self, peer: P) {
        if let Some(l) = self.ledgers.get_mut(&peer) {
            if let Some(bytes) = l.in_flight.pop_front() {
                l.outstanding -= bytes;
            }
        }
        self.take_turn(peer);
        self.schedule();
    }

    /// Block data for a [`ServerEvent::Load`]; `None` if the store no longer has it.
    pub fn block_loaded(&mut self, cid: Cid, data: Option<Bytes>) {
        if data.is_none() {
            self.index.remove(&cid);
        }
        for peer in self.loading.remove(&cid).unwrap_or_default() {
            let Some(ledger) = self.ledgers.get_mut(&peer) else { continue };
            for packing in &mut ledger.packing {
                match &data {
                    Some(d) => {
                        for slot in packing.blocks.iter_mut().filter(|(c, _)| *c == cid) {
                            slot.1 = Some(d.clone());
                        }
                    }
                    None => packing.blocks.retain(|(c, _)| *c != cid),
                }
            }
            self.finish_packing(peer);
        }
        self.schedule();
    }

    /// Gives each peer with work a turn, one response per turn, until nobody can proceed.
    fn schedule(&mut self) {
        while let Some(peer) = self.turns.pop_front() {
            let Some(ledger) = self.ledgers.get_mut(&peer) else { continue };
            ledger.scheduled = false;
            if ledger.outstanding >= self.config.max_outstanding_bytes_per_peer {
                continue;
            }
            self.pack(peer);
            self.take_turn(peer);
        }
    }

    /// Takes responses off `peer`'s queue until the target size is reached.
    fn pack(&mut self, peer: P) {
        let target = self.config.target_message_size;
        let max_msg = self.config.max_message_size;
        let max_out = self.config.max_outstanding_bytes_per_peer;
        let Some(ledger) = self.ledgers.get_mut(&peer) else { return };
        let mut packing =
            Packing { blocks: Vec::new(), presences: Vec::new(), bytes: 0, pending_bytes: 0 };
        while packing.bytes < target {
            let Some(task) = ledger.wantlist.peek() else { break };
            let empty = packing.bytes == 0;
            let over_msg = packing.bytes + task.size > max_msg;
            let over_out = ledger.outstanding + packing.bytes + task.size > max_out;
            if !empty && (over_msg || over_out) {
                break;
            }
            ledger.wantlist.pop();
            packing.bytes += task.size;
            match task.response {
                Response::Block => packing.blocks.push((task.cid, None)),
                Response::Have => packing
                    .presences
                    .push(BlockPresence { cid: task.cid, presence: Presence::Have }),
                Response::DontHave => packing
                    .presences
                    .push(BlockPresence { cid: task.cid, presence: Presence::DontHave }),
            }
            count_response(&mut self.stats, peer, &task);
        }
        if packing.bytes == 0 {
            return;
        }
        packing.pending_bytes = ledger.wantlist.queued_block_bytes();
        ledger.outstanding += packing.bytes;
        for (cid, _) in &packing.blocks {
            let waiting = self.loading.entry(*cid).or_default();
            if waiting.is_empty() {
                self.events.push_back(ServerEvent::Load(*cid));
            }
            if !waiting.contains(&peer) {
                waiting.push(peer);
            }
        }
        ledger.packing.push_back(packing);
        self.finish_packing(peer);
    }

    /// Moves `peer`'s responses to the transmit queue, in order, as their block data arrives.
    fn finish_packing(&mut self, peer: P) {
        let Some(ledger) = self.ledgers.get_mut(&peer) else { return };
        while ledger.packing.front().is_some_and(Packing::is_ready) {
            let Some(packing) = ledger.packing.pop_front() else { break };
            let blocks: Vec<Block> = packing
                .blocks
                .into_iter()
                .filter_map(|(cid, data)| data.map(|data| Block { cid, data }))
                .collect();
            if blocks.is_empty() && packing.presences.is_empty() {
                // Every block vanished from the store: nothing goes out.
                ledger.outstanding -= packing.bytes;
                continue;
            }
            ledger.in_flight.push_back(packing.bytes);
            let msg = Message {
                blocks,
                presences: packing.presences,
                pending_bytes: i32::try_from(packing.pending_bytes).unwrap_or(i32::MAX),
                ..Message::default()
            };
            self.transmits.push_back((peer, msg));
        }
        self.take_turn(peer);
    }

    pub fn poll_transmit(&mut self) -> Option<(P, Message)> {
        self.transmits.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.events.pop_front()
    }

    /// Wants `peer` has queued with us.
    pub fn queued_wants(&self, peer: P) -> usize {
        self.ledgers.get(&peer).map_or(0, |l| l.wantlist.len())
    }
}

fn count_response<P: Copy + Ord>(stats: &mut Stats<P>, peer: P, task: &Task) {
    let size = task.size as u64;
    match task.response {
        Response::Block => stats.record(peer, |c| {
            c.blocks_sent += 1;
            c.block_bytes_sent += size;
        }),
        Response::Have => stats.record(peer, |c| c.haves_sent += 1),
        Response::DontHave => stats.record(peer, |c| c.dont_haves_sent += 1),
    }
}
