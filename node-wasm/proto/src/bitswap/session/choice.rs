//! Who a want goes to, and as what: the candidates ranked by how likely they hold the block and
//! how soon they would answer, the want-block(s) and the want-haves that back them up.

use std::collections::BTreeMap;

use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::Session;
use crate::bitswap::message::WantType;
use crate::bitswap::peer::{PeerState, Typical};

/// Peers never heard from that one want may probe with want-have while the session explores.
const EXPLORE_PROBES: usize = 16;
/// The session explores until it knows (or has probed) this many peers. A probe costs a few
/// dozen bytes each way and tells a round trip; with many peers, the nearest are rarely among
/// the first few dozen (Realistic-300Nodes: 472.8 ms with 32 explored 4 at a time, 435.0 with
/// every peer, 16 at a time).
const EXPLORE_PEERS: usize = 1024;

/// A presence estimate this high makes a single want-block the right call.
pub(super) const CONFIDENT: f64 = 0.8;
/// Peers that a want-block to a confident holder is backed up by (want-have): if it lacks the
/// block after all, one of them may have said HAVE already. More want-haves to confident holders
/// teach little and cost a message each way per peer: with every peer of Realistic-300Nodes a
/// session member, its wants came to 2.5 MB; with 3 backups to 75 kB. One backup raised
/// Datacenter-3Leeches3Seeds' duplicates from 21 to 39.
pub(in crate::bitswap) const CONFIDENT_BACKUPS: usize = 3;
/// Wants after a confident holder's DONT_HAVE that ask every member again.
const RELEARN_WANTS: u64 = 32;

/// Sort key of a candidate: presence bucket (negated), expected delay in microseconds, load,
/// blocks delivered (more first), random tie-break.
type RankKey = (i64, u64, usize, std::cmp::Reverse<u32>, u32);

impl<P: Copy + Ord + std::hash::Hash> Session<P> {
    /// Chance that a peer holds a block that another peer already holds: near 1 when every
    /// peer has everything, near 0 when each block has one holder. A quarter of an observation
    /// of prior, so one want answered by several peers is already evidence.
    fn co_holding_rate(&self) -> f64 {
        (f64::from(self.extra_holders) + 0.25) / (f64::from(self.other_answers) + 0.5)
    }

    /// How many optimistic want-blocks a want may take: each one beyond the first duplicates
    /// with the co-holding rate, and together they may cost `dup_budget` expected duplicates.
    fn optimistic_want_blocks(&self) -> usize {
        let extra = (self.dup_budget / self.co_holding_rate()).floor();
        1 + extra.min(1e6) as usize
    }

    /// How many peers a want is put to at once: enough for about 1.5 expected holders given the
    /// session's hit rate, doubling each round that found nobody; everyone when blocks are known
    /// to have a single holder. Keeping it small matters: every peer asked want-have for a small
    /// block answers with the block itself.
    fn fan_out_limit(&self, rounds: u32) -> usize {
        if self.co_holding_rate() <= self.dup_budget {
            return usize::MAX;
        }
        let base = (1.5 / self.hit_rate()).ceil().max(2.0) as usize;
        base.saturating_mul(1 << rounds.min(16))
    }

    /// Share of answers that were HAVE or a block, with a one-in-two prior.
    fn hit_rate(&self) -> f64 {
        (f64::from(self.haves) + 1.0) / (f64::from(self.answers) + 2.0)
    }

    /// The peers to ask now, best first: every session peer not asked yet, topped up with other
    /// connected peers while the session peers are unlikely to have the block.
    pub(super) fn candidates(
        &mut self,
        index: u64,
        rounds: u32,
        members: Vec<P>,
        others: Vec<P>,
        peers: &BTreeMap<P, PeerState>,
        rng: &mut ChaCha8Rng,
    ) -> Vec<(P, f64)> {
        let limit = self.fan_out_limit(rounds);
        let mut others = others;
        others.shuffle(rng);
        let typical = Typical::of(peers);
        let mut ranked = self.rank(index, members, peers, typical, rng);
        let expected: f64 = ranked.iter().map(|(_, p)| p).sum();
        let room = if expected < 1.0 {
            limit.saturating_sub(ranked.len())
        } else {
            usize::from(saturated(ranked.first().map(|(p, _)| *p), peers, typical))
        };
        if room > 0 {
            let mut extra = self.rank(index, others.clone(), peers, typical, rng);
            extra.truncate(room);
            // A measured recruit with an empty queue goes first when the members are busy; one
            // never heard from is only probed (want-have): it may be far away, and a want-block
            // it answers after we gave up on it is a duplicate.
            let (measured, probes): (Vec<_>, Vec<_>) = extra
                .into_iter()
                .partition(|(p, _)| peers.get(p).is_some_and(|s| s.srtt().is_some()));
            let mut front = measured;
            front.append(&mut ranked);
            ranked = front;
            ranked.sort_by_key(|(_, prob)| std::cmp::Reverse(presence_bucket(*prob)));
            ranked.extend(probes);
        }
        if self.explores() {
            let room = EXPLORE_PEERS.saturating_sub(self.peers.len() + self.probed.len());
            let probes: Vec<(P, f64)> = others
                .iter()
                .filter(|p| peers.get(p).is_some_and(|s| s.srtt().is_none()))
                .filter(|p| !self.probed.contains(p) && !ranked.iter().any(|(r, _)| r == *p))
                .take(EXPLORE_PROBES.min(room))
                .map(|p| (*p, self.hit_rate()))
                .collect();
            self.probed.extend(probes.iter().map(|(p, _)| *p));
            ranked.extend(probes);
        }
        ranked
    }

