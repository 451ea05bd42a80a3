//! A running node: the swarm driven by a task of its own, observed through [`NodeEvent`]s.

use std::num::NonZeroU8;
use std::time::Duration;

use futures::{channel::mpsc, StreamExt};
use libp2p::{
    identity::Keypair,
    multiaddr::Protocol,
    ping,
    swarm::{dial_opts::DialOpts, SwarmEvent},
    Multiaddr, PeerId, Swarm,
};

use super::behaviour::{NodeBehaviour, NodeBehaviourEvent};
use super::transport::{build_swarm, BuildError};
use crate::rt;

/// Events are dropped, not queued without bound, when the observer falls this far behind.
const EVENT_QUEUE: usize = 1024;

/// The relay a node joins the network through.
#[derive(Debug, Clone)]
pub struct RelayAddress {
    pub peer_id: PeerId,
    /// Dialable addresses in order of preference; later ones are tried only if earlier ones fail.
    pub addrs: Vec<Multiaddr>,
}

#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct NodeConfig {
    pub relay: RelayAddress,
    pub keypair: Keypair,
}

impl NodeConfig {
    /// A node with a fresh ed25519 identity.
    pub fn new(relay: RelayAddress) -> Self {
        Self { relay, keypair: Keypair::generate_ed25519() }
    }

    pub fn with_keypair(mut self, keypair: Keypair) -> Self {
        self.keypair = keypair;
        self
    }
}

/// How a connection is carried, read off its address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    WebRtcDirect,
    WebSocket,
    Tcp,
    /// Relayed through a circuit relay v2 server.
    Circuit,
    Other,
}

impl TransportKind {
    pub fn of(addr: &Multiaddr) -> Self {
        let mut kind = Self::Other;
        for protocol in addr.iter() {
            kind = match protocol {
                Protocol::P2pCircuit => return Self::Circuit,
                Protocol::WebRTCDirect => Self::WebRtcDirect,
                Protocol::Ws(_) | Protocol::Wss(_) => Self::WebSocket,
                Protocol::Tcp(_) if kind == Self::Other => Self::Tcp,
                _ => kind,
            };
        }
        kind
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::WebRtcDirect => "WebRTC-direct",
            Self::WebSocket => "WebSocket",
            Self::Tcp => "TCP",
            Self::Circuit => "circuit relay",
            Self::Other => "other",
        }
    }
}

/// What a node reports about its connections.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum NodeEvent {
    Connected {
        peer: PeerId,
        transport: TransportKind,
        addr: Multiaddr,
    },
    Disconnected {
        peer: PeerId,
        cause: Option<String>,
    },
    /// A dial failed on every address; `error` lists each address and why.
    DialFailed {
        peer: Option<PeerId>,
        error: String,
    },
    Ping {
        peer: PeerId,
        rtt: Duration,
    },
    PingFailed {
        peer: PeerId,
        error: String,
    },
}

/// The caller's side of a running node. Dropping it stops the node.
pub struct NodeHandle {
    pub peer_id: PeerId,
    pub events: mpsc::Receiver<NodeEvent>,
}

/// Why a node could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error("cannot dial the relay: {0}")]
    Dial(String),
}

/// Builds the swarm, dials the relay and spawns the task that drives it.
pub async fn start(config: NodeConfig) -> Result<NodeHandle, StartError> {
    let peer_id = config.keypair.public().to_peer_id();
    let mut swarm = build_swarm(config.keypair).await?;
    swarm.dial(relay_dial_opts(&config.relay)).map_err(|e| StartError::Dial(e.to_string()))?;
    let (tx, events) = mpsc::channel(EVENT_QUEUE);
    rt::spawn(drive(swarm, tx));
    Ok(NodeHandle { peer_id, events })
}

/// One address at a time, so that the preferred transport wins whenever it works.
fn relay_dial_opts(relay: &RelayAddress) -> DialOpts {
    DialOpts::peer_id(relay.peer_id)
        .addresses(relay.addrs.clone())
        .override_dial_concurrency_factor(NonZeroU8::MIN)
        .build()
}

async fn drive(mut swarm: Swarm<NodeBehaviour>, mut tx: mpsc::Sender<NodeEvent>) {
    loop {
        let event = swarm.select_next_some().await;
        if let Some(event) = node_event(event) {
            if let Err(e) = tx.try_send(event) {
                if e.is_disconnected() {
                    tracing::debug!("node handle dropped; stopping");
                    return;
                }
                tracing::warn!("observer is behind; dropped a node event");
            }
        }
    }
}

fn node_event(event: SwarmEvent<NodeBehaviourEvent>) -> Option<NodeEvent> {
    match event {
        SwarmEvent::ConnectionEstablished { peer_id, endpoint, .. } => {
            let addr = endpoint.get_remote_address().clone();
            tracing::info!(%peer_id, %addr, "connected");
            Some(NodeEvent::Connected { peer: peer_id, transport: TransportKind::of(&addr), addr })
        }
        SwarmEvent::ConnectionClosed { peer_id, cause, num_established: 0, .. } => {
            tracing::info!(%peer_id, ?cause, "disconnected");
            Some(NodeEvent::Disconnected { peer: peer_id, cause: cause.map(|c| c.to_string()) })
        }
        SwarmEvent::OutgoingConnectionError { peer_id, error, .. } => {
            tracing::warn!(?peer_id, %error, "dial failed");
            Some(NodeEvent::DialFailed { peer: peer_id, error: error.to_string() })
        }
        SwarmEvent::Behaviour(NodeBehaviourEvent::Ping(ping::Event { peer, result, .. })) => {
            Some(match result {
                Ok(rtt) => NodeEvent::Ping { peer, rtt },
                Err(e) => NodeEvent::PingFailed { peer, error: e.to_string() },
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_kind_is_read_off_the_address() {
        let cases = [
            ("/ip4/127.0.0.1/tcp/1/ws", TransportKind::WebSocket),
            ("/ip4/127.0.0.1/udp/1/webrtc-direct", TransportKind::WebRtcDirect),
            ("/ip4/127.0.0.1/tcp/1", TransportKind::Tcp),
            ("/ip4/127.0.0.1/tcp/1/ws/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN/p2p-circuit", TransportKind::Circuit),
        ];
        for (addr, kind) in cases {
            assert_eq!(TransportKind::of(&addr.parse().unwrap()), kind, "{addr}");
        }
    }
}
