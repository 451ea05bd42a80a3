//! Builds the swarm with the transports of the target: WebRTC-direct, direct WebRTC between
//! browsers and WebSocket through the browser's APIs on wasm32; TCP and WebSocket natively. Every
//! swarm also gets the circuit relay client, so it can be reached through the relay.

use std::convert::Infallible;
use std::time::Duration;

use libp2p::{noise, Swarm};

use super::behaviour::NodeBehaviour;
use super::config::NodeConfig;
use crate::net::{rooms_behaviour, RoomsConfigError};
use crate::store::PullsyncState;

/// Why the swarm could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Noise cannot sign its handshake key with the node's key (TCP, the relay client, and
    /// WebSocket in the browser).
    #[error("cannot build the libp2p swarm: cannot set up Noise with this key: {0}")]
    Noise(#[from] noise::Error),
    /// Native only: the system's DNS configuration cannot be read.
    #[cfg(not(target_arch = "wasm32"))]
    #[error("cannot build the libp2p swarm: cannot read the DNS configuration: {0}")]
    Dns(#[source] std::io::Error),
    /// Native only: the WebSocket transport cannot be set up (its Noise or its DNS resolver).
    #[cfg(not(target_arch = "wasm32"))]
    #[error("cannot build the libp2p swarm: cannot set up WebSocket: {0}")]
    WebSocket(#[from] libp2p::WebsocketBuilderError<noise::Error>),
    #[error("cannot build the libp2p swarm: {0}")]
    Rooms(#[from] RoomsConfigError),
}

/// The builder's steps that cannot fail report `Infallible`.
impl From<Infallible> for BuildError {
    fn from(never: Infallible) -> Self {
        match never {}
    }
}

/// Connections without open streams stay up this long: the relay connection must survive quiet
/// periods between experiments.
const IDLE_CONNECTION_TIMEOUT: Duration = Duration::from_secs(300);

#[cfg(target_arch = "wasm32")]
mod imp {
    use libp2p::core::{upgrade::Version, Transport as _};
    use libp2p::{webrtc_websys, websocket_websys, yamux, SwarmBuilder};

    use super::*;
    use crate::net::webrtc;

    pub async fn build_swarm(
        config: &NodeConfig,
        pullsync: PullsyncState,
    ) -> Result<Swarm<NodeBehaviour>, BuildError> {
        let key = config.keypair.clone();
        let rooms = rooms_behaviour(&key)?;
        let websocket_noise = noise::Config::new(&key)?;
        let streams = libp2p_stream::Behaviour::new();
        let direct = webrtc::Transport::new(config.direct_webrtc.clone(), streams.new_control());
        let (settings, blocks) = (config.protocols, config.blocks.clone());
        Ok(SwarmBuilder::with_existing_identity(key)
            .with_wasm_bindgen()
            .with_other_transport(|key| {
                webrtc_websys::Transport::new(webrtc_websys::Config::new(key))
            })?
            .with_other_transport(|_| direct)?
            .with_other_transport(|_| {
                websocket_websys::Transport::default()
                    .upgrade(Version::V1Lazy)
                    .authenticate(websocket_noise)
                    .multiplex(yamux::Config::default())
            })?
            .with_relay_client(noise::Config::new, yamux::Config::default)?
            .with_behaviour(|key, relay| {
                NodeBehaviour::new(key, relay, rooms, streams, settings, blocks, pullsync)
            })?
            .with_swarm_config(|c| c.with_idle_connection_timeout(IDLE_CONNECTION_TIMEOUT))
            .build())
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use libp2p::{tcp, yamux, SwarmBuilder};

    use super::*;

    pub async fn build_swarm(
        config: &NodeConfig,
        pullsync: PullsyncState,
    ) -> Result<Swarm<NodeBehaviour>, BuildError> {
        let key = config.keypair.clone();
        let rooms = rooms_behaviour(&key)?;
        let streams = libp2p_stream::Behaviour::new();
        let (settings, blocks) = (config.protocols, config.blocks.clone());
        Ok(SwarmBuilder::with_existing_identity(key)
            .with_tokio()
            .with_tcp(
                tcp::Config::default().nodelay(true),
                noise::Config::new,
                yamux::Config::default,
            )?
            .with_dns()
            .map_err(BuildError::Dns)?
            .with_websocket(noise::Config::new, yamux::Config::default)
            .await?
            .with_relay_client(noise::Config::new, yamux::Config::default)?
            .with_behaviour(|key, relay| {
                NodeBehaviour::new(key, relay, rooms, streams, settings, blocks, pullsync)
            })?
            .with_swarm_config(|c| c.with_idle_connection_timeout(IDLE_CONNECTION_TIMEOUT))
            .build())
    }
}

pub use imp::build_swarm;
