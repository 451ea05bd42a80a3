//! Every limit, timer and the RNG seed of the client and the server.

use std::time::Duration;

/// How the client asks for blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientMode {
    /// Bitswap 1.2.0 sessions: want-have to every session peer, want-block to the peers most likely
    /// to have the block, HAVE/DONT_HAVE driven, with a learned model of where blocks are.
    Sessions,
    /// The pre-1.2 client: want-block to every session peer (every connected peer while the
    /// session has none), no HAVE or DONT_HAVE, rebroadcast on the idle tick. Pair it with
    /// protocol 1.1.0.
    Legacy,
}

/// Configuration of a Bitswap [`Node`](super::Node), its [`Client`](super::Client) and
/// [`Server`](super::Server). Defaults follow boxo where boxo has a number.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    pub mode: ClientMode,
    pub rng_seed: u64,
    /// Largest message sent or accepted (4 MiB).
    pub max_message_size: usize,
    /// Server: a response is closed once it holds at least this many bytes (16 KiB).
    pub target_message_size: usize,
    /// Server: bytes handed out for sending but not yet reported sent, per peer (1 MiB).
    pub max_outstanding_bytes_per_peer: usize,
    /// Server: wants kept per peer; more are refused and counted (1024).
    pub max_queued_wants_per_peer: usize,
    /// Server: a want-have for a block this small is answered with the block (1024 bytes).
    pub max_inline_block_size: usize,
    /// Client: wait this long after the last new want before sending.
    pub send_debounce: Duration,
    /// Client: never hold a want back longer than this.
    pub max_send_delay: Duration,
    /// Client: silent-peer timeout before any round trip to anyone was measured.
    pub default_dont_have_timeout: Duration,
    pub min_dont_have_timeout: Duration,
    /// Client: the longest silent-peer timeout, and the longest a want waits on a peer whose
    /// bytes keep arriving without completing an answer.
    pub max_dont_have_timeout: Duration,
    /// Client: the session rebroadcasts its wants after this long without a block, plus
    /// `idle_rtt_multiplier` times the mean round trip.
    pub idle_tick: Duration,
    pub idle_rtt_multiplier: u32,
    /// Client: wants made while no peer was connected go out as an idle tick sends them
    /// (want-have to every peer connected by then) once no further peer has connected for
    /// `gather_quiet` (30 ms), and at most `first_peer_gather` (100 ms) after the first peer
    /// connected; not at the idle tick. Peers dialled together get ready one after another (10
    /// to 35 ms apart in Chromium through a relay), and wants handed to the first alone cannot
    /// be spread over the others afterwards without duplicates where they share a path.
    pub first_peer_gather: Duration,
    pub gather_quiet: Duration,
    /// Client: a peer is dropped from a session after this many DONT_HAVEs in a row.
    pub max_consecutive_dont_have: u32,
    /// Client: expected duplicate blocks per want that extra optimistic want-blocks may risk.
    pub dup_budget: f64,
    /// Client: satisfied CIDs remembered to tell a duplicate from an unsolicited block.
    pub received_memory: usize,
    /// Node: wants handed to the client at once, over all sessions; the rest wait their turn.
    /// Servers keep at most 1024 wants per peer and ignore the rest, so a window under that
    /// keeps every want alive (512).
    pub max_active_wants: usize,
    /// Node: CIDs of closed sessions remembered, so that their blocks still on the way are not
    /// held against the peers that send them.
    pub cancelled_memory: usize,
    /// Node: blocks a peer may send that nobody asked for before it is reported as misbehaving
    /// (8). An honest peer sends none: a block whose data does not match the CID it was sent for
    /// arrives as one of these, since the wire addresses a block by its data.
    pub max_unsolicited_blocks: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            mode: ClientMode::Sessions,
            rng_seed: 0,
            max_message_size: super::MAX_MESSAGE_SIZE,
            target_message_size: 16 * 1024,
            max_outstanding_bytes_per_peer: 1 << 20,
            max_queued_wants_per_peer: 1024,
            max_inline_block_size: 1024,
            send_debounce: Duration::from_millis(1),
            max_send_delay: Duration::from_millis(20),
            default_dont_have_timeout: Duration::from_secs(5),
            min_dont_have_timeout: Duration::from_millis(50),
            max_dont_have_timeout: Duration::from_secs(20),
            idle_tick: Duration::from_millis(500),
            idle_rtt_multiplier: 3,
            first_peer_gather: Duration::from_millis(100),
            gather_quiet: Duration::from_millis(30),
            max_consecutive_dont_have: 16,
            dup_budget: 0.1,
            received_memory: 1 << 16,
            max_active_wants: 512,
            cancelled_memory: 1 << 14,
            max_unsolicited_blocks: 8,
        }
    }
}

impl Config {
    pub fn new(mode: ClientMode) -> Self {
        Self { mode, ..Self::default() }
    }

    pub fn with_rng_seed(mut self, seed: u64) -> Self {
        self.rng_seed = seed;
        self
    }

    pub fn with_max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    pub fn with_target_message_size(mut self, bytes: usize) -> Self {
        self.target_message_size = bytes;
        self
    }

    pub fn with_max_outstanding_bytes_per_peer(mut self, bytes: usize) -> Self {
        self.max_outstanding_bytes_per_peer = bytes;
        self
    }

    pub fn with_max_queued_wants_per_peer(mut self, wants: usize) -> Self {
        self.max_queued_wants_per_peer = wants;
        self
    }

    pub fn with_max_inline_block_size(mut self, bytes: usize) -> Self {
        self.max_inline_block_size = bytes;
        self
    }

    pub fn with_send_debounce(mut self, debounce: Duration, max_delay: Duration) -> Self {
        self.send_debounce = debounce;
        self.max_send_delay = max_delay;
        self
    }

    pub fn with_dont_have_timeout(
        mut self,
        default: Duration,
        min: Duration,
        max: Duration,
    ) -> Self {
        self.default_dont_have_timeout = default;
        self.min_dont_have_timeout = min;
        self.max_dont_have_timeout = max;
        self
    }

    pub fn with_idle_tick(mut self, tick: Duration, rtt_multiplier: u32) -> Self {
        self.idle_tick = tick;
        self.idle_rtt_multiplier = rtt_multiplier;
        self
    }

    pub fn with_first_peer_gather(mut self, longest: Duration, quiet: Duration) -> Self {
        self.first_peer_gather = longest;
        self.gather_quiet = quiet;
        self
    }

    pub fn with_max_consecutive_dont_have(mut self, n: u32) -> Self {
        self.max_consecutive_dont_have = n;
        self
    }

    pub fn with_max_active_wants(mut self, wants: usize) -> Self {
        self.max_active_wants = wants.max(1);
        self
    }

    pub fn with_max_unsolicited_blocks(mut self, blocks: u64) -> Self {
        self.max_unsolicited_blocks = blocks;
        self
    }

    pub fn with_dup_budget(mut self, fraction: f64) -> Self {
        self.dup_budget = fraction;
        self
    }
}
