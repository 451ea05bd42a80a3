//! The libp2p behaviours every syncscope node runs, combined into one `NetworkBehaviour`.

use std::sync::Arc;
use std::time::Duration;

use libp2p::{identify, identity::Keypair, ping, relay, swarm::NetworkBehaviour};

use crate::agent::PeerKind;
use crate::net::RoomsBehaviour;
use crate::net::{bitswap, pullsync};
use crate::store::{NodeBlockStore, PersistedIntervals, PersistedReserve, PullsyncState};
use syncscope_proto::bitswap::ClientMode;
use syncscope_proto::pullsync::DeliveryMode;

/// Identify protocol version shared by syncscope nodes and the relay.
pub const IDENTIFY_PROTOCOL: &str = "/syncscope/0.1.0";

/// How often a node pings each peer; the UI shows the latest round trip.
pub const PING_INTERVAL: Duration = Duration::from_secs(2);

pub type NodeBitswap = bitswap::Behaviour<Arc<NodeBlockStore>>;
pub type NodePullsync = pullsync::Behaviour<PersistedReserve, PersistedIntervals>;

/// How a node runs its two data protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProtocolSettings {
    /// Bitswap 1.2.0 sessions, or the legacy pre-1.2 client for comparison.
    pub bitswap: ClientMode,
    /// Pull-sync deliveries one per message, or batched.
    pub delivery: DeliveryMode,
    /// Pull-sync storage radius: 0 keeps (and syncs) every chunk of every peer.
    pub storage_radius: u8,
    /// Pull-sync resets its pages under way and requests none while a Bitswap fetch or a link
    /// probe runs, and resumes when the last one ends. On by default: a fetch is what the user
    /// waits for, and pulling the same content as Swarm chunks beside it took ~40 % of the bytes
    /// a 64 MiB fetch moved in the browser (`cargo xtask bench browser`). Pages left to finish
    /// still carried up to 16 MiB of chunks into a fetch that started a second after the page
    /// connected (a share link waiting for a room member), and made it twice as slow. Off, both
    /// run at once.
    pub pullsync_yields: bool,
}

impl Default for ProtocolSettings {
    fn default() -> Self {
        Self {
            bitswap: ClientMode::Sessions,
            delivery: DeliveryMode::Streamed,
            storage_radius: 0,
            pullsync_yields: true,
        }
    }
}

#[derive(NetworkBehaviour)]
pub struct NodeBehaviour {
    pub relay_client: relay::client::Behaviour,
    pub identify: identify::Behaviour,
    pub ping: ping::Behaviour,
    pub rooms: RoomsBehaviour,
    pub bitswap: NodeBitswap,
    pub pullsync: NodePullsync,
    /// Plain stream protocols, each served and asked through a `Control`: the link probe
    /// ([`crate::net::link_probe`]) and the signalling of direct WebRTC ([`crate::net::webrtc`]).
    pub streams: libp2p_stream::Behaviour,
}

impl NodeBehaviour {
    /// `rooms` comes from [`crate::net::rooms_behaviour`] with the same `key`: it is built first,
    /// as the one part that can fail, so that the swarm builder's step cannot. `streams` is built
    /// first too, as the WebRTC transport signals through it.
    pub fn new(
        key: &Keypair,
        relay_client: relay::client::Behaviour,
        rooms: RoomsBehaviour,
        streams: libp2p_stream::Behaviour,
        settings: ProtocolSettings,
        blocks: Arc<NodeBlockStore>,
        pullsync_state: PullsyncState,
    ) -> Self {
        let overlay = pullsync::overlay_of(&key.public().to_peer_id());
        Self {
            relay_client,
            identify: identify::Behaviour::new(
                identify::Config::new(IDENTIFY_PROTOCOL.into(), key.public())
                    .with_agent_version(PeerKind::local_agent()),
            ),
            ping: ping::Behaviour::new(ping::Config::new().with_interval(PING_INTERVAL)),
            rooms,
            bitswap: bitswap::Behaviour::new(bitswap_config(settings.bitswap), blocks),
            pullsync: pullsync::Behaviour::new(
                pullsync::Config::default()
                    .with_protocol(
                        syncscope_proto::pullsync::Config::default()
                            .with_delivery(settings.delivery),
                    )
                    .with_storage_radius(settings.storage_radius),
                overlay,
                pullsync_state.reserve,
                pullsync_state.intervals,
            ),
            streams,
        }
    }
}

fn bitswap_config(mode: ClientMode) -> bitswap::Config {
    match mode {
        ClientMode::Legacy => bitswap::Config::legacy(),
        ClientMode::Sessions => bitswap::Config::default(),
    }
}
