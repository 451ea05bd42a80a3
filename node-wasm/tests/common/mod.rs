//! Real libp2p nodes on loopback TCP for the pull-sync integration tests: each swarm runs in its
//! own tokio task and is reached through closures run inside that task.

#![allow(dead_code)]

use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use libp2p::swarm::{NetworkBehaviour, SwarmEvent};
use libp2p::{identity::Keypair, noise, tcp, yamux, Multiaddr, PeerId, Swarm, SwarmBuilder};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use syncscope_node::net::pullsync::{Behaviour, Config, Event};
use syncscope_node::proto::pullsync::{MemoryIntervalStore, MemoryReserve};
use syncscope_node::proto::swarm::{Address, Chunk, Stamp, STAMP_SIZE};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

pub type Pullsync = Behaviour<MemoryReserve, MemoryIntervalStore>;
pub type Node = Swarm<Pullsync>;

/// Everything a test waits for gives up after this long.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub fn swarm<B: NetworkBehaviour + Send>(key: Keypair, behaviour: B) -> Swarm<B>
where
    B::ToSwarm: Send,
{
    SwarmBuilder::with_existing_identity(key)
        .with_tokio()
        .with_tcp(tcp::Config::default().nodelay(true), noise::Config::new, yamux::Config::default)
        .expect("tcp transport")
        .with_behaviour(|_| behaviour)
        .expect("behaviour")
        .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(60)))
        .build()
}

/// A pull-sync node with an in-memory store at `overlay`.
pub fn node(key: Keypair, overlay: Address, config: Config) -> Node {
    let store = MemoryReserve::new(overlay, 1);
    swarm(key, Behaviour::new(config, overlay, store, MemoryIntervalStore::default()))
}

type Job<B> = Box<dyn FnOnce(&mut Swarm<B>) + Send>;

/// A swarm driven by its own task.
pub struct Running<B: NetworkBehaviour> {
    pub peer_id: PeerId,
    pub addr: Multiaddr,
    jobs: mpsc::UnboundedSender<Job<B>>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Swarm<B>>>,
    pub events: mpsc::UnboundedReceiver<B::ToSwarm>,
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
        let (stop, mut stop_rx) = oneshot::channel();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    event = swarm.select_next_some() => {
                        if let SwarmEvent::Behaviour(e) = event {
                            let _ = events_tx.send(e);
                        }
                    }
                    Some(job) = job_rx.recv() => job(&mut swarm),
                    _ = &mut stop_rx => return swarm,
                }
            }
        });
        Running { peer_id, addr, jobs, stop: Some(stop), task: Some(task), events }
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

    /// Stops the task and hands the swarm back.
    pub async fn stop(mut self) -> Swarm<B> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.take().expect("running").await.expect("swarm task")
    }

    /// Waits for an event `pick` accepts, up to [`PATIENCE`].
    pub async fn wait_event<T>(&mut self, mut pick: impl FnMut(B::ToSwarm) -> Option<T>) -> T {
        let wait = async {
            loop {
                let event = self.events.recv().await.expect("events");
                if let Some(t) = pick(event) {
                    return t;
                }
            }
        };
        tokio::time::timeout(PATIENCE, wait).await.expect("event in time")
    }
}

/// Polls `check` on the node until it holds, up to [`PATIENCE`].
pub async fn eventually<B>(
    node: &Running<B>,
    check: impl Fn(&mut Swarm<B>) -> bool + Send + Sync + Clone + 'static,
) where
    B: NetworkBehaviour + Send,
    B::ToSwarm: Send + std::fmt::Debug,
{
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !node.with(check.clone()).await {
        assert!(tokio::time::Instant::now() < deadline, "condition not reached in time");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// An overlay whose first byte is `prefix` and the rest zero.
pub fn overlay(prefix: u8) -> Address {
    let mut a = [0u8; 32];
    a[0] = prefix;
    Address(a)
}

/// `n` random full chunks with random stamps, from `seed`.
pub fn random_chunks(seed: u64, n: usize) -> Vec<Chunk> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut payload = vec![0u8; 4096];
    (0..n)
        .map(|_| {
            rng.fill_bytes(&mut payload);
            let mut stamp = vec![0u8; STAMP_SIZE];
            rng.fill_bytes(&mut stamp);
            Chunk::new(&payload, Stamp::new(Bytes::from(stamp)).expect("stamp")).expect("chunk")
        })
        .collect()
}

/// Stores `chunks` in a running pull-sync node as uploads.
pub async fn upload(node: &Running<Pullsync>, chunks: Vec<Chunk>) {
    node.with(move |s| {
        for c in chunks {
            s.behaviour_mut().store_chunk(c).expect("memory store");
        }
    })
    .await;
}

pub fn is_misbehaviour(event: &Event) -> bool {
    matches!(event, Event::Misbehaved { .. })
}
