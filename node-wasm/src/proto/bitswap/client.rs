//! The client: connected peers, their outgoing want queues, sessions, and block intake.
//!
//! Outgoing wants are debounced per peer: a queue is sent `send_debounce` after its last new
//! entry, and never later than `max_send_delay` after its first. Every received block is hashed
//! against its CID before anything else: a mismatch is dropped, counted, and reported as
//! [`Event::Misbehaved`]; a block nobody asked for is dropped and counted; a block for a want
//! already satisfied counts as a duplicate. On receipt, cancels go to every peer that holds the
//! want. Silent peers time out per want after an adaptive, round-trip based delay.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet, VecDeque};
use std::time::Duration;

use cid::Cid;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use web_time::Instant;

use super::message::{Block, BlockPresence, Message, Presence, WantEntry, WantType};
use super::session::{Session, SessionId};
use super::stats::Stats;
use super::verify;
use super::{ClientMode, Config, ProtocolVersion};

/// What the client reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<P> {
    /// A verified block a session wanted.
    Block { session: SessionId, block: Block },
    /// The peer sent a block that does not match its CID. The glue should disconnect it.
    Misbehaved { peer: P, cid: Cid },
}

/// Smoothed round-trip time, as TCP keeps it.
#[derive(Debug, Clone, Copy, Default)]
struct Rtt {
    srtt: Option<f64>,
    rttvar: f64,
}

