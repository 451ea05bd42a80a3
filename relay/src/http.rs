//! The relay's HTTP side: the built UI, `/config.json` for browsers, `/metrics` and `/healthz`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::{routing::get, Json, Router};
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
    ice_servers: Arc<[String]>,
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
    ice_servers: &[String],
    snapshot: watch::Receiver<Snapshot>,
    registry: Arc<Registry>,
    metrics: Arc<RelayMetrics>,
) -> Router {
    let (room, ice_servers) = (room.into(), ice_servers.into());
    let state = AppState { snapshot, room, ice_servers, registry, metrics };
    Router::new()
        .route("/config.json", get(config_json))
        .route("/metrics", get(prometheus))
        .route("/healthz", get(|| async { "ok" }))
        .fallback_service(static_files(dist))
        .with_state(state)
}

/// The built UI. Files the build precompressed (`.br`, `.gz` beside them) are served encoded to
/// browsers that accept it. Trunk puts a content hash in every asset's name, so those are cached
/// for good; `index.html`, which names them, is revalidated every time.
fn static_files(dist: &Path) -> Router {
    let files = ServeDir::new(dist).precompressed_br().precompressed_gzip();
    Router::new().fallback_service(files).layer(middleware::from_fn(cache_control))
}

async fn cache_control(request: Request, next: Next) -> Response {
    let immutable = is_hashed(request.uri().path());
    let mut response = next.run(request).await;
    if response.status().is_success() {
        let policy = if immutable { "public, max-age=31536000, immutable" } else { "no-cache" };
        response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static(policy));
    }
    response
}

/// Whether a file name carries Trunk's content hash: `name-<hex>.ext`, or `name-<hex>_bg.wasm`.
fn is_hashed(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or_default();
    let stem = name.split('.').next().unwrap_or_default();
    let stem = stem.strip_suffix("_bg").unwrap_or(stem);
    stem.rsplit_once('-')
        .is_some_and(|(_, hash)| hash.len() >= 12 && hash.chars().all(|c| c.is_ascii_hexdigit()))
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
        ice_servers: state.ice_servers.to_vec(),
    })
}

async fn prometheus(State(state): State<AppState>) -> impl IntoResponse {
    state.metrics.sync_relayed_bytes();
    (
        [(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")],
        metrics::encode(&state.registry),
    )
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use tower::ServiceExt;

    use super::*;

    #[test]
    fn trunks_hashed_names_are_told_from_the_rest() {
        for hashed in [
            "/syncscope-ui-27a8e93ef3502e1_bg.wasm",
            "/syncscope-ui-ea4f8aae213bc12c.js",
            "/style-7f2cbe78c088cd4d.css",
        ] {
            assert!(is_hashed(hashed), "{hashed}");
        }
        for plain in ["/", "/index.html", "/config.json", "/my-app.js", "/a-deadbeef.js"] {
            assert!(!is_hashed(plain), "{plain}");
        }
    }

    async fn get(dist: &Path, path: &str, accept: &str) -> Response {
        let request =
            Request::get(path).header(header::ACCEPT_ENCODING, accept).body(Body::empty()).unwrap();
        static_files(dist).oneshot(request).await.unwrap()
    }

    fn header_of(response: &Response, name: header::HeaderName) -> Option<&str> {
        response.headers().get(name).and_then(|v| v.to_str().ok())
    }

    #[tokio::test]
    async fn precompressed_files_are_served_encoded_with_cache_headers() {
        let dist = std::env::temp_dir().join(format!("relay-dist-{}", std::process::id()));
        std::fs::create_dir_all(&dist).unwrap();
        let wasm = "/app-0123456789abcdef_bg.wasm";
        std::fs::write(dist.join("index.html"), "<html></html>").unwrap();
        std::fs::write(dist.join(&wasm[1..]), b"raw wasm").unwrap();
        std::fs::write(dist.join(format!("{}.br", &wasm[1..])), b"brotli").unwrap();
        std::fs::write(dist.join(format!("{}.gz", &wasm[1..])), b"gzip").unwrap();

        let br = get(&dist, wasm, "gzip, deflate, br").await;
        assert_eq!(header_of(&br, header::CONTENT_ENCODING), Some("br"));
        assert_eq!(
            header_of(&br, header::CACHE_CONTROL),
            Some("public, max-age=31536000, immutable")
        );
        let gz = get(&dist, wasm, "gzip").await;
        assert_eq!(header_of(&gz, header::CONTENT_ENCODING), Some("gzip"));
        let plain = get(&dist, wasm, "identity").await;
        assert_eq!(header_of(&plain, header::CONTENT_ENCODING), None);
        let body = axum::body::to_bytes(plain.into_body(), 1024).await.unwrap();
        assert_eq!(&body[..], b"raw wasm");

        let index = get(&dist, "/", "br").await;
        assert_eq!(header_of(&index, header::CACHE_CONTROL), Some("no-cache"));
        let missing = get(&dist, "/nothing-0123456789abcdef.js", "br").await;
        assert_eq!(missing.status(), axum::http::StatusCode::NOT_FOUND);
        assert_eq!(header_of(&missing, header::CACHE_CONTROL), None);
        std::fs::remove_dir_all(&dist).unwrap();
    }
}
