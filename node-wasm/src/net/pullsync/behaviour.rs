//! Pull-sync's behaviour as the node sees it: the commands the node gives it and its counters. The adapter drives the core; [`super::glue`] is pull-sync's part of that.

use libp2p::PeerId;
use web_time::Instant;

use super::config::Config;
use super::glue::PullsyncGlue;
use crate::metrics::{PullsyncCounters, PullsyncMetrics, Timeseries};
use crate::net::adapter;
use crate::store::{ChunkStore, StoreError};
use syncscope_proto::pullsync::{IntervalStore, Node, PullerStats, ServerStats};
use syncscope_proto::swarm::{Address, Chunk};

/// A snapshot of the counters, cheap to take for the UI.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    pub puller: PullerStats,
    pub server: ServerStats,
    pub counters: PullsyncCounters,
    /// Connected peers.
    pub peers: usize,
    /// Delivered chunks stored for the first time.
    pub chunks_stored: u64,
    /// Delivered chunks that were already stored (two peers delivering one chunk at once).
    pub chunks_duplicate: u64,
    pub store_failures: u64,
    /// Connections closed because their peer broke the protocol.
    pub peers_disconnected: u64,
    /// Inbound streams refused because a connection had too many open.
    pub streams_refused: u64,
    /// Connections whose remote does not speak the protocol (by its identify, or a failed
    /// negotiation): it is never opened there again.
    pub unsupported_connections: u64,
    /// Chunks per second delivered in the last complete second.
    pub delivery_rate: f64,
    /// Frames waiting to be written to sockets.
    pub queued_bytes: usize,
}

/// Pull-sync over libp2p: the adapter driving a pull-sync [`Node`], standalone so that any swarm
/// can compose it with `#[derive(NetworkBehaviour)]`. See the module docs for what the node driver
/// does with it.
pub type Behaviour<S, I> = adapter::Behaviour<PullsyncGlue<S, I>>;

impl<S: ChunkStore + 'static, I: IntervalStore + 'static> Behaviour<S, I> {
    /// Pull-sync for the node at `overlay`, keeping chunks in `store` and synced intervals in
    /// `intervals`.
    pub fn new(config: Config, overlay: Address, store: S, intervals: I) -> Self {
        let now = Instant::now();
        let mut node = Node::new(config.protocol.clone(), overlay, intervals, store);
        node.set_storage_radius(now, config.storage_radius);
        adapter::Behaviour::from_parts(
            PullsyncGlue::new(config, overlay, PullsyncMetrics::new(now)),
            node,
        )
    }

    pub fn overlay(&self) -> Address {
        self.glue().overlay
    }

    /// Sets the overlay address of `peer`, overriding the one derived from its peer ID
    /// ([`overlay_of`](super::overlay_of)). Call it before the peer connects: bins are chosen on
    /// connection.
    pub fn set_peer_overlay(&mut self, peer: PeerId, overlay: Address) {
        self.command(|glue, _| glue.overlays.insert(peer, overlay));
    }

    /// The overlay address this node uses for `peer`.
    pub fn peer_overlay(&self, peer: &PeerId) -> Address {
        self.glue().peer_overlay(peer)
    }

    pub fn storage_radius(&self) -> u8 {
        self.core().storage_radius()
    }

    /// Changes which bins are synced from whom and which offered chunks are wanted.
    pub fn set_storage_radius(&mut self, radius: u8) {
        self.command(|_, ctx| ctx.core.set_storage_radius(ctx.now, radius));
    }

    /// Pauses or resumes pulling (serving goes on). Pausing resets the pages under way, so that
    /// the transfer it makes way for has the link at once; resuming asks them again.
    pub fn set_paused(&mut self, paused: bool) {
        self.command(|glue, ctx| {
            glue.paused = paused;
            if paused {
                ctx.core.yield_now(ctx.now);
            }
            glue.apply_pause(ctx);
        });
    }

    /// Whether the node paused pulling; the store may hold it back too, for a while.
    pub fn is_paused(&self) -> bool {
        self.glue().paused
    }

    /// Stores a chunk that this node created or received outside pull-sync (an upload), so that
    /// it is offered to pullers.
    pub fn store_chunk(&mut self, chunk: Chunk) -> Result<bool, StoreError> {
        self.command(|glue, ctx| {
            let stored = ctx.core.reserve_mut().put(chunk)?;
            glue.reserve_changed |= stored;
            Ok(stored)
        })
    }

    pub fn store(&self) -> &S {
        self.core().reserve()
    }

    /// The chunk store itself. Chunks put here directly are offered only once
    /// [`Behaviour::store_chunk`] or another stored chunk next tells the server.
    pub fn store_mut(&mut self) -> &mut S {
        self.core_mut().reserve_mut()
    }

    pub fn intervals(&self) -> &I {
        self.core().intervals()
    }

    pub fn intervals_mut(&mut self) -> &mut I {
        self.core_mut().intervals_mut()
    }

    /// Bins currently synced from `peer`.
    pub fn syncing_bins(&self, peer: &PeerId) -> Vec<u8> {
        self.core().syncing_bins(peer)
    }

    pub fn stats(&self) -> Stats {
        let (core, glue, link) = (self.core(), self.glue(), self.link_stats());
        let (puller, server) = (core.puller_stats(), core.server_stats());
        Stats {
            puller,
            server,
            counters: PullsyncCounters::from_stats(&puller, &server),
            peers: link.peers,
            chunks_stored: glue.chunks_stored,
            chunks_duplicate: glue.chunks_duplicate,
            store_failures: glue.store_failures,
            peers_disconnected: link.peers_disconnected,
            streams_refused: link.streams_refused,
            unsupported_connections: link.unsupported_connections,
            delivery_rate: glue
                .metrics
                .delivery_rate()
                .last_complete(Instant::now())
                .map_or(0.0, |s| s.rate),
            queued_bytes: core.backlog(),
        }
    }

    /// Chunks delivered and verified per second, in 1 s samples.
    pub fn delivery_rate(&self) -> &Timeseries {
        self.glue().metrics.delivery_rate()
    }
}
