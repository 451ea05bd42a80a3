//! The relay's HTTP side: the built UI, `/config.json` for browsers, `/metrics` and `/healthz`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use axum::{extract::State, http::header, response::IntoResponse, routing::get, Json, Router};
use prometheus_client::registry::Registry;
use tokio::{net::TcpListener, sync::watch};
use tower_http::services::ServeDir;

use crate::metrics::{self, RelayMetrics};
use syncscope_node::{PageConfig, RelayTransport};

use crate::network::Snapshot;

#[derive(Clone)]
struct AppState {
    snapshot: watch::Receiver<Snapshot>,
    room: Arc<str>,
    registry: Arc<Registry>,
    metrics: Arc<RelayMetrics>,
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

pub fn router(
    dist: &Path,
    room: &str,
    snapshot: watch::Receiver<Snapshot>,
    registry: Arc<Registry>,
    metrics: Arc<RelayMetrics>,
) -> Router {
    let state = AppState { snapshot, room: room.into(), registry, metrics };
    Router::new()
        .route("/config.json", get(config_json))
        .route("/metrics", get(prometheus))
        .route("/healthz", get(|| async { "ok" }))
        .fallback_service(ServeDir::new(dist))
        .with_state(state)
}

/// `/config.json`: what a browser needs to join.
async fn config_json(State(state): State<AppState>) -> Json<PageConfig> {
    let snap = state.snapshot.borrow();
    let mut addrs: BTreeMap<RelayTransport, Vec<String>> = BTreeMap::new();
    for (kind, addr) in &snap.addrs {
        addrs.entry(*kind).or_default().push(addr.to_string());
    }
    Json(PageConfig {
        peer_id: snap.peer_id.map(|p| p.to_string()).unwrap_or_default(),
        addrs,
        room: state.room.to_string(),
    })
}

async fn prometheus(State(state): State<AppState>) -> impl IntoResponse {
    state.metrics.sync_relayed_bytes();
    (
        [(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")],
        metrics::encode(&state.registry),
    )
}
