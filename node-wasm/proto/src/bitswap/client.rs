//! The client: connected peers, their outgoing want queues, sessions, and block intake.
//!
//! Outgoing wants are debounced per peer: a queue is sent `send_debounce` after its last new
//! entry, and never later than `max_send_delay` after its first. Every received block is hashed
//! against its CID before anything else: a mismatch is dropped, counted, and reported as
//! [`Event::Misbehaved`]; a block nobody asked for is dropped and counted; a block for a want
//! already satisfied counts as a duplicate. On receipt, cancels go to every peer that holds the
//! want. Silent peers time out per want after an adaptive, round-trip based delay. A peer whose
//! bytes are arriving ([`Client::handle_progress`]) is not silent: on a slow link one large block
//! takes many round trips, and asking another peer meanwhile would bring it twice.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet, VecDeque};
use std::time::Duration;

use cid::Cid;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use web_time::Instant;

use super::message::{Block, BlockPresence, Message, Presence, WantType};
use super::peer::{self, PeerState, Typical};
use super::session::{Session, SessionId};
use super::stats::Stats;
use super::{ClientMode, Config, ProtocolVersion};

/// What the client reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A block a session wanted.
    Block { session: SessionId, block: Block },
}

/// Who gets which kind of want.
type Asks<P> = Vec<(P, WantType)>;

/// A pending silent-peer check: has `peer` answered `session`'s want for `cid` by `at`?
///
/// The derived order compares the fields in declaration order, so the heap yields the earliest
/// `at` first and the other fields break ties deterministically; keep `at` first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct SilentCheck<P> {
    at: Instant,
    session: SessionId,
    cid: Cid,
    peer: P,
    /// Re-arms granted so far because the peer kept talking.
    rearms: u8,
    /// When the want was sent: a later ask of the same want supersedes this check.
    asked: Instant,
}

/// Re-arms granted to a peer that keeps talking but has not answered one want yet.
const MAX_REARMS: u8 = 8;

/// Longest wait before re-checking an ask while no round trip was measured.
const RECHECK: Duration = Duration::from_millis(250);

#[derive(Debug)]
pub struct Client<P> {
    config: Config,
    rng: ChaCha8Rng,
    peers: BTreeMap<P, PeerState>,
    sessions: BTreeMap<SessionId, Session<P>>,
    /// When the first of the peers connected now did: the start of a gather.
    first_peer_at: Option<Instant>,
    next_session: u64,
    wanted: HashMap<Cid, Vec<SessionId>>,
    /// Wants whose next step is to be decided, and when the first and last were marked.
    undecided: HashSet<(SessionId, Cid)>,
    undecided_since: Option<(Instant, Instant)>,
    received: HashSet<Cid>,
    received_order: VecDeque<Cid>,
    deadlines: BinaryHeap<Reverse<SilentCheck<P>>>,
    transmits: VecDeque<(P, Message)>,
    events: VecDeque<Event>,
    stats: Stats<P>,
}

