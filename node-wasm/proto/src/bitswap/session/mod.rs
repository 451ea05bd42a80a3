//! One session: a set of wants fetched together from the peers that proved useful for them.
//!
//! Rules (sessions mode):
//! - A new want goes to the session's peers: want-block to the best one, want-have to the
//!   others (only three of them besides those in doubt when the best is a confident holder,
//!   unless a confident holder lacked one of the last few wants), all with `sendDontHave`.
//!   "Best" means HAVE, then the learned presence model ([`Predictor`]), then the shortest
//!   expected delay (round trip plus the blocks already queued at that peer, each at its service
//!   time, or at a round trip until one was measured; the round trip is the connection's ping
//!   until the peer's answers measured one), then most blocks delivered. While the
//!   session's peers are unlikely to have the block, or while they are saturated, other connected
//!   peers are added; a fresh session asks a few connected peers (about 1.5 expected holders by
//!   the session's hit rate), and each round that finds nobody doubles that number.
//! - More than one optimistic want-block goes out when the session has learned that blocks
//!   rarely have a second holder (the co-holding rate): as many as a budget of expected
//!   duplicates allows, and never when one peer is a confident bet.
//! - HAVE leads to a want-block to that peer unless one is in flight elsewhere. DONT_HAVE (or a
//!   silent-peer timeout, which counts as one) moves the want-block on, once every want-have
//!   answer is in. When every asked peer said DONT_HAVE, the want is broadcast to connected
//!   peers not asked yet, in widening rounds.
//! - Peers join on their first HAVE or block and leave after a run of DONT_HAVEs that is long
//!   for their own hit rate (at least `max_consecutive_dont_have`).
//! - A want is never sent twice to the same peer, except to upgrade a want-have to a want-block,
//!   and on the idle tick (no block for a while), which sends pending wants as want-have to the
//!   peers not asked yet and to those whose asks timed out: a timeout is no proof that the peer
//!   lacks the block, and once every peer has timed out nobody else is left. Wants made while no
//!   peer was connected wait for that tick too, brought forward to once peers stop connecting
//!   (`gather_quiet`), at most `first_peer_gather` after the first: peers dialled together get
//!   ready one after another, and wants handed to the first alone could not be spread over the
//!   others afterwards.
//! - While want-blocks wait deep in one peer's queue, connected peers that hold none of the
//!   session's want-blocks are asked about them (want-have), once each: a seed that joined a
//!   fetch under way, or one connected when all wants went to the first, takes its share. Each
//!   one it says HAVE to moves to it (the old holder gets a cancel) if it would answer sooner by
//!   at least a block's service time. Only wants queued behind more than a server's in-flight
//!   allowance move: the ones in front may be on the wire already.
//! - A peer that connects while the session's wants are out is asked want-have for the earliest
//!   of them at once: its answer measures its round trip, so the next batch is ranked with it
//!   rather than handed to the peers measured already.
//! - While its blocks are too big to be inlined in a HAVE answer, each want also probes a few
//!   connected peers never heard from with want-have, to learn their round trips, until every
//!   peer (up to a thousand) was heard from or probed.
//!
//! Legacy mode sends want-block to every session peer (every connected peer while it has none)
//! and relies on the idle tick to broadcast further.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::time::Duration;

use cid::Cid;
use rand_chacha::ChaCha8Rng;
use web_time::Instant;

use super::message::{Presence, WantType};
use super::peer::{PeerState, Typical};
use super::predictor::{Predictor, WINDOW};
use super::ClientMode;

pub(super) mod choice;
mod reroute;

use choice::CONFIDENT;

/// Identifies a session of one [`Client`](super::Client).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(pub u64);

#[derive(Debug, Clone, Copy)]
struct Ask {
    want_type: WantType,
    answered: bool,
    /// Answered by a silent-peer timeout only: the peer never said it lacks the block.
    timed_out: bool,
}

