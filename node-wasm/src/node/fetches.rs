//! Fetching a UnixFS file over Bitswap the way IPFS walks a DAG: the root first, then the
//! children each block links to, layer by layer, in one session; and, once every block is in,
//! walking the file through the exporter to check its sizes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use bytes::Bytes;
use cid::Cid;
use libp2p::PeerId;
use web_time::Instant;

use super::behaviour::NodeBitswap;
use crate::content::{block_links, check_stored_file, ExportError, ExportLimits, RAW};
use crate::store::StoreError;
use syncscope_proto::bitswap::SessionId;

/// Largest file a fetch will assemble; larger roots are refused before anything is fetched.
const MAX_FILE: u64 = 4 << 30;

/// What a fetch reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchUpdate {
    Progress {
        root: Cid,
        blocks: u64,
        bytes: u64,
        wanted: usize,
    },
    /// `sources`: the peers that sent blocks during the fetch, with how many each sent, most
    /// first; `from_store`: blocks the node held already (kept by an earlier, interrupted fetch
    /// or another root), which no peer sent; `duplicate_blocks`: blocks that arrived after they
    /// were already in, until the last one did.
    Done {
        root: Cid,
        size: u64,
        blocks: u64,
        from_store: u64,
        elapsed: Duration,
        sources: BlockSources,
        duplicate_blocks: u64,
    },
    Failed {
        root: Cid,
        error: String,
    },
}

/// The peers that sent a fetch's blocks, with how many each sent, most first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlockSources(pub Vec<(PeerId, u64)>);

impl BlockSources {
    pub fn peers(&self) -> usize {
        self.0.len()
    }

    /// Each peer's share of the blocks, in the same order.
    pub fn shares(&self) -> Vec<f64> {
        let total: u64 = self.0.iter().map(|(_, n)| n).sum();
        self.0.iter().map(|(_, n)| *n as f64 / total.max(1) as f64).collect()
    }
}

/// "3 peers (41 %, 33 %, 26 %)": how many peers, and each one's share.
impl std::fmt::Display for BlockSources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.peers() {
            0 => write!(f, "no peer")?,
            1 => write!(f, "1 peer")?,
            n => write!(f, "{n} peers")?,
        }
        if self.peers() > 1 {
            let shares: Vec<String> =
                self.shares().iter().map(|s| format!("{:.0} %", 100.0 * s)).collect();
            write!(f, " ({})", shares.join(", "))?;
        }
        Ok(())
    }
}

struct Fetch {
    root: Cid,
    outstanding: HashSet<Cid>,
    blocks: u64,
    from_store: u64,
    bytes: u64,
    started: Instant,
    received_before: Received,
    /// What the final walk needs: the DAG's inner nodes whole, and of each raw leaf its length.
    inner_nodes: HashMap<Cid, Bytes>,
    leaf_sizes: HashMap<Cid, usize>,
    /// Blocks whose links were asked for while they were being stored.
    walked_ahead: HashSet<Cid>,
}

impl Fetch {
    /// Asks for the blocks `cid` links to that the fetch does not have or want yet.
    fn follow_links(
        &mut self,
        bitswap: &mut NodeBitswap,
        session: SessionId,
        cid: Cid,
        data: &Bytes,
    ) -> Result<(), String> {
        let links = block_links(&cid, data).map_err(|e| format!("block {cid}: {e}"))?;
        let new: Vec<Cid> = links.into_iter().filter(|l| self.outstanding.insert(*l)).collect();
        if !new.is_empty() && bitswap.fetch_more(session, new).is_err() {
            return Err("the fetch was closed".into());
        }
        Ok(())
    }

    /// Keeps what [`Fetches::finish`] walks, without holding on to the file's data.
    fn remember(&mut self, cid: Cid, data: &Bytes) {
        if cid.codec() == RAW {
            self.leaf_sizes.insert(cid, data.len());
        } else {
            self.inner_nodes.insert(cid, data.clone());
        }
    }

    /// Walks the file through the exporter, which checks that every size the DAG declares adds
    /// up, and returns its size. Hashes were checked as each block arrived, so they are not
    /// computed again, and no block is read back from the store: a raw leaf's only property the
    /// walk looks at is its length, so it gets a slice of zeros that long.
    fn check_file(&self) -> Result<u64, ExportError> {
        let zeros = Bytes::from(vec![0; self.leaf_sizes.values().copied().max().unwrap_or(0)]);
        let limits = ExportLimits { max_file_size: MAX_FILE, ..ExportLimits::default() };
        check_stored_file(self.root, limits, |cid| match self.leaf_sizes.get(cid) {
            Some(&len) => Some(zeros.slice(..len)),
            None => self.inner_nodes.get(cid).cloned(),
        })
    }
}

/// The node's receive counters at one moment, to tell a fetch's own share from them.
struct Received {
    duplicates: u64,
    blocks_by_peer: BTreeMap<PeerId, u64>,
}

impl Received {
    fn now(bitswap: &NodeBitswap) -> Self {
        let stats = bitswap.client_stats();
        let blocks_by_peer = stats.per_peer.iter().map(|(p, c)| (*p, c.blocks_received)).collect();
        Self { duplicates: stats.total.duplicate_blocks, blocks_by_peer }
    }

