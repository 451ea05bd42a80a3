//! The libp2p behaviours every syncscope node runs, combined into one `NetworkBehaviour`.

use std::time::Duration;

use libp2p::{identify, identity::Keypair, ping, relay, swarm::NetworkBehaviour};

use super::rooms::{rooms_behaviour, RoomsBehaviour, RoomsConfigError};
use super::transport::PLATFORM;

/// Identify protocol version shared by syncscope nodes and the relay.
pub const IDENTIFY_PROTOCOL: &str = "/syncscope/0.1.0";

/// How often a node pings each peer; the UI shows the latest round trip.
pub const PING_INTERVAL: Duration = Duration::from_secs(2);

#[derive(NetworkBehaviour)]
pub struct NodeBehaviour {
    pub relay_client: relay::client::Behaviour,
    pub identify: identify::Behaviour,
    pub ping: ping::Behaviour,
    pub rooms: RoomsBehaviour,
}

impl NodeBehaviour {
    pub fn new(
        key: &Keypair,
        relay_client: relay::client::Behaviour,
    ) -> Result<Self, RoomsConfigError> {
        let agent = format!("syncscope/{} ({PLATFORM})", env!("CARGO_PKG_VERSION"));
        Ok(Self {
            relay_client,
            identify: identify::Behaviour::new(
                identify::Config::new(IDENTIFY_PROTOCOL.into(), key.public())
                    .with_agent_version(agent),
            ),
            ping: ping::Behaviour::new(ping::Config::new().with_interval(PING_INTERVAL)),
            rooms: rooms_behaviour(key)?,
        })
    }
}
