//! The pull-sync benchmark op on virtual time, on the shared discrete-event simulator
//! (`syncscope_sim`): a server core and a puller core as two [`SimNode`]s, each drained as
//! the libp2p glue drains it, on one link with a fixed one-way latency and a bandwidth. Messages
//! count their frame bytes only: no yamux, noise or TCP overhead, no flow-control windows. So
//! these rows are what the protocol itself costs; the libp2p rows add the real stack.

use std::collections::VecDeque;
use std::time::Duration;

use syncscope_proto::pullsync::{
    Config, IntervalStore, MemoryIntervalStore, MemoryReserve, Puller, PullerEvent, Server,
    ServerEvent, StreamAction, StreamId,
};
use syncscope_proto::swarm::{Address, Chunk};
use syncscope_sim::{LinkModel, Links, Network, NodeId, Outgoing, SimNode};
use web_time::Instant;

const SERVER: NodeId = NodeId(0);
const CLIENT: NodeId = NodeId(1);

type Message = (StreamId, StreamAction);

enum Role {
    Server { core: Box<Server<NodeId>>, reserve: MemoryReserve },
    Client { core: Box<Puller<NodeId, MemoryIntervalStore>>, store: MemoryReserve, stored: u64 },
}

/// One side of the benchmark, with what it has to send.
pub struct PullsyncNode {
    role: Role,
    outbox: VecDeque<Outgoing<Message>>,
}

impl PullsyncNode {
    fn send(
        outbox: &mut VecDeque<Outgoing<Message>>,
        to: NodeId,
        stream: StreamId,
        action: StreamAction,
    ) {
        let size = match &action {
            StreamAction::Send(frame) => frame.len(),
            _ => 0,
        };
        outbox.push_back(Outgoing { to, msg: (stream, action), size, report_sent: false });
    }

    /// Drains the core in the order the glue does: transmits, then events, until both are dry.
    fn drain(&mut self, now: Instant) {
        let outbox = &mut self.outbox;
        match &mut self.role {
            Role::Server { core, reserve } => loop {
                let mut progress = false;
                while let Some(t) = core.poll_transmit(now) {
                    progress = true;
                    Self::send(outbox, CLIENT, t.stream, t.action);
                }
                while let Some(event) = core.poll_event() {
                    progress = true;
                    if let ServerEvent::ChunksWanted { peer, stream, chunks } = event {
                        let found = chunks.iter().map(|c| reserve.get(c)).collect();
                        // The stream is waiting for exactly these chunks.
                        let _ = core.provide_chunks(peer, stream, found);
                    }
                }
                if !progress {
                    return;
                }
            },
            Role::Client { core, store, stored } => loop {
                let mut progress = false;
                while let Some(t) = core.poll_transmit() {
                    progress = true;
                    Self::send(outbox, SERVER, t.stream, t.action);
                }
                while let Some(event) = core.poll_event() {
                    progress = true;
                    if let PullerEvent::Chunk { chunk, .. } = event {
                        if store.put(chunk).is_some() {
                            *stored += 1;
                        }
                    }
                }
                if !progress {
                    return;
                }
            },
        }
    }
}

impl SimNode for PullsyncNode {
    type Message = Message;

