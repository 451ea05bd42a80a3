//! Command-line flags. Every setting has a default that works on one machine.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use bytesize::ByteSize;
use cid::Cid;
use clap::{Args, Parser, Subcommand};
use libp2p::Multiaddr;
use syncscope_node::content::ImportConfig;

/// syncscope's relay: lets browsers reach each other and native peers, and serves the UI.
/// `syncscope-relay peer ...` runs a native syncscope peer instead.
#[derive(Debug, Parser)]
#[command(
    name = "syncscope-relay",
    version,
    args_conflicts_with_subcommands = true,
    args_override_self = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub listen: ListenArgs,
    #[command(flatten)]
    pub seeds: SeedArgs,
    #[command(flatten)]
    pub limits: RelayLimits,
    #[command(flatten)]
    pub connections: ConnectionLimits,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Where the identity key and WebRTC certificate are kept, so that the peer id and certhash
    /// survive restarts. Each seed peer keeps its own identity and blocks under `seeds/<n>/`.
    #[arg(long, default_value_os_t = default_data_dir())]
    pub data_dir: PathBuf,
    /// The built UI to serve (`trunk build --release` writes it).
    #[arg(long, default_value = "dist")]
    pub dist: PathBuf,
    /// The room pages join unless their link names another.
    #[arg(long, default_value = "default")]
    pub room: String,
    /// A STUN or TURN server URL that pages use for direct WebRTC with each other (repeat for
    /// more), e.g. `stun:stun.l.google.com:19302`. None by default: enough for browsers on one
    /// machine or one network; browsers behind different NATs need one.
    #[arg(long = "ice-server", value_name = "URL")]
    pub ice_servers: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// If a block database cannot be opened (damaged, or not a database), move it aside as
    /// `blocks.redb.corrupt` and start with an empty one instead of stopping.
    #[arg(long)]
    pub rebuild_store: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a native syncscope peer that joins a room through a relay, serves files over Bitswap
    /// and pull-sync, and can fetch: how the network grows past one machine.
    Peer(PeerArgs),
}

