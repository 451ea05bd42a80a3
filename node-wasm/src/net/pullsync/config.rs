//! Settings of pull-sync over libp2p.

use syncscope_proto::pullsync;

/// Settings of the pull-sync glue: the cores' [`pullsync::Config`] plus what the glue decides.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    pub protocol: pullsync::Config,
    /// Chunks whose proximity to this node is below the radius are neither wanted nor synced.
    pub storage_radius: u8,
    /// Most bytes a connection takes from a stream in one read, and the buffer each connection
    /// keeps for it. Reading whatever yamux holds in one go (up to a window) means fewer hops to
    /// the behaviour and window updates sooner: 64 KiB reads ran at under 40,000 chunks/s where
    /// 1 MiB reads ran at over 70,000 on the throughput benchmark.
    pub read_buffer: usize,
    /// Inbound streams a connection reads at once; more are refused. A backstop for the
    /// transport: the core's own per-peer limit
    /// ([`pullsync::Config::max_inbound_streams`]) refuses excess streams first, and says so.
    pub max_inbound_streams: usize,
}

impl Default for Config {
    fn default() -> Self {
        let protocol = pullsync::Config::default();
        Config {
            max_inbound_streams: 2 * protocol.max_inbound_streams,
            protocol,
            storage_radius: 0,
            read_buffer: 1024 * 1024,
        }
    }
}

impl Config {
    pub fn with_protocol(mut self, protocol: pullsync::Config) -> Self {
        self.max_inbound_streams = self.max_inbound_streams.max(2 * protocol.max_inbound_streams);
        self.protocol = protocol;
        self
    }

    pub fn with_storage_radius(mut self, radius: u8) -> Self {
        self.storage_radius = radius;
        self
    }

    pub fn with_read_buffer(mut self, bytes: usize) -> Self {
        self.read_buffer = bytes.max(1);
        self
    }
}
