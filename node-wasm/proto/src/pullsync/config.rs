//! Limits and settings of a node's pull-sync, shared by its server and its puller.

use std::time::Duration;

/// How a server writes the chunks a puller wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeliveryMode {
    /// One `Delivery` per message, as bee does.
    Streamed,
    /// One `DeliveryBatch` of up to 25 deliveries per message (bee PR 5540's experiment).
    Batched,
}

/// A per-peer server rate limit: a token bucket refilled at `chunks_per_second` holding at most
/// `burst` chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    pub chunks_per_second: u32,
    pub burst: u32,
}

impl RateLimit {
    /// bee's server limiter: 250 chunks/s per peer with a burst of one full page.
    pub const BEE: RateLimit = RateLimit { chunks_per_second: 250, burst: 250 };
}

#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    /// Most chunks in one offer (bee: 250).
    pub max_page: usize,
    /// A page that had to wait for new chunks closes once none arrived for this long (bee: 1 s).
    pub page_quiet_period: Duration,
    /// Server rate limit per peer; off by default.
    pub rate_limit: Option<RateLimit>,
    /// What this node's puller asks for: streamed or batched delivery.
    pub delivery: DeliveryMode,
    /// A puller stream that makes no progress for this long while it expects data is reset.
    pub stream_timeout: Duration,
    /// Wait before retrying a bin after a failed stream.
    pub retry_delay: Duration,
    /// Most inbound streams the server keeps open per peer; bee pullers use up to two per bin.
    pub max_inbound_streams: usize,
    /// Bytes handed to the glue but not yet taken by sockets, beyond which the server encodes no
    /// more deliveries ([`Node::set_backlog`](super::Node::set_backlog)).
    pub max_backlog: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_page: 250,
            page_quiet_period: Duration::from_secs(1),
            rate_limit: None,
            delivery: DeliveryMode::Streamed,
            stream_timeout: Duration::from_secs(30),
            retry_delay: Duration::from_secs(1),
            max_inbound_streams: 2 * 32 + 2,
            max_backlog: 4 * 1024 * 1024,
        }
    }
}

impl Config {
    pub fn with_max_page(mut self, max_page: usize) -> Self {
        self.max_page = max_page.max(1);
        self
    }

    pub fn with_page_quiet_period(mut self, period: Duration) -> Self {
        self.page_quiet_period = period;
        self
    }

    pub fn with_rate_limit(mut self, limit: Option<RateLimit>) -> Self {
        self.rate_limit = limit;
        self
    }

    pub fn with_delivery(mut self, delivery: DeliveryMode) -> Self {
        self.delivery = delivery;
        self
    }

    pub fn with_stream_timeout(mut self, timeout: Duration) -> Self {
        self.stream_timeout = timeout;
        self
    }

    pub fn with_retry_delay(mut self, delay: Duration) -> Self {
        self.retry_delay = delay;
        self
    }

    pub fn with_max_backlog(mut self, bytes: usize) -> Self {
        self.max_backlog = bytes.max(1);
        self
    }

    pub fn with_max_inbound_streams(mut self, max: usize) -> Self {
        self.max_inbound_streams = max;
        self
    }
}