#[derive(Debug)]
struct Want<P> {
    index: u64,
    asked: BTreeMap<P, Ask>,
    presence: BTreeMap<P, Presence>,
    /// Want-blocks sent and not yet answered.
    live_block: BTreeSet<P>,
    /// Rounds of asking done: each widens the next.
    rounds: u32,
    /// The peer sent the want-block as a confident holder, with few backups.
    confident_block: Option<P>,
}

/// A satisfied want whose other answers are still coming in: they tell how many peers hold it.
#[derive(Debug)]
struct Settling<P> {
    index: u64,
    unanswered: BTreeSet<P>,
    holders: u32,
    answered: u32,
}

#[derive(Debug, Default, Clone, Copy)]
struct SessionPeer {
    delivered: u32,
    consecutive_dont_have: u32,
    hits: u32,
    answers: u32,
}

impl SessionPeer {
    fn hit(&mut self) {
        self.consecutive_dont_have = 0;
        self.hits += 1;
        self.answers += 1;
    }

    /// A run of DONT_HAVEs this long says the peer is of no use: the configured limit, or four
    /// times the gap its own hit rate predicts, whichever is longer. A peer holding a random
    /// ninth of the blocks is not dropped for an unlucky run.
    fn is_useless(&self, limit: u32) -> bool {
        let expected_gap = match self.hits {
            0 => 0.0,
            hits => f64::from(self.answers) / f64::from(hits),
        };
        f64::from(self.consecutive_dont_have) >= f64::from(limit).max(4.0 * expected_gap)
    }
}

#[derive(Debug)]
pub(super) struct Session<P> {
    mode: ClientMode,
    max_consecutive_dont_have: u32,
    dup_budget: f64,
    max_inline_block_size: usize,
    /// Bytes a server sends ahead of the wants it still holds (ours and boxo's: 1 MiB).
    server_in_flight: usize,
    /// Bytes and count of the blocks delivered: their mean sizes a peer's queue.
    delivered_bytes: u64,
    delivered: u64,
    /// Smallest block delivered so far: while every block was too big to be inlined in a HAVE
    /// answer, probing peers with want-have cannot cost a duplicate.
    smallest_block: Option<usize>,
    /// Peers probed while exploring.
    probed: BTreeSet<P>,
    /// Peers this session sent a want, on their current connection.
    asked_ever: BTreeSet<P>,
    /// Peers offered wants that waited deep in other peers' queues ([`Self::offer`]), at most
    /// [`reroute::OFFERED_PEERS`].
    offered: BTreeSet<P>,
    wants: HashMap<Cid, Want<P>>,
    settling: HashMap<Cid, Settling<P>>,
    settling_order: VecDeque<Cid>,
    peers: BTreeMap<P, SessionPeer>,
    predictor: Predictor<P>,
    next_index: u64,
    /// Over settled wants: peers besides the first holder that answered, and how many of them
    /// held the block too. Their ratio is the co-holding rate.
    other_answers: u32,
    extra_holders: u32,
    /// The last want whose confident want-block was answered DONT_HAVE ([`Self::backs_up_few`]).
    confident_miss: Option<u64>,
    /// HAVE (or block) answers among all answers: the session's hit rate.
    haves: u32,
    answers: u32,
    last_progress: Instant,
    /// An idle tick due before the usual one: set when the first peer connected while wants
    /// waited for one.
    early_tick: Option<Instant>,
}

impl<P: Copy + Ord + std::hash::Hash> Session<P> {
    pub(super) fn new(now: Instant, config: &super::Config) -> Self {
        Self {
            mode: config.mode,
            max_consecutive_dont_have: config.max_consecutive_dont_have,
            dup_budget: config.dup_budget,
            max_inline_block_size: config.max_inline_block_size,
            server_in_flight: config.max_outstanding_bytes_per_peer,
            delivered_bytes: 0,
            delivered: 0,
            smallest_block: None,
            probed: BTreeSet::new(),
            asked_ever: BTreeSet::new(),
            offered: BTreeSet::new(),
            wants: HashMap::new(),
            settling: HashMap::new(),
            settling_order: VecDeque::new(),
            peers: BTreeMap::new(),
            predictor: Predictor::default(),
            next_index: 0,
            other_answers: 0,
            extra_holders: 0,
            confident_miss: None,
            haves: 0,
            answers: 0,
            last_progress: now,
            early_tick: None,
        }
    }

