//! The relay's HTTP side: the built UI, `/config.json` for browsers, and `/healthz`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;

use anyhow::{bail, Context, Result};
use axum::{extract::State, routing::get, Json, Router};
use tokio::{net::TcpListener, sync::watch};
use tower_http::services::ServeDir;

use crate::network::{Listener, Snapshot};

/// What a browser needs to join: who the relay is and how to dial it.
#[derive(Debug, serde::Serialize)]
pub struct BrowserConfig {
    pub peer_id: String,
    /// Dialable multiaddrs per transport, e.g. `"ws": ["/ip4/127.0.0.1/tcp/9001/ws/p2p/12D3.."]`.
    pub addrs: BTreeMap<Listener, Vec<String>>,
}

impl From<&Snapshot> for BrowserConfig {
    fn from(snap: &Snapshot) -> Self {
        let mut addrs: BTreeMap<Listener, Vec<String>> = BTreeMap::new();
        for (kind, addr) in &snap.addrs {
            addrs.entry(*kind).or_default().push(addr.to_string());
        }
        Self { peer_id: snap.peer_id.map(|p| p.to_string()).unwrap_or_default(), addrs }
    }
}

/// Fails early, with what to do, when there is no built UI to serve.
pub fn check_dist(dist: &Path) -> Result<()> {
    if !dist.join("index.html").is_file() {
        bail!(
            "no built UI at {}: run `cargo xtask demo` (it builds the UI), or `trunk build --release` and pass --dist",
            dist.join("index.html").display()
        );
    }
    Ok(())
}

pub async fn bind(addr: SocketAddr) -> Result<TcpListener> {
    TcpListener::bind(addr).await.with_context(|| {
        format!(
            "cannot listen for HTTP on {addr}: is the port in use? pick another with --http-port"
        )
    })
}

pub fn router(dist: &Path, snapshot: watch::Receiver<Snapshot>) -> Router {
    Router::new()
        .route("/config.json", get(config_json))
        .route("/healthz", get(|| async { "ok" }))
        .fallback_service(ServeDir::new(dist))
        .with_state(snapshot)
}

async fn config_json(State(snapshot): State<watch::Receiver<Snapshot>>) -> Json<BrowserConfig> {
    Json(BrowserConfig::from(&*snapshot.borrow()))
}
