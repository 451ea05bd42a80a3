//! The event loop: links, a virtual clock and a queue of deliveries and timers.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::time::Duration;

use web_time::Instant;

use super::downlink::Downlink;
use super::link::Links;
use super::node_id::NodeId;

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
    /// Bytes of a message from `from` are arriving, the message is not complete yet. A real
    /// node's glue reports it as it reads; the network reports it just before the node's timer
    /// fires, the moment a core acts on it.
    fn handle_progress(&mut self, _now: Instant, _from: NodeId) {}
    /// The connection to `peer` closed ([`Network::disconnect`]): what was in transit between
    /// the two is lost.
    fn handle_disconnected(&mut self, _now: Instant, _peer: NodeId) {}
    /// `msg`, in transit between this node and `peer`, was lost with the stream it travelled on
    /// ([`Network::reset_streams`]); `sent` says whether this node sent it. Called on both ends.
    fn handle_reset(&mut self, _now: Instant, _peer: NodeId, _msg: &Self::Message, _sent: bool) {}
    fn poll_transmit(&mut self, now: Instant) -> Option<Outgoing<Self::Message>>;
    fn poll_timeout(&self) -> Option<Instant>;
}

/// One message the network carried, as [`Network::record_messages`] logs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carried {
    /// When the sender handed it to the network.
    pub at: Instant,
    pub from: NodeId,
    pub to: NodeId,
    /// Size on the wire in bytes.
    pub size: usize,
}

/// Network-wide traffic counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetStats {
    pub messages: u64,
    pub bytes: u64,
    pub events: u64,
}