    pub(super) fn has_wants(&self) -> bool {
        !self.wants.is_empty()
    }

    pub(super) fn wants(&self, cid: &Cid) -> bool {
        self.wants.contains_key(cid)
    }

    pub(super) fn is_peer(&self, peer: P) -> bool {
        self.peers.contains_key(&peer)
    }

    /// When the next idle tick is due: `interval` after the last progress, or the early tick.
    pub(super) fn next_tick(&self, interval: Duration) -> Instant {
        let idle = self.last_progress + interval;
        self.early_tick.map_or(idle, |early| early.min(idle))
    }

    /// A peer connected while wants waited for one (`starts`: the first) or while the session
    /// gathers peers for them: they go out at `at`, to the peers connected by then.
    pub(super) fn gather_until(&mut self, at: Instant, starts: bool) {
        if (starts && self.has_wants()) || self.early_tick.is_some() {
            self.early_tick = Some(at);
        }
    }

    /// Index of the want, used as its priority.
    pub(super) fn index(&self, cid: &Cid) -> Option<u64> {
        self.wants.get(cid).map(|w| w.index)
    }

    /// Adds a want; false if the session already had it.
    pub(super) fn add_want(&mut self, now: Instant, cid: Cid) -> bool {
        if self.wants.contains_key(&cid) {
            return false;
        }
        if self.wants.is_empty() {
            self.last_progress = now;
        }
        let want = Want {
            index: self.next_index,
            asked: BTreeMap::new(),
            presence: BTreeMap::new(),
            live_block: BTreeSet::new(),
            rounds: 0,
            confident_block: None,
        };
        self.next_index += 1;
        self.wants.insert(cid, want);
        true
    }

    /// Drops a want without a block; returns the peers it was sent to.
    pub(super) fn remove_want(&mut self, cid: &Cid) -> Vec<P> {
        self.wants.remove(cid).map(|w| w.asked.into_keys().collect()).unwrap_or_default()
    }

    pub(super) fn want_cids(&self) -> Vec<Cid> {
        let mut cids: Vec<(u64, Cid)> = self.wants.iter().map(|(c, w)| (w.index, *c)).collect();
        cids.sort_unstable();
        cids.into_iter().map(|(_, c)| c).collect()
    }

    /// Decides who gets which want for `cid` now. The caller sends them.
    pub(super) fn drive(
        &mut self,
        cid: Cid,
        peers: &BTreeMap<P, PeerState>,
        rng: &mut ChaCha8Rng,
    ) -> Vec<(P, WantType)> {
        let Some(want) = self.wants.get(&cid) else { return Vec::new() };
        if !want.live_block.is_empty() {
            return Vec::new();
        }
        let index = want.index;
        let said_have: Vec<P> = want
            .presence
            .iter()
            .filter(|(p, pr)| {
                **pr == Presence::Have
                    && peers.contains_key(p)
                    && want.asked.get(p).is_none_or(|a| a.want_type == WantType::Have)
            })
            .map(|(p, _)| *p)
            .collect();
        if !said_have.is_empty() {
            let best = self.rank(index, said_have, peers, Typical::of(peers), rng)[0].0;
            return self.ask(cid, vec![(best, WantType::Block)]);
        }
        if want.asked.values().any(|a| !a.answered) {
            return Vec::new();
        }
        let rounds = want.rounds;
        let (members, others): (Vec<P>, Vec<P>) = peers
            .keys()
            .filter(|p| !want.asked.contains_key(p))
            .partition(|p| self.peers.contains_key(p));
        let mut confident_block = None;
        let asks = match self.mode {
            ClientMode::Legacy => {
                let fresh = if members.is_empty() { others } else { members };
                fresh.into_iter().map(|p| (p, WantType::Block)).collect()
            }
            ClientMode::Sessions => {
                let fresh = self.candidates(index, rounds, members, others, peers, rng);
                confident_block = fresh
                    .first()
                    .filter(|(_, prob)| *prob >= CONFIDENT && self.backs_up_few(index))
                    .map(|(p, _)| *p);
                self.fan_out(fresh, confident_block.is_some(), peers)
            }
        };
        if let Some(want) = self.wants.get_mut(&cid) {
            want.rounds += 1;
            want.confident_block = confident_block;
        }
        self.ask(cid, asks)
    }

