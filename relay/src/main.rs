//! `syncscope-relay`: the native relay that turns browser tabs into a network.

mod behaviour;
mod cli;
mod http;
mod identity;
mod ip_limits;
mod metrics;
mod native_peer;
mod network;
mod offences;
mod peer;
mod peer_storage;
mod rooms;
mod seeds;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use prometheus_client::registry::Registry;
use syncscope_node::net::link_probe;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = match cli::parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {}", cli::one_line(&e));
            return ExitCode::from(2);
        }
    };
    init_logging();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The WebRTC stack logs every handshake detail at info; keep the relay's own story readable.
const DEFAULT_LOG_FILTER: &str =
    "info,webrtc=warn,webrtc_ice=warn,webrtc_sctp=warn,webrtc_mdns=warn,dtls=error,libp2p_webrtc=warn,libp2p_webrtc_utils=warn,libp2p_gossipsub=warn";

fn init_logging() {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}

async fn run(cli: cli::Cli) -> Result<()> {
    match cli.command {
        Some(cli::Command::Peer(args)) => peer::run(args, shutdown_signal()?).await,
        None => run_relay(cli).await,
    }
}

async fn run_relay(cli: cli::Cli) -> Result<()> {
    http::check_dist(&cli.dist)?;
    syncscope_proto::rooms::topic_of(&cli.room)?;
    let http_listener =
        http::bind(SocketAddr::new(cli.listen.listen_addr, cli.listen.http_port)).await?;
    let identity = identity::load_or_create(&cli.data_dir)?;
    let mut registry = Registry::default();
    let relay_metrics = Arc::new(metrics::RelayMetrics::register(&mut registry));
    let seed_metrics = Arc::new(metrics::SeedMetrics::register(&mut registry));
    let swarm =
        behaviour::build_swarm(identity.keypair, identity.certificate, &cli, &mut registry).await?;
    if let Ok(probes) = swarm.behaviour().link_probe.new_control().accept(link_probe::PROTOCOL) {
        tokio::spawn(link_probe::serve(probes));
    }
    let mut network = network::Network::new(swarm, &cli, relay_metrics.clone())?;
    network.wait_listening().await?;
    let snapshot = network.subscribe();
    for (_, addr) in &snapshot.borrow().addrs {
        println!("libp2p: {addr}");
    }
    let shutdown = shutdown_signal()?;
    let http_addr = http_listener.local_addr()?;
    let relay_tcp = network.tcp_addr();
    let network_task = tokio::spawn(network.run());
    if let Some(demo) =
        seeds::start(&cli.seeds, &cli.store, &cli.data_dir, &relay_tcp, &cli.room, seed_metrics)
            .await?
    {
        println!(
            "demo content: {} as UnixFS {} ({} blocks) and Swarm root {} ({} chunks), served by {} seed peers",
            bytesize::ByteSize(demo.size), demo.cid, demo.blocks, demo.swarm_root, demo.chunks, cli.seeds.seed_peers
        );
        // WebSocket is the faster path through the relay: the native libp2p-webrtc
        // (0.10.0-alpha) moves bulk data at a fraction of its speed.
        println!(
            "share link: http://{http_addr}/?room={}&fetch={}&transport=ws",
            cli.room, demo.cid
        );
    }
    println!("syncscope relay ready: http://{http_addr}/");
    let app = http::router(
        &cli.dist,
        &cli.room,
        &cli.ice_servers,
        snapshot,
        Arc::new(registry),
        relay_metrics,
    );
    let server = axum::serve(http_listener, app).with_graceful_shutdown(shutdown);
    tokio::select! {
        result = server => result?,
        result = network_task => result??,
    }
    tracing::info!("shut down");
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM. The handlers are installed when this is called, not when it
/// is first polled, so a signal that arrives right after start-up is not lost.
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {},
            _ = terminate.recv() => {},
        }
        tracing::info!("shutting down");
    })
}
