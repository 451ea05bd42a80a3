//! Two native peers talking through the relay: one reserves a slot, the other dials it through
//! the circuit. Measures the time from dial to a usable relayed connection (established, and one
//! stream round trip done) and the throughput of a bulk transfer over the circuit.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use futures::{AsyncReadExt, AsyncWriteExt, StreamExt};
use libp2p::{
    multiaddr::Protocol, noise, relay, swarm::NetworkBehaviour, swarm::SwarmEvent, tcp, yamux,
    Multiaddr, PeerId, StreamProtocol, Swarm, SwarmBuilder,
};
use libp2p_stream::Control;

const PROTOCOL: StreamProtocol = StreamProtocol::new("/syncscope-bench/sink/1.0.0");
const STEP_TIMEOUT: Duration = Duration::from_secs(30);
const WRITE_SIZE: usize = 64 * 1024;

#[derive(NetworkBehaviour)]
struct CircuitPeer {
    relay: relay::client::Behaviour,
    stream: libp2p_stream::Behaviour,
}

fn new_peer() -> Result<Swarm<CircuitPeer>> {
    Ok(SwarmBuilder::with_new_identity()
        .with_tokio()
        .with_tcp(tcp::Config::default().nodelay(true), noise::Config::new, yamux::Config::default)?
        .with_relay_client(noise::Config::new, yamux::Config::default)?
        .with_behaviour(|_, relay| CircuitPeer { relay, stream: libp2p_stream::Behaviour::new() })?
        .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(60)))
        .build())
}

/// Drives `swarm` until `done` accepts an event.
async fn drive_until<T>(
    swarm: &mut Swarm<CircuitPeer>,
    mut done: impl FnMut(SwarmEvent<CircuitPeerEvent>) -> Option<Result<T>>,
) -> Result<T> {
    tokio::time::timeout(STEP_TIMEOUT, async {
        loop {
            if let Some(result) = done(swarm.select_next_some().await) {
                return result;
            }
        }
    })
    .await
    .map_err(|_| anyhow!("no progress within {STEP_TIMEOUT:?}"))?
}

/// The listening side: reserves a slot and sinks every stream, answering with the byte count.
pub struct Sink {
    pub circuit_addr: Multiaddr,
    pub peer_id: PeerId,
    task: tokio::task::JoinHandle<()>,
}

impl Sink {
    pub async fn start(relay: &Multiaddr) -> Result<Self> {
        let mut swarm = new_peer()?;
        let peer_id = *swarm.local_peer_id();
        let mut incoming = swarm.behaviour().stream.new_control().accept(PROTOCOL)?;
        swarm.listen_on(relay.clone().with(Protocol::P2pCircuit))?;
        drive_until(&mut swarm, |e| match e {
            SwarmEvent::NewListenAddr { .. } => Some(Ok(())),
            SwarmEvent::ListenerClosed { reason: Err(e), .. } => {
                Some(Err(anyhow!("reservation failed: {e}")))
            }
            _ => None,
        })
        .await?;
        let circuit_addr = relay.clone().with(Protocol::P2pCircuit).with(Protocol::P2p(peer_id));
        let task = tokio::spawn(async move {
            let driver = async {
                loop {
                    swarm.select_next_some().await;
                }
            };
            let server = async {
                while let Some((_, mut stream)) = incoming.next().await {
                    tokio::spawn(async move {
                        let count = futures::io::copy(&mut stream, &mut futures::io::sink())
                            .await
                            .unwrap_or(0);
                        let _ = stream.write_all(&count.to_be_bytes()).await;
                        let _ = stream.close().await;
                    });
                }
            };
            tokio::join!(driver, server);
        });
        Ok(Self { circuit_addr, peer_id, task })
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A dialing peer already connected to the relay, as a browser would be.
pub struct Dialer {
    control: Control,
    target: PeerId,
    task: tokio::task::JoinHandle<()>,
    /// Milliseconds from dialling the circuit to a finished stream round trip.
    pub dial_ms: f64,
}

impl Dialer {
    pub async fn connect(relay: &Multiaddr, sink: &Sink) -> Result<Self> {
        let mut swarm = new_peer()?;
        let mut control = swarm.behaviour().stream.new_control();
        swarm.dial(relay.clone())?;
        drive_until(&mut swarm, |e| match e {
            SwarmEvent::ConnectionEstablished { .. } => Some(Ok(())),
            SwarmEvent::OutgoingConnectionError { error, .. } => {
                Some(Err(anyhow!("relay dial: {error}")))
            }
            _ => None,
        })
        .await?;

        let started = Instant::now();
        swarm.dial(sink.circuit_addr.clone())?;
        let target = sink.peer_id;
        drive_until(&mut swarm, |e| match e {
            SwarmEvent::ConnectionEstablished { peer_id, .. } if peer_id == target => Some(Ok(())),
            SwarmEvent::OutgoingConnectionError { error, .. } => {
                Some(Err(anyhow!("circuit dial: {error}")))
            }
            _ => None,
        })
        .await?;
        let task = tokio::spawn(async move {
            loop {
                swarm.select_next_some().await;
            }
        });
        send(&mut control, target, 1).await?;
        let dial_ms = started.elapsed().as_secs_f64() * 1e3;
        Ok(Self { control, target, task, dial_ms })
    }

    /// Sends `bytes` through the circuit; returns megabytes (10^6) per second.
    pub async fn transfer(&mut self, bytes: usize) -> Result<f64> {
        let started = Instant::now();
        send(&mut self.control, self.target, bytes).await?;
        Ok(bytes as f64 / 1e6 / started.elapsed().as_secs_f64())
    }
}

impl Drop for Dialer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Writes `bytes` on a new stream and waits for the sink to confirm it received them all.
async fn send(control: &mut Control, peer: PeerId, bytes: usize) -> Result<()> {
    let work = async {
        let mut stream =
            control.open_stream(peer, PROTOCOL).await.map_err(|e| anyhow!("open stream: {e}"))?;
        let chunk = vec![0x5a_u8; WRITE_SIZE];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(WRITE_SIZE);
            stream.write_all(&chunk[..n]).await?;
            left -= n;
        }
        stream.close().await?;
        let mut count = [0u8; 8];
        stream.read_exact(&mut count).await.context("sink's byte count")?;
        if u64::from_be_bytes(count) != bytes as u64 {
            bail!("sink received {} of {bytes} bytes", u64::from_be_bytes(count));
        }
        Ok(())
    };
    tokio::time::timeout(STEP_TIMEOUT * 4, work).await.map_err(|_| anyhow!("transfer timed out"))?
}