    /// Peers that sent blocks since `before` with how many each sent (most first), and duplicate
    /// blocks since then.
    fn since(&self, before: &Received) -> (BlockSources, u64) {
        let mut sources: Vec<(PeerId, u64)> = self
            .blocks_by_peer
            .iter()
            .map(|(p, n)| {
                (*p, n.saturating_sub(before.blocks_by_peer.get(p).copied().unwrap_or(0)))
            })
            .filter(|(_, n)| *n > 0)
            .collect();
        sources.sort_by_key(|(p, n)| (std::cmp::Reverse(*n), *p));
        (BlockSources(sources), self.duplicates.saturating_sub(before.duplicates))
    }
}

#[derive(Default)]
pub struct Fetches {
    by_session: HashMap<SessionId, Fetch>,
}

impl Fetches {
    pub fn start(&mut self, bitswap: &mut NodeBitswap, root: Cid) {
        let session = bitswap.fetch([root]);
        let fetch = Fetch {
            root,
            outstanding: HashSet::from([root]),
            blocks: 0,
            from_store: 0,
            bytes: 0,
            started: Instant::now(),
            received_before: Received::now(bitswap),
            inner_nodes: HashMap::new(),
            leaf_sizes: HashMap::new(),
            walked_ahead: HashSet::new(),
        };
        self.by_session.insert(session, fetch);
    }

    pub fn any_active(&self) -> bool {
        !self.by_session.is_empty()
    }

    pub fn is_active(&self, root: &Cid) -> bool {
        self.by_session.values().any(|f| f.root == *root)
    }

    /// A block of `session` arrived and is being stored: what it links to is asked for at once,
    /// rather than once it is stored.
    pub fn on_verified(
        &mut self,
        bitswap: &mut NodeBitswap,
        session: SessionId,
        (cid, data): (Cid, &Bytes),
    ) -> Option<FetchUpdate> {
        let fetch = self.by_session.get_mut(&session)?;
        if !fetch.outstanding.contains(&cid) || !fetch.walked_ahead.insert(cid) {
            return None;
        }
        let error = fetch.follow_links(bitswap, session, cid, data).err()?;
        Some(self.fail(bitswap, session, error))
    }

    /// A block of `session` is stored (`from_store`: it was before the fetch asked): asks for
    /// what it links to, unless that was done when it arrived, and reports progress, or the end.
    pub fn on_block(
        &mut self,
        bitswap: &mut NodeBitswap,
        session: SessionId,
        (cid, data, from_store): (Cid, &Bytes, bool),
    ) -> Option<FetchUpdate> {
        let fetch = self.by_session.get_mut(&session)?;
        if !fetch.outstanding.remove(&cid) {
            return None;
        }
        fetch.blocks += 1;
        fetch.from_store += u64::from(from_store);
        fetch.bytes += data.len() as u64;
        fetch.remember(cid, data);
        if !fetch.walked_ahead.remove(&cid) {
            if let Err(error) = fetch.follow_links(bitswap, session, cid, data) {
                return Some(self.fail(bitswap, session, error));
            }
        }
        if fetch.outstanding.is_empty() {
            return Some(self.finish(bitswap, session));
        }
        Some(FetchUpdate::Progress {
            root: fetch.root,
            blocks: fetch.blocks,
            bytes: fetch.bytes,
            wanted: fetch.outstanding.len(),
        })
    }

    /// Every block is in: the file's sizes are checked ([`Fetch::check_file`]).
    fn finish(&mut self, bitswap: &mut NodeBitswap, session: SessionId) -> FetchUpdate {
        bitswap.close(session);
        let Some(fetch) = self.by_session.remove(&session) else {
            return FetchUpdate::Failed { root: Cid::default(), error: "unknown fetch".into() };
        };
        let (sources, duplicate_blocks) = Received::now(bitswap).since(&fetch.received_before);
        match fetch.check_file() {
            Ok(size) => FetchUpdate::Done {
                root: fetch.root,
                size,
                blocks: fetch.blocks,
                from_store: fetch.from_store,
                elapsed: fetch.started.elapsed(),
                sources,
                duplicate_blocks,
            },
            Err(e) => FetchUpdate::Failed { root: fetch.root, error: e.to_string() },
        }
    }

    /// `cid` could not be stored for `sessions`: those fetches fail, saying why, and their roots
    /// stay partial.
    pub fn store_failed(
        &mut self,
        bitswap: &mut NodeBitswap,
        sessions: &[SessionId],
        cid: Cid,
        error: &StoreError,
    ) -> Vec<FetchUpdate> {
        let failing: Vec<SessionId> =
            sessions.iter().copied().filter(|s| self.by_session.contains_key(s)).collect();
        failing
            .into_iter()
            .map(|s| self.fail(bitswap, s, format!("cannot store block {cid}: {error}")))
            .collect()
    }

    fn fail(
        &mut self,
        bitswap: &mut NodeBitswap,
        session: SessionId,
        error: String,
    ) -> FetchUpdate {
        bitswap.close(session);
        let root = self.by_session.remove(&session).map(|f| f.root).unwrap_or_default();
        FetchUpdate::Failed { root, error }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sources_read_as_peers_and_shares() {
        let peer = |_| PeerId::random();
        let sources = |counts: &[u64]| {
            BlockSources(counts.iter().map(|&n| (peer(n), n)).collect()).to_string()
        };
        assert_eq!(sources(&[]), "no peer");
        assert_eq!(sources(&[41]), "1 peer");
        assert_eq!(sources(&[5, 3, 2]), "3 peers (50 %, 30 %, 20 %)");
    }
}
