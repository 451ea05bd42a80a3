//! Command-line flags. Every setting has a default that works on one machine.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Parser;

/// syncscope's relay: lets browsers reach each other and native peers, and serves the UI.
#[derive(Debug, Parser)]
#[command(name = "syncscope-relay", version)]
pub struct Args {
    /// Address every listener binds to.
    #[arg(long, default_value = "127.0.0.1")]
    pub listen_addr: IpAddr,
    /// HTTP port for the UI, /config.json and /healthz.
    #[arg(long, default_value_t = 8080)]
    pub http_port: u16,
    /// TCP port of the libp2p WebSocket listener (0 picks a free port).
    #[arg(long, default_value_t = 9001)]
    pub ws_port: u16,
    /// UDP port of the libp2p WebRTC-direct listener (0 picks a free port).
    #[arg(long, default_value_t = 9001)]
    pub webrtc_port: u16,
    /// TCP port of the plain libp2p TCP listener, for native peers (0 picks a free port).
    #[arg(long, default_value_t = 9002)]
    pub tcp_port: u16,
    /// Where the identity key and WebRTC certificate are kept, so that the peer id and certhash
    /// survive restarts.
    #[arg(long, default_value_os_t = default_data_dir())]
    pub data_dir: PathBuf,
    /// The built UI to serve (`trunk build --release` writes it).
    #[arg(long, default_value = "dist")]
    pub dist: PathBuf,
}

fn default_data_dir() -> PathBuf {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("syncscope/relay")
}

/// Parses the command line; usage errors come back as one line that points at `--help`.
pub fn parse() -> Result<Args, clap::Error> {
    Args::try_parse()
}

/// The first line of a clap error, e.g. "unexpected argument '--foo' found".
pub fn one_line(err: &clap::Error) -> String {
    let rendered = err.render().to_string();
    let first = rendered.lines().next().unwrap_or_default();
    format!("{} (see --help)", first.trim_start_matches("error: "))
}
