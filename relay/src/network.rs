//! The relay's libp2p side: circuit relay v2 server, identify and ping over WebSocket,
//! WebRTC-direct and TCP.

use std::net::IpAddr;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use futures::StreamExt;
use libp2p::{
    identify,
    identity::Keypair,
    multiaddr::Protocol,
    noise, ping, relay,
    swarm::{NetworkBehaviour, SwarmEvent},
    tcp, yamux, Multiaddr, PeerId, Swarm, SwarmBuilder,
};
use libp2p_webrtc::tokio::Certificate;
use tokio::sync::watch;

use crate::cli::Args;
use crate::identity::Identity;

const IDLE_CONNECTION_TIMEOUT: Duration = Duration::from_secs(300);
/// Listeners must report their addresses within this time of start-up.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(NetworkBehaviour)]
pub struct RelayBehaviour {
    relay: relay::Behaviour,
    identify: identify::Behaviour,
    ping: ping::Behaviour,
}

/// The transports the relay listens on, as named in `/config.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Listener {
    #[serde(rename = "webrtc-direct")]
    WebRtcDirect,
    #[serde(rename = "ws")]
    WebSocket,
    #[serde(rename = "tcp")]
    Tcp,
}

impl Listener {
    fn of(addr: &Multiaddr) -> Option<Self> {
        let protocols: Vec<_> = addr.iter().collect();
        if protocols.iter().any(|p| matches!(p, Protocol::WebRTCDirect)) {
            Some(Self::WebRtcDirect)
        } else if protocols.iter().any(|p| matches!(p, Protocol::Ws(_))) {
            Some(Self::WebSocket)
        } else if protocols.iter().any(|p| matches!(p, Protocol::Tcp(_))) {
            Some(Self::Tcp)
        } else {
            None
        }
    }
}

/// What the rest of the relay may know about the swarm; published through a watch channel.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub peer_id: Option<PeerId>,
    /// Dialable addresses (with `/p2p/<relay>`) per transport.
    pub addrs: Vec<(Listener, Multiaddr)>,
    pub connections: usize,
}

pub struct Network {
    swarm: Swarm<RelayBehaviour>,
    snapshot: watch::Sender<Snapshot>,
}

impl Network {
    pub async fn new(identity: Identity, args: &Args) -> Result<Self> {
        let peer_id = identity.keypair.public().to_peer_id();
        let mut swarm = build_swarm(identity.keypair, identity.certificate).await?;
        for (addr, flag) in listen_addrs(args) {
            swarm.listen_on(addr.clone()).map_err(|e| {
                anyhow!(
                    "cannot listen on {addr} ({e}): is the port in use? pick another with {flag}"
                )
            })?;
        }
        let (snapshot, _) =
            watch::channel(Snapshot { peer_id: Some(peer_id), ..Default::default() });
        Ok(Self { swarm, snapshot })
    }

    pub fn subscribe(&self) -> watch::Receiver<Snapshot> {
        self.snapshot.subscribe()
    }

    /// Drives the swarm until every listener has an address.
    pub async fn wait_listening(&mut self) -> Result<()> {
        let wanted = 3;
        tokio::time::timeout(LISTEN_TIMEOUT, async {
            while self.listeners_up() < wanted {
                self.step().await?;
            }
            Ok::<_, anyhow::Error>(())
        })
        .await
        .context("listeners did not come up in time")?
    }

    fn listeners_up(&self) -> usize {
        let snap = self.snapshot.borrow();
        let mut kinds: Vec<_> = snap.addrs.iter().map(|(l, _)| *l).collect();
        kinds.dedup();
        kinds.len()
    }

    /// Drives the swarm until the task is dropped.
    pub async fn run(mut self) -> Result<()> {
        loop {
            self.step().await?;
        }
    }

    async fn step(&mut self) -> Result<()> {
        let event = self.swarm.select_next_some().await;
        self.handle(event)
    }

