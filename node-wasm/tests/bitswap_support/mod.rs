//! Real libp2p swarms on loopback TCP (noise, yamux) for the Bitswap integration tests: each swarm
//! runs in its own tokio task and is reached through closures run inside that task.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use cid::Cid;
use futures::StreamExt;
use libp2p::swarm::{ConnectionId, NetworkBehaviour, SwarmEvent};
use libp2p::{identity::Keypair, noise, tcp, yamux, Multiaddr, PeerId, Swarm, SwarmBuilder};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use syncscope_node::net::bitswap::{Behaviour, Config, Event};
use syncscope_node::proto::bitswap::{raw_cid, ProtocolVersion, SessionId};
use syncscope_node::store::{BlockStore, MemoryBlockStore};
use tokio::sync::{mpsc, oneshot};

pub type Bitswap = Behaviour<MemoryBlockStore>;

/// Everything a test waits for gives up after this long.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub fn swarm<B: NetworkBehaviour + Send>(behaviour: B) -> Swarm<B>
where
    B::ToSwarm: Send,
{
    SwarmBuilder::with_existing_identity(Keypair::generate_ed25519())
        .with_tokio()
        .with_tcp(tcp::Config::default().nodelay(true), noise::Config::new, yamux::Config::default)
        .expect("tcp transport")
        .with_behaviour(|_| behaviour)
        .expect("behaviour")
        .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(60)))
        .build()
}

/// `n` blocks as the benchmark has them: the first 800 bytes, the others 8000, random data.
pub fn blocks(n: usize, seed: u64) -> Vec<(Cid, Bytes)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let mut data = vec![0; if i == 0 { 800 } else { 8000 }];
            rng.fill_bytes(&mut data);
            (raw_cid(&data), Bytes::from(data))
        })
        .collect()
}

type Job<B> = Box<dyn FnOnce(&mut Swarm<B>) + Send>;

/// A swarm driven by its own task.
pub struct Running<B: NetworkBehaviour> {
    pub peer_id: PeerId,
    pub addr: Multiaddr,
    jobs: mpsc::UnboundedSender<Job<B>>,
    events: mpsc::UnboundedReceiver<B::ToSwarm>,
    /// Connections established, oldest first, until closed.
    connections: Arc<Mutex<Vec<(PeerId, ConnectionId)>>>,
    /// Events received while waiting for others, oldest first.
    backlog: VecDeque<B::ToSwarm>,
}