impl Rtt {
    fn sample(&mut self, rtt: Duration) {
        let r = rtt.as_secs_f64();
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
            }
            Some(s) => {
                self.rttvar = 0.75 * self.rttvar + 0.25 * (s - r).abs();
                self.srtt = Some(0.875 * s + 0.125 * r);
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Sent {
    want_type: WantType,
    at: Instant,
    answered: bool,
}

/// What the client knows about one connected peer.
#[derive(Debug)]
pub(super) struct PeerState {
    pub(super) version: ProtocolVersion,
    /// Wants the peer holds from us (sent or queued).
    sent: HashMap<Cid, Sent>,
    /// Want-blocks not answered yet: the peer's load.
    live: HashSet<Cid>,
    queue: Vec<WantEntry>,
    first_queued: Option<Instant>,
    last_queued: Option<Instant>,
    rtt: Rtt,
    last_heard: Option<Instant>,
}

impl PeerState {
    pub(super) fn live_blocks(&self) -> usize {
        self.live.len()
    }

    fn flush_at(&self, config: &Config) -> Option<Instant> {
        let first = self.first_queued?;
        let last = self.last_queued?;
        Some((last + config.send_debounce).min(first + config.max_send_delay))
    }
}

/// A pending silent-peer check.
/// (deadline, session, want, peer, re-arms so far, when the want was sent)
type Deadline<P> = Reverse<(Instant, SessionId, Cid, P, u8, Instant)>;

/// Re-arms granted to a peer that is alive but has not answered one want yet.
const MAX_REARMS: u8 = 2;

#[derive(Debug)]
pub struct Client<P> {
    config: Config,
    rng: ChaCha8Rng,
    peers: BTreeMap<P, PeerState>,
    sessions: BTreeMap<SessionId, Session<P>>,
    next_session: u64,
    wanted: HashMap<Cid, Vec<SessionId>>,
    received: HashSet<Cid>,
    received_order: VecDeque<Cid>,
    deadlines: BinaryHeap<Deadline<P>>,
    transmits: VecDeque<(P, Message)>,
    events: VecDeque<Event<P>>,
    stats: Stats<P>,
}

impl<P: Copy + Ord + std::hash::Hash + std::fmt::Debug> Client<P> {
    pub fn new(config: Config) -> Self {
        Self {
            rng: ChaCha8Rng::seed_from_u64(config.rng_seed),
            config,
            peers: BTreeMap::new(),
            sessions: BTreeMap::new(),
            next_session: 0,
            wanted: HashMap::new(),
            received: HashSet::new(),
            received_order: VecDeque::new(),
            deadlines: BinaryHeap::new(),
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            stats: Stats::default(),
        }
    }

    pub fn stats(&self) -> &Stats<P> {
        &self.stats
    }

    pub fn peer_connected(&mut self, peer: P, version: ProtocolVersion) {
        self.peers.entry(peer).or_insert_with(|| PeerState {
            version,
            sent: HashMap::new(),
            live: HashSet::new(),
            queue: Vec::new(),
            first_queued: None,
            last_queued: None,
            rtt: Rtt::default(),
            last_heard: None,
        });
    }

    /// Everything asked of the peer counts as DONT_HAVE and moves on.
    pub fn peer_disconnected(&mut self, now: Instant, peer: P) {
        self.peers.remove(&peer);
        self.drop_peer(now, peer);
    }

    fn drop_peer(&mut self, now: Instant, peer: P) {
        let sids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for sid in sids {
            let touched = self.sessions.get_mut(&sid).map(|s| s.drop_peer(peer));
            for cid in touched.unwrap_or_default() {
                self.drive(now, sid, cid);
            }
        }
    }

    pub fn new_session(&mut self, now: Instant) -> SessionId {
        let id = SessionId(self.next_session);
        self.next_session += 1;
        self.sessions.insert(id, Session::new(now, &self.config));
        id
    }

    /// Cancels every want of the session and forgets it.
    pub fn close_session(&mut self, now: Instant, session: SessionId) {
        let cids = self.sessions.get(&session).map(Session::want_cids).unwrap_or_default();
        self.cancel(now, session, cids);
        self.sessions.remove(&session);
    }

    /// Asks for `cids` within `session`, in order. Each arrives as one [`Event::Block`].
    pub fn want(&mut self, now: Instant, session: SessionId, cids: impl IntoIterator<Item = Cid>) {
        let Some(s) = self.sessions.get_mut(&session) else { return };
        let mut added = Vec::new();
        for cid in cids {
            if s.add_want(now, cid) {
                added.push(cid);
                let sids = self.wanted.entry(cid).or_default();
                if !sids.contains(&session) {
                    sids.push(session);
                }
            }
        }
        for cid in added {
            self.drive(now, session, cid);
        }
    }

    /// Stops wanting `cids` in `session`; peers get cancels once no session wants them.
    pub fn cancel(
        &mut self,
        now: Instant,
        session: SessionId,
        cids: impl IntoIterator<Item = Cid>,
    ) {
        for cid in cids {
            if let Some(s) = self.sessions.get_mut(&session) {
                s.remove_want(&cid);
            }
            let Some(sids) = self.wanted.get_mut(&cid) else { continue };
            sids.retain(|s| *s != session);
            if sids.is_empty() {
                self.wanted.remove(&cid);
                self.cancel_everywhere(now, cid);
            }
        }
    }

    /// Lets the session decide who to ask for `cid` and queues what it decided.
    fn drive(&mut self, now: Instant, session: SessionId, cid: Cid) {
        let Some(s) = self.sessions.get_mut(&session) else { return };
        let asks = s.drive(cid, &self.peers, &mut self.rng);
        let index = s.index(&cid).unwrap_or(0);
        self.send_asks(now, session, cid, index, asks);
    }

    fn send_asks(
        &mut self,
        now: Instant,
        session: SessionId,
        cid: Cid,
        index: u64,
        asks: Vec<(P, WantType)>,
    ) {
        let sessions = self.config.mode == ClientMode::Sessions;
        // Earlier wants of a session get higher priority, so servers answer in want order.
        let priority = i32::MAX - i32::try_from(index).unwrap_or(i32::MAX - 1);
        for (peer, want_type) in asks {
            let timeout = self.dont_have_timeout(peer);
            let Some(ps) = self.peers.get_mut(&peer) else { continue };
            let dont_have = sessions && ps.version.supports_have();
            enqueue_want(ps, now, cid, want_type, priority, dont_have);
            if sessions {
                let at = now + timeout + self.config.max_send_delay;
                self.deadlines.push(Reverse((at, session, cid, peer, 0, now)));
            }
        }
    }

    fn cancel_everywhere(&mut self, now: Instant, cid: Cid) {
        for ps in self.peers.values_mut() {
            if ps.sent.remove(&cid).is_none() {
                continue;
            }
            ps.live.remove(&cid);
            let before = ps.queue.len();
            ps.queue.retain(|e| e.cid != cid);
            if ps.queue.len() == before {
                ps.queue.push(WantEntry::cancel(cid));
                ps.first_queued.get_or_insert(now);
                ps.last_queued = Some(now);
            } else if ps.queue.is_empty() {
                ps.first_queued = None;
                ps.last_queued = None;
            }
        }
    }

    /// Silent-peer timeout: the peer's own round trip when measured, else three times the mean
    /// round trip of the peers that were measured, else the configured default.
    fn dont_have_timeout(&self, peer: P) -> Duration {
        let c = &self.config;
        let own = self.peers.get(&peer).and_then(|p| p.rtt.srtt.map(|s| s + 4.0 * p.rtt.rttvar));
        let secs = own.or_else(|| self.mean_rtt().map(|m| 3.0 * m));
        secs.map_or(c.default_dont_have_timeout, |s| {
            Duration::from_secs_f64(s).clamp(c.min_dont_have_timeout, c.max_dont_have_timeout)
        })
    }

    fn mean_rtt(&self) -> Option<f64> {
        let (sum, n) = self
            .peers
            .values()
            .filter_map(|p| p.rtt.srtt)
            .fold((0.0, 0u32), |(s, n), r| (s + r, n + 1));
        (n > 0).then(|| sum / f64::from(n))
    }

    fn idle_interval(&self) -> Duration {
        let rtt = self.mean_rtt().map_or(Duration::ZERO, Duration::from_secs_f64);
        self.config.idle_tick + rtt * self.config.idle_rtt_multiplier
    }

    /// The blocks and presences of a message from `peer`. Its wantlist is the server's.
    pub fn handle_message(&mut self, now: Instant, peer: P, msg: &Message) {
        if let Some(ps) = self.peers.get_mut(&peer) {
            ps.last_heard = Some(now);
        }
        for block in &msg.blocks {
            self.handle_block(now, peer, block);
        }
        for p in &msg.presences {
            self.handle_presence(now, peer, p);
        }
    }

    /// Marks `peer`'s want for `cid` answered and samples its round trip.
    fn answered(&mut self, now: Instant, peer: P, cid: &Cid) {
        let Some(ps) = self.peers.get_mut(&peer) else { return };
        ps.live.remove(cid);
        if let Some(sent) = ps.sent.get_mut(cid) {
            if !sent.answered {
                sent.answered = true;
                ps.rtt.sample(now.saturating_duration_since(sent.at));
            }
        }
    }

    fn handle_block(&mut self, now: Instant, peer: P, block: &Block) {
        if verify::verify(&block.cid, &block.data).is_err() {
            self.stats.record(peer, |c| c.invalid_blocks += 1);
            self.events.push_back(Event::Misbehaved { peer, cid: block.cid });
            self.drop_peer(now, peer);
            return;
        }
        let size = block.data.len() as u64;
        self.stats.record(peer, |c| {
            c.blocks_received += 1;
            c.block_bytes_received += size;
        });
        self.answered(now, peer, &block.cid);
        if let Some(sids) = self.wanted.remove(&block.cid) {
            self.remember_received(block.cid);
            for sid in sids {
                let wanted =
                    self.sessions.get_mut(&sid).is_some_and(|s| s.on_block(now, peer, block.cid));
                if wanted {
                    self.events.push_back(Event::Block { session: sid, block: block.clone() });
                }
            }
            self.cancel_everywhere(now, block.cid);
        } else if self.received.contains(&block.cid) {
            self.stats.record(peer, |c| {
                c.duplicate_blocks += 1;
                c.duplicate_bytes += size;
            });
            for s in self.sessions.values_mut() {
                s.on_duplicate(peer, &block.cid);
            }
        } else {
            self.stats.record(peer, |c| c.unsolicited_blocks += 1);
        }
    }

    fn remember_received(&mut self, cid: Cid) {
        if self.received.insert(cid) {
            self.received_order.push_back(cid);
            if self.received_order.len() > self.config.received_memory {
                if let Some(old) = self.received_order.pop_front() {
                    self.received.remove(&old);
                }
            }
        }
    }

    fn handle_presence(&mut self, now: Instant, peer: P, p: &BlockPresence) {
        self.answered(now, peer, &p.cid);
        let sids: Vec<SessionId> = match self.wanted.get(&p.cid) {
            Some(sids) => sids.clone(),
            None => self.sessions.keys().copied().collect(),
        };
        for sid in sids {
            let Some(s) = self.sessions.get_mut(&sid) else { continue };
            s.on_presence(peer, &p.cid, p.presence, false);
            if s.wants(&p.cid) {
                self.drive(now, sid, p.cid);
            }
        }
    }

    /// Sends due queues, expires silent peers and runs idle ticks.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.expire_silent_peers(now);
        self.idle_ticks(now);
        self.flush(now);
    }

    fn expire_silent_peers(&mut self, now: Instant) {
        while let Some(Reverse((at, sid, cid, peer, rearms, asked))) =
            self.deadlines.peek().copied()
        {
            if at > now {
                break;
            }
            self.deadlines.pop();
            if !self.sessions.get(&sid).is_some_and(|s| s.wants(&cid)) {
                continue;
            }
            let Some(ps) = self.peers.get(&peer) else { continue };
            let Some(sent) = ps.sent.get(&cid).copied() else { continue };
            // Answered, or superseded by a later ask (a want-have upgraded) with its own deadline.
            if sent.answered || sent.at != asked {
                continue;
            }
            // A peer that spoke since we asked is alive, just busy: give it more time.
            if rearms < MAX_REARMS && ps.last_heard.is_some_and(|h| h > sent.at) {
                let next = now + self.dont_have_timeout(peer);
                self.deadlines.push(Reverse((next, sid, cid, peer, rearms + 1, asked)));
                continue;
            }
            if let Some(ps) = self.peers.get_mut(&peer) {
                ps.live.remove(&cid);
                if let Some(s) = ps.sent.get_mut(&cid) {
                    s.answered = true;
                }
            }
            self.stats.record(peer, |c| c.timeouts += 1);
            if let Some(s) = self.sessions.get_mut(&sid) {
                s.on_presence(peer, &cid, Presence::DontHave, true);
            }
            self.drive(now, sid, cid);
        }
    }

    fn idle_ticks(&mut self, now: Instant) {
        let interval = self.idle_interval();
        let due: Vec<SessionId> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.has_wants() && s.last_progress() + interval <= now)
            .map(|(id, _)| *id)
            .collect();
        for sid in due {
            let Some(s) = self.sessions.get_mut(&sid) else { continue };
            for (cid, asks) in s.rebroadcast(now, &self.peers) {
                let index = s.index(&cid).unwrap_or(0);
                let sessions = self.config.mode == ClientMode::Sessions;
                let priority = i32::MAX - i32::try_from(index).unwrap_or(i32::MAX - 1);
                for (peer, want_type) in asks {
                    if let Some(ps) = self.peers.get_mut(&peer) {
                        let dont_have = sessions && ps.version.supports_have();
                        enqueue_want(ps, now, cid, want_type, priority, dont_have);
                    }
                }
            }
        }
    }

