//! Starts the real relay binary on free ports for a test, and native nodes that join through it.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use libp2p::{Multiaddr, PeerId};
use syncscope_node::node;
use syncscope_node::node::{NodeConfig, NodeEvent, NodeHandle, RelayAddress};

/// A relay process, killed when dropped.
pub struct Relay {
    child: Child,
    pub data_dir: PathBuf,
    pub http: String,
    pub addrs: Vec<Multiaddr>,
    pub peer_id: PeerId,
    pub stderr: mpsc::Receiver<String>,
    /// What the relay printed on stdout up to its ready line.
    pub printed: Vec<String>,
}

pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "syncscope-{name}-{}-{:?}",
        std::process::id(),
        Instant::now()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A `dist/` with just an index page, enough for the relay to start.
pub fn fake_dist() -> PathBuf {
    let dist = temp_dir("dist");
    std::fs::write(dist.join("index.html"), "<!doctype html><title>test</title>").unwrap();
    dist
}

pub fn relay_command(data_dir: &std::path::Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_syncscope-relay"));
    cmd.arg("--dist").arg(fake_dist()).arg("--data-dir").arg(data_dir);
    cmd.args(["--http-port", "0", "--ws-port", "0", "--webrtc-port", "0", "--tcp-port", "0"]);
    cmd.args(extra);
    cmd
}

impl Relay {
    pub fn start(extra: &[&str]) -> Self {
        Self::start_in(temp_dir("relay-data"), extra)
    }

    pub fn start_in(data_dir: PathBuf, extra: &[&str]) -> Self {
        let mut child = relay_command(&data_dir, extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("relay binary starts");
        let (err_tx, stderr) = mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = err_tx.send(line);
            }
        });
        let mut addrs = Vec::new();
        let mut http = None;
        let mut printed = Vec::new();
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let line = line.unwrap();
            printed.push(line.clone());
            if let Some(addr) = line.strip_prefix("libp2p: ") {
                addrs.push(addr.parse().unwrap());
            }
            if let Some(url) = line.strip_prefix("syncscope relay ready: ") {
                http = Some(url.to_string());
                break;
            }
        }
        let http = http.unwrap_or_else(|| {
            panic!("relay did not start: {:?}", stderr.try_iter().collect::<Vec<_>>())
        });
        let peer_id = peer_of(&addrs[0]);
        Self { child, data_dir, http, addrs, peer_id, stderr, printed }
    }

    /// The relay's address for one transport: "tcp", "ws" or "webrtc-direct".
    pub fn addr(&self, transport: &str) -> Multiaddr {
        self.addrs
            .iter()
            .find(|a| {
                let s = a.to_string();
                match transport {
                    "ws" => s.contains("/ws/"),
                    "webrtc-direct" => s.contains("/webrtc-direct/"),
                    _ => s.contains("/tcp/") && !s.contains("/ws/"),
                }
            })
            .cloned()
            .unwrap()
    }

    pub fn relay_address(&self, transport: &str) -> RelayAddress {
        RelayAddress { peer_id: self.peer_id, addrs: vec![self.addr(transport)] }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn peer_of(addr: &Multiaddr) -> PeerId {
    addr.iter()
        .find_map(|p| match p {
            libp2p::multiaddr::Protocol::P2p(id) => Some(id),
            _ => None,
        })
        .unwrap()
}

/// Starts a native node through the relay and waits for its reservation.
pub async fn node(relay: &Relay, transport: &str) -> NodeHandle {
    let mut handle = node::start(NodeConfig::new(relay.relay_address(transport))).await.unwrap();
    wait_for(&mut handle, Duration::from_secs(10), |e| matches!(e, NodeEvent::Reserved { .. }))
        .await;
    handle
}

/// Waits for the first event that `want` accepts, failing after `timeout`.
pub async fn wait_for(
    handle: &mut NodeHandle,
    timeout: Duration,
    mut want: impl FnMut(&NodeEvent) -> bool,
) -> NodeEvent {
    tokio::time::timeout(timeout, async {
        loop {
            let event = handle.events.next().await.expect("node stopped");
            if want(&event) {
                return event;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no matching event within {timeout:?}"))
}

/// A plain HTTP/1.0 GET of `path` on the relay's HTTP port; returns the body.
pub fn http_get(relay: &Relay, path: &str) -> String {
    use std::io::{Read, Write};
    let host = relay.http.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_string()
}

/// The value of the first metric line starting with `name` (labels included in `name`).
pub fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines().find(|l| l.starts_with(name)).and_then(|l| l.rsplit(' ').next()?.parse().ok())
}