    fn ask(&mut self, cid: Cid, asks: Vec<(P, WantType)>) -> Vec<(P, WantType)> {
        if let Some(want) = self.wants.get_mut(&cid) {
            for &(p, want_type) in &asks {
                self.asked_ever.insert(p);
                want.asked.insert(p, Ask { want_type, answered: false, timed_out: false });
                if want_type == WantType::Block {
                    want.live_block.insert(p);
                }
            }
        }
        asks
    }

    /// A HAVE, DONT_HAVE, or a timeout standing in for one (`timed_out`).
    pub(super) fn on_presence(&mut self, peer: P, cid: &Cid, presence: Presence, timed_out: bool) {
        if let Some(s) = self.settling.get_mut(cid) {
            // Answers after the block still teach where blocks are, and a HAVE makes the peer a
            // member like any other.
            if s.unanswered.remove(&peer) && !timed_out {
                let has = presence == Presence::Have;
                s.answered += 1;
                s.holders += u32::from(has);
                self.answers += 1;
                self.haves += u32::from(has);
                self.predictor.record(peer, s.index, has);
                if has {
                    self.peers.entry(peer).or_default().hit();
                }
            }
            self.try_settle(*cid);
            return;
        }
        let Some(want) = self.wants.get_mut(cid) else { return };
        if let Some(ask) = want.asked.get_mut(&peer) {
            ask.answered = true;
            ask.timed_out = timed_out;
        }
        let index = want.index;
        if !timed_out {
            self.answers += 1;
            self.haves += u32::from(presence == Presence::Have);
        }
        match presence {
            Presence::Have => {
                want.presence.insert(peer, Presence::Have);
                self.peers.entry(peer).or_default().hit();
                self.predictor.record(peer, index, true);
            }
            Presence::DontHave => {
                if want.confident_block == Some(peer) && !timed_out {
                    self.confident_miss = Some(index);
                }
                want.live_block.remove(&peer);
                if want.presence.get(&peer) != Some(&Presence::Have) || !timed_out {
                    want.presence.insert(peer, Presence::DontHave);
                }
                if !timed_out {
                    self.predictor.record(peer, index, false);
                }
                self.count_dont_have(peer);
            }
        }
    }

    fn count_dont_have(&mut self, peer: P) {
        let limit = self.max_consecutive_dont_have;
        if let Some(sp) = self.peers.get_mut(&peer) {
            sp.consecutive_dont_have += 1;
            sp.answers += 1;
            if sp.is_useless(limit) {
                self.peers.remove(&peer);
            }
        }
    }

