//! A running node: the swarm driven by a task of its own, steered with commands through a
//! [`NodeHandle`] and observed through [`NodeEvent`]s.

use std::num::NonZeroU8;
use std::time::Duration;

use futures::{channel::mpsc, StreamExt};
use libp2p::{
    gossipsub,
    identity::Keypair,
    multiaddr::Protocol,
    ping,
    swarm::{dial_opts::DialOpts, SwarmEvent},
    Multiaddr, PeerId, Swarm,
};

use super::behaviour::{NodeBehaviour, NodeBehaviourEvent};
use super::membership::{Membership, RoomUpdate};
use super::transport::{build_swarm, BuildError};
use crate::rt;

/// Events are dropped, not queued without bound, when the observer falls this far behind.
const EVENT_QUEUE: usize = 1024;
const COMMAND_QUEUE: usize = 64;

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
    /// Hold a reservation on the relay so that other peers can dial this node through it.
    pub reserve: bool,
}

impl NodeConfig {
    /// A node with a fresh ed25519 identity that reserves a slot on the relay.
    pub fn new(relay: RelayAddress) -> Self {
        Self { relay, keypair: Keypair::generate_ed25519(), reserve: true }
    }

    pub fn with_keypair(mut self, keypair: Keypair) -> Self {
        self.keypair = keypair;
        self
    }

    pub fn with_reservation(mut self, reserve: bool) -> Self {
        self.reserve = reserve;
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

/// What a node reports about its connections and rooms.
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
    /// The relay accepted a reservation: other peers can dial this node at `addr`.
    Reserved {
        addr: Multiaddr,
    },
    ReservationFailed {
        error: String,
    },
    Room(RoomUpdate),
    /// A command or a message from the network was refused; `error` says why in words.
    Error {
        error: String,
    },
}

enum Command {
    JoinRoom(String),
    LeaveRoom(String),
    Dial(Multiaddr),
}

/// The caller's side of a running node. Dropping it stops the node.
pub struct NodeHandle {
    pub peer_id: PeerId,
    pub events: mpsc::Receiver<NodeEvent>,
    commands: mpsc::Sender<Command>,
}

/// Why a command did not reach the node.
#[derive(Debug, thiserror::Error)]
#[error("the node is not running or is overloaded with commands")]
pub struct NodeStopped;

impl NodeHandle {
    /// Joins `room`; [`NodeEvent::Room`] then reports its members as they change.
    pub fn join_room(&mut self, room: &str) -> Result<(), NodeStopped> {
        self.send(Command::JoinRoom(room.to_string()))
    }

    pub fn leave_room(&mut self, room: &str) -> Result<(), NodeStopped> {
        self.send(Command::LeaveRoom(room.to_string()))
    }

    /// Dials a peer, e.g. a room member's circuit address.
    pub fn dial(&mut self, addr: Multiaddr) -> Result<(), NodeStopped> {
        self.send(Command::Dial(addr))
    }

    fn send(&mut self, command: Command) -> Result<(), NodeStopped> {
        self.commands.try_send(command).map_err(|_| NodeStopped)
    }
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
    let (events_tx, events) = mpsc::channel(EVENT_QUEUE);
    let (commands_tx, commands) = mpsc::channel(COMMAND_QUEUE);
    let driver = Driver {
        membership: Membership::new(peer_id, config.relay.peer_id),
        relay: config.relay,
        reserve: config.reserve,
        relay_addr: None,
        swarm,
        events: events_tx,
    };
    rt::spawn(driver.run(commands));
    Ok(NodeHandle { peer_id, events, commands: commands_tx })
}

/// One address at a time, so that the preferred transport wins whenever it works.
fn relay_dial_opts(relay: &RelayAddress) -> DialOpts {
    DialOpts::peer_id(relay.peer_id)
        .addresses(relay.addrs.clone())
        .override_dial_concurrency_factor(NonZeroU8::MIN)
        .build()
}

struct Driver {
    swarm: Swarm<NodeBehaviour>,
    relay: RelayAddress,
    /// The address this node reached the relay at, once connected.
    relay_addr: Option<Multiaddr>,
    reserve: bool,
    membership: Membership,
    events: mpsc::Sender<NodeEvent>,
}

impl Driver {
    async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        loop {
            futures::select! {
                event = self.swarm.select_next_some() => self.on_swarm(event),
                command = commands.next() => match command {
                    Some(command) => self.on_command(command),
                    None => return,
                },
            }
            if self.events.is_closed() {
                tracing::debug!("node handle dropped; stopping");
                return;
            }
        }
    }

