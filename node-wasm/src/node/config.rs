//! How a node is set up: its identity, the relay it joins through, its room and protocols.

use std::sync::Arc;
use std::time::Duration;

use libp2p::identity::Keypair;
use libp2p::{Multiaddr, PeerId};

use super::behaviour::ProtocolSettings;
use crate::net::webrtc::DirectWebRtcConfig;
use crate::store::NodeBlockStore;

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
    /// The relay to join through; without one the node reaches only the peers it dials and
    /// those that dial its [`NodeConfig::listen`] addresses, and is in no room.
    pub relay: Option<RelayAddress>,
    /// Addresses to listen on for direct connections (native only: a browser cannot listen).
    pub listen: Vec<Multiaddr>,
    pub keypair: Keypair,
    /// Hold a reservation on the relay so that other peers can dial this node through it.
    pub reserve: bool,
    /// Dial the members of the rooms this node is in (the peer with the smaller id dials).
    pub dial_members: bool,
    pub protocols: ProtocolSettings,
    /// Direct WebRTC with the room members that offer it (browsers only).
    pub direct_webrtc: DirectWebRtcConfig,
    /// Where Bitswap keeps blocks; what it holds at start is served at once, and a fetch takes
    /// from it before it asks the network.
    pub blocks: Arc<NodeBlockStore>,
    /// How often the node reports its counters ([`NodeEvent::Stats`](super::NodeEvent::Stats)),
    /// which is the resolution of every rate charted from them.
    pub stats_every: Duration,
}

/// A second: fine enough to see a transfer over a real network, and cheap on a busy page.
pub const DEFAULT_STATS_EVERY: Duration = Duration::from_secs(1);

impl NodeConfig {
    /// A node with a fresh ed25519 identity that reserves a slot on the relay, dials its room and
    /// keeps its blocks in memory.
    pub fn new(relay: RelayAddress) -> Self {
        Self { relay: Some(relay), ..Self::without_relay() }
    }

    /// A node that joins no relay: it listens where [`NodeConfig::with_listen`] says and dials
    /// the peers it is told to, as an IPFS node does.
    pub fn without_relay() -> Self {
        Self {
            relay: None,
            listen: Vec::new(),
            keypair: Keypair::generate_ed25519(),
            reserve: true,
            dial_members: true,
            protocols: ProtocolSettings::default(),
            direct_webrtc: DirectWebRtcConfig::default(),
            blocks: Arc::default(),
            stats_every: DEFAULT_STATS_EVERY,
        }
    }

    pub fn with_listen(mut self, addrs: Vec<Multiaddr>) -> Self {
        self.listen = addrs;
        self
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

    // In the browser the store is neither Send nor Sync, and needs not be: the node's tasks share
    // it on the one thread there is. The Arc is what native threads need.
    #[allow(clippy::arc_with_non_send_sync)]
    pub fn with_block_store(mut self, blocks: NodeBlockStore) -> Self {
        self.blocks = Arc::new(blocks);
        self
    }

    pub fn with_direct_webrtc(mut self, direct: DirectWebRtcConfig) -> Self {
        self.direct_webrtc = direct;
        self
    }

    pub fn with_protocols(mut self, protocols: ProtocolSettings) -> Self {
        self.protocols = protocols;
        self
    }

    pub fn with_stats_every(mut self, every: Duration) -> Self {
        self.stats_every = every;
        self
    }
}