    fn handle_message(&mut self, now: Instant, from: NodeId, (stream, action): Message) {
        match &mut self.role {
            Role::Server { core, reserve } => match action {
                StreamAction::Open(p) => core.handle_stream_opened(from, stream, p),
                StreamAction::Send(d) => core.handle_bytes(now, from, stream, d, reserve),
                StreamAction::Finish => core.handle_stream_finished(from, stream),
                StreamAction::Reset => core.handle_stream_reset(from, stream),
            },
            Role::Client { core, store, .. } => match action {
                StreamAction::Send(d) => core.handle_bytes(now, stream, d, store),
                StreamAction::Finish => core.handle_stream_finished(now, stream),
                StreamAction::Reset => core.handle_stream_failed(now, stream),
                StreamAction::Open(_) => {}
            },
        }
        self.drain(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        match &mut self.role {
            Role::Server { core, reserve } => core.handle_timeout(now, reserve),
            Role::Client { core, .. } => core.handle_timeout(now),
        }
        self.drain(now);
    }

    fn handle_sent(&mut self, _: Instant, _: NodeId) {}

    fn poll_transmit(&mut self, _: Instant) -> Option<Outgoing<Message>> {
        self.outbox.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match &self.role {
            Role::Server { core, .. } => core.poll_timeout(),
            Role::Client { core, .. } => core.poll_timeout(),
        }
    }
}

/// A server holding the benchmark's chunks and a neighbouring puller on one simulated link.
pub struct SimPair {
    net: Network<PullsyncNode>,
    server_overlay: Address,
    client_overlay: Address,
}

/// Virtual time one op may take before the run is called stuck.
const OP_LIMIT: Duration = Duration::from_secs(600);

impl SimPair {
    /// Connected, with the first sync done.
    pub fn new(
        latency: Duration,
        bytes_per_second: f64,
        server_config: Config,
        client_config: Config,
        (server_overlay, client_overlay): (Address, Address),
        chunks: &[Chunk],
    ) -> Self {
        let epoch = Instant::now();
        let mut reserve = MemoryReserve::new(server_overlay, 1);
        for c in chunks {
            reserve.put(c.clone());
        }
        let server = Role::Server { core: Box::new(Server::new(server_config)), reserve };
        let puller = Puller::new(client_config, client_overlay, MemoryIntervalStore::default());
        let store = MemoryReserve::new(client_overlay, 1);
        let client = Role::Client { core: Box::new(puller), store, stored: 0 };
        let nodes = [server, client]
            .into_iter()
            .map(|role| PullsyncNode { role, outbox: VecDeque::new() })
            .collect();
        let links =
            Links::draw(2, LinkModel::Fixed { latency, bandwidth: Some(bytes_per_second) }, 0);
        let mut pair =
            SimPair { net: Network::new(epoch, nodes, links), server_overlay, client_overlay };
        pair.with_client(|core, _, now| core.add_peer(now, SERVER, server_overlay));
        pair.run_until(chunks.len() as u64);
        pair
    }

    /// One op: bin 0 synced again from its start into an empty store, as the libp2p op does.
    /// Returns the virtual time it took, or `None` if it did not finish.
    pub fn op(&mut self, n: u64) -> Option<Duration> {
        let (server_overlay, client_overlay) = (self.server_overlay, self.client_overlay);
        self.with_client(|core, store, now| {
            core.set_storage_radius(now, 1);
            // The memory interval store never fails.
            let _ = core.store_mut().reset_peer(&server_overlay, 1);
            *store = MemoryReserve::new(client_overlay, 1);
        });
        let start = self.net.now();
        let target = self.stored() + n;
        self.with_client(|core, _, now| core.set_storage_radius(now, 0));
        self.run_until(target).then(|| self.net.now() - start)
    }

    fn with_client(
        &mut self,
        f: impl FnOnce(&mut Puller<NodeId, MemoryIntervalStore>, &mut MemoryReserve, Instant),
    ) {
        self.net.with_node(CLIENT, |node, now| {
            if let Role::Client { core, store, .. } = &mut node.role {
                f(core, store, now);
            }
            node.drain(now);
        });
    }

    fn stored(&self) -> u64 {
        match &self.net.nodes()[CLIENT.index()].role {
            Role::Client { stored, .. } => *stored,
            Role::Server { .. } => 0,
        }
    }

    fn run_until(&mut self, stored: u64) -> bool {
        let limit = self.net.elapsed() + OP_LIMIT;
        self.net.run_until(limit, |net| match &net.nodes()[CLIENT.index()].role {
            Role::Client { stored: s, .. } => *s >= stored,
            Role::Server { .. } => false,
        })
    }
}
