//! Settings of Bitswap over libp2p.

use std::time::Duration;

use syncscope_proto::bitswap::{self, ProtocolVersion};

/// Settings of the Bitswap glue: the core's [`bitswap::Config`] plus what the glue decides.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    pub bitswap: bitswap::Config,
    /// Versions offered on outbound streams (newest first) and accepted on inbound ones.
    pub versions: Vec<ProtocolVersion>,
    /// Inbound streams read at once per connection; more are refused.
    pub max_inbound_streams: usize,
    /// The outbound stream is closed after this long with nothing to write, and the next message
    /// opens a new one. 5 s: half of the 10 s after which Helia resets an inbound Bitswap stream
    /// that carries no message, so that a message never crosses that reset.
    pub idle_stream_close: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            bitswap: bitswap::Config::default(),
            versions: ProtocolVersion::ALL.to_vec(),
            max_inbound_streams: 32,
            idle_stream_close: Duration::from_secs(5),
        }
    }
}

impl Config {
    pub fn new(bitswap: bitswap::Config) -> Self {
        Self { bitswap, ..Self::default() }
    }

    /// The pre-1.2 client of [`bitswap::ClientMode::Legacy`] speaking at most 1.1.0, as the
    /// benchmark's legacy rows do.
    pub fn legacy() -> Self {
        Self::new(bitswap::Config::new(bitswap::ClientMode::Legacy))
            .with_versions(vec![ProtocolVersion::V1_1_0])
    }

    /// Versions in order of preference; they are sorted newest first.
    pub fn with_versions(mut self, mut versions: Vec<ProtocolVersion>) -> Self {
        versions.sort_unstable_by(|a, b| b.cmp(a));
        versions.dedup();
        self.versions = versions;
        self
    }

    pub fn with_max_inbound_streams(mut self, streams: usize) -> Self {
        self.max_inbound_streams = streams;
        self
    }

    pub fn with_idle_stream_close(mut self, idle: Duration) -> Self {
        self.idle_stream_close = idle;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_offered_newest_first_once_each() {
        use ProtocolVersion::*;
        let config = Config::default().with_versions(vec![V1_0_0, V1_2_0, V1_0_0, Legacy]);
        assert_eq!(config.versions, [V1_2_0, V1_0_0, Legacy]);
        assert_eq!(Config::legacy().versions, [V1_1_0]);
        assert_eq!(Config::default().versions, ProtocolVersion::ALL);
    }
}
