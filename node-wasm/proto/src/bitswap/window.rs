//! The node's policy between its sessions and the client: how many wants are out at once, and
//! which blocks a peer may send without having been asked.
//!
//! Servers (boxo's and ours) keep at most 1024 wants per peer and ignore the rest, and a client
//! never asks a peer again for a want it already holds: without a window, a fetch of more than
//! 1024 blocks from one peer would stall. So at most [`Config::max_active_wants`] wants are handed
//! to the client at once, over all sessions, oldest session first; the rest wait here.
//!
//! A block nobody asked for is unsolicited. An honest peer sends none, except blocks of a session
//! closed while they were on their way: the CIDs of closed sessions are remembered
//! ([`Config::cancelled_memory`]) and excused. Past [`Config::max_unsolicited_blocks`], the peer
//! is reported as misbehaving.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::Hash;

use cid::Cid;

use super::session::SessionId;
use super::Config;

/// The wants of one session that the client does not hold yet, and those it does. `queued`
/// holds both, so that asking again for a want is a set lookup, not a scan of the queue.
#[derive(Debug, Default)]
struct Wants {
    waiting: VecDeque<Cid>,
    active: HashSet<Cid>,
    queued: HashSet<Cid>,
}

#[derive(Debug)]
pub(super) struct Window<P> {
    max_active: usize,
    /// Oldest session first: waiting wants are handed out in that order.
    sessions: BTreeMap<SessionId, Wants>,
    active: usize,
    cancelled: Recent,
    max_unsolicited: u64,
    unsolicited: HashMap<P, u64>,
}

impl<P: Copy + Eq + Hash> Window<P> {
    pub(super) fn new(config: &Config) -> Self {
        Window {
            max_active: config.max_active_wants.max(1),
            sessions: BTreeMap::new(),
            active: 0,
            cancelled: Recent::new(config.cancelled_memory),
            max_unsolicited: config.max_unsolicited_blocks,
            unsolicited: HashMap::new(),
        }
    }

    /// Wants handed to the client and not yet answered by a block.
    pub(super) fn active(&self) -> usize {
        self.active
    }

    /// Queues `cids` for `session`, behind what it already waits for.
    pub(super) fn want(&mut self, session: SessionId, cids: impl IntoIterator<Item = Cid>) {
        let wants = self.sessions.entry(session).or_default();
        for cid in cids {
            if wants.queued.insert(cid) {
                wants.waiting.push_back(cid);
            }
        }
    }

    /// The next wants to hand to the client, per session, as far as the window allows.
    pub(super) fn refill(&mut self) -> Vec<(SessionId, Vec<Cid>)> {
        let mut out = Vec::new();
        for (session, wants) in &mut self.sessions {
            let room = self.max_active.saturating_sub(self.active);
            if room == 0 {
                break;
            }
            if wants.waiting.is_empty() {
                continue;
            }
            let batch: Vec<Cid> = wants.waiting.drain(..room.min(wants.waiting.len())).collect();
            self.active += batch.len();
            wants.active.extend(batch.iter().copied());
            out.push((*session, batch));
        }
        out
    }

    /// A block `session` wanted arrived.
    pub(super) fn delivered(&mut self, session: SessionId, cid: &Cid) {
        if let Some(wants) = self.sessions.get_mut(&session) {
            if wants.active.remove(cid) {
                wants.queued.remove(cid);
                self.active -= 1;
            }
        }
    }

    /// `session` no longer wants `cids`.
    pub(super) fn cancel(&mut self, session: SessionId, cids: &[Cid]) {
        let Some(wants) = self.sessions.get_mut(&session) else { return };
        for cid in cids {
            wants.queued.remove(cid);
            if wants.active.remove(cid) {
                self.active -= 1;
            }
        }
        let queued = &wants.queued;
        wants.waiting.retain(|c| queued.contains(c));
    }

