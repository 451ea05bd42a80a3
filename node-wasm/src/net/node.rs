//! A running node: the swarm driven by a task of its own ([`super::driver`]), steered with
//! commands through a [`NodeHandle`] and observed through [`NodeEvent`]s.

use std::time::Duration;

use cid::Cid;
use futures::channel::mpsc;
use libp2p::{core::ConnectedPoint, identity::Keypair, multiaddr::Protocol, Multiaddr, PeerId};

use super::behaviour::ProtocolSettings;
use super::driver::{Command, Driver};
use super::fetches::FetchUpdate;
use super::membership::RoomUpdate;
use super::transport::{build_swarm, BuildError};
use super::{bitswap, pullsync};
use crate::content::{
    demo_stamp, import_bytes, split_bytes, ImportConfig, ImportError, ImportedFile, SplitFile,
};
use crate::rt;
use syncscope_proto::swarm::Address;

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
    /// Dial the members of the rooms this node is in (the peer with the smaller id dials).
    pub dial_members: bool,
    pub protocols: ProtocolSettings,
}

impl NodeConfig {
    /// A node with a fresh ed25519 identity that reserves a slot on the relay and dials its room.
    pub fn new(relay: RelayAddress) -> Self {
        Self {
            relay,
            keypair: Keypair::generate_ed25519(),
            reserve: true,
            dial_members: true,
            protocols: ProtocolSettings::default(),
        }
    }

    pub fn with_keypair(mut self, keypair: Keypair) -> Self {
        self.keypair = keypair;
        self
    }

    pub fn with_reservation(mut self, reserve: bool) -> Self {
        self.reserve = reserve;
        self
    }

    pub fn with_member_dialing(mut self, dial: bool) -> Self {
        self.dial_members = dial;
        self
    }

    pub fn with_protocols(mut self, protocols: ProtocolSettings) -> Self {
        self.protocols = protocols;
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

    /// The transport of a connection. A relayed inbound connection is only recognisable by the
    /// circuit listen address it arrived on: its remote address is just `/p2p/<peer>`.
    pub fn of_connection(endpoint: &ConnectedPoint) -> Self {
        match endpoint {
            ConnectedPoint::Listener { local_addr, .. }
                if Self::of(local_addr) == Self::Circuit =>
            {
                Self::Circuit
            }
            _ => Self::of(endpoint.get_remote_address()),
        }
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

/// Both protocols' counters, sampled once a second.
#[derive(Debug, Clone, Copy)]
pub struct NodeStats {
    /// Time since the node started; time zero of every chart.
    pub elapsed: Duration,
    pub bitswap: bitswap::Stats,
    pub pullsync: pullsync::Stats,
    pub connected_peers: usize,
}

/// Content this node holds, under both protocols' addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentAdded {
    /// The UnixFS root, fetchable over Bitswap (by Helia or kubo too).
    pub cid: Cid,
    /// The Swarm root address of the same bytes; its chunks are offered over pull-sync.
    pub swarm_root: Address,
    pub size: u64,
    pub blocks: usize,
    pub chunks: usize,
}

/// What a node reports.
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
    ContentAdded(ContentAdded),
    Fetch(FetchUpdate),
    Stats(Box<NodeStats>),
    /// A peer broke a protocol and was disconnected.
    Misbehaved {
        peer: PeerId,
        protocol: &'static str,
        error: String,
    },
    /// A command or a message from the network was refused; `error` says why in words.
    Error {
        error: String,
    },
}

/// The caller's side of a running node: its events, and (through `Deref`) its
/// [`NodeControl`]. Dropping it (or its `events`) stops the node.
pub struct NodeHandle {
    pub peer_id: PeerId,
    pub events: mpsc::Receiver<NodeEvent>,
    pub control: NodeControl,
}

impl std::ops::Deref for NodeHandle {
    type Target = NodeControl;

    fn deref(&self) -> &NodeControl {
        &self.control
    }
}

/// Commands for a running node. Cheap to clone, so that every part of an application (a button,
/// a timer) can hold one.
#[derive(Clone)]
pub struct NodeControl {
    commands: mpsc::Sender<Command>,
}

/// Why a command did not reach the node.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    #[error("the node is not running or is overloaded with commands")]
    Stopped,
    #[error("cannot import the content: {0}")]
    Import(#[from] ImportError),
}

impl NodeControl {
    /// Joins `room`; [`NodeEvent::Room`] then reports its members as they change.
    pub fn join_room(&self, room: &str) -> Result<(), CommandError> {
        self.send(Command::JoinRoom(room.to_string()))
    }

    pub fn leave_room(&self, room: &str) -> Result<(), CommandError> {
        self.send(Command::LeaveRoom(room.to_string()))
    }

    /// Dials a peer, e.g. a room member's circuit address.
    pub fn dial(&self, addr: Multiaddr) -> Result<(), CommandError> {
        self.send(Command::Dial(addr))
    }

    /// Imports `data` as a UnixFS file (kubo's `--cid-version=1 --raw-leaves` layout) and as
    /// Swarm chunks, then serves it over Bitswap and pull-sync. The import runs on the caller's
    /// thread; [`NodeEvent::ContentAdded`] follows.
    pub fn add_bytes(&self, data: &[u8]) -> Result<(), CommandError> {
        let unixfs = import_bytes(data, ImportConfig::default())?;
        // syncscope carries postage stamps opaquely and issues none; local uploads carry a fixed
        // placeholder.
        let swarm = split_bytes(data, demo_stamp(0));
        self.add_imported(unixfs, swarm)
    }

    /// Serves content imported already, e.g. by [`crate::content::import_demo`].
    pub fn add_imported(&self, unixfs: ImportedFile, swarm: SplitFile) -> Result<(), CommandError> {
        self.send(Command::Add(Box::new((unixfs, swarm))))
    }

    /// Fetches the UnixFS file at `root` over Bitswap; [`NodeEvent::Fetch`] reports progress.
    pub fn fetch(&self, root: Cid) -> Result<(), CommandError> {
        self.send(Command::Fetch(root))
    }

    fn send(&self, command: Command) -> Result<(), CommandError> {
        self.commands.clone().try_send(command).map_err(|_| CommandError::Stopped)
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
    let swarm = build_swarm(config.keypair.clone(), config.protocols).await?;
    let (events_tx, events) = mpsc::channel(EVENT_QUEUE);
    let (commands_tx, commands) = mpsc::channel(COMMAND_QUEUE);
    let driver = Driver::new(swarm, &config, events_tx).map_err(StartError::Dial)?;
    rt::spawn(driver.run(commands));
    Ok(NodeHandle { peer_id, events, control: NodeControl { commands: commands_tx } })
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

    #[test]
    fn an_inbound_relayed_connection_is_known_by_its_listen_address() {
        let relay = "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN";
        let endpoint = ConnectedPoint::Listener {
            local_addr: format!("/ip4/127.0.0.1/tcp/1/p2p/{relay}/p2p-circuit").parse().unwrap(),
            send_back_addr: format!("/p2p/{relay}").parse().unwrap(),
        };
        assert_eq!(TransportKind::of_connection(&endpoint), TransportKind::Circuit);
    }
}
