//! The pull-sync benchmark op on virtual time: a server node and a puller node on one link with a
//! fixed one-way latency and a bandwidth, each drained as the libp2p glue drains it. Messages
//! count their frame bytes only: no yamux, noise or TCP overhead, no flow-control windows. So
//! these rows are what the protocol itself costs; the libp2p rows add the real stack.

use std::time::Duration;

use syncscope_proto::pullsync::{Config, IntervalStore, MemoryIntervalStore, MemoryReserve, Node};
use syncscope_proto::swarm::{Address, Chunk};
use syncscope_proto::Core;
use web_time::Instant;

use super::{Reserve, SimPullsyncNode};
use crate::{LinkModel, Links, Network, NodeId, Peer};

const SERVER: NodeId = NodeId(0);
const CLIENT: NodeId = NodeId(1);

type PairNode = SimPullsyncNode<MemoryIntervalStore>;

/// A server holding the benchmark's chunks and a neighbouring puller on one simulated link.
pub struct SimPair {
    net: Network<PairNode>,
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
        let server =
            Node::new(server_config, server_overlay, MemoryIntervalStore::default(), reserve);
        let client = Node::new(
            client_config,
            client_overlay,
            MemoryIntervalStore::default(),
            MemoryReserve::new(client_overlay, 1),
        );
        let nodes =
            vec![Peer::new(server, Reserve::default()), Peer::new(client, Reserve::default())];
        let links =
            Links::draw(2, LinkModel::Fixed { latency, bandwidth: Some(bytes_per_second) }, 0);
        let mut pair =
            SimPair { net: Network::new(epoch, nodes, links), server_overlay, client_overlay };
        pair.with_client(|node, now| node.peer_connected(now, SERVER, server_overlay));
        pair.run_until(chunks.len() as u64);
        pair
    }

    /// One op: bin 0 synced again from its start into an empty store, as the libp2p op does.
    /// Returns the virtual time it took, or `None` if it did not finish.
    pub fn op(&mut self, n: u64) -> Option<Duration> {
        let (server_overlay, client_overlay) = (self.server_overlay, self.client_overlay);
        self.with_client(|node, now| {
            node.set_storage_radius(now, 1);
            // The memory interval store never fails.
            let _ = node.intervals_mut().reset_peer(&server_overlay, 1);
            *node.reserve_mut() = MemoryReserve::new(client_overlay, 1);
        });
        let start = self.net.now();
        let target = self.stored() + n;
        self.with_client(|node, now| node.set_storage_radius(now, 0));
        self.run_until(target).then(|| self.net.now() - start)
    }

    fn with_client(
        &mut self,
        f: impl FnOnce(&mut Node<NodeId, MemoryIntervalStore, MemoryReserve>, Instant),
    ) {
        self.net.with_node(CLIENT, |peer, now| f(&mut peer.core, now));
    }

    /// Chunks the puller stored so far.
    pub fn stored(&self) -> u64 {
        self.net.nodes()[CLIENT.index()].stored()
    }

    fn run_until(&mut self, stored: u64) -> bool {
        let limit = self.net.elapsed() + OP_LIMIT;
        self.net.run_until(limit, |net| net.nodes()[CLIENT.index()].stored() >= stored)
    }
}
