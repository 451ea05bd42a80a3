//! The relay's libp2p behaviours and the swarm that runs them.

use std::num::NonZeroU32;
use std::time::Duration;

use anyhow::Result;
use libp2p::{
    allow_block_list::{self, BlockedPeers},
    connection_limits, identify,
    identity::Keypair,
    noise, ping, relay,
    swarm::NetworkBehaviour,
    tcp, yamux, Swarm, SwarmBuilder,
};
use libp2p_webrtc::tokio::Certificate;
use prometheus_client::registry::Registry;
use syncscope_node::net::{rooms_behaviour, RoomsBehaviour};
use syncscope_node::node::IDENTIFY_PROTOCOL;
use syncscope_node::PeerKind;

use crate::cli::{Cli, ConnectionLimits, RelayLimits};
use crate::ip_limits::IpLimits;

#[derive(NetworkBehaviour)]
pub struct RelayBehaviour {
    pub blocked: allow_block_list::Behaviour<BlockedPeers>,
    pub limits: connection_limits::Behaviour,
    pub ip_limits: IpLimits,
    pub relay: relay::Behaviour,
    pub identify: identify::Behaviour,
    pub ping: ping::Behaviour,
    pub rooms: RoomsBehaviour,
    /// Serves the link probe, so that a browser can measure its link to the relay alone.
    pub link_probe: libp2p_stream::Behaviour,
}

impl RelayBehaviour {
    fn new(key: &Keypair, cli: &Cli) -> Result<Self> {
        Ok(Self {
            blocked: Default::default(),
            limits: connection_limits::Behaviour::new(connection_limits(&cli.connections)),
            ip_limits: IpLimits::new(cli.connections.max_connections_per_ip),
            relay: relay::Behaviour::new(key.public().to_peer_id(), relay_config(&cli.limits)),
            identify: identify::Behaviour::new(
                identify::Config::new(IDENTIFY_PROTOCOL.into(), key.public()).with_agent_version(
                    PeerKind::Relay.agent(env!("CARGO_PKG_VERSION")).unwrap_or_default(),
                ),
            ),
            // Peers ping the relay as often as they like; the relay itself only checks liveness.
            ping: ping::Behaviour::new(ping::Config::new()),
            rooms: rooms_behaviour(key)?,
            link_probe: libp2p_stream::Behaviour::new(),
        })
    }
}

fn connection_limits(flags: &ConnectionLimits) -> connection_limits::ConnectionLimits {
    connection_limits::ConnectionLimits::default()
        .with_max_established(Some(flags.max_connections))
        .with_max_pending_incoming(Some(flags.max_pending))
}

fn relay_config(flags: &RelayLimits) -> relay::Config {
    let per_ip = NonZeroU32::new(flags.reservations_per_ip_per_minute).unwrap_or(NonZeroU32::MAX);
    relay::Config {
        max_reservations: flags.max_reservations,
        max_reservations_per_peer: flags.max_reservations_per_peer,
        reservation_duration: flags.reservation_duration,
        reservation_rate_limiters: Vec::new(),
        max_circuits: flags.max_circuits,
        max_circuits_per_peer: flags.max_circuits_per_peer,
        max_circuit_duration: flags.circuit_duration,
        max_circuit_bytes: flags.circuit_bytes.as_u64(),
        circuit_src_rate_limiters: Vec::new(),
    }
    .reservation_rate_per_ip(per_ip, Duration::from_secs(60))
}

pub async fn build_swarm(
    keypair: Keypair,
    certificate: Certificate,
    cli: &Cli,
    registry: &mut Registry,
) -> Result<Swarm<RelayBehaviour>> {
    let idle = cli.connections.idle_timeout;
    Ok(SwarmBuilder::with_existing_identity(keypair)
        .with_tokio()
        .with_tcp(tcp::Config::default().nodelay(true), noise::Config::new, yamux::Config::default)?
        .with_other_transport(|key| libp2p_webrtc::tokio::Transport::new(key.clone(), certificate))?
        .with_dns()?
        .with_websocket(noise::Config::new, yamux::Config::default)
        .await?
        .with_bandwidth_metrics(registry)
        .with_behaviour(|key| RelayBehaviour::new(key, cli).map_err(Into::into))?
        .with_swarm_config(|c| c.with_idle_connection_timeout(idle))
        .build())
}
