//! The relay under test: the real `syncscope-relay` binary, started on free ports.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{bail, Context, Result};
use libp2p::{multiaddr::Protocol, Multiaddr};

pub struct RelayProcess {
    child: Child,
    addrs: Vec<Multiaddr>,
}

impl RelayProcess {
    pub fn start(bin: &Path, work: &Path, extra: &[&str]) -> Result<Self> {
        let dist = work.join("dist");
        std::fs::create_dir_all(&dist)?;
        std::fs::write(dist.join("index.html"), "<!doctype html><title>bench</title>")?;
        let mut child = Command::new(bin)
            .arg("--dist")
            .arg(&dist)
            .arg("--data-dir")
            .arg(work.join("data"))
            .args(["--http-port", "0", "--ws-port", "0", "--webrtc-port", "0", "--tcp-port", "0"])
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| {
                format!(
                    "cannot start {} (build it with `cargo build --release -p syncscope-relay`)",
                    bin.display()
                )
            })?;
        let mut addrs = Vec::new();
        let stdout = child.stdout.take().context("relay stdout")?;
        for line in BufReader::new(stdout).lines() {
            let line = line?;
            if let Some(addr) = line.strip_prefix("libp2p: ") {
                addrs.push(addr.parse()?);
            }
            if line.starts_with("syncscope relay ready") {
                if addrs.is_empty() {
                    bail!("the relay printed no libp2p address");
                }
                return Ok(Self { child, addrs });
            }
        }
        bail!("the relay exited before it was ready")
    }

    pub fn tcp_addr(&self) -> Multiaddr {
        self.addrs
            .iter()
            .find(|a| !a.iter().any(|p| matches!(p, Protocol::Ws(_) | Protocol::Udp(_))))
            .cloned()
            .unwrap_or_else(|| self.addrs[0].clone())
    }

    /// Resident memory of the relay process, from /proc.
    pub fn rss_bytes(&self) -> Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        let kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .context("no VmRSS in /proc/<pid>/status")?;
        Ok(kb * 1024)
    }
}

impl Drop for RelayProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The relay binary built beside this one (`target/release/syncscope-relay`).
pub fn default_relay_bin() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("syncscope-relay")))
        .unwrap_or_else(|| PathBuf::from("syncscope-relay"))
}