    /// The block for `cid` arrived from `peer`: the want is satisfied. Returns whether the
    /// session wanted it.
    pub(super) fn on_block(&mut self, now: Instant, peer: P, cid: Cid, size: usize) -> bool {
        let Some(want) = self.wants.remove(&cid) else { return false };
        self.last_progress = now;
        self.smallest_block = Some(self.smallest_block.map_or(size, |s| s.min(size)));
        self.delivered_bytes += size as u64;
        self.delivered += 1;
        self.answers += 1;
        self.haves += 1;
        let sp = self.peers.entry(peer).or_default();
        sp.delivered += 1;
        sp.hit();
        self.predictor.record(peer, want.index, true);
        let holders = 1 + want
            .presence
            .iter()
            .filter(|(p, pr)| **p != peer && **pr == Presence::Have)
            .count() as u32;
        let unanswered: BTreeSet<P> = want
            .asked
            .iter()
            .filter(|(p, a)| **p != peer && !a.answered)
            .map(|(p, _)| *p)
            .collect();
        let answered = 1 + want.presence.keys().filter(|p| **p != peer).count() as u32;
        let settling = Settling { index: want.index, unanswered, holders, answered };
        self.settling.insert(cid, settling);
        self.settling_order.push_back(cid);
        if self.settling_order.len() > WINDOW {
            if let Some(old) = self.settling_order.pop_front() {
                self.settling.remove(&old);
            }
        }
        self.try_settle(cid);
        true
    }

    /// A block for an already satisfied want: one more holder, and a peer worth having.
    pub(super) fn on_duplicate(&mut self, peer: P, cid: &Cid) {
        if let Some(s) = self.settling.get_mut(cid) {
            self.peers.entry(peer).or_default().hit();
            s.unanswered.remove(&peer);
            s.holders += 1;
            s.answered += 1;
            self.predictor.record(peer, s.index, true);
            self.try_settle(*cid);
        }
    }

    fn try_settle(&mut self, cid: Cid) {
        let Some(s) = self.settling.get(&cid) else { return };
        if s.unanswered.is_empty() {
            self.other_answers += s.answered.saturating_sub(1);
            self.extra_holders += s.holders.saturating_sub(1);
            self.settling.remove(&cid);
        }
    }

    /// A penalised or vanished peer: everything asked of it counts as DONT_HAVE.
    pub(super) fn drop_peer(&mut self, peer: P) -> Vec<Cid> {
        self.peers.remove(&peer);
        self.asked_ever.remove(&peer);
        self.offered.remove(&peer);
        self.predictor.forget(peer);
        for s in self.settling.values_mut() {
            s.unanswered.remove(&peer);
        }
        let mut touched = Vec::new();
        for (cid, want) in &mut self.wants {
            if let Some(ask) = want.asked.get_mut(&peer) {
                ask.answered = true;
                want.live_block.remove(&peer);
                want.presence.insert(peer, Presence::DontHave);
                touched.push(*cid);
            }
        }
        touched
    }

    /// A peer that connects again starts afresh: what it was asked and said on its earlier
    /// connection is forgotten, so that pending wants can go to it again.
    pub(super) fn forget_peer(&mut self, peer: P) {
        self.asked_ever.remove(&peer);
        self.offered.remove(&peer);
        for want in self.wants.values_mut() {
            want.asked.remove(&peer);
            want.presence.remove(&peer);
            want.live_block.remove(&peer);
        }
    }

    /// Idle tick: every pending want goes to the connected peers not asked yet, and again to
    /// those that only timed out: they may have been slow, not without the block, and once
    /// every peer has timed out nobody else is left to ask.
    pub(super) fn rebroadcast(
        &mut self,
        now: Instant,
        peers: &BTreeMap<P, PeerState>,
    ) -> Vec<(Cid, Vec<(P, WantType)>)> {
        self.last_progress = now;
        self.early_tick = None;
        let want_type = match self.mode {
            ClientMode::Legacy => WantType::Block,
            ClientMode::Sessions => WantType::Have,
        };
        let mut out = Vec::new();
        for cid in self.want_cids() {
            let Some(want) = self.wants.get(&cid) else { continue };
            let asks: Vec<(P, WantType)> = peers
                .iter()
                .filter(|(p, s)| {
                    want.asked.get(p).is_none_or(|a| a.timed_out)
                        && (want_type == WantType::Block || s.version.supports_have())
                })
                .map(|(p, _)| (*p, want_type))
                .collect();
            if !asks.is_empty() {
                out.push((cid, self.ask(cid, asks)));
            }
        }
        out
    }
}
