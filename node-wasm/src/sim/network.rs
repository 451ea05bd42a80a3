//! The event loop: links, a virtual clock and a queue of deliveries and timers.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Duration;

use web_time::Instant;

use super::link::Links;

/// A node of the simulated network: an index into [`Network::nodes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

impl NodeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A message a node wants sent.
#[derive(Debug)]
pub struct Outgoing<M> {
    pub to: NodeId,
    pub msg: M,
    /// Size on the wire in bytes.
    pub size: usize,
    /// Call [`SimNode::handle_sent`] once the message has left the link.
    pub report_sent: bool,
}

/// What the network needs from a sans-IO core.
pub trait SimNode {
    type Message;

    fn handle_message(&mut self, now: Instant, from: NodeId, msg: Self::Message);
    fn handle_timeout(&mut self, now: Instant);
    /// A message with `report_sent` finished serialising towards `to`.
    fn handle_sent(&mut self, now: Instant, to: NodeId);
    fn poll_transmit(&mut self, now: Instant) -> Option<Outgoing<Self::Message>>;
    fn poll_timeout(&self) -> Option<Instant>;
}

/// Network-wide traffic counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetStats {
    pub messages: u64,
    pub bytes: u64,
    pub events: u64,
}

enum Ev<M> {
    Deliver { from: NodeId, to: NodeId, msg: M },
    Sent { from: NodeId, to: NodeId },
    Timer { node: NodeId },
}

pub struct Network<N: SimNode> {
    nodes: Vec<N>,
    links: Links,
    /// When each directed link finishes sending what it holds.
    busy_until: Vec<Instant>,
    epoch: Instant,
    now: Instant,
    queue: BinaryHeap<Reverse<(Instant, u64)>>,
    events: HashMap<u64, Ev<N::Message>>,
    seq: u64,
    timers: Vec<Option<Instant>>,
    stats: NetStats,
}

impl<N: SimNode> Network<N> {
    /// `epoch` is virtual time zero; any instant will do, only differences are used.
    pub fn new(epoch: Instant, nodes: Vec<N>, links: Links) -> Self {
        let n = nodes.len();
        assert_eq!(links.len(), n, "one link row per node");
        Self {
            nodes,
            links,
            busy_until: vec![epoch; n * n],
            epoch,
            now: epoch,
            queue: BinaryHeap::new(),
            events: HashMap::new(),
            seq: 0,
            timers: vec![None; n],
            stats: NetStats::default(),
        }
    }

    pub fn now(&self) -> Instant {
        self.now
    }

    pub fn elapsed(&self) -> Duration {
        self.now - self.epoch
    }

    pub fn stats(&self) -> NetStats {
        self.stats
    }

    pub fn nodes(&self) -> &[N] {
        &self.nodes
    }

    pub fn node_mut(&mut self, id: NodeId) -> &mut N {
        &mut self.nodes[id.index()]
    }

    /// Runs `f` on a node at the current time, then collects what it sends and its timer.
    pub fn with_node<R>(&mut self, id: NodeId, f: impl FnOnce(&mut N, Instant) -> R) -> R {
        let now = self.now;
        let r = f(&mut self.nodes[id.index()], now);
        self.drain(id);
        r
    }

