//! Plain counters, kept globally and per peer, cheap to sample.

use std::collections::BTreeMap;
use std::ops::AddAssign;

/// Everything the node counts. Client, server and transport each fill their own fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub msgs_sent: u64,
    pub msgs_received: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Blocks received that passed verification, duplicates included.
    pub blocks_received: u64,
    pub block_bytes_received: u64,
    /// Verified blocks that arrived after their want was satisfied.
    pub duplicate_blocks: u64,
    pub duplicate_bytes: u64,
    /// Blocks nobody asked for: dropped.
    pub unsolicited_blocks: u64,
    pub blocks_sent: u64,
    pub block_bytes_sent: u64,
    pub haves_sent: u64,
    pub dont_haves_sent: u64,
    /// Wants refused because the peer's queue was full.
    pub refused_wants: u64,
    /// Wants that a silent peer let time out.
    pub timeouts: u64,
    /// Want-blocks taken from this peer's queue and given to one that would answer sooner.
    pub rerouted_wants: u64,
}

impl AddAssign for Counters {
    fn add_assign(&mut self, o: Self) {
        self.msgs_sent += o.msgs_sent;
        self.msgs_received += o.msgs_received;
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
        self.blocks_received += o.blocks_received;
        self.block_bytes_received += o.block_bytes_received;
        self.duplicate_blocks += o.duplicate_blocks;
        self.duplicate_bytes += o.duplicate_bytes;
        self.unsolicited_blocks += o.unsolicited_blocks;
        self.blocks_sent += o.blocks_sent;
        self.block_bytes_sent += o.block_bytes_sent;
        self.haves_sent += o.haves_sent;
        self.dont_haves_sent += o.dont_haves_sent;
        self.refused_wants += o.refused_wants;
        self.timeouts += o.timeouts;
        self.rerouted_wants += o.rerouted_wants;
    }
}

/// Counters in total and per peer. Per-peer entries stay after a disconnect so totals add up.
#[derive(Debug, Clone)]
pub struct Stats<P> {
    pub total: Counters,
    pub per_peer: BTreeMap<P, Counters>,
}

impl<P> Default for Stats<P> {
    fn default() -> Self {
        Self { total: Counters::default(), per_peer: BTreeMap::new() }
    }
}

impl<P: Ord + Copy> Stats<P> {
    /// Applies `f` to the total and to `peer`'s counters.
    pub(crate) fn record(&mut self, peer: P, f: impl Fn(&mut Counters)) {
        f(&mut self.total);
        f(self.per_peer.entry(peer).or_default());
    }

    pub fn peer(&self, peer: P) -> Counters {
        self.per_peer.get(&peer).copied().unwrap_or_default()
    }
}