#[derive(Debug, Args)]
#[command(group(
    clap::ArgGroup::new("reach").required(true).multiple(true).args(["relay", "listen", "connect"])
))]
pub struct PeerArgs {
    /// The relay's TCP (or WebSocket) multiaddr with its peer id, as the relay prints it, e.g.
    /// `/ip4/203.0.113.7/tcp/9002/p2p/12D3Koo...`. Without it the peer is in no room and reaches
    /// only the peers of --connect and those that dial its --listen addresses.
    #[arg(long)]
    pub relay: Option<Multiaddr>,
    /// Listen for direct connections here, e.g. `/ip4/0.0.0.0/tcp/4001` or
    /// `/ip4/127.0.0.1/tcp/0/ws` (repeat for several). The addresses, with this peer's id, are
    /// printed at start: any libp2p peer (kubo, Helia, another syncscope peer) can dial them.
    #[arg(long, value_name = "MULTIADDR")]
    pub listen: Vec<Multiaddr>,
    /// Dial this peer and exchange blocks with it over Bitswap like with any room member (repeat
    /// for several): a kubo or Helia node, say, at `/ip4/127.0.0.1/tcp/4001/p2p/12D3Koo...`.
    #[arg(long, value_name = "MULTIADDR")]
    pub connect: Vec<Multiaddr>,
    /// The room to join (with --relay).
    #[arg(long, default_value = "default")]
    pub room: String,
    /// A file to serve (repeat for several).
    #[arg(long = "add", value_name = "FILE")]
    pub add: Vec<PathBuf>,
    /// How --add imports files into UnixFS. The default matches `ipfs add --cid-version 1
    /// --raw-leaves --chunker size-262144` and Helia's `addBytes` with CIDv1, raw leaves, 256 KiB
    /// chunks and 174 links per node, so the same bytes get the same CID there.
    #[arg(long, value_enum, default_value_t = UnixfsProfile::V1RawLeaves)]
    pub unixfs_profile: UnixfsProfile,
    /// Also serve the deterministic demo content of this size (e.g. 4MiB).
    #[arg(long)]
    pub demo_content: Option<ByteSize>,
    /// Seed of the demo content: the same seed gives the same bytes and CID everywhere.
    #[arg(long, default_value_t = 1)]
    pub content_seed: u64,
    /// Fetch this UnixFS CID over Bitswap from the room and the peers of --connect, report how it
    /// went, and keep serving.
    /// Blocks already in the store are not fetched again.
    #[arg(long)]
    pub fetch: Option<Cid>,
    /// Import a CARv1 file (kubo's `ipfs dag export`, Helia's `@helia/car`), verifying every
    /// block, and serve its roots (repeat for several). Blocks a root lacks are fetched.
    #[arg(long, value_name = "FILE")]
    pub import_car: Vec<PathBuf>,
    /// Write the DAG of this stored root as a CARv1 file, `<CID>.car` in --car-dir (repeat for
    /// several). With --fetch of the same root, once the fetch is done.
    #[arg(long, value_name = "CID")]
    pub export_car: Vec<Cid>,
    /// Where --export-car writes.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub car_dir: PathBuf,
    /// Where this peer keeps its identity key and its blocks (`blocks.redb`), so that its peer
    /// id, what it serves and a fetch in progress survive a restart. Without it, everything is in
    /// memory and gone at exit. Two peers cannot share one.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// UnixFS import settings, by the name the IPFS ecosystem knows them by (IPIP-499).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum UnixfsProfile {
    /// CIDv1, raw leaves, 256 KiB chunks, 174 links per node.
    V1RawLeaves,
    /// `unixfs-v0-2015`, kubo's plain `ipfs add`: CIDv0, dag-pb leaves, 256 KiB, 174 links.
    #[value(name = "unixfs-v0-2015")]
    V0_2015,
    /// `unixfs-v1-2025`: CIDv1, raw leaves, 1 MiB chunks, 1024 links per node.
    #[value(name = "unixfs-v1-2025")]
    V1_2025,
}

impl UnixfsProfile {
    pub fn import_config(self) -> ImportConfig {
        match self {
            Self::V1RawLeaves => ImportConfig::default(),
            Self::V0_2015 => ImportConfig::unixfs_v0_2015(),
            Self::V1_2025 => ImportConfig::unixfs_v1_2025(),
        }
    }
}

/// Native syncscope peers run inside the relay process, so that the demo has content to fetch.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Demo seed peers")]
pub struct SeedArgs {
    /// Native peers to run in this process; they join the default room and serve the demo content.
    #[arg(long, default_value_t = 0)]
    pub seed_peers: usize,
    /// Size of the demo content each seed peer serves (e.g. 4MiB).
    #[arg(long, default_value = "4MiB")]
    pub seed_content: ByteSize,
    /// Seed of the demo content: the same seed gives the same bytes, CID and share link.
    #[arg(long, default_value_t = 1)]
    pub content_seed: u64,
}

#[derive(Debug, Args)]
#[command(next_help_heading = "Listeners")]
pub struct ListenArgs {
    /// Address every listener binds to (0.0.0.0 for all interfaces).
    #[arg(long, default_value = "127.0.0.1")]
    pub listen_addr: IpAddr,
    /// HTTP port for the UI, /config.json, /metrics and /healthz.
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
    /// Addresses to announce instead of the listen addresses, e.g. `/ip4/203.0.113.7/tcp/9001/ws`
    /// behind NAT or on a public host (repeat for each; WebRTC-direct ones get the certhash added).
    #[arg(long = "announce", value_name = "MULTIADDR")]
    pub announce: Vec<Multiaddr>,
}

