//! What a running node reports: connections, rooms, content, fetches, counters and errors.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use crate::agent::PeerKind;
use bytes::Bytes;
use cid::Cid;
use libp2p::{
    core::{transport::TransportError, ConnectedPoint},
    multiaddr::Protocol,
    ping,
    swarm::{ConnectionError, DialError, ListenError},
    Multiaddr, PeerId,
};

use super::fetches::FetchUpdate;
use super::membership::RoomUpdate;
use crate::content::ExportError;
use crate::net::{bitswap, pullsync, webrtc};
use crate::store::{Manifest, StoreError};
use syncscope_proto::bitswap::ProtocolVersion;
use syncscope_proto::rooms::RoomError;
use syncscope_proto::swarm::Address;

/// Why a direct WebRTC connection was not made: our dial failed, or the peer's dial of us did.
/// Shown as the WebRTC transport's own words (ICE found no path, timed out, the peer refused).
#[derive(Debug, Clone)]
pub enum DirectWebRtcFailure {
    Dial(Arc<DialError>),
    Listen(Arc<ListenError>),
}

impl DirectWebRtcFailure {
    /// Whether the dial that failed went to a `/webrtc` address.
    pub fn is_webrtc_dial(error: &DialError) -> bool {
        webrtc_attempt(error).is_some()
    }

    fn transport_error(&self) -> Option<&TransportError<io::Error>> {
        match self {
            Self::Dial(e) => webrtc_attempt(e),
            Self::Listen(e) => match &**e {
                ListenError::Transport(e) => Some(e),
                _ => None,
            },
        }
    }
}

fn webrtc_attempt(error: &DialError) -> Option<&TransportError<io::Error>> {
    let DialError::Transport(attempts) = error else { return None };
    attempts.iter().find(|(addr, _)| webrtc::peer_of(addr).is_some()).map(|(_, e)| e)
}

impl std::fmt::Display for DirectWebRtcFailure {
    /// libp2p prints nothing for a transport's own error (`TransportError::Other`): the words
    /// are in the error it holds.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.transport_error() {
            Some(TransportError::Other(e)) => write!(f, "{e}"),
            Some(e) => write!(f, "{e}"),
            None => match self {
                Self::Dial(e) => write!(f, "{e}"),
                Self::Listen(e) => write!(f, "{e}"),
            },
        }
    }
}

/// How a connection is carried, read off its address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    WebRtcDirect,
    /// Direct WebRTC between browsers, negotiated through a circuit (`/p2p-circuit/webrtc`).
    WebRtc,
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
                Protocol::WebRTC => return Self::WebRtc,
                Protocol::P2pCircuit => Self::Circuit,
                _ if kind == Self::Circuit => kind,
                Protocol::WebRTCDirect => Self::WebRtcDirect,
                Protocol::Ws(_) | Protocol::Wss(_) => Self::WebSocket,
                Protocol::Tcp(_) if kind == Self::Other => Self::Tcp,
                _ => kind,
            };
        }
        kind
    }

    /// The transport of a connection. An inbound circuit's remote address is the circuit through
    /// our relay (see `vendor/libp2p-relay`), so every relayed connection reads as one.
    pub fn of_connection(endpoint: &ConnectedPoint) -> Self {
        Self::of(endpoint.get_remote_address())
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::WebRtcDirect => "WebRTC-direct",
            Self::WebSocket => "WebSocket",
            Self::Tcp => "TCP",
            Self::WebRtc => "direct (WebRTC)",
            Self::Circuit => "relayed (circuit)",
            Self::Other => "other",
        }
    }
}

/// Both protocols' counters, sampled once a second. The default is the node as it starts: every
/// counter at zero, at time zero.
#[derive(Debug, Clone, Copy, Default)]
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
    /// The name it was added under.
    pub name: String,
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
        cause: Option<Arc<ConnectionError>>,
    },
    /// A dial failed on every address; `error` lists each address and why.
    DialFailed {
        peer: Option<PeerId>,
        error: Arc<DialError>,
    },
    /// A direct WebRTC connection to a room member was not made; it stays on the circuit.
    DirectWebRtcFailed {
        peer: PeerId,
        error: DirectWebRtcFailure,
    },
    Ping {
        peer: PeerId,
        rtt: Duration,
    },
    PingFailed {
        peer: PeerId,
        error: Arc<ping::Failure>,
    },
    /// The relay accepted a reservation: other peers can dial this node at `addr`.
    Reserved {
        addr: Multiaddr,
    },
    /// The node listens for direct connections at `addr` (ending in its `/p2p/` id).
    Listening {
        addr: Multiaddr,
    },
    /// A connected peer said what it runs (identify): a room member, or a peer outside any room
    /// such as a kubo or Helia node.
    Identified {
        peer: PeerId,
        agent: Arc<str>,
        kind: PeerKind,
    },
    ReservationFailed {
        error: ReservationError,
    },
    Room(RoomUpdate),
    /// Bitswap can fetch from `peer` and serve it (`Some`: the protocol version agreed on), or
    /// no longer can (`None`). It lags `Connected` by the protocol negotiation.
    Bitswap {
        peer: PeerId,
        version: Option<ProtocolVersion>,
    },
    ContentAdded(ContentAdded),
    Fetch(FetchUpdate),
    /// What the node holds changed, or a stored file was read back.
    Stored(StoredChange),
    Stats(Box<NodeStats>),
    /// A peer broke a protocol and was disconnected.
    Misbehaved {
        peer: PeerId,
        error: Misbehaviour,
    },
    /// A command or a message from the network was refused.
    Error {
        error: NodeError,
    },
}

