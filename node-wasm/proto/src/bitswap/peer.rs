//! What the client knows about each connected peer: the wants it holds from us, its outgoing
//! want queue, and the round-trip and service-time estimates that the client's timeouts and the
//! sessions' peer choice both read. Kept apart from both so that neither imports the other.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::time::Duration;

use cid::Cid;
use indexmap::IndexMap;
use web_time::Instant;

use super::message::{WantEntry, WantType};
use super::{Config, ProtocolVersion};

/// Smoothed round-trip time, as TCP keeps it, and the smallest sample: the round trip without
/// the peer's queue (a want-block's answer waits behind the blocks asked before it).
#[derive(Debug, Clone, Copy, Default)]
struct Rtt {
    srtt: Option<f64>,
    rttvar: f64,
    min: Option<f64>,
}

impl Rtt {
    fn sample(&mut self, rtt: Duration) {
        let r = rtt.as_secs_f64();
        self.min = Some(self.min.map_or(r, |m| m.min(r)));
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

/// Pings remembered per peer: the node pings each connection every 2 s, so about the last
/// eight seconds of one connection.
const PING_MEMORY: usize = 4;

/// The smallest of the peer's last [`PING_MEMORY`] pings. A ping shares the connection with
/// whatever else it carries, so one sent behind a burst of blocks (to us or to anyone) or
/// answered after a pause of the remote's thread reads long; the smallest recent one is the
/// path's own round trip. A path that became slower for good (a direct connection that fell
/// back to a relay) shows after [`PING_MEMORY`] pings. With several connections to the peer,
/// their pings mix here, and the nearest path ranks it.
#[derive(Debug, Default)]
struct RecentPings {
    last: VecDeque<f64>,
}

impl RecentPings {
    fn push(&mut self, rtt: f64) {
        if self.last.len() == PING_MEMORY {
            self.last.pop_front();
        }
        self.last.push_back(rtt);
    }

    fn min(&self) -> Option<f64> {
        self.last.iter().copied().reduce(f64::min)
    }
}

/// Withdrawn want-haves remembered per unmeasured peer for a late answer's round trip: about a
/// batch's worth (a server that got the cancel in time never answers, so entries age out).
const WITHDRAWN_MEMORY: usize = 256;
/// Want-haves left for the peer to answer ([`PeerState::served_elsewhere`]) remembered until
/// the answer: as many as a server keeps wants for one peer. One forgotten earlier stays at that
/// server only if it lacked the block, and then takes up one entry of its wantlist.
const ABANDONED_MEMORY: usize = 1024;

/// A want the peer holds from us.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sent {
    pub(super) want_type: WantType,
    pub(super) at: Instant,
    /// Want-blocks live at this peer when this one was sent: its answer waited behind them.
    ahead: usize,
    pub(super) answered: bool,
    answered_have: bool,
}

/// Mean round trip and per-block service time over the peers where they were measured.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Typical {
    pub(super) rtt: f64,
    pub(super) service: f64,
    /// Mean lone-block sample ([`PeerState::ranking_delay`]), if any peer has one.
    lone_block: Option<f64>,
}

impl Typical {
    pub(super) fn of<P>(peers: &BTreeMap<P, PeerState>) -> Self {
        let mean = |values: Vec<f64>| match values.len() {
            0 => 0.0,
            n => values.iter().sum::<f64>() / n as f64,
        };
        Self {
            rtt: mean(peers.values().filter_map(PeerState::srtt).collect()),
            service: mean(peers.values().filter_map(PeerState::service).collect()),
            lone_block: {
                let lone: Vec<f64> = peers.values().filter_map(|p| p.lone_block).collect();
                (!lone.is_empty()).then(|| mean(lone))
            },
        }
    }
}

/// The mean of the measured round trips, in seconds.
pub(super) fn mean_rtt<P>(peers: &BTreeMap<P, PeerState>) -> Option<f64> {
    let (sum, n) =
        peers.values().filter_map(|p| p.rtt.srtt).fold((0.0, 0u32), |(s, n), r| (s + r, n + 1));
    (n > 0).then(|| sum / f64::from(n))
}