    fn emit(&mut self, event: NodeEvent) {
        if let Err(e) = self.events.try_send(event) {
            if !e.is_disconnected() {
                tracing::warn!("observer is behind; dropped a node event");
            }
        }
    }

    fn on_command(&mut self, command: Command) {
        let result = match command {
            Command::JoinRoom(room) => self
                .membership
                .join(&mut self.swarm.behaviour_mut().rooms, &room)
                .map_err(|e| e.to_string()),
            Command::LeaveRoom(room) => {
                self.membership.leave(&mut self.swarm.behaviour_mut().rooms, &room);
                Ok(())
            }
            Command::Dial(addr) => {
                self.swarm.dial(addr.clone()).map_err(|e| format!("cannot dial {addr}: {e}"))
            }
        };
        if let Err(error) = result {
            self.emit(NodeEvent::Error { error });
        }
    }

    fn on_swarm(&mut self, event: SwarmEvent<NodeBehaviourEvent>) {
        match event {
            SwarmEvent::ConnectionEstablished { peer_id, endpoint, .. } => {
                let addr = endpoint.get_remote_address().clone();
                tracing::info!(%peer_id, %addr, "connected");
                if peer_id == self.relay.peer_id && self.relay_addr.is_none() {
                    self.relay_connected(addr.clone());
                }
                self.emit(NodeEvent::Connected {
                    peer: peer_id,
                    transport: TransportKind::of(&addr),
                    addr,
                });
            }
            SwarmEvent::ConnectionClosed { peer_id, cause, num_established: 0, .. } => {
                tracing::info!(%peer_id, ?cause, "disconnected");
                if peer_id == self.relay.peer_id {
                    self.relay_addr = None;
                }
                self.emit(NodeEvent::Disconnected {
                    peer: peer_id,
                    cause: cause.map(|c| c.to_string()),
                });
            }
            SwarmEvent::OutgoingConnectionError { peer_id, error, .. } => {
                tracing::warn!(?peer_id, %error, "dial failed");
                self.emit(NodeEvent::DialFailed { peer: peer_id, error: error.to_string() });
            }
            SwarmEvent::NewListenAddr { address, .. } if is_circuit(&address) => {
                tracing::info!(%address, "reserved a slot on the relay");
                self.emit(NodeEvent::Reserved { addr: address });
            }
            SwarmEvent::ListenerClosed { reason: Err(e), .. } => {
                self.emit(NodeEvent::ReservationFailed { error: e.to_string() });
            }
            SwarmEvent::Behaviour(NodeBehaviourEvent::Ping(ping::Event {
                peer, result, ..
            })) => {
                self.emit(match result {
                    Ok(rtt) => NodeEvent::Ping { peer, rtt },
                    Err(e) => NodeEvent::PingFailed { peer, error: e.to_string() },
                });
            }
            SwarmEvent::Behaviour(NodeBehaviourEvent::Rooms(gossipsub::Event::Message {
                propagation_source,
                message_id,
                message,
            })) => self.on_room_message(propagation_source, message_id, message),
            _ => {}
        }
    }

    /// Reserves a slot through the connection just made, so that room members can dial us.
    fn relay_connected(&mut self, addr: Multiaddr) {
        self.relay_addr = Some(addr.clone());
        if !self.reserve {
            return;
        }
        let circuit =
            addr.with_p2p(self.relay.peer_id).unwrap_or_else(|a| a).with(Protocol::P2pCircuit);
        if let Err(e) = self.swarm.listen_on(circuit) {
            self.emit(NodeEvent::ReservationFailed { error: e.to_string() });
        }
    }

    fn on_room_message(
        &mut self,
        source: PeerId,
        id: gossipsub::MessageId,
        message: gossipsub::Message,
    ) {
        let rooms = &mut self.swarm.behaviour_mut().rooms;
        match self.membership.handle(rooms, source, id, message, self.relay_addr.as_ref()) {
            Some(Ok(update)) => self.emit(NodeEvent::Room(update)),
            Some(Err(e)) => self
                .emit(NodeEvent::Error { error: format!("bad member list from the relay: {e}") }),
            None => {}
        }
    }
}

fn is_circuit(addr: &Multiaddr) -> bool {
    addr.iter().any(|p| matches!(p, Protocol::P2pCircuit))
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