enum Ev<M> {
    Deliver {
        from: NodeId,
        to: NodeId,
        msg: M,
    },
    /// The message reached the receiver's shared downlink.
    Arrive {
        from: NodeId,
        to: NodeId,
        size: usize,
        msg: M,
    },
    /// A message may have crossed the node's downlink.
    Crossed {
        node: NodeId,
    },
    Sent {
        from: NodeId,
        to: NodeId,
    },
    Timer {
        node: NodeId,
    },
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
    /// Nodes with a shared downlink, and when its next crossing is scheduled.
    downlinks: Vec<Option<Downlink<N::Message>>>,
    crossings: Vec<Option<Instant>>,
    /// Per receiver, messages arriving over a link with a bandwidth limit:
    /// (sender, first byte arrives, last byte arrives).
    arriving: Vec<Vec<(NodeId, Instant, Instant)>>,
    stats: NetStats,
    /// Every message sent, once [`Network::record_messages`] turned the log on.
    carried: Option<Vec<Carried>>,
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
            downlinks: (0..n).map(|_| None).collect(),
            crossings: vec![None; n],
            arriving: vec![Vec::new(); n],
            stats: NetStats::default(),
            carried: None,
        }
    }

    /// Logs every message sent from now on ([`Network::carried`]), for tests and scenarios that
    /// look at single messages rather than [`NetStats`].
    pub fn record_messages(&mut self) {
        self.carried.get_or_insert_with(Vec::new);
    }

    /// The messages sent since [`Network::record_messages`], in the order they were sent.
    pub fn carried(&self) -> &[Carried] {
        self.carried.as_deref().unwrap_or_default()
    }

    /// Gives `node` a downlink of `bandwidth` bytes per second that every message to it crosses
    /// after its link, shared by the senders (see [`super::downlink`]). Set it before the run.
    pub fn set_downlink(&mut self, node: NodeId, bandwidth: f64) {
        self.downlinks[node.index()] = Some(Downlink::new(bandwidth, self.now));
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
            if let Some(log) = &mut self.carried {
                log.push(Carried { at: now, from: id, to: out.to, size: out.size });
            }
            if out.report_sent {
                self.push(departed, Ev::Sent { from: id, to: out.to });
            }
            let arrival = departed + link.latency;
            let (from, to, msg) = (id, out.to, out.msg);
            if self.downlinks[to.index()].is_some() {
                self.push(arrival, Ev::Arrive { from, to, size: out.size, msg });
            } else {
                if departed > start {
                    self.arriving[to.index()].push((from, start + link.latency, arrival));
                }
                self.push(arrival, Ev::Deliver { from, to, msg });
            }
        }
        let next = self.nodes[id.index()].poll_timeout().map(|t| t.max(now));
        if next != self.timers[id.index()] {
            self.timers[id.index()] = next;
            if let Some(t) = next {
                self.push(t, Ev::Timer { node: id });
            }
        }
    }

    /// The senders of messages partly delivered to `node` at `now`: crossing its downlink, or
    /// part way through arriving over their link.
    fn senders_arriving(&self, node: NodeId, now: Instant) -> BTreeSet<NodeId> {
        let arriving = &self.arriving[node.index()];
        let mut senders: BTreeSet<NodeId> = arriving
            .iter()
            .filter(|(_, first, last)| *first <= now && now < *last)
            .map(|(from, ..)| *from)
            .collect();
        if let Some(d) = &self.downlinks[node.index()] {
            senders.extend(d.senders());
        }
        senders
    }

    /// Makes sure an event is queued for the next crossing of `node`'s downlink.
    fn schedule_crossing(&mut self, node: NodeId) {
        let next = self.downlinks[node.index()].as_ref().and_then(Downlink::next_crossing);
        if next != self.crossings[node.index()] {
            self.crossings[node.index()] = next;
            if let Some(t) = next {
                self.push(t, Ev::Crossed { node });
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
                self.arriving[to.index()].retain(|(_, _, last)| *last > at);
                self.nodes[to.index()].handle_message(at, from, msg);
                self.drain(to);
            }
            Ev::Arrive { from, to, size, msg } => {
                if let Some(d) = self.downlinks[to.index()].as_mut() {
                    d.push(at, from, size, msg);
                }
                self.schedule_crossing(to);
            }
            Ev::Crossed { node } => {
                if self.crossings[node.index()] != Some(at) {
                    return true;
                }
                self.crossings[node.index()] = None;
                let crossed = self.downlinks[node.index()].as_mut().map(|d| d.pop_crossed(at));
                for (from, msg) in crossed.unwrap_or_default() {
                    self.nodes[node.index()].handle_message(at, from, msg);
                    self.drain(node);
                }
                self.schedule_crossing(node);
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
                for from in self.senders_arriving(node, at) {
                    self.nodes[node.index()].handle_progress(at, from);
                }
                self.nodes[node.index()].handle_timeout(at);
                self.drain(node);
            }
        }
        true
    }

    /// Processes every event due by `at`, then moves the clock on to `at`: time passes with
    /// nothing else happening, as between the phases of a scenario.
    pub fn run_to(&mut self, at: Instant) {
        while self.queue.peek().is_some_and(|Reverse((t, _))| *t <= at) {
            self.step();
        }
        self.now = self.now.max(at);
    }

    /// Disconnects `a` and `b`: every message in transit between them, either way, is lost
    /// (still on its link, crossing a downlink, or not yet reported sent), then each is told
    /// with [`SimNode::handle_disconnected`], `a` first. Nothing stops them from sending to
    /// each other again afterwards: that is their cores' business, as reconnecting is.
    pub fn disconnect(&mut self, a: NodeId, b: NodeId) {
        let now = self.now;
        self.take_in_transit(a, b);
        self.nodes[a.index()].handle_disconnected(now, b);
        self.drain(a);
        self.nodes[b.index()].handle_disconnected(now, a);
        self.drain(b);
    }

    /// Resets the streams in transit between `a` and `b`: every message in transit between
    /// them, either way, is lost with its stream, and both ends are told, message by message in
    /// arrival order, with [`SimNode::handle_reset`] (the receiver first). The two stay
    /// connected; messages sent afterwards arrive as usual.
    pub fn reset_streams(&mut self, a: NodeId, b: NodeId) {
        let now = self.now;
        for (from, to, msg) in self.take_in_transit(a, b) {
            self.nodes[to.index()].handle_reset(now, from, &msg, false);
            self.nodes[from.index()].handle_reset(now, to, &msg, true);
        }
        self.drain(a);
        self.drain(b);
    }

    /// Takes every message between `a` and `b`, either way, out of the network, with the reports
    /// that they were sent; returns them as they would have arrived: those crossing a downlink
    /// first, then by arrival time. Their links are free from now on.
    fn take_in_transit(&mut self, a: NodeId, b: NodeId) -> Vec<(NodeId, NodeId, N::Message)> {
        let now = self.now;
        let n = self.nodes.len();
        let between = |from: NodeId, to: NodeId| (from, to) == (a, b) || (from, to) == (b, a);
        let mut lost = Vec::new();
        for (from, to) in [(a, b), (b, a)] {
            let slot = from.index() * n + to.index();
            self.busy_until[slot] = self.busy_until[slot].min(now);
            self.arriving[to.index()].retain(|(sender, ..)| *sender != from);
            if let Some(d) = self.downlinks[to.index()].as_mut() {
                lost.extend(d.take_from(now, from).into_iter().map(|msg| (from, to, msg)));
            }
            self.schedule_crossing(to);
        }
        let mut queued: Vec<(Instant, u64)> = self
            .queue
            .iter()
            .map(|Reverse(key)| *key)
            .filter(|(_, seq)| match self.events.get(seq) {
                Some(Ev::Deliver { from, to, .. } | Ev::Arrive { from, to, .. }) => {
                    between(*from, *to)
                }
                Some(Ev::Sent { from, to }) => between(*from, *to),
                Some(Ev::Crossed { .. } | Ev::Timer { .. }) | None => false,
            })
            .collect();
        queued.sort_unstable();
        for (_, seq) in queued {
            // A report that a message was sent is dropped with nothing to return.
            if let Some(Ev::Deliver { from, to, msg } | Ev::Arrive { from, to, msg, .. }) =
                self.events.remove(&seq)
            {
                lost.push((from, to, msg));
            }
        }
        lost
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
    use crate::link::LinkModel;

    /// Sends `count` pings of `size` bytes to node 1 at start; node 1 records arrival times.
    struct Pinger {
        to_send: Vec<usize>,
        arrivals: Vec<Instant>,
        sent_reports: u32,
        wake: Option<Instant>,
        /// Wakes after `wake`, last first.
        later: Vec<Instant>,
        progress: Vec<(Instant, NodeId)>,
        disconnected: Vec<NodeId>,
        /// (peer, the lost message, whether this node sent it).
        resets: Vec<(NodeId, usize, bool)>,
    }

    impl SimNode for Pinger {
        type Message = usize;
        fn handle_message(&mut self, now: Instant, _from: NodeId, _msg: usize) {
            self.arrivals.push(now);
        }
        fn handle_timeout(&mut self, _now: Instant) {
            self.wake = self.later.pop();
        }
        fn handle_sent(&mut self, _now: Instant, _to: NodeId) {
            self.sent_reports += 1;
        }
        fn handle_progress(&mut self, now: Instant, from: NodeId) {
            self.progress.push((now, from));
        }
        fn handle_disconnected(&mut self, _now: Instant, peer: NodeId) {
            self.disconnected.push(peer);
        }
        fn handle_reset(&mut self, _now: Instant, peer: NodeId, msg: &usize, sent: bool) {
            self.resets.push((peer, *msg, sent));
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
        Pinger {
            to_send,
            arrivals: Vec::new(),
            sent_reports: 0,
            wake: None,
            later: Vec::new(),
            progress: Vec::new(),
            disconnected: Vec::new(),
            resets: Vec::new(),
        }
    }

    #[test]
    fn messages_queue_behind_each_other_on_a_link() {
        let epoch = Instant::now();
        let model =
            LinkModel::Fixed { latency: Duration::from_millis(10), bandwidth: Some(1000.0) };
        let links = Links::draw(2, model, 0);
        let mut net = Network::new(epoch, vec![pinger(vec![100, 100]), pinger(vec![])], links);
        net.record_messages();
        net.with_node(NodeId(0), |_, _| ());
        net.run_until(Duration::from_secs(10), |_| false);
        let arrivals: Vec<Duration> = net.nodes()[1].arrivals.iter().map(|t| *t - epoch).collect();
        // 100 ms to serialise each, 10 ms to travel: 110 ms and 210 ms.
        assert_eq!(arrivals, vec![Duration::from_millis(110), Duration::from_millis(210)]);
        assert_eq!(net.nodes()[0].sent_reports, 2);
        assert_eq!(net.stats().bytes, 200);
        let sent = Carried { at: epoch, from: NodeId(0), to: NodeId(1), size: 100 };
        assert_eq!(net.carried(), [sent, sent]);
    }

    #[test]
    fn a_disconnect_loses_what_is_in_transit_and_tells_both_ends() {
        let epoch = Instant::now();
        let ms = Duration::from_millis;
        let model = LinkModel::Fixed { latency: ms(10), bandwidth: Some(1000.0) };
        let nodes = vec![pinger(vec![100, 100]), pinger(vec![]), pinger(vec![])];
        let mut net = Network::new(epoch, nodes, Links::draw(3, model, 0));
        net.with_node(NodeId(0), |_, _| ());
        // The first arrives at 110 ms; the second would leave the link at 200 ms.
        net.run_to(epoch + ms(150));
        assert_eq!(net.elapsed(), ms(150));
        net.disconnect(NodeId(0), NodeId(1));
        net.run_until(Duration::from_secs(10), |_| false);
        assert_eq!(net.nodes()[1].arrivals, vec![epoch + ms(110)]);
        assert_eq!(net.nodes()[0].sent_reports, 1);
        assert_eq!(net.nodes()[0].disconnected, vec![NodeId(1)]);
        assert_eq!(net.nodes()[1].disconnected, vec![NodeId(0)]);
        assert!(net.nodes()[2].disconnected.is_empty());
    }

    #[test]
    fn a_reset_loses_the_messages_in_transit_and_tells_both_ends_of_each() {
        let epoch = Instant::now();
        let ms = Duration::from_millis;
        let model = LinkModel::Fixed { latency: ms(10), bandwidth: Some(1000.0) };
        let mut net = Network::new(
            epoch,
            vec![pinger(vec![100, 60]), pinger(vec![])],
            Links::draw(2, model, 0),
        );
        net.with_node(NodeId(0), |_, _| ());
        // 60 bytes arrive at 70 ms; 100 bytes would at 170 ms.
        net.run_to(epoch + ms(100));
        net.reset_streams(NodeId(1), NodeId(0));
        assert_eq!(net.nodes()[0].resets, vec![(NodeId(1), 100, true)]);
        assert_eq!(net.nodes()[1].resets, vec![(NodeId(0), 100, false)]);
        // Still connected, and the link is free at once.
        net.with_node(NodeId(0), |n, _| n.to_send.push(7));
        net.run_until(Duration::from_secs(10), |_| false);
        assert_eq!(net.nodes()[1].arrivals, vec![epoch + ms(70), epoch + ms(117)]);
    }

    #[test]
    fn a_downlink_is_shared_by_its_senders() {
        let epoch = Instant::now();
        let model = LinkModel::Fixed { latency: Duration::from_millis(10), bandwidth: Some(1e6) };
        let links = Links::draw(3, model, 0);
        let nodes = vec![pinger(vec![100]), pinger(vec![]), pinger(vec![100])];
        let mut net = Network::new(epoch, nodes, links);
        net.set_downlink(NodeId(1), 1000.0);
        net.with_node(NodeId(0), |_, _| ());
        net.with_node(NodeId(2), |_, _| ());
        net.run_until(Duration::from_secs(10), |_| false);
        let arrivals: Vec<Duration> = net.nodes()[1].arrivals.iter().map(|t| *t - epoch).collect();
        // 0.1 ms on each link, 10 ms latency, then 200 bytes through 1000 B/s shared: both
        // cross together after 200 ms.
        let at = Duration::from_micros(100) + Duration::from_millis(210);
        assert_eq!(arrivals, vec![at, at]);
    }

    #[test]
    fn progress_is_reported_at_timers_while_a_message_is_part_way_through() {
        let epoch = Instant::now();
        let ms = Duration::from_millis;
        let waking = |wakes: [u64; 3]| {
            let mut p = pinger(vec![]);
            p.wake = Some(epoch + ms(wakes[0]));
            p.later = vec![epoch + ms(wakes[2]), epoch + ms(wakes[1])];
            p
        };
        // 1000 bytes at 1000 B/s after 10 ms: they arrive from 10 ms to 1010 ms.
        let model = LinkModel::Fixed { latency: ms(10), bandwidth: Some(1000.0) };
        let nodes = vec![pinger(vec![1000]), waking([5, 505, 1500]), pinger(vec![])];
        let mut net = Network::new(epoch, nodes, Links::draw(3, model, 0));
        net.with_node(NodeId(0), |_, _| ());
        net.with_node(NodeId(1), |_, _| ());
        net.run_until(Duration::from_secs(2), |_| false);
        assert_eq!(net.nodes()[1].progress, vec![(epoch + ms(505), NodeId(0))]);

        // Through a downlink: from the moment the message reaches it, at 10 ms.
        let model = LinkModel::Fixed { latency: ms(10), bandwidth: None };
        let nodes = vec![pinger(vec![1000]), waking([5, 505, 1500]), pinger(vec![])];
        let mut net = Network::new(epoch, nodes, Links::draw(3, model, 0));
        net.set_downlink(NodeId(1), 1000.0);
        net.with_node(NodeId(0), |_, _| ());
        net.with_node(NodeId(1), |_, _| ());
        net.run_until(Duration::from_secs(2), |_| false);
        assert_eq!(net.nodes()[1].progress, vec![(epoch + ms(505), NodeId(0))]);
        assert_eq!(net.nodes()[1].arrivals, vec![epoch + ms(1010)]);
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
        // Time passes with nothing to do.
        net.run_to(epoch + Duration::from_millis(100));
        assert_eq!(net.elapsed(), Duration::from_millis(100));
    }
}