/// The `q` quantile of the measured round trips, in seconds (0 when none).
pub(super) fn rtt_percentile<P>(peers: &BTreeMap<P, PeerState>, q: f64) -> f64 {
    let mut rtts: Vec<f64> = peers.values().filter_map(|p| p.rtt.srtt).collect();
    rtts.sort_by(f64::total_cmp);
    let i = ((rtts.len() as f64 - 1.0) * q).round().max(0.0) as usize;
    rtts.get(i).copied().unwrap_or(0.0)
}

/// What the client knows about one connected peer.
#[derive(Debug)]
pub(super) struct PeerState {
    pub(super) version: ProtocolVersion,
    /// Wants the peer holds from us (sent or queued).
    pub(super) sent: HashMap<Cid, Sent>,
    /// Want-blocks not answered yet: the peer's load.
    pub(super) live: HashSet<Cid>,
    /// Want-haves withdrawn before their answer while no round trip was measured on this peer,
    /// with when they were sent, oldest first: an answer already on its way still gives the
    /// first measurement. A session withdraws its want-haves to slower peers as soon as a
    /// faster one delivers, so without this the slower peers would stay unmeasured, and be
    /// ranked at the mean round trip. Want-blocks are left out: their late answers waited
    /// behind the peer's queue.
    withdrawn: IndexMap<Cid, Instant>,
    /// Want-haves whose block came from another peer, left for this one to answer instead of
    /// cancelled, oldest first. A server keeps a want it answered with DONT_HAVE, so that
    /// answer still owes it the cancel.
    abandoned: IndexMap<Cid, ()>,
    queue: IndexMap<Cid, WantEntry>,
    first_queued: Option<Instant>,
    last_queued: Option<Instant>,
    rtt: Rtt,
    /// The connection's own round trips (libp2p's ping): rank the peer until its answers
    /// measured one.
    pings: RecentPings,
    pub(super) last_heard: Option<Instant>,
    /// Last time bytes of a message not complete yet arrived.
    pub(super) last_progress: Option<Instant>,
    /// Smoothed gap between blocks while the peer had more to send: its per-block service time.
    service: Option<f64>,
    /// Smoothed time a lone want-block took beyond the smallest round trip: the service time of
    /// a peer never measured with a queue.
    lone_block: Option<f64>,
    last_block: Option<Instant>,
    busy: bool,
}

impl PeerState {
    pub(super) fn new(version: ProtocolVersion) -> Self {
        Self {
            version,
            sent: HashMap::new(),
            live: HashSet::new(),
            withdrawn: IndexMap::new(),
            abandoned: IndexMap::new(),
            queue: IndexMap::new(),
            first_queued: None,
            last_queued: None,
            rtt: Rtt::default(),
            pings: RecentPings::default(),
            last_heard: None,
            last_progress: None,
            service: None,
            lone_block: None,
            last_block: None,
            busy: false,
        }
    }

    pub(super) fn live_blocks(&self) -> usize {
        self.live.len()
    }

    pub(super) fn srtt(&self) -> Option<f64> {
        self.rtt.srtt
    }

    pub(super) fn service(&self) -> Option<f64> {
        self.service
    }

    /// Seconds until a want-block sent now should be answered: the round trip plus the blocks
    /// queued ahead of it, each at the peer's service time; `typical` stands in for what was not
    /// measured on this peer.
    pub(super) fn expected_delay(&self, typical: Typical) -> f64 {
        let rtt = self.round_trip(typical);
        rtt + self.live.len() as f64 * self.service_or(typical, rtt)
    }

    /// [`Self::expected_delay`] for choosing among peers known to hold a block: before any queue
    /// was measured, a queued block counts what this peer's lone blocks took beyond the round trip
    /// (the other peers' mean until this one has a sample; at most a round trip). Peers that
    /// answer every lone block at once would otherwise be passed over for slower ones after a
    /// single queued block, and a peer just found to be nearer would take one block of a batch
    /// while a farther one, measured first, took the rest. The silent-peer timeout keeps
    /// counting a round trip per block: a want-block timed out too early comes back as a
    /// duplicate.
    pub(super) fn ranking_delay(&self, typical: Typical) -> f64 {
        let rtt = self.round_trip(typical);
        let lone = self.lone_block.or(typical.lone_block).map_or(rtt, |b| b.min(rtt));
        rtt + self.live.len() as f64 * self.measured_service(typical).unwrap_or(lone)
    }