/// A change to the content a node holds ([`Manifest`]s), once written to its store.
#[derive(Debug, Clone)]
pub enum StoredChange {
    /// A manifest was written, new or replacing its root's.
    Kept(Manifest),
    /// `root` was forgotten, and `freed_blocks` of its blocks and `freed_chunks` of its Swarm
    /// chunks (those no other root needs) deleted.
    Removed { root: Cid, freed_blocks: usize, freed_chunks: usize },
    /// The whole file at `root`, read back from the store and verified
    /// ([`super::NodeControl::read_file`]).
    Read { root: Cid, data: Bytes },
    /// The DAG at `root` as a CARv1 file ([`super::NodeControl::export_car`]).
    Car { root: Cid, data: Bytes },
}

/// Why a stored file could not be read back.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ReadFileError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Export(#[from] ExportError),
}

/// Why other peers cannot reach this node through the relay.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ReservationError {
    #[error("cannot listen on the relay circuit: {0}")]
    Listen(Arc<TransportError<io::Error>>),
    #[error("the relay circuit listener closed: {0}")]
    Closed(Arc<io::Error>),
}

/// How a peer broke one of the protocols.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Misbehaviour {
    #[error(transparent)]
    Bitswap(bitswap::Misbehaviour),
    #[error(transparent)]
    Pullsync(pullsync::Misbehaviour),
}

impl Misbehaviour {
    /// The name of the protocol that was broken.
    pub fn protocol(&self) -> &'static str {
        match self {
            Self::Bitswap(_) => "bitswap",
            Self::Pullsync(_) => "pull-sync",
        }
    }
}

/// Why a command or a message from the network was refused.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum NodeError {
    #[error(transparent)]
    JoinRoom(RoomError),
    #[error("bad member list from the relay: {0}")]
    MemberList(RoomError),
    #[error("cannot dial {addr}: {error}")]
    Dial { addr: Multiaddr, error: Arc<DialError> },
    #[error("cannot store block {cid}: {error}")]
    StoreBlock { cid: Cid, error: Arc<StoreError> },
    #[error("cannot store chunk {address}: {error}")]
    StoreChunk { address: Address, error: Arc<StoreError> },
    #[error("cannot keep the manifest of {root}: {error}")]
    Manifest { root: Cid, error: Arc<StoreError> },
    #[error("cannot read {root} back from the store: {error}")]
    ReadFile { root: Cid, error: Arc<ReadFileError> },
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
            ("/ip4/127.0.0.1/udp/1/webrtc-direct/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN/p2p-circuit/p2p/12D3KooWQHNguJHYU1Mh2tG1jz4hA9opn5q6nVb4WZp7FHAeqKz5", TransportKind::Circuit),
            ("/ip4/127.0.0.1/tcp/1/ws/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN/p2p-circuit/webrtc/p2p/12D3KooWQHNguJHYU1Mh2tG1jz4hA9opn5q6nVb4WZp7FHAeqKz5", TransportKind::WebRtc),
            ("/webrtc/p2p/12D3KooWQHNguJHYU1Mh2tG1jz4hA9opn5q6nVb4WZp7FHAeqKz5", TransportKind::WebRtc),
        ];
        for (addr, kind) in cases {
            assert_eq!(TransportKind::of(&addr.parse().unwrap()), kind, "{addr}");
        }
    }

    #[test]
    fn an_inbound_relayed_connection_is_known_by_its_remote_address() {
        let relay = "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN";
        let src = "12D3KooWQHNguJHYU1Mh2tG1jz4hA9opn5q6nVb4WZp7FHAeqKz5";
        let circuit = format!("/ip4/127.0.0.1/tcp/1/p2p/{relay}/p2p-circuit");
        let endpoint = ConnectedPoint::Listener {
            local_addr: circuit.parse().unwrap(),
            send_back_addr: format!("{circuit}/p2p/{src}").parse().unwrap(),
        };
        assert_eq!(TransportKind::of_connection(&endpoint), TransportKind::Circuit);
    }
}
