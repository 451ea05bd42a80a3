//! Pull-sync's [`Node`] on the simulated network: one puller node and one or more server nodes
//! on links of fixed latency, each driven by the simulator's adapter ([`Peer`]) in virtual time.
//! The network routes every message and injects the failures; this harness only builds the
//! nodes and chunks and keeps what the nodes report, for the assertions.
//!
//! The tests that feed one sub-core (`Puller` or `Server`) hand-written bytes stay in
//! `syncscope-proto` (`pullsync/tests`).
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)

use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use syncscope_proto::pullsync::{
    Config, Event, MemoryIntervalStore, MemoryReserve, Misbehaviour, Node,
};
use syncscope_proto::swarm::{self, Address, ChunkRef};
use syncscope_proto::Core;
use syncscope_sim::pullsync::Reserve;
use syncscope_sim::{App, LinkModel, LinkParams, Links, Network, NodeId, Peer};
use web_time::Instant;

mod paging;
mod rate_limit;
mod server;
mod several_servers;
mod syncing;

/// The puller node.
const CLIENT: NodeId = NodeId(0);
/// The first server node, at [`SERVER_OVERLAY`]; more follow it ([`Pair::build`]).
const SERVER: NodeId = NodeId(1);
const SERVER_OVERLAY: Address = Address([0; 32]);
/// One-way latency of a link unless the test says otherwise.
const LATENCY: Duration = Duration::from_millis(10);

type PullNode = Node<NodeId, MemoryIntervalStore, MemoryReserve>;

fn client_overlay() -> Address {
    // Proximity 31 to the server: a neighbour that syncs every bin from the radius up.
    let mut a = [0; 32];
    a[31] = 1;
    Address(a)
}

/// An overlay that differs from [`SERVER_OVERLAY`] only in the last byte: the same proximity to
/// the puller and the same bins.
fn server_overlay(last: u8) -> Address {
    let mut overlay = SERVER_OVERLAY;
    overlay.0[31] = last;
    overlay
}

fn far() -> Address {
    let mut far = [0; 32];
    far[0] = 0x80;
    Address(far)
}

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(7)
}

/// Random chunks, each with its own stamp, that fall into `bin` of [`SERVER_OVERLAY`].
fn chunks_in_bin(rng: &mut ChaCha8Rng, bin: u8, n: usize, size: usize) -> Vec<swarm::Chunk> {
    syncscope_proto::test_utils::chunks_in_bin(rng, SERVER_OVERLAY, bin, n, size)
}

fn addresses(chunks: &[swarm::Chunk]) -> Vec<Address> {
    chunks.iter().map(|c| c.address()).collect()
}

/// A bin-0 puller: its overlay is in bin 0 of the servers and its radius is 1, so the servers
/// are one below the radius and serve their own bin only.
fn bin0_client(config: Config, intervals: MemoryIntervalStore, store: MemoryReserve) -> PullNode {
    let mut node = Node::new(config, far(), intervals, store);
    node.set_storage_radius(Instant::now(), 1);
    node
}

/// A bin-0 puller with empty stores and [`SERVER`] with an empty reserve.
fn bin0_pair(config: Config) -> Pair {
    let client = bin0_client(config.clone(), MemoryIntervalStore::default(), far_store());
    Pair::build(&config, client, MemoryReserve::new(SERVER_OVERLAY, 7), &[])
}

/// [`bin0_pair`] with `n` chunks of `size` bytes in bin 0 of [`SERVER`], synced: connected and
/// run until idle.
fn bin0_synced(config: Config, n: usize, size: usize) -> (Pair, Vec<swarm::Chunk>) {
    let chunks = chunks_in_bin(&mut rng(), 0, n, size);
    let mut pair = bin0_pair(config);
    pair.add_to_reserve(&chunks);
    pair.connect();
    pair.drive();
    (pair, chunks)
}

/// The bin-0 puller's chunk store, empty.
fn far_store() -> MemoryReserve {
    MemoryReserve::new(far(), 1)
}