    /// The round trip its answers measured, else its connection's ping, else the typical one.
    fn round_trip(&self, typical: Typical) -> f64 {
        self.rtt.srtt.or(self.pings.min()).unwrap_or(typical.rtt)
    }

    /// The peer's service time, else the typical one; before any was measured, a round trip:
    /// counting queued blocks as free would send every want-block of a first batch to whichever
    /// peer answered fastest once.
    fn service_or(&self, typical: Typical, rtt: f64) -> f64 {
        self.measured_service(typical).unwrap_or(rtt)
    }

    fn measured_service(&self, typical: Typical) -> Option<f64> {
        self.service.or((typical.service > 0.0).then_some(typical.service))
    }

    /// Seconds until a want-block sent now would be answered if `ahead` blocks were queued
    /// before it: the smallest round trip (the queue is counted apart, so a round trip sampled
    /// behind a queue would count it twice) plus `ahead` blocks at the peer's service time.
    pub(super) fn delay_behind(&self, typical: Typical, ahead: usize) -> f64 {
        let rtt = self.rtt.min.or(self.pings.min()).unwrap_or(typical.rtt);
        rtt + ahead as f64 * self.service_or(typical, rtt)
    }

    /// Seconds of silence after which this peer counts as not having a want: its expected
    /// delay plus four deviations, once a round trip was measured on it.
    pub(super) fn silence_timeout(&self, typical: Typical) -> Option<f64> {
        self.rtt.srtt.map(|_| self.expected_delay(typical) + 4.0 * self.rtt.rttvar)
    }

    /// Marks the want for `cid` answered and samples the round trip. A block (`with_block`) that
    /// answered a want-block with none ahead of it took the smallest round trip plus one block's
    /// service time: the difference is a lone-block sample.
    pub(super) fn answered(&mut self, now: Instant, cid: &Cid, with_block: bool) {
        self.live.remove(cid);
        let Some(sent) = self.sent.get_mut(cid) else {
            if let Some(at) = self.withdrawn.shift_remove(cid) {
                self.rtt.sample(now.saturating_duration_since(at));
                self.withdrawn.clear();
            }
            return;
        };
        if sent.answered {
            return;
        }
        sent.answered = true;
        let rtt = now.saturating_duration_since(sent.at);
        let first = sent.want_type == WantType::Block && sent.ahead == 0;
        if let (true, true, Some(min)) = (with_block, first, self.rtt.min) {
            let extra = (rtt.as_secs_f64() - min).max(0.0);
            self.lone_block = Some(self.lone_block.map_or(extra, |s| 0.75 * s + 0.25 * extra));
        }
        self.rtt.sample(rtt);
        self.withdrawn.clear();
    }

    /// The connection measured a round trip to the peer (libp2p's ping). It stands in for the
    /// answers' round trip until there is one, and is not mixed into it: a ping does not wait
    /// behind the blocks the peer has queued for us, so it would make a busy peer look near.
    pub(super) fn ping(&mut self, rtt: Duration) {
        self.pings.push(rtt.as_secs_f64());
    }

    /// An answer for `cid` arrived: its round trip lowers the smallest one seen, before the
    /// answer itself is handled.
    pub(super) fn note_round_trip(&mut self, now: Instant, cid: &Cid) {
        let unanswered = self.sent.get(cid).filter(|s| !s.answered).map(|s| s.at);
        if let Some(at) = unanswered.or_else(|| self.withdrawn.get(cid).copied()) {
            let r = now.saturating_duration_since(at).as_secs_f64();
            self.rtt.min = Some(self.rtt.min.map_or(r, |m| m.min(r)));
        }
    }

    /// The peer said HAVE for `cid`: its server forgot the want-have, so no cancel is owed.
    pub(super) fn answered_have(&mut self, cid: &Cid) {
        self.abandoned.shift_remove(cid);
        if let Some(sent) = self.sent.get_mut(cid) {
            sent.answered_have = true;
        }
    }

