//! Real libp2p swarms on loopback TCP (noise, yamux) for the benchmarks: [`tcp_swarm`] and
//! [`listen_loopback`] for any behaviour, and [`Host`], a pull-sync node driven by its own tokio
//! task and reached through jobs run inside that task.

use std::net::SocketAddr;
use std::time::Duration;

use futures::StreamExt;
use libp2p::core::upgrade::Version;
use libp2p::multiaddr::Protocol;
use libp2p::swarm::{NetworkBehaviour, SwarmEvent};
use libp2p::{identity::Keypair, noise, tcp, yamux, Multiaddr, PeerId, Swarm, SwarmBuilder};
use syncscope_node::net::pullsync::{Behaviour, Config, Event};
use syncscope_node::store::ChunkStore;
use syncscope_proto::pullsync::{IntervalStore, MemoryIntervalStore, MemoryReserve};
use syncscope_proto::swarm::Address;
use tokio::sync::{mpsc, oneshot};
use web_time::Instant;

pub type Pullsync<S = MemoryReserve, I = MemoryIntervalStore> = Behaviour<S, I>;
type Job<S, I> = Box<dyn FnOnce(&mut Swarm<Pullsync<S, I>>, &mut Progress) + Send>;

/// What the host's task tracks about stored chunks, so that an op's end is timed where it
/// happens rather than when a poller notices.
#[derive(Default)]
pub struct Progress {
    pub stored: u64,
    waiter: Option<(u64, oneshot::Sender<Instant>)>,
}

impl Progress {
    /// Reports the instant `stored` reaches `target` (at once if it has).
    pub fn notify_at(&mut self, target: u64) -> oneshot::Receiver<Instant> {
        let (tx, rx) = oneshot::channel();
        if self.stored >= target {
            let _ = tx.send(Instant::now());
        } else {
            self.waiter = Some((target, tx));
        }
        rx
    }

    fn record(&mut self, event: &Event) {
        if let Event::ChunkStored { .. } = event {
            self.stored += 1;
            if self.waiter.as_ref().is_some_and(|(target, _)| self.stored >= *target) {
                if let Some((_, tx)) = self.waiter.take() {
                    let _ = tx.send(Instant::now());
                }
            }
        }
        if let Event::Misbehaved { peer, error } = event {
            eprintln!("warning: {peer} misbehaved: {error}");
        }
    }
}

pub struct Host<
    S: ChunkStore + 'static = MemoryReserve,
    I: IntervalStore + 'static = MemoryIntervalStore,
> {
    pub peer_id: PeerId,
    pub addr: SocketAddr,
    jobs: mpsc::UnboundedSender<Job<S, I>>,
}

impl Host {
    /// A host whose chunks and intervals are kept in memory.
    pub async fn start(config: Config, overlay: Address) -> Result<Host, String> {
        let reserve = MemoryReserve::new(overlay, 1);
        Host::start_with(config, overlay, reserve, MemoryIntervalStore::default()).await
    }
}

impl<S: ChunkStore + Send + 'static, I: IntervalStore + Send + 'static> Host<S, I> {
    /// Builds the swarm on these stores, listens on a loopback port and spawns its task on the
    /// current runtime.
    pub async fn start_with(
        config: Config,
        overlay: Address,
        reserve: S,
        intervals: I,
    ) -> Result<Self, String> {
        let behaviour = Behaviour::new(config, overlay, reserve, intervals);
        // Optimistic protocol negotiation: a stream's first message goes out with its protocol
        // proposal instead of a round trip later.
        let mut swarm = tcp_swarm(behaviour, Some(Version::V1Lazy))?;
        let address = listen_loopback(&mut swarm).await?;
        let addr = socket_addr(&address).ok_or("listen address is not TCP/IPv4")?;
        let peer_id = *swarm.local_peer_id();
        let (jobs, mut rx) = mpsc::unbounded_channel::<Job<S, I>>();
        tokio::spawn(async move {
            let mut progress = Progress::default();
            loop {
                tokio::select! {
                    event = swarm.select_next_some() => {
                        if let SwarmEvent::Behaviour(e) = event {
                            progress.record(&e);
                        }
                    }
                    job = rx.recv() => match job {
                        Some(job) => job(&mut swarm, &mut progress),
                        None => return,
                    },
                }
            }
        });
        Ok(Host { peer_id, addr, jobs })
    }

    /// Runs `f` inside the host's task.
    pub async fn with<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Swarm<Pullsync<S, I>>, &mut Progress) -> R + Send + 'static,
    ) -> Result<R, String> {
        let (tx, rx) = oneshot::channel();
        let job: Job<S, I> = Box::new(move |swarm, progress| {
            let _ = tx.send(f(swarm, progress));
        });
        self.jobs.send(job).map_err(|_| "host task stopped")?;
        rx.await.map_err(|_| "host task stopped".to_string())
    }

    /// Dials `peer` at `addr` and waits until connected.
    pub async fn connect(&self, peer: PeerId, addr: SocketAddr) -> Result<(), String> {
        let multiaddr = tcp_multiaddr(addr);
        self.with(move |s, _| s.dial(multiaddr.with(Protocol::P2p(peer))))
            .await?
            .map_err(|e| e.to_string())?;
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.with(move |s, _| s.is_connected(&peer)).await? {
            if Instant::now() > deadline {
                return Err(format!("no connection to {peer}"));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        Ok(())
    }
}

/// A swarm on TCP (noise, yamux, no Nagle) with a fresh identity, whose connections close after
/// a minute without streams. `upgrade` overrides how every stream negotiates its protocol.
pub fn tcp_swarm<B>(behaviour: B, upgrade: Option<Version>) -> Result<Swarm<B>, String>
where
    B: NetworkBehaviour + Send,
    B::ToSwarm: Send,
{
    Ok(SwarmBuilder::with_existing_identity(Keypair::generate_ed25519())
        .with_tokio()
        .with_tcp(tcp::Config::default().nodelay(true), noise::Config::new, yamux::Config::default)
        .map_err(|e| e.to_string())?
        .with_behaviour(|_| behaviour)
        .map_err(|e| e.to_string())?
        .with_swarm_config(|c| {
            let c = c.with_idle_connection_timeout(Duration::from_secs(60));
            match upgrade {
                Some(version) => c.with_substream_upgrade_protocol_override(version),
                None => c,
            }
        })
        .build())
}

/// Listens on a fresh loopback port; returns the address once the swarm reports it.
pub async fn listen_loopback<B: NetworkBehaviour>(
    swarm: &mut Swarm<B>,
) -> Result<Multiaddr, String> {
    let listen: Multiaddr = "/ip4/127.0.0.1/tcp/0".parse().map_err(|e| format!("{e}"))?;
    swarm.listen_on(listen).map_err(|e| e.to_string())?;
    loop {
        if let SwarmEvent::NewListenAddr { address, .. } = swarm.select_next_some().await {
            return Ok(address);
        }
    }
}

/// The multiaddr of a TCP socket address.
pub fn tcp_multiaddr(addr: SocketAddr) -> Multiaddr {
    Multiaddr::from(addr.ip()).with(Protocol::Tcp(addr.port()))
}

/// The socket address of a TCP multiaddr.
pub fn socket_addr(addr: &Multiaddr) -> Option<SocketAddr> {
    let mut ip = None;
    for p in addr.iter() {
        match p {
            Protocol::Ip4(v4) => ip = Some(v4.into()),
            Protocol::Tcp(port) => return ip.map(|ip| SocketAddr::new(ip, port)),
            _ => {}
        }
    }
    None
}