/// Circuit relay v2 limits, sized for moving data between browsers rather than just signalling.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Relay limits")]
pub struct RelayLimits {
    /// Reservations held at once, in total.
    #[arg(long, default_value_t = 1024)]
    pub max_reservations: usize,
    /// Reservations held at once by one peer.
    #[arg(long, default_value_t = 4)]
    pub max_reservations_per_peer: usize,
    /// Reservation requests one IP address may make per minute.
    #[arg(long, default_value_t = 60)]
    pub reservations_per_ip_per_minute: u32,
    /// How long a reservation lasts before the peer must renew it, in seconds.
    #[arg(long, default_value = "3600", value_parser = parse_secs)]
    pub reservation_duration: Duration,
    /// Circuits open at once, in total.
    #[arg(long, default_value_t = 256)]
    pub max_circuits: usize,
    /// Circuits open at once from one peer.
    #[arg(long, default_value_t = 16)]
    pub max_circuits_per_peer: usize,
    /// How long one circuit may stay open, in seconds (0 = no limit, the default). A circuit
    /// with any limit is a "limited connection" to js-libp2p, and Helia 7's Bitswap does not send
    /// over one: an IPFS peer could then not fetch through the relay.
    #[arg(long, default_value = "0", value_parser = parse_secs)]
    pub circuit_duration: Duration,
    /// Bytes one circuit may carry, both directions together (e.g. 512MiB, 8GiB; 0 = no limit,
    /// the default, for the same reason).
    #[arg(long, default_value = "0")]
    pub circuit_bytes: ByteSize,
}

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Connection limits")]
pub struct ConnectionLimits {
    /// Connections established at once, in total.
    #[arg(long, default_value_t = 10_000)]
    pub max_connections: u32,
    /// Connections (established or still handshaking) from one IP address.
    #[arg(long, default_value_t = 64)]
    pub max_connections_per_ip: usize,
    /// Incoming connections still handshaking, in total.
    #[arg(long, default_value_t = 512)]
    pub max_pending: u32,
    /// Seconds a connection with nothing open on it is kept.
    #[arg(long, default_value = "120", value_parser = parse_secs)]
    pub idle_timeout: Duration,
    /// Offences (refused reservations or circuits, forbidden publishes) that get a peer cut off.
    #[arg(long, default_value_t = 20)]
    pub offences_before_ban: u32,
    /// Seconds a cut-off peer stays banned.
    #[arg(long, default_value = "600", value_parser = parse_secs)]
    pub ban_duration: Duration,
}

fn parse_secs(s: &str) -> Result<Duration, String> {
    s.parse::<u64>()
        .map(Duration::from_secs)
        .map_err(|_| format!("{s:?} is not a number of seconds"))
}

fn default_data_dir() -> PathBuf {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("syncscope/relay")
}

/// Parses the command line; usage errors come back as one line that points at `--help`.
pub fn parse() -> Result<Cli, clap::Error> {
    Cli::try_parse()
}

/// The first line of a clap error, e.g. "unexpected argument '--foo' found".
pub fn one_line(err: &clap::Error) -> String {
    let rendered = err.render().to_string();
    let first = rendered.lines().next().unwrap_or_default();
    format!("{} (see --help)", first.trim_start_matches("error: "))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn flags_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn circuits_have_no_limit_by_default() {
        let cli = Cli::try_parse_from(["syncscope-relay"]).unwrap();
        assert_eq!(cli.limits.circuit_bytes.as_u64(), 0);
        assert_eq!(cli.limits.circuit_duration, Duration::ZERO);
    }

    #[test]
    fn a_flag_given_twice_takes_the_last_value() {
        let cli =
            Cli::try_parse_from(["syncscope-relay", "--seed-peers", "3", "--seed-peers", "0"])
                .unwrap();
        assert_eq!(cli.seeds.seed_peers, 0);
    }

    #[test]
    fn bad_values_give_one_line() {
        let err = Cli::try_parse_from(["syncscope-relay", "--circuit-bytes", "lots"]).unwrap_err();
        let line = one_line(&err);
        assert!(!line.contains('\n') && line.contains("--circuit-bytes"), "{line}");
    }
}