    /// Whether a want-block to a confident holder may go with only [`CONFIDENT_BACKUPS`]
    /// want-haves: not for [`RELEARN_WANTS`] wants after a confident holder lacked the block.
    /// The layout has shifted then, and the members left unasked were still predicted from
    /// before the shift.
    pub(super) fn backs_up_few(&self, index: u64) -> bool {
        self.confident_miss.is_none_or(|miss| index > miss + RELEARN_WANTS)
    }

    /// Whether to spend want-haves on peers never heard from, to learn their round trips
    /// before a big step: until [`EXPLORE_PEERS`] are known or probed, and while its blocks
    /// have all been too big to come back inline.
    fn explores(&self) -> bool {
        self.peers.len() + self.probed.len() < EXPLORE_PEERS
            && self.smallest_block.is_some_and(|s| s > self.max_inline_block_size)
    }

    /// Want-block to the best candidates (as many as [`Self::optimistic_want_blocks`] allows),
    /// want-have to the rest, or, after a want-block to a confident holder, to
    /// [`CONFIDENT_BACKUPS`] of the other confident members and to every other candidate. Peers
    /// older than 1.2.0 cannot take want-have and are skipped unless chosen for the block.
    pub(super) fn fan_out(
        &self,
        ranked: Vec<(P, f64)>,
        few_backups: bool,
        peers: &BTreeMap<P, PeerState>,
    ) -> Vec<(P, WantType)> {
        // Extra want-blocks only pay when nobody is a safe bet: a confident guess costs nothing
        // if right, while extra want-blocks duplicate as soon as the layout shifts. Want-haves
        // still go to every peer whose presence is in doubt and to every peer being probed.
        let top = ranked.first().map_or(0.0, |(_, p)| *p);
        let blocks = if top < CONFIDENT { self.optimistic_want_blocks() } else { 1 };
        let asked = if few_backups { 1 + CONFIDENT_BACKUPS } else { usize::MAX };
        ranked
            .into_iter()
            .enumerate()
            .filter(|(i, (p, prob))| *i < asked || *prob < CONFIDENT || !self.peers.contains_key(p))
            .filter_map(|(i, (p, _))| {
                let supports_have = peers.get(&p).is_some_and(|s| s.version.supports_have());
                if i < blocks {
                    Some((p, WantType::Block))
                } else {
                    supports_have.then_some((p, WantType::Have))
                }
            })
            .collect()
    }

    /// Candidates, best first, with their presence estimate; `typical` is [`Typical::of`]
    /// `peers`, taken once per want rather than once per ranking.
    pub(super) fn rank(
        &mut self,
        index: u64,
        candidates: Vec<P>,
        peers: &BTreeMap<P, PeerState>,
        typical: Typical,
        rng: &mut ChaCha8Rng,
    ) -> Vec<(P, f64)> {
        let prior = self.hit_rate();
        let mut scored: Vec<(RankKey, P, f64)> = candidates
            .into_iter()
            .map(|p| {
                let prob = self.predictor.predict(p, index, prior);
                let state = peers.get(&p);
                // Among likely holders the faster peer should take more; where presence is a
                // guess, a round trip per queued block also spreads the guesses over peers
                // (onePeerPerBlock fetches slowed down without it).
                let confident = presence_bucket(prob) == 100;
                let delay = state.map_or(typical.rtt, |s| match confident {
                    true => s.ranking_delay(typical),
                    false => s.expected_delay(typical),
                });
                let load = state.map_or(0, PeerState::live_blocks);
                let delivered = self.peers.get(&p).map_or(0, |s| s.delivered);
                let key = (
                    -presence_bucket(prob),
                    (delay * 1e6) as u64,
                    load,
                    std::cmp::Reverse(delivered),
                    rng.random(),
                );
                (key, p, prob)
            })
            .collect();
        scored.sort_unstable_by_key(|s| s.0);
        scored.into_iter().map(|(_, p, prob)| (p, prob)).collect()
    }
}

/// Presence classes of width 0.05, except that every confident estimate is one class: among
/// likely holders, speed decides.
fn presence_bucket(prob: f64) -> i64 {
    if prob >= CONFIDENT {
        100
    } else {
        (prob * 20.0).round() as i64
    }
}

/// Whether the best member's queue already costs more than a round trip: then a new peer with an
/// empty queue is worth recruiting.
fn saturated<P: Ord>(best: Option<P>, peers: &BTreeMap<P, PeerState>, typical: Typical) -> bool {
    let Some(state) = best.and_then(|p| peers.get(&p)) else { return false };
    let rtt = state.srtt().unwrap_or(typical.rtt);
    rtt > 0.0 && state.expected_delay(typical) > 2.0 * rtt
}
