//! Real libp2p swarms on loopback TCP (noise, yamux) for the integration tests: each swarm runs
//! in its own tokio task and is reached through closures run inside that task. [`bitswap`] and
//! [`pullsync`] hold each protocol's nodes and helpers.

#![allow(dead_code)]

pub mod bitswap;
pub mod pullsync;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use libp2p::swarm::{ConnectionId, NetworkBehaviour, SwarmEvent};
use libp2p::{identity::Keypair, noise, tcp, yamux, Multiaddr, PeerId, Swarm, SwarmBuilder};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

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

type Job<B> = Box<dyn FnOnce(&mut Swarm<B>) + Send>;

/// A swarm driven by its own task, until [`Running::stop`] or until dropped.
pub struct Running<B: NetworkBehaviour> {
    pub peer_id: PeerId,
    pub addr: Multiaddr,
    jobs: mpsc::UnboundedSender<Job<B>>,
    /// Hands the swarm back once `jobs` is closed.
    task: JoinHandle<Swarm<B>>,
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
        let task = tokio::spawn(async move {
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
                        None => return swarm,
                    },
                }
            }
        });
        Running { peer_id, addr, jobs, task, events, connections, backlog: VecDeque::new() }
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
    pub async fn stop(self) -> Swarm<B> {
        let Running { jobs, task, .. } = self;
        drop(jobs);
        task.await.expect("swarm task")
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