    fn flush(&mut self, now: Instant) {
        for (peer, ps) in &mut self.peers {
            if ps.flush_at(&self.config).is_some_and(|t| t <= now) {
                let wantlist = std::mem::take(&mut ps.queue);
                ps.first_queued = None;
                ps.last_queued = None;
                self.transmits.push_back((*peer, Message { wantlist, ..Message::default() }));
            }
        }
    }

    pub fn poll_transmit(&mut self) -> Option<(P, Message)> {
        self.transmits.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<Event<P>> {
        self.events.pop_front()
    }

    /// The earliest time [`Client::handle_timeout`] has work to do.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let flush = self.peers.values().filter_map(|p| p.flush_at(&self.config)).min();
        let silent = self.deadlines.peek().map(|Reverse((at, ..))| *at);
        let interval = self.idle_interval();
        let idle = self
            .sessions
            .values()
            .filter(|s| s.has_wants())
            .map(|s| s.last_progress() + interval)
            .min();
        [flush, silent, idle].into_iter().flatten().min()
    }

    /// Whether a session still waits for blocks.
    pub fn session_pending(&self, session: SessionId) -> bool {
        self.sessions.get(&session).is_some_and(Session::has_wants)
    }

    /// Whether `peer` has joined `session`.
    pub fn session_has_peer(&self, session: SessionId, peer: P) -> bool {
        self.sessions.get(&session).is_some_and(|s| s.is_peer(peer))
    }
}

/// Queues a want unless the peer already holds it (a want-have may still be upgraded).
fn enqueue_want(
    ps: &mut PeerState,
    now: Instant,
    cid: Cid,
    want_type: WantType,
    priority: i32,
    send_dont_have: bool,
) {
    match ps.sent.get(&cid).map(|s| s.want_type) {
        Some(WantType::Block) => return,
        Some(WantType::Have) if want_type == WantType::Have => return,
        _ => {}
    }
    ps.sent.insert(cid, Sent { want_type, at: now, answered: false });
    if want_type == WantType::Block {
        ps.live.insert(cid);
    }
    let entry = WantEntry::want(cid, want_type, priority, send_dont_have);
    match ps.queue.iter_mut().find(|e| e.cid == cid) {
        Some(queued) => *queued = entry,
        None => ps.queue.push(entry),
    }
    ps.first_queued.get_or_insert(now);
    ps.last_queued = Some(now);
}