    /// `session` is closed: blocks still on the way for it (`client_wants`, and whatever was
    /// active) are excused from now on.
    pub(super) fn close(&mut self, session: SessionId, client_wants: &[Cid]) {
        for cid in client_wants {
            self.cancelled.insert(*cid);
        }
        if let Some(wants) = self.sessions.remove(&session) {
            self.active -= wants.active.len();
            for cid in wants.active {
                self.cancelled.insert(cid);
            }
        }
    }

    /// Whether a block for `cid` is excused for arriving unasked.
    pub(super) fn excused(&self, cid: &Cid) -> bool {
        self.cancelled.contains(cid)
    }

    /// Counts `blocks` more unsolicited blocks from `peer`; the total once it is past the limit.
    pub(super) fn unsolicited(&mut self, peer: P, blocks: u64) -> Option<u64> {
        if blocks == 0 {
            return None;
        }
        let count = self.unsolicited.entry(peer).or_default();
        *count += blocks;
        (*count > self.max_unsolicited).then_some(*count)
    }

    pub(super) fn peer_disconnected(&mut self, peer: &P) {
        self.unsolicited.remove(peer);
    }
}

/// CIDs remembered in insertion order, the oldest forgotten beyond a capacity.
#[derive(Debug)]
struct Recent {
    set: HashSet<Cid>,
    order: VecDeque<Cid>,
    cap: usize,
}

impl Recent {
    fn new(cap: usize) -> Self {
        Self { set: HashSet::new(), order: VecDeque::new(), cap }
    }

    fn insert(&mut self, cid: Cid) {
        if self.set.insert(cid) {
            self.order.push_back(cid);
        }
        while self.order.len() > self.cap {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
    }

    fn contains(&self, cid: &Cid) -> bool {
        self.set.contains(cid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitswap::raw_cid;

    fn cids(n: u8) -> Vec<Cid> {
        (0..n).map(|i| raw_cid(&[i])).collect()
    }

    #[test]
    fn recent_forgets_the_oldest_beyond_its_capacity() {
        let mut recent = Recent::new(2);
        let [a, b, c] = [raw_cid(b"a"), raw_cid(b"b"), raw_cid(b"c")];
        recent.insert(a);
        recent.insert(b);
        recent.insert(a);
        recent.insert(c);
        assert!(!recent.contains(&a));
        assert!(recent.contains(&b) && recent.contains(&c));
    }

    #[test]
    fn the_window_hands_out_wants_oldest_session_first_and_refills_on_delivery() {
        let config = Config::default().with_max_active_wants(3);
        let mut w: Window<u8> = Window::new(&config);
        let (s1, s2) = (SessionId(1), SessionId(2));
        let c = cids(5);
        w.want(s2, c[3..].to_vec());
        w.want(s1, c[..3].to_vec());
        assert_eq!(w.refill(), vec![(s1, c[..3].to_vec())]);
        assert_eq!(w.refill(), vec![]);
        w.delivered(s1, &c[0]);
        w.delivered(s1, &c[0]);
        assert_eq!(w.active(), 2);
        assert_eq!(w.refill(), vec![(s2, vec![c[3]])]);
        w.cancel(s2, &[c[3], c[4]]);
        w.close(s1, &[]);
        assert_eq!(w.active(), 0);
        assert!(w.excused(&c[1]) && !w.excused(&c[0]));
        assert_eq!(w.refill(), vec![]);
    }

    #[test]
    fn unsolicited_blocks_are_counted_per_peer_until_past_the_limit() {
        let config = Config::default().with_max_unsolicited_blocks(2);
        let mut w: Window<u8> = Window::new(&config);
        assert_eq!(w.unsolicited(1, 2), None);
        assert_eq!(w.unsolicited(2, 1), None);
        assert_eq!(w.unsolicited(1, 1), Some(3));
        w.peer_disconnected(&1);
        assert_eq!(w.unsolicited(1, 1), None);
    }
}
