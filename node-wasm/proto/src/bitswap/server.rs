//! The server engine: per-peer ledgers, response packing and fair scheduling.
//!
//! Block access is split so the engine works the same in a single-threaded browser and in tokio:
//! the engine keeps an index of the blocks the node holds and their sizes ([`Server::add_block`],
//! [`Server::remove_stored`]), which answers HAVE/DONT_HAVE at once; block *data* is asked for only
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
use multihash::Multihash;
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
    /// Keyed by multihash: the same bytes under another codec are the same block to the store.
    index: HashMap<Multihash<64>, usize>,
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
        self.index.contains_key(cid.hash())
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
        self.index.insert(*cid.hash(), size);
        for peer in self.watchers.remove(&cid).unwrap_or_default() {
            self.answer(peer, cid);
        }
        self.schedule();
    }

    /// The store dropped the block with this multihash, under whatever codec.
    pub fn remove_stored(&mut self, hash: &Multihash<64>) {
        self.index.remove(hash);
    }

    /// A block the store already held when the node started (`size` bytes under `hash`): indexed
    /// without waking watchers, as no peer can be waiting for it yet.
    pub fn index_stored(&mut self, hash: Multihash<64>, size: usize) {
        self.index.insert(hash, size);
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
        match self.index.get(cid.hash()) {
            Some(&size) => {
                // A HAVE costs a presence on the wire, not the block it stands for.
                let (response, cost) = match want_type {
                    WantType::Block => (Response::Block, size),
                    WantType::Have if size <= inline => (Response::Block, size),
                    WantType::Have => (Response::Have, PRESENCE_SIZE),
                };
                ledger.wantlist.queue(cid, response, cost);
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
            self.index.remove(cid.hash());
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
            // A peer whose next response does not fit under its cap waits for `handle_sent`.
            if ledger.outstanding < self.config.max_outstanding_bytes_per_peer && self.pack(peer) {
                self.take_turn(peer);
            }
        }
    }

    /// Takes responses off `peer`'s queue until the target size is reached. False if nothing
    /// could be taken.
    fn pack(&mut self, peer: P) -> bool {
        let target = self.config.target_message_size;
        let max_msg = self.config.max_message_size;
        let max_out = self.config.max_outstanding_bytes_per_peer;
        let Some(ledger) = self.ledgers.get_mut(&peer) else { return false };
        let mut packing =
            Packing { blocks: Vec::new(), presences: Vec::new(), bytes: 0, pending_bytes: 0 };
        while packing.bytes < target {
            let Some(task) = ledger.wantlist.peek() else { break };
            // One response may exceed the caps on its own (a 2 MiB block must go out), but only
            // when nothing else is packed or outstanding.
            let first = packing.bytes == 0;
            let idle = first && ledger.outstanding == 0;
            let over_msg = !first && packing.bytes + task.size > max_msg;
            let over_out = !idle && ledger.outstanding + packing.bytes + task.size > max_out;
            if over_msg || over_out {
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
            return false;
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
        true
    }

    /// Moves `peer`'s responses to the transmit queue, in order, as their block data arrives.
    fn finish_packing(&mut self, peer: P) {
        let Some(ledger) = self.ledgers.get_mut(&peer) else { return };
        while ledger.packing.front().is_some_and(Packing::is_ready) {
            let Some(packing) = ledger.packing.pop_front() else { break };
            let blocks: Vec<Block> = packing
                .blocks
                .into_iter()
                .filter_map(|(cid, data)| data.map(|data| Block::stored(cid, data)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitswap::message::WantEntry;
    use crate::bitswap::verify::raw_cid;

    fn data(i: u32, len: usize) -> (Cid, Bytes) {
        let mut d = vec![0u8; len];
        d[..4].copy_from_slice(&i.to_le_bytes());
        (raw_cid(&d), Bytes::from(d))
    }

    /// A server holding blocks `0..n` of `len` bytes, answering loads at once.
    struct Harness {
        server: Server<u8>,
        store: HashMap<Cid, Bytes>,
        now: Instant,
    }

    impl Harness {
        fn new(config: Config, n: u32, len: usize) -> (Self, Vec<Cid>) {
            let mut h =
                Harness { server: Server::new(config), store: HashMap::new(), now: Instant::now() };
            let cids = (0..n)
                .map(|i| {
                    let (cid, d) = data(i, len);
                    h.server.add_block(cid, d.len());
                    h.store.insert(cid, d);
                    cid
                })
                .collect();
            for p in 0..4 {
                h.server.peer_connected(p, ProtocolVersion::V1_2_0);
            }
            (h, cids)
        }

        fn wants(&mut self, peer: u8, entries: Vec<WantEntry>) {
            let msg = Message { wantlist: entries, ..Message::default() };
            self.server.handle_message(self.now, peer, &msg);
        }

        /// Answers every load and returns the responses, in order.
        fn drain(&mut self) -> Vec<(u8, Message)> {
            while let Some(ServerEvent::Load(cid)) = self.server.poll_event() {
                let d = self.store.get(&cid).cloned();
                self.server.block_loaded(cid, d);
            }
            std::iter::from_fn(|| self.server.poll_transmit()).collect()
        }
    }

    fn want(cid: Cid, t: WantType, dont_have: bool) -> WantEntry {
        WantEntry::want(cid, t, 1, dont_have)
    }

    #[test]
    fn want_block_is_answered_with_the_block_and_want_have_with_have() {
        let (mut h, cids) = Harness::new(Config::default(), 2, 2000);
        h.wants(
            0,
            vec![want(cids[0], WantType::Block, false), want(cids[1], WantType::Have, false)],
        );
        let out = h.drain();
        assert_eq!(out.len(), 1);
        let msg = &out[0].1;
        assert_eq!(msg.blocks.iter().map(|b| b.cid()).collect::<Vec<_>>(), vec![cids[0]]);
        assert_eq!(msg.presences, vec![BlockPresence { cid: cids[1], presence: Presence::Have }]);
        assert_eq!(h.server.stats().peer(0).blocks_sent, 1);
        assert_eq!(h.server.stats().peer(0).haves_sent, 1);
    }

    #[test]
    fn want_have_for_a_small_block_gets_the_block() {
        let (mut h, cids) = Harness::new(Config::default(), 2, 1024);
        h.wants(0, vec![want(cids[0], WantType::Have, true)]);
        let out = h.drain();
        assert_eq!(out[0].1.blocks.len(), 1);
        assert!(out[0].1.presences.is_empty());
    }

    #[test]
    fn dont_have_only_when_asked_for() {
        let (mut h, _) = Harness::new(Config::default(), 0, 0);
        let (missing, _) = data(99, 100);
        h.wants(0, vec![want(missing, WantType::Have, false)]);
        assert!(h.drain().is_empty());
        h.wants(1, vec![want(missing, WantType::Block, true)]);
        let out = h.drain();
        assert_eq!(
            out[0].1.presences,
            vec![BlockPresence { cid: missing, presence: Presence::DontHave }]
        );
        let mut v11 = Harness::new(Config::default(), 0, 0).0;
        v11.server.peer_connected(2, ProtocolVersion::V1_1_0);
        v11.wants(2, vec![want(missing, WantType::Block, true)]);
        assert!(v11.drain().is_empty(), "no DONT_HAVE on 1.1.0");
    }

    #[test]
    fn a_want_for_a_missing_block_is_served_when_the_block_arrives() {
        let (mut h, _) = Harness::new(Config::default(), 0, 0);
        let (cid, d) = data(5, 3000);
        h.wants(0, vec![want(cid, WantType::Block, true)]);
        assert_eq!(h.drain()[0].1.presences.len(), 1);
        h.store.insert(cid, d.clone());
        h.server.add_block(cid, d.len());
        let out = h.drain();
        assert_eq!(out[0].1.blocks, vec![Block::stored(cid, d)]);
    }

    #[test]
    fn a_block_stored_before_start_answers_its_hash_under_any_codec() {
        let (mut h, _) = Harness::new(Config::default(), 0, 0);
        let (raw, d) = data(7, 3000);
        h.server.index_stored(*raw.hash(), d.len());
        let dag_pb = Cid::new_v1(0x70, *raw.hash());
        h.wants(0, vec![want(dag_pb, WantType::Block, true)]);
        assert_eq!(h.server.poll_event(), Some(ServerEvent::Load(dag_pb)));
        h.server.block_loaded(dag_pb, Some(d.clone()));
        let out: Vec<_> = std::iter::from_fn(|| h.server.poll_transmit()).collect();
        assert_eq!(out[0].1.blocks, vec![Block::stored(dag_pb, d)]);
    }

    #[test]
    fn cancel_drops_the_queued_answer() {
        let (mut h, cids) =
            Harness::new(Config::default().with_max_outstanding_bytes_per_peer(1), 2, 2000);
        h.wants(
            0,
            vec![want(cids[0], WantType::Block, false), want(cids[1], WantType::Block, false)],
        );
        // A 1-byte cap lets one response out at a time: the first is packed, the second waits.
        assert_eq!(h.drain().len(), 1);
        h.wants(0, vec![WantEntry::cancel(cids[1])]);
        h.server.handle_sent(0);
        assert!(h.drain().is_empty());
        assert_eq!(h.server.queued_wants(0), 0);
    }

    #[test]
    fn responses_fill_to_16_kib_and_overflow_with_the_last_block() {
        let (mut h, cids) = Harness::new(Config::default(), 5, 8000);
        h.wants(0, cids.iter().map(|c| want(*c, WantType::Block, false)).collect());
        let sizes: Vec<usize> = h.drain().iter().map(|(_, m)| m.blocks.len()).collect();
        // 8000 + 8000 < 16384, so a third block goes in (24000 bytes), then the rest.
        assert_eq!(sizes, vec![3, 2]);
    }

    #[test]
    fn at_most_1_mib_outstanding_per_peer() {
        let (mut h, cids) = Harness::new(Config::default(), 6, 300 * 1024);
        h.wants(0, cids.iter().map(|c| want(*c, WantType::Block, false)).collect());
        let first: usize = h.drain().iter().map(|(_, m)| m.blocks.len()).sum();
        assert_eq!(first, 3, "a fourth 300 KiB block would pass 1 MiB");
        h.server.handle_sent(0);
        let second: usize = h.drain().iter().map(|(_, m)| m.blocks.len()).sum();
        assert_eq!(second, 1);
    }

    #[test]
    fn wants_beyond_1024_are_refused_and_counted() {
        let (mut h, _) = Harness::new(Config::default(), 0, 0);
        let entries = (0..1030).map(|i| want(data(i, 10).0, WantType::Block, false)).collect();
        h.wants(0, entries);
        assert_eq!(h.server.queued_wants(0), 1024);
        assert_eq!(h.server.stats().peer(0).refused_wants, 6);
    }

    #[test]
    fn peers_take_turns() {
        // Both peers wait for the same blocks; as each arrives, each peer gets one response in
        // turn instead of the first peer's whole queue going out first.
        let config = Config::default().with_target_message_size(1);
        let (mut h, _) = Harness::new(config, 0, 0);
        let blocks: Vec<(Cid, Bytes)> = (0..3).map(|i| data(i, 8000)).collect();
        for p in [0, 1] {
            h.wants(p, blocks.iter().map(|(c, _)| want(*c, WantType::Block, false)).collect());
        }
        for (cid, d) in &blocks {
            h.store.insert(*cid, d.clone());
            h.server.add_block(*cid, d.len());
        }
        let order: Vec<u8> = h.drain().iter().map(|(p, _)| *p).collect();
        assert_eq!(order, vec![0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn a_busy_peer_does_not_hold_up_others_within_one_pass() {
        let config = Config::default().with_target_message_size(1);
        let (mut h, cids) = Harness::new(config, 4, 8000);
        // Queue work for both peers without scheduling, then let one pass run.
        for (p, range) in [(0u8, 0..3), (1u8, 3..4)] {
            let ledger = h.server.ledgers.get_mut(&p).unwrap();
            for c in &cids[range] {
                ledger.wantlist.add(&want(*c, WantType::Block, false));
                ledger.wantlist.queue(*c, Response::Block, 8000);
            }
            h.server.take_turn(p);
        }
        h.server.schedule();
        let order: Vec<u8> = h.drain().iter().map(|(p, _)| *p).collect();
        assert_eq!(order, vec![0, 1, 0, 0]);
    }

    #[test]
    fn slow_store_reads_fill_the_outstanding_cap() {
        let (mut h, cids) = Harness::new(Config::default(), 8, 256 * 1024);
        h.wants(0, cids.iter().map(|c| want(*c, WantType::Block, false)).collect());
        let loads = std::iter::from_fn(|| h.server.poll_event()).count();
        assert_eq!(loads, 4, "four 256 KiB reads fit in 1 MiB");
    }

    #[test]
    fn have_answers_do_not_count_as_block_bytes() {
        let (mut h, cids) = Harness::new(Config::default(), 8, 256 * 1024);
        let mut entries: Vec<WantEntry> =
            cids[4..].iter().map(|c| want(*c, WantType::Have, false)).collect();
        entries.extend(cids[..4].iter().map(|c| want(*c, WantType::Block, false)));
        h.wants(0, entries);
        let out = h.drain();
        assert_eq!(out[0].1.presences.len(), 4, "all HAVEs fit in one response");
        // Four HAVEs (a few hundred bytes) and three blocks fit under 1 MiB; a fourth block
        // waits until a send is reported.
        assert_eq!(out.iter().map(|(_, m)| m.blocks.len()).sum::<usize>(), 3);
        h.server.handle_sent(0);
        assert_eq!(h.drain().iter().map(|(_, m)| m.blocks.len()).sum::<usize>(), 1);
    }

    #[test]
    fn slow_store_reads_go_out_in_order() {
        let (mut h, cids) = Harness::new(Config::default(), 3, 20_000);
        h.wants(0, cids.iter().map(|c| want(*c, WantType::Block, false)).collect());
        let loads: Vec<Cid> =
            std::iter::from_fn(|| h.server.poll_event()).map(|ServerEvent::Load(c)| c).collect();
        assert_eq!(loads, cids, "all three load in parallel");
        for cid in loads.iter().rev() {
            h.server.block_loaded(*cid, h.store.get(cid).cloned());
        }
        let sent: Vec<Cid> = std::iter::from_fn(|| h.server.poll_transmit())
            .flat_map(|(_, m)| m.blocks.into_iter().map(|b| b.cid()))
            .collect();
        assert_eq!(sent, cids);
    }
}