    /// The peer said DONT_HAVE for `cid`: a want-have left to it after the block came from
    /// elsewhere is still held by its server, and is cancelled now.
    pub(super) fn answered_dont_have(&mut self, now: Instant, cid: &Cid) {
        if self.abandoned.shift_remove(cid).is_some() {
            self.queue_cancel(now, *cid);
        }
    }

    /// A message with `blocks` blocks arrived: if the peer was still sending since the last
    /// one, the gap per block is a sample of its service time.
    pub(super) fn blocks_arrived(&mut self, now: Instant, blocks: usize) {
        if let (true, Some(last)) = (self.busy, self.last_block) {
            let gap = now.saturating_duration_since(last).as_secs_f64() / blocks as f64;
            self.service = Some(self.service.map_or(gap, |s| 0.75 * s + 0.25 * gap));
        }
        self.last_block = Some(now);
        self.busy = !self.live.is_empty();
    }

    pub(super) fn flush_at(&self, config: &Config) -> Option<Instant> {
        let first = self.first_queued?;
        let last = self.last_queued?;
        Some((last + config.send_debounce).min(first + config.max_send_delay))
    }

    /// Empties the want queue, for sending.
    pub(super) fn take_queue(&mut self) -> Vec<WantEntry> {
        self.first_queued = None;
        self.last_queued = None;
        std::mem::take(&mut self.queue).into_values().collect()
    }

    /// Withdraws the want for `cid`: dropped from the queue if not sent yet, otherwise
    /// cancelled, unless it was a want-have the peer answered with HAVE (its server forgot it
    /// then).
    pub(super) fn cancel(&mut self, now: Instant, cid: Cid) {
        let Some(sent) = self.sent.remove(&cid) else { return };
        if sent.want_type == WantType::Have && sent.answered_have {
            return;
        }
        self.live.remove(&cid);
        if self.queue.shift_remove(&cid).is_none() {
            self.remember_withdrawn(cid, sent);
            self.queue_cancel(now, cid);
        } else if self.queue.is_empty() {
            self.first_queued = None;
            self.last_queued = None;
        }
    }

    fn queue_cancel(&mut self, now: Instant, cid: Cid) {
        self.queue.insert(cid, WantEntry::cancel(cid));
        self.first_queued.get_or_insert(now);
        self.last_queued = Some(now);
    }

    /// The block for `cid` came from another peer and is too big to be sent for a want-have: a
    /// want-have this peer holds and has not answered yet can only be answered with a presence,
    /// a few bytes, so it is left to be answered instead of cancelled (a DONT_HAVE then still
    /// owes the cancel, [`Self::answered_dont_have`]). A cancel is a message of its own while
    /// the blocks keep coming: in a 64 MiB fetch from 3 seeds, 169 of the fetcher's 178 messages
    /// were cancels of want-haves (`syncscope-bench bitswap --nodes 4 --blocks 256 --block-size
    /// 262144 --fetch unixfs --downlink-mbps 250`), and in the browser each message is a
    /// WebSocket send. The late answers also tell the session who else holds the block. Every
    /// other want is cancelled as [`Self::cancel`] does.
    pub(super) fn served_elsewhere(&mut self, now: Instant, cid: Cid) {
        let unanswered_have =
            self.sent.get(&cid).is_some_and(|s| s.want_type == WantType::Have && !s.answered);
        if !unanswered_have || self.queue.contains_key(&cid) {
            return self.cancel(now, cid);
        }
        let Some(sent) = self.sent.remove(&cid) else { return };
        self.remember_withdrawn(cid, sent);
        remember(&mut self.abandoned, cid, (), ABANDONED_MEMORY);
    }

    /// A withdrawn want-have still on its way to an unmeasured peer: its answer gives the first
    /// round trip.
    fn remember_withdrawn(&mut self, cid: Cid, sent: Sent) {
        if !sent.answered && sent.want_type == WantType::Have && self.rtt.srtt.is_none() {
            remember(&mut self.withdrawn, cid, sent.at, WITHDRAWN_MEMORY);
        }
    }

