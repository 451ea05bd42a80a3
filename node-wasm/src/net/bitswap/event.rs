//! What Bitswap over libp2p reports to the node.

use bytes::Bytes;
use cid::Cid;
use libp2p::PeerId;

use super::streams::StreamError;
use crate::store::StoreError;
use syncscope_proto::bitswap::{self, ProtocolVersion, SessionId};

/// How a peer broke the protocol.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Misbehaviour {
    /// What the core found: too many unsolicited blocks.
    #[error(transparent)]
    Protocol(#[from] bitswap::Misbehaviour),
    /// An oversized or malformed frame or message.
    #[error(transparent)]
    Stream(#[from] StreamError),
}

/// What the behaviour reports to the node driver.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// The peer speaks Bitswap at `version`: it takes part in fetches and is served.
    PeerConnected { peer: PeerId, version: ProtocolVersion },
    /// The peer is gone, or its connections can no longer carry Bitswap.
    PeerDisconnected { peer: PeerId },
    /// A verified block `fetch` asked for, now in the store; `from_store`: it was there before
    /// the fetch asked, so no peer sent it.
    Block { fetch: SessionId, cid: Cid, data: Bytes, from_store: bool },
    /// A block `fetch` asked for arrived from a peer and was verified, and is being stored: it
    /// comes again as [`Event::Block`] once stored. Lets a fetch read the block's links without
    /// waiting for the store's commit.
    Verified { fetch: SessionId, cid: Cid, data: Bytes },
    /// Every block `fetch` asked for so far has arrived. The fetch stays open for more
    /// ([`Behaviour::fetch_more`]) until [`Behaviour::close`].
    FetchDone { fetch: SessionId },
    /// A block given to [`Behaviour::add_block`] is stored and served.
    BlockAdded { cid: Cid },
    /// The peer broke the protocol: its stream was reset and it is being disconnected.
    Misbehaved { peer: PeerId, error: Misbehaviour },
    /// The store failed to read or keep `cid`.
    /// `fetches` waited for `cid` and will not get it (a failed put, e.g. over quota); none for
    /// a failed read.
    StoreFailed { cid: Cid, error: StoreError, fetches: Vec<SessionId> },
}
