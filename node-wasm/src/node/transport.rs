//! Builds the swarm with the transports of the target: WebRTC-direct and WebSocket through the
//! browser's APIs on wasm32; TCP, WebSocket and WebRTC-direct natively. Every swarm also gets the
//! circuit relay client, so it can be reached through the relay.

use std::time::Duration;

use libp2p::{identity::Keypair, Swarm};

use super::behaviour::{NodeBehaviour, ProtocolSettings};

/// Why the swarm could not be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the libp2p swarm: {0}")]
pub struct BuildError(String);

fn build_error(e: impl std::fmt::Display) -> BuildError {
    BuildError(e.to_string())
}

/// Connections without open streams stay up this long: the relay connection must survive quiet
/// periods between experiments.
const IDLE_CONNECTION_TIMEOUT: Duration = Duration::from_secs(300);

#[cfg(target_arch = "wasm32")]
mod imp {
    use libp2p::core::{upgrade::Version, Transport as _};
    use libp2p::{noise, webrtc_websys, websocket_websys, yamux, SwarmBuilder};

    use super::*;

    pub async fn build_swarm(
        key: Keypair,
        settings: ProtocolSettings,
    ) -> Result<Swarm<NodeBehaviour>, BuildError> {
        Ok(SwarmBuilder::with_existing_identity(key)
            .with_wasm_bindgen()
            .with_other_transport(|key| {
                webrtc_websys::Transport::new(webrtc_websys::Config::new(key))
            })
            .map_err(build_error)?
            .with_other_transport(|key| {
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(
                    websocket_websys::Transport::default()
                        .upgrade(Version::V1Lazy)
                        .authenticate(noise::Config::new(key)?)
                        .multiplex(yamux::Config::default()),
                )
            })
            .map_err(build_error)?
            .with_relay_client(noise::Config::new, yamux::Config::default)
            .map_err(build_error)?
            .with_behaviour(|key, relay| {
                NodeBehaviour::new(key, relay, settings).map_err(Into::into)
            })
            .map_err(build_error)?
            .with_swarm_config(|c| c.with_idle_connection_timeout(IDLE_CONNECTION_TIMEOUT))
            .build())
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use libp2p::{noise, tcp, yamux, SwarmBuilder};

    use super::*;

    pub async fn build_swarm(
        key: Keypair,
        settings: ProtocolSettings,
    ) -> Result<Swarm<NodeBehaviour>, BuildError> {
        Ok(SwarmBuilder::with_existing_identity(key)
            .with_tokio()
            .with_tcp(
                tcp::Config::default().nodelay(true),
                noise::Config::new,
                yamux::Config::default,
            )
            .map_err(build_error)?
            .with_dns()
            .map_err(build_error)?
            .with_websocket(noise::Config::new, yamux::Config::default)
            .await
            .map_err(build_error)?
            .with_relay_client(noise::Config::new, yamux::Config::default)
            .map_err(build_error)?
            .with_behaviour(|key, relay| {
                NodeBehaviour::new(key, relay, settings).map_err(Into::into)
            })
            .map_err(build_error)?
            .with_swarm_config(|c| c.with_idle_connection_timeout(IDLE_CONNECTION_TIMEOUT))
            .build())
    }
}

pub use imp::build_swarm;
