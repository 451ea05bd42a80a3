//! Native syncscope peers run by this binary: the demo's seed peers inside the relay process, and
//! `syncscope-relay peer` on other hosts. Both are the node library's own peer, joined through a
//! relay, serving content over Bitswap and pull-sync.

use std::collections::BTreeSet;

use anyhow::{bail, Context, Result};
use cid::Cid;
use futures::StreamExt;
use libp2p::{multiaddr::Protocol, Multiaddr, PeerId};
use syncscope_node::content::{ImportedFile, SplitFile};
use syncscope_node::node;
use syncscope_node::node::{
    ContentAdded, FetchUpdate, NodeConfig, NodeError, NodeEvent, NodeHandle, RelayAddress,
    StoredChange,
};

use crate::peer_storage::PeerStorage;

/// Content a peer serves: its name, and the file imported both ways.
pub type Content = (String, ImportedFile, SplitFile);

/// The relay's address as `RelayAddress`; it must end in `/p2p/<relay peer id>`.
pub fn relay_address(addr: &Multiaddr) -> Result<RelayAddress> {
    let peer_id = addr
        .iter()
        .find_map(|p| match p {
            Protocol::P2p(id) => Some(id),
            _ => None,
        })
        .context("the relay address must end in /p2p/<relay peer id>, as the relay prints it")?;
    Ok(RelayAddress { peer_id, addrs: vec![addr.clone()] })
}

/// Starts a peer set up by `config` on `storage`, joins `room` if it has a relay, and serves
/// `content` along with what its store already holds. Returns once the store holds `content`
/// (until then the peer would answer DONT_HAVE for it, and a fetch that starts right after the
/// relay says it is ready would count this peer out), with what was added.
pub async fn start(
    config: NodeConfig,
    storage: PeerStorage,
    room: &str,
    content: Vec<Content>,
) -> Result<(NodeHandle, Vec<ContentAdded>)> {
    let in_rooms = config.relay.is_some();
    let config = config.with_keypair(storage.keypair).with_block_store(storage.blocks);
    let mut handle = node::start(config).await.context("cannot start the peer")?;
    if in_rooms {
        handle.join_room(room)?;
    }
    let mut roots = BTreeSet::new();
    for (name, unixfs, swarm) in content {
        roots.insert(unixfs.root);
        handle.add_imported(&name, unixfs, swarm)?;
    }
    let added = stored(&mut handle, roots).await?;
    Ok((handle, added))
}

/// Waits until every root of `roots` is listed in the store: its manifest is written after its
/// last block, and blocks are served from the moment they are stored.
async fn stored(handle: &mut NodeHandle, mut roots: BTreeSet<Cid>) -> Result<Vec<ContentAdded>> {
    let mut added = Vec::new();
    while !roots.is_empty() {
        match handle.events.next().await {
            Some(NodeEvent::ContentAdded(content)) => added.push(content),
            Some(NodeEvent::Stored(StoredChange::Kept(manifest))) => {
                roots.remove(&manifest.root);
            }
            Some(NodeEvent::Error {
                error:
                    error @ (NodeError::StoreBlock { .. }
                    | NodeError::StoreChunk { .. }
                    | NodeError::Manifest { .. }),
            }) => bail!("cannot store the content: {error}"),
            Some(event) => log(handle.peer_id, &event),
            None => bail!("the peer stopped before its content was stored"),
        }
    }
    Ok(added)
}

/// Logs what is worth a line; returns the event for further handling.
pub fn log(peer: PeerId, event: &NodeEvent) {
    match event {
        NodeEvent::Connected { peer: other, transport, .. } => {
            tracing::debug!(%peer, %other, transport = transport.label(), "peer connected");
        }
        NodeEvent::DialFailed { peer: other, error } => {
            tracing::info!(%peer, ?other, %error, "dial failed");
        }
        NodeEvent::ReservationFailed { error } => tracing::warn!(%peer, %error, "no reservation"),
        NodeEvent::Room(update) => {
            tracing::info!(%peer, room = %update.room, members = update.members.len(), "room changed");
        }
        NodeEvent::Fetch(FetchUpdate::Done { root, size, elapsed, .. }) => {
            tracing::info!(%peer, %root, size, ?elapsed, "fetch done");
        }
        NodeEvent::Fetch(FetchUpdate::Failed { root, error }) => {
            tracing::warn!(%peer, %root, %error, "fetch failed");
        }
        NodeEvent::Misbehaved { peer: other, error } => {
            let protocol = error.protocol();
            tracing::warn!(%peer, %other, protocol, %error, "peer misbehaved and was disconnected");
        }
        NodeEvent::Error { error } => tracing::warn!(%peer, %error, "error"),
        _ => {}
    }
}