impl<P: Copy + Ord + std::hash::Hash + std::fmt::Debug> Client<P> {
    pub fn new(config: Config) -> Self {
        Self {
            rng: ChaCha8Rng::seed_from_u64(config.rng_seed),
            config,
            peers: BTreeMap::new(),
            sessions: BTreeMap::new(),
            first_peer_at: None,
            next_session: 0,
            wanted: HashMap::new(),
            undecided: HashSet::new(),
            undecided_since: None,
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

    /// A peer connected: sessions forget what it was asked on an earlier connection (its
    /// answers were lost with it), so their wants can go to it again, and ask it about the wants
    /// that wait deep in other peers' queues. Wants that waited for a peer go out once peers
    /// stop connecting (`Config::gather_quiet`).
    pub fn peer_connected(&mut self, now: Instant, peer: P, version: ProtocolVersion) {
        if self.peers.contains_key(&peer) {
            return;
        }
        self.gather(now);
        self.peers.insert(peer, PeerState::new(version));
        let sids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for sid in sids {
            if let Some(s) = self.sessions.get_mut(&sid) {
                s.forget_peer(peer);
            }
            self.offer_deep_wants(now, sid);
            self.greet(now, sid, peer);
        }
    }

    fn greet(&mut self, now: Instant, session: SessionId, peer: P) {
        if !self.peers.get(&peer).is_some_and(|s| s.version.supports_have()) {
            return;
        }
        let Some(s) = self.sessions.get_mut(&session) else { return };
        if let Some((cid, index)) = s.greet(peer) {
            self.send_asks(now, session, cid, index, vec![(peer, WantType::Have)]);
        }
    }

    /// Sessions whose wants waited for a peer send them once peers stop connecting for
    /// `gather_quiet`, or `first_peer_gather` after the first one did.
    fn gather(&mut self, now: Instant) {
        let starts = self.peers.is_empty();
        if starts {
            self.first_peer_at = Some(now);
        }
        let first = self.first_peer_at.unwrap_or(now);
        let at = (now + self.config.gather_quiet).min(first + self.config.first_peer_gather);
        self.sessions.values_mut().for_each(|s| s.gather_until(at, starts));
    }

    /// Lets `session` ask its idle peers about the wants queued deep elsewhere.
    fn offer_deep_wants(&mut self, now: Instant, session: SessionId) {
        let Some(s) = self.sessions.get_mut(&session) else { return };
        for (cid, index, peer) in s.offer(&self.peers) {
            self.send_asks(now, session, cid, index, vec![(peer, WantType::Have)]);
        }
    }

    /// The connection to `peer` measured a round trip (libp2p's ping): until the peer's answers
    /// measure their own, sessions rank it by this one rather than by the typical peer's, so the
    /// first wants go to the nearest peers.
    pub fn peer_round_trip(&mut self, peer: P, rtt: Duration) {
        if let Some(state) = self.peers.get_mut(&peer) {
            state.ping(rtt);
        }
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

    /// What `session` still wants.
    pub fn session_wants(&self, session: SessionId) -> Vec<Cid> {
        self.sessions.get(&session).map(Session::want_cids).unwrap_or_default()
    }

    /// Cancels every want of the session and forgets it.
    pub fn close_session(&mut self, now: Instant, session: SessionId) {
        let cids = self.session_wants(session);
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

    /// Marks a want for a decision. Decisions wait for the end of the send debounce: the asks
    /// could not leave earlier anyway, and every answer that arrives meanwhile (several peers
    /// answer at almost the same time) informs them.
    fn drive(&mut self, now: Instant, session: SessionId, cid: Cid) {
        if self.undecided.insert((session, cid)) {
            let (first, _) = self.undecided_since.get_or_insert((now, now));
            self.undecided_since = Some((*first, now));
        }
    }

    /// The send debounce applied to decisions: after the last marked want, at most
    /// `max_send_delay` after the first.
    fn decide_at(&self) -> Option<Instant> {
        let (first, last) = self.undecided_since?;
        Some((last + self.config.send_debounce).min(first + self.config.max_send_delay))
    }

    /// Lets the sessions decide, in want order, who to ask for the marked wants.
    fn decide(&mut self, now: Instant) {
        let Some((first, _)) = self.undecided_since.filter(|_| self.decide_at() <= Some(now))
        else {
            return;
        };
        self.undecided_since = None;
        let mut marked: Vec<(SessionId, u64, Cid)> = std::mem::take(&mut self.undecided)
            .into_iter()
            .filter_map(|(sid, cid)| Some((sid, self.sessions.get(&sid)?.index(&cid)?, cid)))
            .collect();
        marked.sort_unstable();
        for (sid, index, cid) in marked {
            let Some(s) = self.sessions.get_mut(&sid) else { continue };
            let asks = match s.reroute(cid, &self.peers) {
                Some((holder, asks)) => {
                    if let Some(ps) = self.peers.get_mut(&holder) {
                        ps.cancel(first, cid);
                    }
                    self.stats.record(holder, |c| c.rerouted_wants += 1);
                    asks
                }
                None => s.drive(cid, &self.peers, &mut self.rng),
            };
            // The debounce has been served: queued as of the first mark, the flush is due now.
            self.send_asks(first, sid, cid, index, asks);
        }
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
            let Some(ps) = self.peers.get_mut(&peer) else { continue };
            let dont_have = sessions && ps.version.supports_have();
            ps.enqueue_want(now, cid, want_type, priority, dont_have);
            if sessions {
                let at = self.check_at(now, peer) + self.config.max_send_delay;
                let check = SilentCheck { at, session, cid, peer, rearms: 0, asked: now };
                self.deadlines.push(Reverse(check));
            }
        }
    }

    fn cancel_everywhere(&mut self, now: Instant, cid: Cid) {
        for ps in self.peers.values_mut() {
            ps.cancel(now, cid);
        }
    }

    /// Silent-peer timeout. A measured peer: its round trip plus the blocks queued ahead (at its
    /// service time) plus four deviations. A peer not measured yet: three times the mean round
    /// trip, or twice the 90th percentile when some peers are much slower than the mean: a
    /// want-block timed out too early comes back later as a duplicate. Nothing measured at all:
    /// the configured default.
    fn dont_have_timeout(&self, peer: P) -> Duration {
        let c = &self.config;
        let ps = self.peers.get(&peer);
        let typical = Typical::of(&self.peers);
        let own = ps.and_then(|p| p.silence_timeout(typical));
        let secs = own.or_else(|| {
            let mean = peer::mean_rtt(&self.peers)?;
            Some((3.0 * mean).max(2.0 * peer::rtt_percentile(&self.peers, 0.9)))
        });
        secs.map_or(c.default_dont_have_timeout, |s| {
            Duration::from_secs_f64(s).clamp(c.min_dont_have_timeout, c.max_dont_have_timeout)
        })
    }

    fn idle_interval(&self) -> Duration {
        let rtt = peer::mean_rtt(&self.peers).map_or(Duration::ZERO, Duration::from_secs_f64);
        self.config.idle_tick + rtt * self.config.idle_rtt_multiplier
    }

    /// The blocks and presences of a message from `peer`. Its wantlist is the server's.
    pub fn handle_message(&mut self, now: Instant, peer: P, msg: &Message) {
        if let Some(ps) = self.peers.get_mut(&peer) {
            ps.last_heard = Some(now);
            // A block is compared with the smallest round trip: count the presences it came with.
            for p in &msg.presences {
                ps.note_round_trip(now, &p.cid);
            }
        }
        for block in &msg.blocks {
            self.handle_block(now, peer, block);
        }
        if !msg.blocks.is_empty() {
            if let Some(ps) = self.peers.get_mut(&peer) {
                ps.blocks_arrived(now, msg.blocks.len());
            }
        }
        for p in &msg.presences {
            self.handle_presence(now, peer, p);
        }
    }

    /// Bytes of a message from `peer` are arriving: whatever it owes us may be in them.
    pub fn handle_progress(&mut self, now: Instant, peer: P) {
        if let Some(ps) = self.peers.get_mut(&peer) {
            ps.last_progress = Some(now);
        }
    }

    /// Marks `peer`'s want for `cid` answered and samples its round trip.
    fn answered(&mut self, now: Instant, peer: P, cid: &Cid, with_block: bool) {
        if let Some(ps) = self.peers.get_mut(&peer) {
            ps.answered(now, cid, with_block);
        }
    }

    fn handle_block(&mut self, now: Instant, peer: P, block: &Block) {
        let cid = block.cid();
        let size = block.data().len() as u64;
        let wanted = self.wanted.contains_key(&cid);
        if wanted || self.received.contains(&cid) {
            self.stats.record(peer, |c| {
                c.blocks_received += 1;
                c.block_bytes_received += size;
            });
        }
        self.answered(now, peer, &cid, true);
        if let Some(sids) = self.wanted.remove(&cid) {
            self.remember_received(cid);
            // The sender's server dropped the want when it sent the block: no cancel for it.
            if let Some(ps) = self.peers.get_mut(&peer) {
                ps.sent.remove(&cid);
            }
            for sid in sids {
                let wanted = self
                    .sessions
                    .get_mut(&sid)
                    .is_some_and(|s| s.on_block(now, peer, cid, block.data().len()));
                if wanted {
                    self.events.push_back(Event::Block { session: sid, block: block.clone() });
                    self.offer_deep_wants(now, sid);
                }
            }
            if block.data().len() > self.config.max_inline_block_size {
                self.peers.values_mut().for_each(|ps| ps.served_elsewhere(now, cid));
            } else {
                self.cancel_everywhere(now, cid);
            }
        } else if self.received.contains(&cid) {
            self.stats.record(peer, |c| {
                c.duplicate_blocks += 1;
                c.duplicate_bytes += size;
            });
            for s in self.sessions.values_mut() {
                s.on_duplicate(peer, &cid);
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
        self.answered(now, peer, &p.cid, false);
        if let Some(ps) = self.peers.get_mut(&peer) {
            match p.presence {
                Presence::Have => ps.answered_have(&p.cid),
                Presence::DontHave => ps.answered_dont_have(now, &p.cid),
            }
        }
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

    /// Runs idle ticks, expires silent peers, makes due decisions and sends due queues. Idle
    /// ticks go first: they ask again peers that timed out earlier, and a peer timing out now
    /// gets its cancel before the next tick asks it again.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.idle_ticks(now);
        self.expire_silent_peers(now);
        self.decide(now);
        self.flush(now);
    }

    /// When to look at an ask again: at its timeout by today's estimate, but no later than
    /// `RECHECK` while nothing was measured, because the first round trips shrink the estimate.
    fn check_at(&self, now: Instant, peer: P) -> Instant {
        let timeout = self.dont_have_timeout(peer);
        let measured = peer::mean_rtt(&self.peers).is_some();
        now + if measured { timeout } else { timeout.min(RECHECK) }
    }

    fn expire_silent_peers(&mut self, now: Instant) {
        while let Some(Reverse(check)) = self.deadlines.peek().copied() {
            let SilentCheck { at, session: sid, cid, peer, rearms, asked } = check;
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
            let timeout = self.dont_have_timeout(peer);
            let due = sent.at + timeout + self.config.max_send_delay;
            if due > now {
                let next = due.min(self.check_at(now, peer));
                self.deadlines.push(Reverse(SilentCheck { at: next, ..check }));
                continue;
            }
            let armed = at.checked_sub(timeout).unwrap_or(at);
            // Bytes from the peer are arriving: the answer may be in them, and asking elsewhere
            // now would most likely bring the block twice. Only the longest timeout bounds this,
            // against a peer that trickles bytes and never completes a message.
            let arriving = ps.last_progress.is_some_and(|h| h > sent.at && h >= armed);
            if arriving && now < sent.at + self.config.max_dont_have_timeout {
                self.deadlines.push(Reverse(SilentCheck { at: now + timeout, ..check }));
                continue;
            }
            // A peer that spoke since this deadline was armed is alive, just busy (its blocks
            // queue behind each other on a slow link): give it more time.
            if rearms < MAX_REARMS && ps.last_heard.is_some_and(|h| h > sent.at && h >= armed) {
                let check = SilentCheck { at: now + timeout, rearms: rearms + 1, ..check };
                self.deadlines.push(Reverse(check));
                continue;
            }
            self.time_out(now, sid, cid, peer, sent.want_type);
        }
    }

    /// The peer stayed silent on `cid`: that counts as DONT_HAVE, and a want-block is cancelled
    /// so that a late block does not arrive as a duplicate.
    fn time_out(&mut self, now: Instant, sid: SessionId, cid: Cid, peer: P, want_type: WantType) {
        if let Some(ps) = self.peers.get_mut(&peer) {
            ps.live.remove(&cid);
            if want_type == WantType::Block {
                ps.cancel(now, cid);
            } else if let Some(s) = ps.sent.get_mut(&cid) {
                s.answered = true;
            }
        }
        self.stats.record(peer, |c| c.timeouts += 1);
        if let Some(s) = self.sessions.get_mut(&sid) {
            s.on_presence(peer, &cid, Presence::DontHave, true);
        }
        self.drive(now, sid, cid);
    }

    fn idle_ticks(&mut self, now: Instant) {
        let interval = self.idle_interval();
        let due: Vec<SessionId> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.has_wants() && s.next_tick(interval) <= now)
            .map(|(id, _)| *id)
            .collect();
        for sid in due {
            let Some(s) = self.sessions.get_mut(&sid) else { continue };
            let rebroadcast: Vec<(u64, Cid, Asks<P>)> = s
                .rebroadcast(now, &self.peers)
                .into_iter()
                .map(|(cid, asks)| (s.index(&cid).unwrap_or(0), cid, asks))
                .collect();
            for (index, cid, asks) in rebroadcast {
                self.send_asks(now, sid, cid, index, asks);
            }
        }
    }

    fn flush(&mut self, now: Instant) {
        for (peer, ps) in &mut self.peers {
            if ps.flush_at(&self.config).is_some_and(|t| t <= now) {
                let wantlist = ps.take_queue();
                self.transmits.push_back((*peer, Message { wantlist, ..Message::default() }));
            }
        }
    }

    pub fn poll_transmit(&mut self) -> Option<(P, Message)> {
        self.transmits.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The earliest time [`Client::handle_timeout`] has work to do.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let flush = self.peers.values().filter_map(|p| p.flush_at(&self.config)).min();
        let silent = self.deadlines.peek().map(|Reverse(check)| check.at);
        let interval = self.idle_interval();
        let idle =
            self.sessions.values().filter(|s| s.has_wants()).map(|s| s.next_tick(interval)).min();
        [flush, silent, idle, self.decide_at()].into_iter().flatten().min()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitswap::message::WantEntry;
    use bytes::Bytes;

    const V12: ProtocolVersion = ProtocolVersion::V1_2_0;

    fn block(i: u32) -> Block {
        Block::raw(Bytes::from(vec![i as u8; 2000 + i as usize]))
    }

    fn client(peers: u8, mode: ClientMode) -> Client<u8> {
        client_with(peers, Config::new(mode).with_rng_seed(7))
    }

    fn client_with(peers: u8, config: Config) -> Client<u8> {
        let mode = config.mode;
        let mut c = Client::new(config);
        let version = if mode == ClientMode::Legacy { ProtocolVersion::V1_1_0 } else { V12 };
        for p in 0..peers {
            c.peer_connected(Instant::now(), p, version);
        }
        c
    }

    /// Runs timers up to `at` and returns what was sent, per peer.
    fn sent_by(c: &mut Client<u8>, at: Instant) -> BTreeMap<u8, Vec<WantEntry>> {
        c.handle_timeout(at);
        let mut out: BTreeMap<u8, Vec<WantEntry>> = BTreeMap::new();
        while let Some((p, m)) = c.poll_transmit() {
            out.entry(p).or_default().extend(m.wantlist);
        }
        out
    }

    fn wants_of(sent: &BTreeMap<u8, Vec<WantEntry>>, t: WantType) -> Vec<u8> {
        sent.iter()
            .filter(|(_, es)| es.iter().any(|e| !e.cancel && e.want_type == t))
            .map(|(p, _)| *p)
            .collect()
    }

    fn cancels(sent: &BTreeMap<u8, Vec<WantEntry>>) -> Vec<u8> {
        sent.iter().filter(|(_, es)| es.iter().any(|e| e.cancel)).map(|(p, _)| *p).collect()
    }

    fn presence(cid: Cid, presence: Presence) -> Message {
        Message { presences: vec![BlockPresence { cid, presence }], ..Message::default() }
    }

    fn blocks(b: &[Block]) -> Message {
        Message { blocks: b.to_vec(), ..Message::default() }
    }

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn want_have_to_every_peer_and_one_optimistic_want_block() {
        let now = Instant::now();
        let mut c = client(3, ClientMode::Sessions);
        let s = c.new_session(now);
        c.want(now, s, [block(1).cid()]);
        let sent = sent_by(&mut c, now + 25 * MS);
        assert_eq!(wants_of(&sent, WantType::Block).len(), 1);
        assert_eq!(wants_of(&sent, WantType::Have).len(), 2);
        assert!(sent.values().flatten().all(|e| e.send_dont_have));
    }

    /// Asks a fresh session for block 1 and returns (client, want-block peer, want-have peers).
    fn asked(peers: u8) -> (Client<u8>, SessionId, Instant, u8, Vec<u8>) {
        asked_by(client(peers, ClientMode::Sessions))
    }

    fn asked_by(mut c: Client<u8>) -> (Client<u8>, SessionId, Instant, u8, Vec<u8>) {
        let now = Instant::now();
        let s = c.new_session(now);
        c.want(now, s, [block(1).cid()]);
        let sent = sent_by(&mut c, now + 25 * MS);
        let wb = wants_of(&sent, WantType::Block)[0];
        (c, s, now + 25 * MS, wb, wants_of(&sent, WantType::Have))
    }

    /// The want-block peer of a fresh session's first want, with peer 3 pinged at 5 ms and the
    /// others at 40 ms when `pinged`.
    fn first_want_block_peer(seed: u64, pinged: bool) -> u8 {
        let mut c = client_with(5, Config::new(ClientMode::Sessions).with_rng_seed(seed));
        if pinged {
            for p in 0..5 {
                c.peer_round_trip(p, if p == 3 { 5 * MS } else { 40 * MS });
            }
        }
        asked_by(c).3
    }

    /// The want-block peer of a fresh session's first want, after peer 3 was pinged at 5 ms and
    /// then at 200 ms `slow` times, and the others always at 40 ms.
    fn first_want_block_peer_after_slow_pings(seed: u64, slow: usize) -> u8 {
        let mut c = client_with(5, Config::new(ClientMode::Sessions).with_rng_seed(seed));
        for round in 0..=slow {
            for p in 0..5 {
                let rtt = match (p, round) {
                    (3, 0) => 5 * MS,
                    (3, _) => 200 * MS,
                    _ => 40 * MS,
                };
                c.peer_round_trip(p, rtt);
            }
        }
        asked_by(c).3
    }

    #[test]
    fn one_slow_ping_keeps_the_nearest_peer_first_and_a_lasting_change_moves_it() {
        assert!((0..20).all(|seed| first_want_block_peer_after_slow_pings(seed, 1) == 3));
        assert!((0..20).all(|seed| first_want_block_peer_after_slow_pings(seed, 3) == 3));
        assert!(
            (0..20).all(|seed| first_want_block_peer_after_slow_pings(seed, 4) != 3),
            "four slow pings in a row: the path is slower now"
        );
    }

    #[test]
    fn a_fresh_session_sends_its_want_block_to_the_peer_with_the_shortest_ping() {
        assert!((0..20).all(|seed| first_want_block_peer(seed, true) == 3));
        assert!(
            (0..20).any(|seed| first_want_block_peer(seed, false) != 3),
            "without pings the peers look alike"
        );
    }

    #[test]
    fn have_leads_to_want_block_after_dont_have() {
        let (mut c, _, now, wb, haves) = asked(3);
        let cid = block(1).cid();
        c.handle_message(now + 20 * MS, wb, &presence(cid, Presence::DontHave));
        c.handle_message(now + 20 * MS, haves[0], &presence(cid, Presence::Have));
        let sent = sent_by(&mut c, now + 45 * MS);
        assert_eq!(wants_of(&sent, WantType::Block), vec![haves[0]]);
    }

    #[test]
    fn when_every_peer_says_dont_have_the_want_is_broadcast() {
        let (mut c, _, now, wb, haves) = asked(4);
        let cid = block(1).cid();
        let unasked: Vec<u8> = (0..4).filter(|p| *p != wb && !haves.contains(p)).collect();
        assert_eq!(unasked.len(), 1, "a fresh session asks three peers first");
        for p in std::iter::once(wb).chain(haves) {
            c.handle_message(now + 20 * MS, p, &presence(cid, Presence::DontHave));
        }
        let sent = sent_by(&mut c, now + 45 * MS);
        assert_eq!(wants_of(&sent, WantType::Block), unasked);
    }

    #[test]
    fn a_silent_peer_counts_as_dont_have_and_its_want_block_is_cancelled() {
        let (mut c, _, now, wb, haves) = asked(4);
        let cid = block(1).cid();
        for p in &haves {
            c.handle_message(now + 20 * MS, *p, &presence(cid, Presence::DontHave));
        }
        assert!(sent_by(&mut c, now + 30 * MS).is_empty(), "waits for the want-block peer");
        // No round trip to `wb` is known; three times the others' (about 20 ms) is the limit,
        // checked again 250 ms after the ask.
        let later = now + 300 * MS;
        sent_by(&mut c, later);
        assert_eq!(c.stats().peer(wb).timeouts, 1);
        let sent = sent_by(&mut c, later + 25 * MS);
        assert_eq!(cancels(&sent), vec![wb]);
        assert_eq!(wants_of(&sent, WantType::Block).len(), 1, "the fourth peer is asked");
    }

    /// The want-have peers say DONT_HAVE to block 1, then bytes from the want-block peer `wb`
    /// arrive every 10 ms for `duration`, and no message completes. Returns what was sent.
    fn bytes_arriving(
        c: &mut Client<u8>,
        now: Instant,
        wb: u8,
        haves: &[u8],
        duration: Duration,
    ) -> BTreeMap<u8, Vec<WantEntry>> {
        for p in haves {
            c.handle_message(now + 20 * MS, *p, &presence(block(1).cid(), Presence::DontHave));
        }
        let mut sent: BTreeMap<u8, Vec<WantEntry>> = BTreeMap::new();
        for step in 3..duration.as_millis() / 10 {
            let t = now + step as u32 * 10 * MS;
            c.handle_progress(t, wb);
            for (p, entries) in sent_by(c, t) {
                sent.entry(p).or_default().extend(entries);
            }
        }
        sent
    }

    #[test]
    fn a_peer_whose_bytes_are_arriving_is_not_timed_out() {
        let (mut c, s, now, wb, haves) = asked(4);
        // A big block on a slow link: its bytes take two seconds, a hundred round trips.
        let sent = bytes_arriving(&mut c, now, wb, &haves, Duration::from_secs(2));
        assert_eq!(c.stats().peer(wb).timeouts, 0);
        assert!(wants_of(&sent, WantType::Block).is_empty(), "nobody else is asked for it");
        let b = block(1);
        c.handle_message(now + Duration::from_secs(2), wb, &blocks(std::slice::from_ref(&b)));
        assert_eq!(c.poll_event(), Some(Event::Block { session: s, block: b }));
        assert_eq!(c.stats().total.duplicate_blocks, 0);
    }

    #[test]
    fn bytes_arriving_hold_a_want_no_longer_than_the_longest_timeout() {
        let longest = Duration::from_secs(1);
        let config = Config::new(ClientMode::Sessions).with_rng_seed(7).with_dont_have_timeout(
            Duration::from_secs(5),
            50 * MS,
            longest,
        );
        let mut c = Client::new(config);
        for p in 0..4 {
            c.peer_connected(Instant::now(), p, V12);
        }
        let (mut c, _, now, wb, haves) = asked_by(c);
        // A peer trickling bytes that never make a message.
        let sent = bytes_arriving(&mut c, now, wb, &haves, Duration::from_secs(2));
        assert_eq!(c.stats().peer(wb).timeouts, 1);
        assert_eq!(cancels(&sent), vec![wb]);
    }

    #[test]
    fn a_want_every_peer_timed_out_on_is_asked_again_when_the_session_idles() {
        let (mut c, s, now, wb, _) = asked(3);
        let b = block(1);
        // Nobody answers: with no round trip measured, each ask times out after 5 s, and the
        // want-block is cancelled. Nobody is left to ask.
        let t = now + Duration::from_secs(5) + 25 * MS;
        let sent = sent_by(&mut c, t);
        assert!((0..3).all(|p| c.stats().peer(p).timeouts == 1));
        assert!(sent.is_empty(), "sends are debounced");
        let sent = sent_by(&mut c, t + 25 * MS);
        assert_eq!(cancels(&sent), vec![wb]);
        assert!(
            wants_of(&sent, WantType::Have).is_empty()
                && wants_of(&sent, WantType::Block).is_empty()
        );
        // Once the session has been idle for its idle tick, every peer is asked again.
        let t = t + Duration::from_secs(1);
        assert!(sent_by(&mut c, t).is_empty(), "sends are debounced");
        let sent = sent_by(&mut c, t + 25 * MS);
        assert_eq!(wants_of(&sent, WantType::Have), vec![0, 1, 2]);
        // They were only slow: one says HAVE, is sent the want-block, and delivers.
        c.handle_message(t + 50 * MS, 1, &presence(b.cid(), Presence::Have));
        let sent = sent_by(&mut c, t + 75 * MS);
        assert_eq!(wants_of(&sent, WantType::Block), vec![1]);
        c.handle_message(t + 100 * MS, 1, &blocks(std::slice::from_ref(&b)));
        assert_eq!(c.poll_event(), Some(Event::Block { session: s, block: b }));
    }

    #[test]
    fn silent_peer_timeout_follows_measured_round_trips() {
        let (mut c, s, now, wb, haves) = asked(3);
        let b1 = block(1);
        // 20 ms round trips measured on the want-have peers.
        c.handle_message(now + 20 * MS, haves[0], &presence(b1.cid(), Presence::Have));
        c.handle_message(now + 20 * MS, haves[1], &presence(b1.cid(), Presence::Have));
        c.handle_message(now + 20 * MS, wb, &blocks(&[b1]));
        let t = now + 25 * MS;
        c.want(t, s, [block(2).cid()]);
        let sent = sent_by(&mut c, t + 2 * MS);
        let wb2 = wants_of(&sent, WantType::Block)[0];
        // Its own round trip (20 ms + 4 x variance), floored at 50 ms: well before 5 s.
        sent_by(&mut c, t + 200 * MS);
        assert_eq!(c.stats().peer(wb2).timeouts, 1);
        assert!(!sent_by(&mut c, t + 250 * MS).is_empty(), "the want moved on");
    }

    #[test]
    fn wants_are_debounced_with_a_maximum_wait() {
        let now = Instant::now();
        let mut c = client(1, ClientMode::Sessions);
        let s = c.new_session(now);
        c.want(now, s, [block(1).cid()]);
        c.want(now + MS / 2, s, [block(2).cid()]);
        assert_eq!(c.poll_timeout(), Some(now + MS / 2 + MS));
        assert!(sent_by(&mut c, now + MS).is_empty());
        let sent = sent_by(&mut c, now + MS / 2 + MS);
        assert_eq!(sent[&0].len(), 2, "both wants in one message");

        let mut c = client(1, ClientMode::Sessions);
        let s = c.new_session(now);
        let start = now;
        for i in 0..40u32 {
            c.want(start + MS * i * 9 / 10, s, [block(100 + i).cid()]);
        }
        assert_eq!(c.poll_timeout(), Some(start + 20 * MS), "max wait caps the debounce");
    }

    #[test]
    fn on_receipt_cancels_go_to_every_other_peer_sent_the_want_if_the_block_could_come_inline() {
        // Blocks this small would be the answer to a want-have.
        let config = Config::default().with_rng_seed(7).with_max_inline_block_size(4096);
        let (mut c, s, now, wb, haves) = asked_by(client_with(3, config));
        let b = block(1);
        c.handle_message(now + 20 * MS, wb, &blocks(std::slice::from_ref(&b)));
        assert_eq!(c.poll_event(), Some(Event::Block { session: s, block: b }));
        let sent = sent_by(&mut c, now + 45 * MS);
        assert_eq!(cancels(&sent), haves);
        assert!(!c.session_pending(s));
    }

    #[test]
    fn on_receipt_want_haves_for_a_bigger_block_are_cancelled_only_where_answered_dont_have() {
        let (mut c, s, now, wb, haves) = asked(3);
        let b = block(1);
        c.handle_message(now + 20 * MS, wb, &blocks(std::slice::from_ref(&b)));
        assert_eq!(c.poll_event(), Some(Event::Block { session: s, block: b.clone() }));
        assert_eq!(cancels(&sent_by(&mut c, now + 45 * MS)), Vec::<u8>::new());
        assert!(!c.session_pending(s));
        // A HAVE ends the want at its server; after a DONT_HAVE the server keeps it.
        c.handle_message(now + 50 * MS, haves[0], &presence(b.cid(), Presence::Have));
        c.handle_message(now + 50 * MS, haves[1], &presence(b.cid(), Presence::DontHave));
        assert_eq!(cancels(&sent_by(&mut c, now + 75 * MS)), vec![haves[1]]);
    }

    #[test]
    fn no_cancel_for_a_want_have_answered_with_have() {
        let (mut c, _, now, wb, haves) = asked(3);
        let b = block(1);
        c.handle_message(now + 20 * MS, haves[0], &presence(b.cid(), Presence::Have));
        c.handle_message(now + 20 * MS, haves[1], &presence(b.cid(), Presence::DontHave));
        c.handle_message(now + 20 * MS, wb, &blocks(&[b]));
        let sent = sent_by(&mut c, now + 45 * MS);
        assert_eq!(cancels(&sent), vec![haves[1]], "the server keeps wants it said DONT_HAVE to");
    }

    #[test]
    fn peers_join_on_first_have_or_block() {
        let (mut c, s, now, wb, haves) = asked(3);
        let cid = block(1).cid();
        assert!((0..3).all(|p| !c.session_has_peer(s, p)));
        c.handle_message(now + 20 * MS, haves[0], &presence(cid, Presence::Have));
        c.handle_message(now + 20 * MS, haves[1], &presence(cid, Presence::DontHave));
        assert!(c.session_has_peer(s, haves[0]));
        assert!(!c.session_has_peer(s, haves[1]));
        c.handle_message(now + 20 * MS, wb, &blocks(&[block(1)]));
        assert!(c.session_has_peer(s, wb));
    }

    #[test]
    fn unsolicited_and_duplicate_blocks_are_counted() {
        let (mut c, _, now, wb, haves) = asked(3);
        c.handle_message(now, haves[0], &blocks(&[block(9)]));
        assert_eq!(c.stats().peer(haves[0]).unsolicited_blocks, 1);
        assert_eq!(c.poll_event(), None);
        let b = block(1);
        c.handle_message(now + 20 * MS, wb, &blocks(std::slice::from_ref(&b)));
        c.handle_message(now + 20 * MS, haves[1], &blocks(std::slice::from_ref(&b)));
        let dup = c.stats().peer(haves[1]);
        assert_eq!((dup.duplicate_blocks, dup.duplicate_bytes), (1, b.data().len() as u64));
        assert_eq!(c.stats().total.blocks_received, 2);
    }

    #[test]
    fn best_peer_is_the_one_that_delivered() {
        let (mut c, s, now, wb, haves) = asked(3);
        let b1 = block(1);
        // Everyone has block 1: one want-block per want is the right call, and the peer that
        // delivered is the best bet.
        c.handle_message(now + 20 * MS, haves[0], &presence(b1.cid(), Presence::Have));
        c.handle_message(now + 20 * MS, haves[1], &presence(b1.cid(), Presence::Have));
        c.handle_message(now + 20 * MS, wb, &blocks(&[b1]));
        let t = now + 30 * MS;
        c.want(t, s, [block(2).cid()]);
        let sent = sent_by(&mut c, t + 5 * MS);
        assert_eq!(wants_of(&sent, WantType::Block), vec![wb]);
    }

    #[test]
    fn a_want_for_peers_sure_to_have_it_asks_only_a_few_of_them_want_have_until_one_lacks_it() {
        use crate::bitswap::session::choice::CONFIDENT_BACKUPS;
        let now = Instant::now();
        let mut c = client(8, ClientMode::Sessions);
        let s = c.new_session(now);
        // Every peer said HAVE for the first blocks, and one delivered them all.
        for i in 1..=4 {
            let b = block(i);
            c.want(now, s, [b.cid()]);
            for p in 1..8 {
                c.handle_message(now + 20 * MS, p, &presence(b.cid(), Presence::Have));
            }
            c.handle_message(now + 20 * MS, 0, &blocks(&[b]));
        }
        let t = now + 40 * MS;
        sent_by(&mut c, t);
        c.want(t, s, [block(5).cid()]);
        let sent = sent_by(&mut c, t + 25 * MS);
        // A want-block to the best of them, and backups in case it lacks the block after all:
        // want-haves to the other four could only say what is already known.
        assert_eq!(wants_of(&sent, WantType::Block).len(), 1);
        assert_eq!(wants_of(&sent, WantType::Have).len(), CONFIDENT_BACKUPS);
        // The sure bet lacks block 5: the layout has shifted, and the next want asks everyone
        // again, so that the model learns the new layout from every peer.
        let sure = wants_of(&sent, WantType::Block)[0];
        c.handle_message(t + 45 * MS, sure, &presence(block(5).cid(), Presence::DontHave));
        sent_by(&mut c, t + 70 * MS);
        c.want(t + 70 * MS, s, [block(6).cid()]);
        let sent = sent_by(&mut c, t + 95 * MS);
        assert_eq!(wants_of(&sent, WantType::Block).len(), 1);
        assert_eq!(wants_of(&sent, WantType::Have).len(), 7);
    }

    #[test]
    fn legacy_mode_broadcasts_want_block_and_rebroadcasts_when_idle() {
        let now = Instant::now();
        let mut c = client(3, ClientMode::Legacy);
        let s = c.new_session(now);
        c.want(now, s, [block(1).cid()]);
        let sent = sent_by(&mut c, now + 25 * MS);
        assert_eq!(wants_of(&sent, WantType::Block), vec![0, 1, 2]);
        assert!(sent.values().flatten().all(|e| !e.send_dont_have));
        c.peer_connected(now, 3, ProtocolVersion::V1_1_0);
        let idle = now + Duration::from_secs(1);
        assert!(sent_by(&mut c, idle).is_empty(), "rebroadcast is debounced too");
        let sent = sent_by(&mut c, idle + 25 * MS);
        assert_eq!(wants_of(&sent, WantType::Block), vec![3]);
    }

    #[test]
    fn a_peer_that_reconnects_is_asked_again() {
        let now = Instant::now();
        let mut c = client(1, ClientMode::Sessions);
        let s = c.new_session(now);
        c.want(now, s, [block(1).cid()]);
        let sent = sent_by(&mut c, now + 25 * MS);
        assert_eq!(wants_of(&sent, WantType::Block), vec![0]);
        // The connection drops with the answer on it, and the peer comes back.
        c.peer_disconnected(now + 30 * MS, 0);
        c.peer_connected(now + 30 * MS, 0, V12);
        let sent = sent_by(&mut c, now + 35 * MS);
        assert_eq!(wants_of(&sent, WantType::Block), vec![0], "asked again at once");
        let b = block(1);
        c.handle_message(now + 80 * MS, 0, &blocks(std::slice::from_ref(&b)));
        assert_eq!(c.poll_event(), Some(Event::Block { session: s, block: b }));
    }

    /// A client with one want made before any peer connected, and peers connecting at `joins`
    /// (ms): want-have to whom, and when.
    fn gathered(joins: &[u32]) -> (Vec<u8>, Duration) {
        let now = Instant::now();
        let mut c = client(0, ClientMode::Sessions);
        let s = c.new_session(now);
        c.want(now, s, [block(1).cid()]);
        assert!(sent_by(&mut c, now + 5 * MS).is_empty(), "nobody to ask");
        for (peer, &at) in (0u8..).zip(joins) {
            c.peer_connected(now + at * MS, peer, V12);
            assert!(sent_by(&mut c, now + at * MS).is_empty(), "peers may be on their way");
        }
        let tick = c.poll_timeout().expect("a tick for the gathered wants");
        c.handle_timeout(tick);
        let sent = sent_by(&mut c, tick + 25 * MS);
        (wants_of(&sent, WantType::Have), tick - now)
    }

    #[test]
    fn wants_made_before_any_peer_go_to_the_peers_connecting_one_after_another() {
        assert_eq!(gathered(&[30, 50, 70]), (vec![0, 1, 2], 100 * MS), "30 ms after the last");
    }

    #[test]
    fn a_lone_first_peer_is_asked_once_no_other_followed_it_for_the_quiet_period() {
        assert_eq!(gathered(&[30]), (vec![0], 60 * MS));
    }

    #[test]
    fn peers_that_keep_connecting_delay_the_wants_at_most_the_gather_after_the_first() {
        let (asked, at) = gathered(&[30, 55, 80, 105, 125]);
        assert_eq!((asked, at), (vec![0, 1, 2, 3, 4], 130 * MS), "not 30 ms after the last");
    }

    #[test]
    fn a_peer_connecting_during_a_fetch_is_asked_about_its_earliest_want_at_once() {
        let (mut c, _, now, wb, _) = asked(1);
        c.handle_message(now + 5 * MS, wb, &presence(block(1).cid(), Presence::DontHave));
        assert!(sent_by(&mut c, now + 30 * MS).is_empty(), "nobody else to ask");
        c.peer_connected(now + 40 * MS, 1, V12);
        let sent = sent_by(&mut c, now + 65 * MS);
        assert_eq!(wants_of(&sent, WantType::Have), vec![1], "not at the idle tick");
        c.peer_connected(now + 70 * MS, 2, ProtocolVersion::V1_1_0);
        assert!(sent_by(&mut c, now + 95 * MS).is_empty(), "1.1.0 takes no want-have");
    }

    #[test]
    fn a_first_batch_spreads_over_peers_before_any_service_time_is_measured() {
        let (mut c, s, now, slow, haves) = asked(2);
        let fast = haves[0];
        c.handle_message(now + 3 * MS, fast, &presence(block(1).cid(), Presence::Have));
        c.handle_message(now + 5 * MS, slow, &blocks(&[block(1)]));
        c.want(now + 10 * MS, s, (2..12).map(|i| block(i).cid()));
        let sent = sent_by(&mut c, now + 40 * MS);
        let want_blocks =
            |p: u8| sent[&p].iter().filter(|e| e.want_type == WantType::Block).count();
        let (f, s) = (want_blocks(fast), want_blocks(slow));
        // The faster peer takes at least as many, but queued blocks are not free: the slower one
        // gets its share too.
        assert!(f >= s && s >= 4, "{f} want-blocks to the faster peer, {s} to the slower");
    }

    #[test]
    fn a_peer_whose_have_came_after_the_block_shares_the_next_batch() {
        let (mut c, s, now, first, haves) = asked(3);
        let late = haves[0];
        c.handle_message(now + 160 * MS, first, &blocks(&[block(1)]));
        c.handle_message(now + 190 * MS, late, &presence(block(1).cid(), Presence::Have));
        c.want(now + 195 * MS, s, (2..66).map(|i| block(i).cid()));
        let sent = sent_by(&mut c, now + 240 * MS);
        let want_blocks =
            |p: u8| sent[&p].iter().filter(|e| e.want_type == WantType::Block).count();
        let (f, l) = (want_blocks(first), want_blocks(late));
        assert!(f >= 24 && l >= 24, "{f} want-blocks to the first holder, {l} to the late one");
    }

    /// A session wants 12 blocks of about 2 kB from peer 0, the one peer connected, whose
    /// server sends 8 kB ahead.
    fn twelve_wants_of_peer_0() -> (Client<u8>, Instant, Vec<Block>) {
        let config = Config::new(ClientMode::Sessions)
            .with_rng_seed(7)
            .with_max_outstanding_bytes_per_peer(8000);
        let mut c = Client::new(config);
        let now = Instant::now();
        c.peer_connected(now, 0, V12);
        let s = c.new_session(now);
        let bs: Vec<Block> = (1..=12).map(block).collect();
        c.want(now, s, bs.iter().map(|b| b.cid()));
        (c, now, bs)
    }

    /// Peer 0 holds the want-blocks of [`twelve_wants_of_peer_0`] and serves one per 10 ms after
    /// a 30 ms round trip. Peer 1 connects after two blocks.
    fn a_fetch_under_way_when_a_peer_joins() -> (Client<u8>, Instant, Vec<Block>, Vec<WantEntry>) {
        let (mut c, now, bs) = twelve_wants_of_peer_0();
        assert_eq!(sent_by(&mut c, now + 25 * MS)[&0].len(), 12);
        c.handle_message(now + 30 * MS, 0, &blocks(&bs[..1]));
        c.handle_message(now + 40 * MS, 0, &blocks(&bs[1..2]));
        c.peer_connected(now + 50 * MS, 1, V12);
        let offered = sent_by(&mut c, now + 75 * MS).remove(&1).unwrap_or_default();
        (c, now + 75 * MS, bs, offered)
    }

    #[test]
    fn a_joining_peer_is_asked_about_the_wants_queued_beyond_the_busy_peers_in_flight_bytes() {
        let (_, _, bs, offered) = a_fetch_under_way_when_a_peer_joins();
        let offered: Vec<Cid> = offered.iter().map(|e| e.cid).collect();
        // Blocks 3 to 6 are within 8 kB of the front of peer 0's queue: they may be on the wire.
        let deep: Vec<Cid> = bs[6..].iter().map(|b| b.cid()).collect();
        assert_eq!(offered, deep);
    }

    #[test]
    fn a_joining_peer_that_has_them_takes_over_wants_it_would_answer_sooner() {
        let (mut c, now, _, offered) = a_fetch_under_way_when_a_peer_joins();
        assert!(offered.iter().all(|e| e.want_type == WantType::Have && !e.cancel));
        let haves = Message {
            presences: offered
                .iter()
                .map(|e| BlockPresence { cid: e.cid, presence: Presence::Have })
                .collect(),
            ..Message::default()
        };
        c.handle_message(now + 10 * MS, 1, &haves);
        let sent = sent_by(&mut c, now + 40 * MS);
        let moved: Vec<Cid> =
            sent[&1].iter().filter(|e| e.want_type == WantType::Block).map(|e| e.cid).collect();
        let cancelled: Vec<Cid> = sent[&0].iter().filter(|e| e.cancel).map(|e| e.cid).collect();
        assert!(
            moved.len() >= 2 && moved.len() < offered.len(),
            "{} of {} moved",
            moved.len(),
            offered.len()
        );
        assert_eq!(moved, cancelled, "each moved want is cancelled at the busy peer");
        assert_eq!(c.stats().peer(0).rerouted_wants, moved.len() as u64);
    }

    /// Peer 1 said DONT_HAVE for the first block (a seed still storing its content, say), so the
    /// next batch's want-blocks all go to peer 0 and peer 1 is only asked want-have. Its HAVEs
    /// then let it take the wants waiting deep in peer 0's queue.
    #[test]
    fn a_peer_first_ranked_out_takes_deep_wants_once_it_says_have() {
        let config = Config::new(ClientMode::Sessions)
            .with_rng_seed(7)
            .with_max_outstanding_bytes_per_peer(8000);
        let mut c = Client::new(config);
        let now = Instant::now();
        c.peer_connected(now, 0, V12);
        c.peer_connected(now, 1, V12);
        let s = c.new_session(now);
        let bs: Vec<Block> = (1..=14).map(block).collect();
        c.want(now, s, [bs[0].cid()]);
        let holder = wants_of(&sent_by(&mut c, now + 25 * MS), WantType::Block)[0];
        let other = 1 - holder;
        c.handle_message(now + 30 * MS, other, &presence(bs[0].cid(), Presence::DontHave));
        c.handle_message(now + 35 * MS, holder, &blocks(&bs[..1]));
        c.want(now + 40 * MS, s, bs[1..].iter().map(|b| b.cid()));
        let batch = sent_by(&mut c, now + 65 * MS);
        assert_eq!(wants_of(&batch, WantType::Block), vec![holder]);
        c.handle_message(now + 75 * MS, holder, &blocks(&bs[1..2]));
        c.handle_message(now + 85 * MS, holder, &blocks(&bs[2..3]));
        let haves = Message {
            presences: bs[3..]
                .iter()
                .map(|b| BlockPresence { cid: b.cid(), presence: Presence::Have })
                .collect(),
            ..Message::default()
        };
        c.handle_message(now + 90 * MS, other, &haves);
        let sent = sent_by(&mut c, now + 120 * MS);
        let entries = |p: u8, cancel: bool| -> Vec<Cid> {
            let of = sent.get(&p).map(Vec::as_slice).unwrap_or_default();
            let of = of.iter().filter(|e| e.cancel == cancel && e.want_type == WantType::Block);
            of.map(|e| e.cid).collect()
        };
        let moved = entries(other, false);
        assert!(moved.len() >= 2, "{} wants moved to the peer that said HAVE", moved.len());
        assert_eq!(moved, entries(holder, true), "each moved want is cancelled at the holder");
    }

    /// Peer 1 connects as the fetch starts, before any block has arrived: it is greeted with a
    /// want-have, but no want waits deep yet (nothing delivered), so the batch stays with peer 0.
    /// Once wants wait deep in peer 0's queue, peer 1, holding none of the session's
    /// want-blocks, is asked about them as a peer never asked would be. A browser fetching from
    /// three seeds that came up together left two of them nearly idle in about half its runs.
    #[test]
    fn a_peer_greeted_before_the_wants_were_deep_is_asked_about_them_later() {
        let (mut c, now, bs) = twelve_wants_of_peer_0();
        assert_eq!(sent_by(&mut c, now + 5 * MS)[&0].len(), 12);
        c.peer_connected(now + 10 * MS, 1, V12);
        let greeted = sent_by(&mut c, now + 15 * MS).remove(&1).unwrap_or_default();
        assert_eq!(greeted.len(), 1, "the greeting: {greeted:?}");
        c.handle_message(now + 25 * MS, 1, &presence(greeted[0].cid, Presence::Have));
        c.handle_message(now + 30 * MS, 0, &blocks(&bs[..1]));
        c.handle_message(now + 40 * MS, 0, &blocks(&bs[1..2]));
        let offered = sent_by(&mut c, now + 65 * MS).remove(&1).unwrap_or_default();
        assert!(offered.iter().all(|e| e.want_type == WantType::Have && !e.cancel));
        // The wants at the front of peer 0's queue, within its 8 kB in flight, are left to it.
        let offered: Vec<Cid> = offered.iter().map(|e| e.cid).collect();
        let deep: Vec<Cid> = bs[bs.len() - offered.len()..].iter().map(|b| b.cid()).collect();
        assert!((4..=8).contains(&offered.len()), "{} wants offered", offered.len());
        assert_eq!(offered, deep);
    }

    #[test]
    fn a_disconnected_peer_counts_as_dont_have() {
        let (mut c, _, now, wb, haves) = asked(4);
        let cid = block(1).cid();
        for p in &haves {
            c.handle_message(now + 20 * MS, *p, &presence(cid, Presence::DontHave));
        }
        c.peer_disconnected(now + 21 * MS, wb);
        let sent = sent_by(&mut c, now + 45 * MS);
        assert_eq!(wants_of(&sent, WantType::Block).len(), 1);
        assert!(!sent.contains_key(&wb));
    }
}