    fn push(&mut self, at: Instant, ev: Ev<N::Message>) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq)));
        self.events.insert(self.seq, ev);
    }

    /// Sends everything `id` has queued and re-arms its timer.
    fn drain(&mut self, id: NodeId) {
        let now = self.now;
        let n = self.nodes.len();
        while let Some(out) = self.nodes[id.index()].poll_transmit(now) {
            let link = self.links.get(id.index(), out.to.index());
            let slot = id.index() * n + out.to.index();
            let start = self.busy_until[slot].max(now);
            let departed = start + link.serialisation(out.size);
            self.busy_until[slot] = departed;
            self.stats.messages += 1;
            self.stats.bytes += out.size as u64;
            if out.report_sent {
                self.push(departed, Ev::Sent { from: id, to: out.to });
            }
            self.push(departed + link.latency, Ev::Deliver { from: id, to: out.to, msg: out.msg });
        }
        let next = self.nodes[id.index()].poll_timeout().map(|t| t.max(now));
        if next != self.timers[id.index()] {
            self.timers[id.index()] = next;
            if let Some(t) = next {
                self.push(t, Ev::Timer { node: id });
            }
        }
    }

    /// Processes the next event. `false` once nothing is left.
    pub fn step(&mut self) -> bool {
        let Some(Reverse((at, seq))) = self.queue.pop() else { return false };
        let Some(ev) = self.events.remove(&seq) else { return true };
        self.now = at;
        self.stats.events += 1;
        match ev {
            Ev::Deliver { from, to, msg } => {
                self.nodes[to.index()].handle_message(at, from, msg);
                self.drain(to);
            }
            Ev::Sent { from, to } => {
                self.nodes[from.index()].handle_sent(at, to);
                self.drain(from);
            }
            Ev::Timer { node } => {
                // A timer re-armed to another instant since this one was queued is stale.
                if self.timers[node.index()] != Some(at) {
                    return true;
                }
                self.timers[node.index()] = None;
                self.nodes[node.index()].handle_timeout(at);
                self.drain(node);
            }
        }
        true
    }

    /// Steps until `done` holds, the queue is empty, or virtual time passes `limit`.
    /// Returns whether `done` held.
    pub fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&Self) -> bool) -> bool {
        loop {
            if done(self) {
                return true;
            }
            if self.elapsed() > limit || !self.step() {
                return done(self);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::link::LinkModel;

    /// Sends `count` pings of `size` bytes to node 1 at start; node 1 records arrival times.
    struct Pinger {
        to_send: Vec<usize>,
        arrivals: Vec<Instant>,
        sent_reports: u32,
        wake: Option<Instant>,
    }

    impl SimNode for Pinger {
        type Message = usize;
        fn handle_message(&mut self, now: Instant, _from: NodeId, _msg: usize) {
            self.arrivals.push(now);
        }
        fn handle_timeout(&mut self, _now: Instant) {
            self.wake = None;
        }
        fn handle_sent(&mut self, _now: Instant, _to: NodeId) {
            self.sent_reports += 1;
        }
        fn poll_transmit(&mut self, _now: Instant) -> Option<Outgoing<usize>> {
            let size = self.to_send.pop()?;
            Some(Outgoing { to: NodeId(1), msg: size, size, report_sent: true })
        }
        fn poll_timeout(&self) -> Option<Instant> {
            self.wake
        }
    }

    fn pinger(to_send: Vec<usize>) -> Pinger {
        Pinger { to_send, arrivals: Vec::new(), sent_reports: 0, wake: None }
    }

    #[test]
    fn messages_queue_behind_each_other_on_a_link() {
        let epoch = Instant::now();
        let model =
            LinkModel::Fixed { latency: Duration::from_millis(10), bandwidth: Some(1000.0) };
        let links = Links::draw(2, model, 0);
        let mut net = Network::new(epoch, vec![pinger(vec![100, 100]), pinger(vec![])], links);
        net.with_node(NodeId(0), |_, _| ());
        net.run_until(Duration::from_secs(10), |_| false);
        let arrivals: Vec<Duration> = net.nodes()[1].arrivals.iter().map(|t| *t - epoch).collect();
        // 100 ms to serialise each, 10 ms to travel: 110 ms and 210 ms.
        assert_eq!(arrivals, vec![Duration::from_millis(110), Duration::from_millis(210)]);
        assert_eq!(net.nodes()[0].sent_reports, 2);
        assert_eq!(net.stats().bytes, 200);
    }

    #[test]
    fn timers_fire_at_their_instant() {
        let epoch = Instant::now();
        let model = LinkModel::Fixed { latency: Duration::ZERO, bandwidth: None };
        let mut net =
            Network::new(epoch, vec![pinger(vec![]), pinger(vec![])], Links::draw(2, model, 0));
        net.with_node(NodeId(0), |n, now| n.wake = Some(now + Duration::from_millis(42)));
        assert!(net.run_until(Duration::from_secs(1), |net| net.nodes()[0].wake.is_none()));
        assert_eq!(net.elapsed(), Duration::from_millis(42));
    }
}