/// The simulator's reserve (it stores what arrives and answers what is wanted), and what the
/// node reported.
#[derive(Default)]
struct Observed {
    reserve: Reserve,
    /// Every chunk the node handed on, with when and from which peer.
    delivered: Vec<(Instant, ChunkRef, NodeId)>,
    /// (bin, start, end, live) of every interval recorded.
    synced: Vec<(u8, u64, u64, bool)>,
    misbehaved: Vec<(NodeId, Misbehaviour)>,
}

impl App<PullNode> for Observed {
    fn on_event(&mut self, node: &mut PullNode, now: Instant, event: Event<NodeId>) {
        match &event {
            Event::Chunk { peer, chunk, .. } => {
                self.delivered.push((now, chunk.chunk_ref(), *peer));
            }
            Event::IntervalSynced { bin, start, end, live, .. } => {
                self.synced.push((*bin, *start, *end, *live));
            }
            Event::Misbehaved { peer, error } => self.misbehaved.push((*peer, error.clone())),
            Event::IntervalStoreFailed { error, .. } => panic!("memory store failed: {error}"),
            Event::ChunksWanted { .. } => {}
        }
        self.reserve.on_event(node, now, event);
    }
}

/// How a server's link fails in a test, on the simulator's failures.
#[derive(Clone, Copy, Debug)]
enum Failure {
    /// The peers disconnect: both drop each other and everything in transit is lost.
    Disconnect,
    /// Every stream with data in transit is reset; the peers stay connected.
    ResetStreams,
    /// The server loses its chunk data but not its index: it delivers the zero address for
    /// every chunk wanted from now on, as a server does for a chunk evicted after it was offered.
    DataLost,
}

/// A puller node ([`CLIENT`]) and its server nodes on the simulated network.
struct Pair {
    net: Network<Peer<PullNode, Observed>>,
    /// Each node's overlay, by node.
    overlays: Vec<Address>,
}

impl Pair {
    /// A neighbour puller (every bin from the radius up) and [`SERVER`], empty.
    fn new(config: Config) -> Self {
        Self::new_with(config, &[])
    }

    /// [`Pair::new`] with more servers, as [`Pair::build`] takes them.
    fn new_with(config: Config, more: &[(Address, Duration)]) -> Self {
        let store = MemoryReserve::new(client_overlay(), 1);
        let client = Node::new(config.clone(), client_overlay(), Default::default(), store);
        Pair::build(&config, client, MemoryReserve::new(SERVER_OVERLAY, 7), more)
    }

    /// `client` as [`CLIENT`], [`SERVER`] serving `reserve`, and a server per `more` (its
    /// overlay and the one-way latency of its link to the client, either way), with empty
    /// reserves of epoch 7. Every other link has [`LATENCY`] and no bandwidth limit.
    fn build(
        config: &Config,
        client: PullNode,
        reserve: MemoryReserve,
        more: &[(Address, Duration)],
    ) -> Self {
        let first = Node::new(config.clone(), reserve.overlay(), Default::default(), reserve);
        let others = more.iter().map(|(overlay, _)| {
            let reserve = MemoryReserve::new(*overlay, 7);
            Node::new(config.clone(), *overlay, Default::default(), reserve)
        });
        let nodes: Vec<PullNode> = [client, first].into_iter().chain(others).collect();
        let overlays = nodes.iter().map(|n| n.reserve().overlay()).collect();
        let model = LinkModel::Fixed { latency: LATENCY, bandwidth: None };
        let mut links = Links::draw(nodes.len(), model, 0);
        for (i, (_, latency)) in more.iter().enumerate() {
            let params = LinkParams { latency: *latency, bandwidth: None };
            links.set(CLIENT.index(), i + 2, params);
            links.set(i + 2, CLIENT.index(), params);
        }
        let peers = nodes.into_iter().map(|n| Peer::new(n, Observed::default())).collect();
        let mut net = Network::new(Instant::now(), peers, links);
        net.record_messages();
        Pair { net, overlays }
    }

    fn now(&self) -> Instant {
        self.net.now()
    }

    fn node(&self, id: NodeId) -> &PullNode {
        &self.net.nodes()[id.index()].core
    }

    fn client(&self) -> &PullNode {
        self.node(CLIENT)
    }

    fn server(&self) -> &PullNode {
        self.node(SERVER)
    }

    fn overlay(&self, id: NodeId) -> Address {
        self.overlays[id.index()]
    }

