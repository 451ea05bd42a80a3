//! A Bitswap peer on the simulated network: the real [`Node`] on the shared [`Peer`] adapter,
//! with an in-memory store that may answer loads late, and (for a fetcher) a plan of steps.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use cid::Cid;
use syncscope_proto::bitswap::{Event, Message, Node, SessionId, Transmit};
use syncscope_proto::Core;
use web_time::Instant;

use crate::{App, NodeId, Outgoing, Peer, Wire};

/// A Bitswap node of the simulated network.
pub type SimBitswapNode = Peer<Node<NodeId>, Store>;

impl Wire for Node<NodeId> {
    type Message = Message;

    fn send(t: Transmit<NodeId>) -> Outgoing<Message> {
        Outgoing { to: t.peer, msg: t.msg, size: t.len, report_sent: t.from_server }
    }

    fn receive(msg: Message) -> Message {
        msg
    }

    fn handle_sent(&mut self, _: Instant, to: NodeId) {
        Node::handle_sent(self, to);
    }

    fn handle_progress(&mut self, now: Instant, from: NodeId) {
        Node::handle_progress(self, now, from);
    }
}

#[derive(Debug)]
struct Fetch {
    session: SessionId,
    steps: VecDeque<Vec<Cid>>,
    pending: HashSet<Cid>,
}

/// The node's blocks, loads waiting for the store's latency, and its fetch plan.
#[derive(Debug)]
pub struct Store {
    blocks: HashMap<Cid, Bytes>,
    latency: Duration,
    loads: VecDeque<(Instant, Cid)>,
    fetch: Option<Fetch>,
    finished_at: Option<Instant>,
    misbehaving_peers: Vec<NodeId>,
}

impl SimBitswapNode {
    /// `node` with an empty store whose reads take `store_latency`.
    pub fn with_store(node: Node<NodeId>, store_latency: Duration) -> Self {
        let store = Store {
            blocks: HashMap::new(),
            latency: store_latency,
            loads: VecDeque::new(),
            fetch: None,
            finished_at: None,
            misbehaving_peers: Vec::new(),
        };
        Peer::new(node, store)
    }

    pub fn node(&self) -> &Node<NodeId> {
        &self.core
    }

    pub fn insert_block(&mut self, cid: Cid, data: Bytes) {
        self.app.insert(&mut self.core, cid, data);
    }

    pub fn has_block(&self, cid: &Cid) -> bool {
        self.app.blocks.contains_key(cid)
    }

    /// Starts fetching `steps` in one session, each step once the previous one is complete.
    pub fn start_fetch(&mut self, now: Instant, steps: Vec<Vec<Cid>>) {
        let session = self.core.new_session(now);
        self.app.fetch = Some(Fetch { session, steps: steps.into(), pending: HashSet::new() });
        self.app.next_step(&mut self.core, now);
    }

    /// When the last step completed.
    pub fn finished_at(&self) -> Option<Instant> {
        self.app.finished_at
    }

    pub fn misbehaving_peers(&self) -> &[NodeId] {
        &self.app.misbehaving_peers
    }
}

impl Store {
    fn insert(&mut self, node: &mut Node<NodeId>, cid: Cid, data: Bytes) {
        node.add_block(cid, data.len());
        self.blocks.insert(cid, data);
    }

    fn next_step(&mut self, node: &mut Node<NodeId>, now: Instant) {
        let Some(fetch) = self.fetch.as_mut() else { return };
        while fetch.pending.is_empty() {
            let Some(step) = fetch.steps.pop_front() else {
                self.finished_at.get_or_insert(now);
                return;
            };
            let wanted: Vec<Cid> =
                step.into_iter().filter(|c| !self.blocks.contains_key(c)).collect();
            fetch.pending.extend(wanted.iter().copied());
            node.want(now, fetch.session, wanted);
        }
    }
}

impl App<Node<NodeId>> for Store {
    fn on_event(&mut self, node: &mut Node<NodeId>, now: Instant, event: Event<NodeId>) {
        match event {
            Event::Block { block, .. } => {
                if let Some(f) = self.fetch.as_mut() {
                    f.pending.remove(&block.cid());
                }
                self.insert(node, block.cid(), block.into_data());
                self.next_step(node, now);
            }
            Event::Load(cid) if self.latency.is_zero() => {
                node.block_loaded(cid, self.blocks.get(&cid).cloned());
            }
            Event::Load(cid) => self.loads.push_back((now + self.latency, cid)),
            Event::Misbehaved { peer, .. } => {
                self.misbehaving_peers.push(peer);
                node.peer_disconnected(now, peer);
            }
        }
    }

    fn handle_timeout(&mut self, node: &mut Node<NodeId>, now: Instant) {
        while let Some(&(due, cid)) = self.loads.front() {
            if due > now {
                break;
            }
            self.loads.pop_front();
            node.block_loaded(cid, self.blocks.get(&cid).cloned());
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.loads.front().map(|(due, _)| *due)
    }
}