impl<B> Running<B>
where
    B: NetworkBehaviour + Send,
    B::ToSwarm: Send + std::fmt::Debug,
{
    /// Listens on a fresh loopback port and starts driving the swarm.
    pub async fn start(mut swarm: Swarm<B>) -> Self {
        swarm.listen_on("/ip4/127.0.0.1/tcp/0".parse().expect("address")).expect("listen");
        let addr = loop {
            if let SwarmEvent::NewListenAddr { address, .. } = swarm.select_next_some().await {
                break address;
            }
        };
        let peer_id = *swarm.local_peer_id();
        let (jobs, mut job_rx) = mpsc::unbounded_channel::<Job<B>>();
        let (events_tx, events) = mpsc::unbounded_channel();
        let connections = Arc::new(Mutex::new(Vec::new()));
        let conns = connections.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    event = swarm.select_next_some() => match event {
                        SwarmEvent::Behaviour(e) => {
                            let _ = events_tx.send(e);
                        }
                        SwarmEvent::ConnectionEstablished { peer_id, connection_id, .. } => {
                            conns.lock().expect("lock").push((peer_id, connection_id));
                        }
                        SwarmEvent::ConnectionClosed { connection_id, .. } => {
                            conns.lock().expect("lock").retain(|(_, c)| *c != connection_id);
                        }
                        _ => {}
                    },
                    job = job_rx.recv() => match job {
                        Some(job) => job(&mut swarm),
                        None => return,
                    },
                }
            }
        });
        Running { peer_id, addr, jobs, events, connections, backlog: VecDeque::new() }
    }

    /// Runs `f` on the swarm inside its task.
    pub async fn with<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Swarm<B>) -> R + Send + 'static,
    ) -> R {
        let (tx, rx) = oneshot::channel();
        let job: Job<B> = Box::new(move |swarm| {
            let _ = tx.send(f(swarm));
        });
        self.jobs.send(job).map_err(|_| ()).expect("swarm task alive");
        rx.await.expect("swarm task answered")
    }

    pub async fn dial(&self, addr: Multiaddr) {
        self.with(move |s| s.dial(addr)).await.expect("dial");
    }

    pub async fn is_connected(&self, peer: PeerId) -> bool {
        self.with(move |s| s.is_connected(&peer)).await
    }

    /// Open connections to `peer`, oldest first.
    pub fn connections(&self, peer: PeerId) -> Vec<ConnectionId> {
        let conns = self.connections.lock().expect("lock");
        conns.iter().filter(|(p, _)| *p == peer).map(|(_, c)| *c).collect()
    }

    /// Waits until the connection to `peer` is up (`true`) or down (`false`), up to [`PATIENCE`].
    pub async fn wait_connected(&self, peer: PeerId, connected: bool) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while self.is_connected(peer).await != connected {
            assert!(tokio::time::Instant::now() < deadline, "connection to {peer} not {connected}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Waits for the first event `pick` takes something from, up to [`PATIENCE`]. Events passed
    /// over are kept for later waits.
    pub async fn wait_event<T>(&mut self, pick: impl FnMut(&B::ToSwarm) -> Option<T>) -> T {
        self.wait_event_for(PATIENCE, pick).await.expect("event in time")
    }

    /// [`Running::wait_event`] for at most `patience`: `None` if no such event came.
    pub async fn wait_event_for<T>(
        &mut self,
        patience: Duration,
        mut pick: impl FnMut(&B::ToSwarm) -> Option<T>,
    ) -> Option<T> {
        if let Some((i, t)) = self.backlog.iter().enumerate().find_map(|(i, e)| Some((i, pick(e)?)))
        {
            self.backlog.remove(i);
            return Some(t);
        }
        let wait = async {
            loop {
                let event = self.events.recv().await.expect("events");
                match pick(&event) {
                    Some(t) => return t,
                    None => self.backlog.push_back(event),
                }
            }
        };
        tokio::time::timeout(patience, wait).await.ok()
    }
}

/// A Bitswap node with a memory store.
pub async fn bitswap(config: Config) -> Running<Bitswap> {
    node_with(config, MemoryBlockStore::new()).await
}

pub async fn node_with<S: BlockStore>(config: Config, store: S) -> Running<Behaviour<S>> {
    Running::start(swarm(Behaviour::new(config, store))).await
}

/// A node with a memory store that holds `blocks`, once the store has them all.
pub async fn seed(config: Config, blocks: &[(Cid, Bytes)]) -> Running<Bitswap> {
    seed_with(config, MemoryBlockStore::new(), blocks).await
}

pub async fn seed_with<S: BlockStore>(
    config: Config,
    store: S,
    blocks: &[(Cid, Bytes)],
) -> Running<Behaviour<S>> {
    let mut node = node_with(config, store).await;
    let given = blocks.to_vec();
    node.with(move |s| {
        for (cid, data) in given {
            s.behaviour_mut().add_block(cid, data).expect("valid block");
        }
    })
    .await;
    for _ in blocks {
        node.wait_event(|e| matches!(e, Event::BlockAdded { .. }).then_some(())).await;
    }
    node
}

/// Dials `peers` and waits until each speaks Bitswap; returns the versions negotiated.
pub async fn connect<S: BlockStore>(
    node: &mut Running<Behaviour<S>>,
    peers: &[(PeerId, Multiaddr)],
) -> Vec<ProtocolVersion> {
    for (_, addr) in peers {
        node.dial(addr.clone()).await;
    }
    let mut versions = Vec::new();
    while versions.len() < peers.len() {
        let (peer, version) = node
            .wait_event(|e| match e {
                Event::PeerConnected { peer, version } => Some((*peer, *version)),
                _ => None,
            })
            .await;
        if peers.iter().any(|(p, _)| *p == peer) {
            versions.push(version);
        }
    }
    versions
}

/// Blocks fetched by `fetch`, in arrival order, once it is done.
pub async fn fetched<S: BlockStore>(
    node: &mut Running<Behaviour<S>>,
    fetch: SessionId,
) -> Vec<(Cid, Bytes)> {
    let mut got = Vec::new();
    loop {
        let event = node
            .wait_event(|e| match e {
                Event::Block { fetch: f, cid, data } if *f == fetch => {
                    Some(Some((*cid, data.clone())))
                }
                Event::FetchDone { fetch: f } if *f == fetch => Some(None),
                _ => None,
            })
            .await;
        match event {
            Some(block) => got.push(block),
            None => return got,
        }
    }
}