    /// [`SERVER`] and the servers after it.
    fn servers(&self) -> impl Iterator<Item = NodeId> {
        (SERVER.0..self.overlays.len() as u32).map(NodeId)
    }

    /// Runs `f` on a node now; the network then sends what it queued.
    fn with_node<R>(&mut self, id: NodeId, f: impl FnOnce(&mut PullNode, Instant) -> R) -> R {
        self.net.with_node(id, |peer, now| f(&mut peer.core, now))
    }

    fn set_storage_radius(&mut self, radius: u8) {
        self.with_node(CLIENT, |node, now| node.set_storage_radius(now, radius));
    }

    /// Chunks the client was handed, with when and from which server.
    fn delivered(&self) -> &[(Instant, ChunkRef, NodeId)] {
        &self.net.nodes()[CLIENT.index()].app.delivered
    }

    fn delivered_addresses(&self) -> Vec<Address> {
        self.delivered().iter().map(|(_, c, _)| c.address).collect()
    }

    fn synced(&self) -> &[(u8, u64, u64, bool)] {
        &self.net.nodes()[CLIENT.index()].app.synced
    }

    /// Every misbehaviour any node reported: as (reporter, peer, what).
    fn misbehaved(&self) -> Vec<(NodeId, NodeId, Misbehaviour)> {
        let nodes = self.net.nodes().iter().enumerate();
        let per_node = nodes.flat_map(|(i, n)| n.app.misbehaved.iter().map(move |m| (i, m)));
        per_node.map(|(i, (peer, error))| (NodeId(i as u32), *peer, error.clone())).collect()
    }

    /// Lengths of the frames the servers sent (only frames take room on the wire).
    fn server_frames(&self) -> Vec<usize> {
        let carried = self.net.carried().iter().filter(|m| m.from != CLIENT && m.size > 0);
        carried.map(|m| m.size).collect()
    }

    /// Chunks delivered in each whole second since the pair was made.
    fn deliveries_per_second(&self) -> Vec<u64> {
        let start = self.now() - self.net.elapsed();
        let mut counts = Vec::new();
        for (at, ..) in self.delivered() {
            let second = (*at - start).as_secs() as usize;
            counts.resize(counts.len().max(second + 1), 0);
            counts[second] += 1;
        }
        counts
    }

    fn add_to_reserve(&mut self, chunks: &[swarm::Chunk]) {
        self.add_to_reserve_of(SERVER, chunks);
    }

    fn add_to_reserve_of(&mut self, server: NodeId, chunks: &[swarm::Chunk]) {
        self.with_node(server, |node, now| {
            for c in chunks {
                node.reserve_mut().put(c.clone());
            }
            node.handle_reserve_changed(now);
        });
    }

    fn connect(&mut self) {
        self.connect_to(SERVER);
    }

    fn connect_to(&mut self, server: NodeId) {
        self.connect_as(server, self.overlay(server));
    }

    /// Connects the client to `server`, telling it the server is at `overlay`.
    fn connect_as(&mut self, server: NodeId, overlay: Address) {
        self.with_node(CLIENT, |node, now| node.peer_connected(now, server, overlay));
    }

    /// Makes `server`'s link to the client fail now, as `failure` says.
    fn fail_link(&mut self, server: NodeId, failure: Failure) {
        match failure {
            Failure::Disconnect => self.net.disconnect(server, CLIENT),
            Failure::ResetStreams => self.net.reset_streams(server, CLIENT),
            Failure::DataLost => self.net.node_mut(server).app.reserve.lose_data(),
        }
    }

    /// Runs until nothing is left to do.
    fn drive(&mut self) {
        assert!((0..1_000_000).any(|_| !self.net.step()), "pair did not go idle");
    }

    /// Runs until virtual time reaches `until` (for setups that never go idle, or to let time
    /// pass).
    fn drive_until(&mut self, until: Instant) {
        self.net.run_to(until);
    }

    /// Runs until `done` holds; panics if everything goes idle first.
    fn drive_to(&mut self, done: impl Fn(&Pair) -> bool) {
        while !done(self) {
            assert!(self.net.step(), "went idle before the condition held");
        }
    }
}
