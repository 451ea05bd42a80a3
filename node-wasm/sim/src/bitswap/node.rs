//! A Bitswap peer on the simulated network: the real [`Node`], an in-memory store with an
//! optional read latency, and (for a fetcher) a plan of steps to fetch.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use cid::Cid;
use web_time::Instant;

use syncscope_proto::bitswap::{Event, Message, Node, SessionId};
use crate::{NodeId, Outgoing, SimNode};

#[derive(Debug)]
struct Fetch {
    session: SessionId,
    steps: VecDeque<Vec<Cid>>,
    pending: HashSet<Cid>,
}

#[derive(Debug)]
pub struct SimBitswapNode {
    node: Node<NodeId>,
    store: HashMap<Cid, Bytes>,
    store_latency: Duration,
    loads: VecDeque<(Instant, Cid)>,
    fetch: Option<Fetch>,
    finished_at: Option<Instant>,
    misbehaving_peers: Vec<NodeId>,
}

impl SimBitswapNode {
    pub fn new(node: Node<NodeId>, store_latency: Duration) -> Self {
        Self {
            node,
            store: HashMap::new(),
            store_latency,
            loads: VecDeque::new(),
            fetch: None,
            finished_at: None,
            misbehaving_peers: Vec::new(),
        }
    }

    pub fn node(&self) -> &Node<NodeId> {
        &self.node
    }

    pub fn node_mut(&mut self) -> &mut Node<NodeId> {
        &mut self.node
    }

    pub fn insert_block(&mut self, cid: Cid, data: Bytes) {
        self.node.add_block(cid, data.len());
        self.store.insert(cid, data);
    }

    pub fn has_block(&self, cid: &Cid) -> bool {
        self.store.contains_key(cid)
    }

    /// Starts fetching `steps` in one session, each step once the previous one is complete.
    pub fn start_fetch(&mut self, now: Instant, steps: Vec<Vec<Cid>>) {
        let session = self.node.new_session(now);
        self.fetch = Some(Fetch { session, steps: steps.into(), pending: HashSet::new() });
        self.next_step(now);
    }

    /// When the last step completed.
    pub fn finished_at(&self) -> Option<Instant> {
        self.finished_at
    }

    pub fn misbehaving_peers(&self) -> &[NodeId] {
        &self.misbehaving_peers
    }

    fn next_step(&mut self, now: Instant) {
        let Some(fetch) = self.fetch.as_mut() else { return };
        while fetch.pending.is_empty() {
            let Some(step) = fetch.steps.pop_front() else {
                self.finished_at.get_or_insert(now);
                return;
            };
            let wanted: Vec<Cid> =
                step.into_iter().filter(|c| !self.store.contains_key(c)).collect();
            fetch.pending.extend(wanted.iter().copied());
            self.node.want(now, fetch.session, wanted);
        }
    }

    /// Handles everything the node reported.
    fn pump(&mut self, now: Instant) {
        while let Some(event) = self.node.poll_event() {
            match event {
                Event::Block { block, .. } => {
                    if let Some(f) = self.fetch.as_mut() {
                        f.pending.remove(&block.cid);
                    }
                    self.insert_block(block.cid, block.data);
                    self.next_step(now);
                }
                Event::Load(cid) if self.store_latency.is_zero() => {
                    self.node.block_loaded(cid, self.store.get(&cid).cloned());
                }
                Event::Load(cid) => self.loads.push_back((now + self.store_latency, cid)),
                Event::Misbehaved { peer, .. } => {
                    self.misbehaving_peers.push(peer);
                    self.node.peer_disconnected(now, peer);
                }
            }
        }
    }
}

impl SimNode for SimBitswapNode {
    type Message = Message;

    fn handle_message(&mut self, now: Instant, from: NodeId, msg: Message) {
        self.node.handle_message(now, from, &msg);
        self.pump(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        while let Some(&(due, cid)) = self.loads.front() {
            if due > now {
                break;
            }
            self.loads.pop_front();
            self.node.block_loaded(cid, self.store.get(&cid).cloned());
        }
        self.node.handle_timeout(now);
        self.pump(now);
    }

    fn handle_sent(&mut self, now: Instant, to: NodeId) {
        self.node.handle_sent(to);
        self.pump(now);
    }

    fn handle_progress(&mut self, now: Instant, from: NodeId) {
        self.node.handle_progress(now, from);
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Outgoing<Message>> {
        self.pump(now);
        let t = self.node.poll_transmit()?;
        Some(Outgoing { to: t.peer, msg: t.msg, size: t.len, report_sent: t.from_server })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let load = self.loads.front().map(|(due, _)| *due);
        [self.node.poll_timeout(), load].into_iter().flatten().min()
    }
}