    /// Queues a want unless the peer already holds it and owes an answer (a want-have may still
    /// be upgraded; one answered, or given up on, may be asked again).
    pub(super) fn enqueue_want(
        &mut self,
        now: Instant,
        cid: Cid,
        want_type: WantType,
        priority: i32,
        send_dont_have: bool,
    ) {
        match self.sent.get(&cid) {
            Some(s) if s.want_type == WantType::Block => return,
            Some(s) if want_type == WantType::Have && !s.answered => return,
            _ => {}
        }
        self.withdrawn.shift_remove(&cid);
        self.abandoned.shift_remove(&cid);
        let ahead = self.live.len();
        let sent = Sent { want_type, at: now, ahead, answered: false, answered_have: false };
        self.sent.insert(cid, sent);
        if want_type == WantType::Block {
            self.live.insert(cid);
        }
        let entry = WantEntry::want(cid, want_type, priority, send_dont_have);
        // Keyed, not searched: a first batch queues every leaf of a file at once.
        self.queue.insert(cid, entry);
        self.first_queued.get_or_insert(now);
        self.last_queued = Some(now);
    }
}

/// Adds `cid` to a memory that forgets its oldest entry beyond `cap`.
fn remember<V>(memory: &mut IndexMap<Cid, V>, cid: Cid, value: V, cap: usize) {
    memory.insert(cid, value);
    if memory.len() > cap {
        memory.shift_remove_index(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitswap::verify::raw_cid;

    fn cid(i: u32) -> Cid {
        raw_cid(&i.to_le_bytes())
    }

    fn queued(peer: &mut PeerState) -> Vec<(Cid, WantType, bool)> {
        peer.take_queue().into_iter().map(|e| (e.cid, e.want_type, e.cancel)).collect()
    }

    #[test]
    fn the_want_queue_keeps_first_queued_order_and_one_entry_per_cid() {
        let now = Instant::now();
        let mut peer = PeerState::new(ProtocolVersion::V1_2_0);
        for i in 0..3 {
            peer.enqueue_want(now, cid(i), WantType::Have, 1, true);
        }
        // An upgrade to want-block replaces the entry where it stands; a cancel of a want not
        // sent yet drops it.
        peer.enqueue_want(now, cid(0), WantType::Block, 1, true);
        peer.cancel(now, cid(1));
        assert_eq!(
            queued(&mut peer),
            vec![(cid(0), WantType::Block, false), (cid(2), WantType::Have, false)]
        );
        // Once sent, a cancel goes out as one.
        peer.cancel(now, cid(2));
        assert_eq!(queued(&mut peer), vec![(cid(2), WantType::Block, true)]);
    }
    #[test]
    fn a_want_have_whose_block_came_from_elsewhere_is_cancelled_only_after_a_dont_have() {
        let t0 = Instant::now();
        let mut peer = PeerState::new(ProtocolVersion::V1_2_0);
        for i in [0, 1, 2, 5] {
            peer.enqueue_want(t0, cid(i), WantType::Have, 1, true);
        }
        peer.enqueue_want(t0, cid(3), WantType::Block, 1, true);
        peer.take_queue();
        peer.enqueue_want(t0, cid(4), WantType::Have, 1, true);
        peer.answered(t0, &cid(5), false);
        peer.answered_dont_have(t0, &cid(5));
        for i in 0..6 {
            peer.served_elsewhere(t0, cid(i));
        }
        // The want-block and the want-have answered DONT_HAVE are cancelled, the want-have not
        // sent yet is dropped; the want-haves on the wire are left to be answered.
        let cancelled = vec![(cid(3), WantType::Block, true), (cid(5), WantType::Block, true)];
        assert_eq!(queued(&mut peer), cancelled);
        // A HAVE ends the want at the server; a DONT_HAVE leaves it there: that one is cancelled,
        // once.
        peer.answered_have(&cid(0));
        peer.answered_dont_have(t0, &cid(0));
        peer.answered_dont_have(t0, &cid(1));
        peer.answered_dont_have(t0, &cid(1));
        assert_eq!(queued(&mut peer), vec![(cid(1), WantType::Block, true)]);
        // A want asked again is a live want, not a left-over one.
        peer.enqueue_want(t0, cid(2), WantType::Block, 1, true);
        peer.take_queue();
        peer.answered_dont_have(t0, &cid(2));
        assert_eq!(queued(&mut peer), vec![]);
    }

    #[test]
    fn a_lone_block_sets_how_queued_blocks_rank_but_not_the_silence_timeout() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut peer = PeerState::new(ProtocolVersion::V1_2_0);
        // A want-have and a lone want-block, answered in one message 30 ms later: the block
        // took no longer than the presence.
        peer.enqueue_want(t0, cid(0), WantType::Have, 1, true);
        peer.enqueue_want(t0, cid(1), WantType::Block, 1, true);
        peer.note_round_trip(t0 + ms(30), &cid(0));
        peer.answered(t0 + ms(30), &cid(1), true);
        peer.answered(t0 + ms(30), &cid(0), false);
        for i in 2..5 {
            peer.enqueue_want(t0 + ms(30), cid(i), WantType::Block, 1, true);
        }
        let typical = Typical::default();
        assert!((peer.ranking_delay(typical) - 0.030).abs() < 1e-9);
        // The timeout still counts a round trip for each of the 3 blocks queued.
        assert!((peer.expected_delay(typical) - 0.120).abs() < 1e-9);
        // A block sent behind others is no lone sample: the queue's gaps measure it instead.
        peer.answered(t0 + ms(100), &cid(3), true);
        assert_eq!(peer.lone_block, Some(0.0));
    }

    /// A peer that answered one want-have in `rtt_ms` and now holds `queued` want-blocks.
    fn measured(t0: Instant, rtt_ms: u64, queued: u32) -> PeerState {
        let mut peer = PeerState::new(ProtocolVersion::V1_2_0);
        peer.enqueue_want(t0, cid(100), WantType::Have, 1, true);
        peer.answered(t0 + Duration::from_millis(rtt_ms), &cid(100), false);
        for i in 0..queued {
            peer.enqueue_want(t0, cid(i), WantType::Block, 1, true);
        }
        peer
    }

    #[test]
    fn a_peer_with_no_lone_block_of_its_own_ranks_queued_blocks_at_the_others_mean() {
        let t0 = Instant::now();
        let near = measured(t0, 30, 2);
        assert!((near.ranking_delay(Typical::default()) - 0.090).abs() < 1e-9);
        // Another peer's lone blocks took no time beyond its round trip: so do this one's.
        let mut far = measured(t0, 40, 0);
        far.lone_block = Some(0.0);
        let peers = BTreeMap::from([(0, far), (1, near)]);
        let typical = Typical::of(&peers);
        assert!((peers[&1].ranking_delay(typical) - 0.030).abs() < 1e-9);
    }

    #[test]
    fn a_want_have_withdrawn_on_the_wire_still_measures_a_peer_never_measured() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut peer = PeerState::new(ProtocolVersion::V1_2_0);
        peer.enqueue_want(t0, cid(0), WantType::Have, 1, true);
        peer.enqueue_want(t0, cid(1), WantType::Block, 1, true);
        peer.take_queue();
        peer.cancel(t0 + ms(20), cid(0));
        peer.cancel(t0 + ms(20), cid(1));
        // Both answers were under way: the block waited behind the peer's queue and measures
        // nothing, the HAVE gives the first round trip.
        peer.answered(t0 + ms(50), &cid(1), true);
        assert_eq!(peer.srtt(), None);
        peer.answered(t0 + ms(50), &cid(0), false);
        assert!((peer.srtt().unwrap() - 0.050).abs() < 1e-9);
        // A measured peer's late answers are left out: they lost a race, so they are its slow
        // ones.
        peer.enqueue_want(t0 + ms(60), cid(2), WantType::Have, 1, true);
        peer.take_queue();
        peer.cancel(t0 + ms(70), cid(2));
        peer.answered(t0 + ms(300), &cid(2), false);
        assert!((peer.srtt().unwrap() - 0.050).abs() < 1e-9);
        // A want withdrawn before it was sent gets no answer to wait for.
        let mut fresh = PeerState::new(ProtocolVersion::V1_2_0);
        fresh.enqueue_want(t0, cid(3), WantType::Have, 1, true);
        fresh.cancel(t0, cid(3));
        fresh.answered(t0 + ms(50), &cid(3), false);
        assert_eq!(fresh.srtt(), None);
    }
}
