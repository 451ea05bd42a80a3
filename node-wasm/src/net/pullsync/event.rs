//! What pull-sync over libp2p reports to the node.

use libp2p::PeerId;

use crate::store::StoreError;
use syncscope_proto::pullsync::{IntervalStoreError, Misbehaviour};
use syncscope_proto::swarm::Address;

/// What the behaviour reports to the node driver.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// A delivered chunk was verified and stored (it was not already there).
    ChunkStored { peer: PeerId, bin: u8, address: Address },
    /// `start..=end` of the peer's `bin` is synced and recorded.
    IntervalSynced { peer: PeerId, bin: u8, start: u64, end: u64, live: bool },
    /// A peer wanted `count` chunks from our reserve; they are being delivered.
    ChunksWanted { peer: PeerId, count: usize },
    /// The peer broke the protocol: its stream was reset and the connection that carried it is
    /// being closed (except for opening more streams than allowed, where only the stream is
    /// refused).
    Misbehaved { peer: PeerId, error: Misbehaviour },
    /// A verified chunk could not be stored.
    StoreFailed { peer: PeerId, address: Address, error: StoreError },
    /// The interval store failed; the bin retries later.
    IntervalStoreFailed { peer: PeerId, bin: u8, error: IntervalStoreError },
}