    fn handle(&mut self, event: SwarmEvent<RelayBehaviourEvent>) -> Result<()> {
        match event {
            SwarmEvent::NewListenAddr { address, .. } => self.add_listen_addr(address),
            SwarmEvent::ListenerClosed { addresses, reason: Err(e), .. } => {
                return Err(anyhow!("listener on {addresses:?} failed: {e}"));
            }
            SwarmEvent::ConnectionEstablished { peer_id, endpoint, num_established, .. } => {
                tracing::info!(%peer_id, addr = %endpoint.get_remote_address(), num_established, "peer connected");
                self.snapshot.send_modify(|s| s.connections += 1);
            }
            SwarmEvent::ConnectionClosed { peer_id, cause, .. } => {
                tracing::info!(%peer_id, ?cause, "peer disconnected");
                self.snapshot.send_modify(|s| s.connections = s.connections.saturating_sub(1));
            }
            SwarmEvent::IncomingConnectionError { send_back_addr, error, .. } => {
                tracing::info!(addr = %send_back_addr, %error, "refused incoming connection");
            }
            SwarmEvent::Behaviour(RelayBehaviourEvent::Relay(event)) => {
                tracing::info!(?event, "relay");
            }
            _ => {}
        }
        Ok(())
    }

    fn add_listen_addr(&mut self, address: Multiaddr) {
        let Some(kind) = Listener::of(&address) else { return };
        let peer_id = *self.swarm.local_peer_id();
        let dialable = address.with_p2p(peer_id).unwrap_or_else(|a| a);
        tracing::info!(addr = %dialable, "listening");
        self.snapshot.send_modify(|s| {
            s.addrs.push((kind, dialable));
            s.addrs.sort();
        });
    }
}

fn listen_addrs(args: &Args) -> [(Multiaddr, &'static str); 3] {
    let ip = match args.listen_addr {
        IpAddr::V4(ip) => Protocol::Ip4(ip),
        IpAddr::V6(ip) => Protocol::Ip6(ip),
    };
    let base = Multiaddr::empty().with(ip);
    [
        (
            base.clone().with(Protocol::Tcp(args.ws_port)).with(Protocol::Ws("/".into())),
            "--ws-port",
        ),
        (
            base.clone().with(Protocol::Udp(args.webrtc_port)).with(Protocol::WebRTCDirect),
            "--webrtc-port",
        ),
        (base.with(Protocol::Tcp(args.tcp_port)), "--tcp-port"),
    ]
}

async fn build_swarm(keypair: Keypair, certificate: Certificate) -> Result<Swarm<RelayBehaviour>> {
    Ok(SwarmBuilder::with_existing_identity(keypair)
        .with_tokio()
        .with_tcp(tcp::Config::default().nodelay(true), noise::Config::new, yamux::Config::default)?
        .with_other_transport(|key| libp2p_webrtc::tokio::Transport::new(key.clone(), certificate))?
        .with_dns()?
        .with_websocket(noise::Config::new, yamux::Config::default)
        .await?
        .with_behaviour(|key| RelayBehaviour {
            relay: relay::Behaviour::new(key.public().to_peer_id(), relay_config()),
            identify: identify::Behaviour::new(identify::Config::new(
                syncscope_node::net::IDENTIFY_PROTOCOL.into(),
                key.public(),
            )),
            ping: ping::Behaviour::new(
                ping::Config::new().with_interval(syncscope_node::net::PING_INTERVAL),
            ),
        })?
        .with_swarm_config(|c| c.with_idle_connection_timeout(IDLE_CONNECTION_TIMEOUT))
        .build())
}

/// Limits sized for moving data between browsers, not just for signalling.
fn relay_config() -> relay::Config {
    relay::Config {
        max_circuit_duration: Duration::from_secs(3600),
        max_circuit_bytes: 0,
        ..relay::Config::default()
    }
}
