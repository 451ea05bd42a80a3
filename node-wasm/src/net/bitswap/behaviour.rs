//! Bitswap's behaviour as the node sees it: the commands the node gives it and its counters. The adapter drives the core; [`super::glue`] is Bitswap's part of that.

use std::sync::Arc;
use std::time::Duration;

use cid::Cid;
use libp2p::PeerId;

use super::config::Config;
use super::glue::{BitswapGlue, Fetch};
use crate::content::Block;
use crate::net::adapter;
use crate::store::{BlockKey, BlockStore};
use syncscope_proto::bitswap::{self, Counters, Node, SessionId};

/// Why a fetch could not be extended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    #[error("no open fetch {0:?}")]
    Unknown(SessionId),
}

/// A snapshot of the counters, cheap to take for the UI.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// The core's counters: messages, bytes, blocks, duplicates, unsolicited, invalid, timeouts.
    pub counters: Counters,
    /// Peers that speak Bitswap with us.
    pub peers: usize,
    pub open_fetches: usize,
    /// Blocks wanted by open fetches and not received yet.
    pub wanted_blocks: usize,
    /// Of those, the ones handed to the client (at most [`Config::max_active_wants`]).
    pub active_wants: usize,
    pub store_reads_in_flight: usize,
    pub store_writes_in_flight: usize,
    pub store_failures: u64,
    /// Connections closed because their peer broke the protocol.
    pub peers_disconnected: u64,
    /// Inbound streams refused because a connection had too many open.
    pub streams_refused: u64,
    /// Connections whose remote does not speak the protocol (by its identify, or a failed
    /// negotiation): it is never opened there again.
    pub unsupported_connections: u64,
}

/// Bitswap over libp2p: the adapter driving a Bitswap [`Node`], standalone so that any swarm can
/// compose it with `#[derive(NetworkBehaviour)]`. See the module docs for what the node driver
/// does with it.
pub type Behaviour<S> = adapter::Behaviour<BitswapGlue<S>>;

impl<S: BlockStore> Behaviour<S> {
    /// Bitswap keeping its blocks in `store`; blocks are served once added with
    /// [`Behaviour::add_block`].
    pub fn new(config: Config, store: S) -> Self {
        let glue = BitswapGlue::new(&config, store);
        adapter::Behaviour::from_parts(glue, Node::new(config.bitswap))
    }

    pub fn store(&self) -> &Arc<S> {
        &self.glue().store
    }

    /// The sans-IO core, to read its client and server state.
    pub fn node(&self) -> &Node<PeerId> {
        self.core()
    }

    /// Starts fetching `cids` in a new session. Each block arrives as one [`Event::Block`]
    /// (blocks already held come from the store), then [`Event::FetchDone`].
    pub fn fetch(&mut self, cids: impl IntoIterator<Item = Cid>) -> SessionId {
        self.command(|glue, ctx| {
            let fetch = ctx.core.new_session(ctx.now);
            glue.fetches.insert(fetch, Fetch::default());
            glue.want(ctx, fetch, cids);
            fetch
        })
    }

    /// Adds `cids` to an open fetch, which keeps what its session learned about peers.
    pub fn fetch_more(
        &mut self,
        fetch: SessionId,
        cids: impl IntoIterator<Item = Cid>,
    ) -> Result<(), FetchError> {
        if !self.glue().fetches.contains_key(&fetch) {
            return Err(FetchError::Unknown(fetch));
        }
        self.command(|glue, ctx| glue.want(ctx, fetch, cids));
        Ok(())
    }

    /// Ends a fetch: what it still wants is cancelled, and the session is forgotten.
    pub fn close(&mut self, fetch: SessionId) {
        self.command(|glue, ctx| {
            if glue.fetches.remove(&fetch).is_some() {
                ctx.core.close_session(ctx.now, fetch);
            }
        });
    }

    /// Stores a block of this node's own and serves it. A [`Block`] was hashed when it was made,
    /// so it is not hashed again. [`Event::BlockAdded`] follows once it is stored.
    pub fn add_block(&mut self, block: Block) {
        let (cid, data) = block.into_parts();
        self.command(|glue, ctx| glue.store_block(ctx, cid, data, |s| s.added = true));
    }

    /// Indexes blocks the store held before this behaviour was made ([`BlockStore::inventory`]):
    /// they are served, and fetches take them from the store.
    pub fn index_stored(&mut self, inventory: impl IntoIterator<Item = (BlockKey, usize)>) {
        self.command(|_, ctx| {
            for (key, size) in inventory {
                ctx.core.index_stored(key, size);
            }
        });
    }

    /// Blocks the store no longer holds (`BlockStore::delete_many`): no longer served.
    pub fn forget_stored(&mut self, keys: impl IntoIterator<Item = BlockKey>) {
        self.command(|_, ctx| {
            for key in keys {
                ctx.core.remove_stored(&key);
            }
        });
    }

    /// A ping on a connection to `peer` took `rtt`: fetches rank the peer by it until its answers
    /// measure their own round trip.
    pub fn peer_round_trip(&mut self, peer: PeerId, rtt: Duration) {
        self.command(|_, ctx| ctx.core.peer_round_trip(peer, rtt));
    }

    /// Whether the node holds `cid`, as far as its index knows.
    pub fn has_block(&self, cid: &Cid) -> bool {
        self.core().server().has_block(cid)
    }

    pub fn stats(&self) -> Stats {
        let (glue, link) = (self.glue(), self.link_stats());
        Stats {
            counters: self.core().stats(),
            peers: link.peers,
            open_fetches: glue.fetches.len(),
            wanted_blocks: glue.fetches.values().map(|f| f.pending.len()).sum(),
            active_wants: self.core().active_wants(),
            store_reads_in_flight: glue.store_reads_in_flight,
            store_writes_in_flight: glue.storing.len(),
            store_failures: glue.store_failures,
            peers_disconnected: link.peers_disconnected,
            streams_refused: link.streams_refused,
            unsupported_connections: link.unsupported_connections,
        }
    }

    pub fn peer_stats(&self, peer: PeerId) -> Counters {
        self.core().peer_stats(peer)
    }

    /// What this node received, in total and per peer.
    pub fn client_stats(&self) -> &bitswap::Stats<PeerId> {
        self.core().client_stats()
    }
}
