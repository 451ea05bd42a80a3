//! Moving want-blocks that wait deep in one peer's queue to a peer that would answer sooner: the
//! offers to idle peers, and the moves their HAVEs allow.

use std::collections::{BTreeMap, BTreeSet};

use cid::Cid;

use super::Session;
use crate::bitswap::message::{Presence, WantType};
use crate::bitswap::peer::{PeerState, Typical};
use crate::bitswap::ClientMode;

/// Idle peers that one round of offers puts deep wants to.
const OFFER_PEERS: usize = 4;
/// Peers a session offers deep wants to, in all: each HAVE can move a want-block, and a peer
/// asked want-have for a block small enough to be inlined answers with a duplicate.
pub(super) const OFFERED_PEERS: usize = 32;

impl<P: Copy + Ord + std::hash::Hash> Session<P> {
    /// Moves the want-block for `cid` from the one peer holding it to a peer that said HAVE, when
    /// that peer would answer sooner by at least a block's service time and the want sits behind
    /// more than the holder's in-flight allowance. Returns the holder, which the caller cancels,
    /// and the want-block to send.
    pub(in crate::bitswap) fn reroute(
        &mut self,
        cid: Cid,
        peers: &BTreeMap<P, PeerState>,
    ) -> Option<(P, Vec<(P, WantType)>)> {
        let want = self.wants.get(&cid)?;
        let mut live = want.live_block.iter();
        let (Some(&holder), None) = (live.next(), live.next()) else { return None };
        let ahead = self.ahead_of(&holder, want.index);
        if !self.beyond_in_flight(ahead) {
            return None;
        }
        let typical = Typical::of(peers);
        let wait = peers.get(&holder)?.delay_behind(typical, ahead);
        let (to, delay, service) = want
            .presence
            .iter()
            .filter(|(p, pr)| {
                **pr == Presence::Have
                    && want.asked.get(p).is_some_and(|a| a.want_type == WantType::Have)
            })
            .filter_map(|(p, _)| {
                let s = peers.get(p)?;
                // The smoothed round trip, not the smallest: a HAVE that waited behind blocks on
                // a link shared with the holder says the newcomer would wait too.
                Some((*p, s.expected_delay(typical), s.service().unwrap_or(typical.service)))
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))?;
        if delay + service >= wait {
            return None;
        }
        if let Some(want) = self.wants.get_mut(&cid) {
            want.live_block.remove(&holder);
            if let Some(ask) = want.asked.get_mut(&holder) {
                ask.answered = true;
            }
        }
        Some((holder, self.ask(cid, vec![(to, WantType::Block)])))
    }

    /// Puts the wants waiting behind more than the in-flight allowance of the one peer holding
    /// their want-block to connected peers that hold none of this session's want-blocks
    /// (want-have), once each: a seed that joined after the wants were handed out, or one they
    /// were never ranked high enough for, such as a seed greeted before any want was deep (its
    /// greeting's want-have does not make it a holder). Their HAVEs let [`Self::reroute`] hand
    /// them a share. At most [`OFFER_PEERS`] peers at a time and [`OFFERED_PEERS`] in all.
    pub(in crate::bitswap) fn offer(
        &mut self,
        peers: &BTreeMap<P, PeerState>,
    ) -> Vec<(Cid, u64, P)> {
        if self.mode != ClientMode::Sessions || self.offered.len() >= OFFERED_PEERS {
            return Vec::new();
        }
        let room = OFFERED_PEERS - self.offered.len();
        let busy: BTreeSet<P> =
            self.wants.values().flat_map(|w| w.live_block.iter().copied()).collect();
        let idle: Vec<P> = peers
            .iter()
            .filter(|(p, s)| s.version.supports_have() && !busy.contains(p))
            .filter(|(p, _)| !self.offered.contains(p))
            .map(|(p, _)| *p)
            .take(OFFER_PEERS.min(room))
            .collect();
        if idle.is_empty() {
            return Vec::new();
        }
        let deep = self.deep_wants();
        if deep.is_empty() {
            return Vec::new();
        }
        self.offered.extend(idle.iter().copied());
        let mut out = Vec::new();
        for (cid, index) in deep {
            for &peer in &idle {
                self.ask(cid, vec![(peer, WantType::Have)]);
                out.push((cid, index, peer));
            }
        }
        out
    }

    /// A want-have that measures `peer`, connected while this session's wants are out and
    /// never asked anything: its earliest want that was asked of someone. Until its
    /// round trip is known, the peer is only probed (see `candidates`), so a batch handed out
    /// before it answered would go entirely to the peers measured already.
    pub(in crate::bitswap) fn greet(&mut self, peer: P) -> Option<(Cid, u64)> {
        if self.mode != ClientMode::Sessions || self.asked_ever.contains(&peer) {
            return None;
        }
        let (cid, index) = self
            .wants
            .iter()
            .filter(|(_, w)| !w.asked.is_empty())
            .map(|(c, w)| (*c, w.index))
            .min_by_key(|(_, i)| *i)?;
        self.ask(cid, vec![(peer, WantType::Have)]);
        Some((cid, index))
    }

    /// Wants, in order, whose want-block waits at a single peer behind more than its in-flight
    /// allowance.
    fn deep_wants(&self) -> Vec<(Cid, u64)> {
        let mut deep: Vec<(Cid, u64)> = self
            .wants
            .iter()
            .filter(|(_, w)| w.live_block.len() == 1)
            .filter(|(_, w)| {
                w.live_block.iter().all(|h| self.beyond_in_flight(self.ahead_of(h, w.index)))
            })
            .map(|(c, w)| (*c, w.index))
            .collect();
        deep.sort_unstable_by_key(|(_, i)| *i);
        deep
    }

    /// Want-blocks at `peer` ahead of the want with `index`: its place in the peer's queue, as far
    /// as this session is concerned (servers answer in priority order, and priority follows the
    /// index). A count, not a queue built per call: [`Self::reroute`] runs for every want a
    /// HAVE marks, hundreds at a fetch's start.
    fn ahead_of(&self, peer: &P, index: u64) -> usize {
        self.wants.values().filter(|w| w.index < index && w.live_block.contains(peer)).count()
    }

    /// Whether `ahead` blocks of the mean size delivered so far fill more than a server sends
    /// ahead: a want behind them cannot be on the wire yet. Nothing delivered yet: nothing moves.
    fn beyond_in_flight(&self, ahead: usize) -> bool {
        self.delivered > 0
            && ahead as u64 * self.delivered_bytes / self.delivered > self.server_in_flight as u64
    }
}
