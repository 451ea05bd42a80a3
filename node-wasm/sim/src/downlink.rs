//! A node's shared downlink: one connection (a relay's WebSocket, say) that every message to the
//! node crosses, whichever peer sent it.
//!
//! Senders share its bandwidth equally while they have something to deliver (processor
//! sharing), and each sender's messages cross in order: the model of several multiplexed streams
//! on one connection, interleaved frame by frame. A message is delivered once its last byte has
//! crossed.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use web_time::Instant;

use super::node_id::NodeId;

/// Bytes left below which a message has crossed: sizes are whole bytes, and instants are rounded
/// to nanoseconds.
const CROSSED: f64 = 0.5;

#[derive(Debug)]
pub(super) struct Downlink<M> {
    /// Bytes per second.
    bandwidth: f64,
    /// Until when the shares have been handed out.
    updated: Instant,
    /// Per sender with something to deliver: its messages in arrival order, with the bytes of
    /// each still to cross. Only the first of each is crossing.
    flows: BTreeMap<NodeId, VecDeque<(f64, M)>>,
}

impl<M> Downlink<M> {
    pub(super) fn new(bandwidth: f64, now: Instant) -> Self {
        Self { bandwidth, updated: now, flows: BTreeMap::new() }
    }

    /// Hands out the bandwidth of the time up to `now`, an equal share per sender.
    fn advance(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        if !self.flows.is_empty() {
            let share = elapsed * self.bandwidth / self.flows.len() as f64;
            for flow in self.flows.values_mut() {
                if let Some((left, _)) = flow.front_mut() {
                    *left -= share;
                }
            }
        }
        self.updated = self.updated.max(now);
    }

    /// A message of `size` bytes from `from` reached the downlink.
    pub(super) fn push(&mut self, now: Instant, from: NodeId, size: usize, msg: M) {
        self.advance(now);
        self.flows.entry(from).or_default().push_back((size as f64, msg));
    }

    /// The messages that have crossed by `now`, in sender order.
    pub(super) fn pop_crossed(&mut self, now: Instant) -> Vec<(NodeId, M)> {
        self.advance(now);
        let mut crossed = Vec::new();
        for (from, flow) in &mut self.flows {
            while flow.front().is_some_and(|(left, _)| *left < CROSSED) {
                if let Some((_, msg)) = flow.pop_front() {
                    crossed.push((*from, msg));
                }
            }
        }
        self.flows.retain(|_, flow| !flow.is_empty());
        crossed
    }

    /// Takes `from`'s messages off the downlink, crossed or not, in order: they are lost.
    pub(super) fn take_from(&mut self, now: Instant, from: NodeId) -> Vec<M> {
        self.advance(now);
        self.flows
            .remove(&from)
            .map_or_else(Vec::new, |flow| flow.into_iter().map(|(_, m)| m).collect())
    }

    /// The senders whose messages are crossing.
    pub(super) fn senders(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.flows.keys().copied()
    }

    /// When the next message will have crossed, if nothing else arrives meanwhile.
    pub(super) fn next_crossing(&self) -> Option<Instant> {
        let least = self.flows.values().filter_map(|f| f.front()).map(|(left, _)| *left);
        let least = least.min_by(f64::total_cmp)?;
        let secs = least.max(0.0) * self.flows.len() as f64 / self.bandwidth;
        let wait = Duration::from_secs_f64(secs);
        // A message not crossed yet needs a later instant: on a link faster than a byte per
        // nanosecond its remaining time can round to zero, and the crossing would be scheduled
        // at this same instant forever.
        let wait = if least >= CROSSED { wait.max(Duration::from_nanos(1)) } else { wait };
        Some(self.updated + wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn one_sender_gets_the_whole_bandwidth_in_order() {
        let t0 = Instant::now();
        let mut d = Downlink::new(1000.0, t0);
        d.push(t0, NodeId(1), 100, "a");
        d.push(t0, NodeId(1), 100, "b");
        assert_eq!(d.next_crossing(), Some(t0 + 100 * MS));
        assert!(d.pop_crossed(t0 + 99 * MS).is_empty());
        assert_eq!(d.pop_crossed(t0 + 100 * MS), vec![(NodeId(1), "a")]);
        assert_eq!(d.next_crossing(), Some(t0 + 200 * MS));
        assert_eq!(d.pop_crossed(t0 + 200 * MS), vec![(NodeId(1), "b")]);
        assert_eq!(d.next_crossing(), None);
    }

    #[test]
    fn senders_share_the_bandwidth_equally() {
        let t0 = Instant::now();
        let mut d = Downlink::new(1000.0, t0);
        d.push(t0, NodeId(1), 100, "big");
        // Alone for 50 ms: 50 bytes crossed. Then shared: 25 bytes each per 50 ms.
        d.push(t0 + 50 * MS, NodeId(2), 20, "small");
        assert_eq!(d.next_crossing(), Some(t0 + 90 * MS));
        assert_eq!(d.pop_crossed(t0 + 90 * MS), vec![(NodeId(2), "small")]);
        // 30 bytes left of the big one, alone again.
        assert_eq!(d.next_crossing(), Some(t0 + 120 * MS));
        assert_eq!(d.pop_crossed(t0 + 120 * MS), vec![(NodeId(1), "big")]);
    }

    #[test]
    fn messages_taken_off_free_their_share() {
        let t0 = Instant::now();
        let mut d = Downlink::new(1000.0, t0);
        d.push(t0, NodeId(1), 100, "a");
        d.push(t0, NodeId(2), 100, "b");
        // 25 bytes of each crossed by 50 ms; then "b" has the whole bandwidth for its 75.
        assert_eq!(d.take_from(t0 + 50 * MS, NodeId(1)), vec!["a"]);
        assert_eq!(d.next_crossing(), Some(t0 + 125 * MS));
        assert_eq!(d.senders().collect::<Vec<_>>(), vec![NodeId(2)]);
    }

    #[test]
    fn a_downlink_faster_than_a_byte_per_nanosecond_still_moves_the_clock() {
        let t0 = Instant::now();
        let mut d = Downlink::new(4e9, t0);
        d.push(t0, NodeId(1), 1, "tiny");
        // One byte at 4 bytes/ns is 0.25 ns, which rounds to zero.
        let at = d.next_crossing().unwrap();
        assert!(at > t0);
        assert_eq!(d.pop_crossed(at), vec![(NodeId(1), "tiny")]);
    }
}
