//! The content a node holds, one [`Manifest`] per root it added or fetched, kept in step with
//! its store. A manifest is written only after its blocks: an added file's once its last block
//! has committed (puts commit in order), a fetched one's as partial when the fetch starts and as
//! complete once every block arrived, which for a fetch means stored. Each change is reported
//! ([`NodeEvent::Stored`]) once it is written.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use cid::Cid;
use futures::channel::{mpsc, oneshot};
use futures::StreamExt;

use super::events::{ContentAdded, NodeError, NodeEvent, ReadFileError, StoredChange};
use crate::cond_send::{BoxFuture, CondSend};
use crate::content::{
    block_links, verify_block, write_car, ExportError, ExportLimits, SwarmTree, UnixfsExporter,
};
use crate::rt;
use crate::store::{BlockKey, BlockStore, Manifest, NodeBlockStore, StoreError};
use syncscope_proto::swarm::{Address, Chunk};

pub(super) struct StoredContent {
    store: Arc<NodeBlockStore>,
    /// Store work, run one job at a time in the order given: a fetch that starts and ends at
    /// once (a CAR's root, answered by the store) must not have its partial manifest written
    /// after its complete one.
    jobs: mpsc::UnboundedSender<BoxFuture<'static, NodeEvent>>,
    manifests: BTreeMap<Cid, Manifest>,
    /// Added files by their last block, whose commit their manifest waits for.
    adding: HashMap<Cid, Manifest>,
    /// What the store work asks of the parts the driver owns.
    driver: DriverRequests,
}

/// What store work asks of the driver, which owns the Bitswap server and the pull-sync reserve.
pub(super) enum DriverRequest {
    /// Stop serving these blocks: they are about to be deleted.
    ForgetBlocks(Vec<BlockKey>),
    /// Read the chunks at these addresses from the reserve: the reply is the read.
    ReadChunks(Vec<Address>, oneshot::Sender<ChunkRead>),
    /// Take these chunks out of the reserve, and say how many it held.
    RemoveChunks(Vec<Address>, oneshot::Sender<usize>),
}

pub(super) type ChunkRead = BoxFuture<'static, Result<Vec<Option<Chunk>>, StoreError>>;

#[derive(Clone)]
struct DriverRequests(mpsc::UnboundedSender<DriverRequest>);

impl DriverRequests {
    fn forget_blocks(&self, keys: Vec<BlockKey>) {
        let _ = self.0.unbounded_send(DriverRequest::ForgetBlocks(keys));
    }

    /// Every chunk of the Swarm trees at `roots` that the reserve holds, or may hold.
    async fn swarm_trees(&self, roots: Vec<Address>) -> Result<HashSet<Address>, StoreError> {
        let mut tree = SwarmTree::new(roots);
        loop {
            let next = tree.to_read();
            if next.is_empty() {
                return Ok(tree.into_addresses());
            }
            let (reply, read) = oneshot::channel();
            let _ = self.0.unbounded_send(DriverRequest::ReadChunks(next, reply));
            // A driver gone is a node stopping: there is nothing left to free.
            let Ok(read) = read.await else { return Ok(HashSet::new()) };
            tree.provide(read.await?);
        }
    }

    async fn remove_chunks(&self, addresses: Vec<Address>) -> usize {
        let (reply, removed) = oneshot::channel();
        let _ = self.0.unbounded_send(DriverRequest::RemoveChunks(addresses, reply));
        removed.await.unwrap_or(0)
    }
}

impl StoredContent {
    pub(super) fn new(
        store: Arc<NodeBlockStore>,
        events: mpsc::Sender<NodeEvent>,
        manifests: Vec<Manifest>,
        driver: mpsc::UnboundedSender<DriverRequest>,
    ) -> Self {
        let manifests = manifests.into_iter().map(|m| (m.root, m)).collect();
        let (jobs, queue) = mpsc::unbounded();
        rt::spawn(run_jobs(queue, events));
        let driver = DriverRequests(driver);
        Self { store, jobs, manifests, adding: HashMap::new(), driver }
    }

    /// A file is being added; `last_block` is the last of its blocks put into the store.
    pub(super) fn adding(&mut self, last_block: Cid, added: &ContentAdded) {
        let manifest = Manifest {
            root: added.cid,
            name: added.name.clone(),
            size: added.size,
            since_ms: now_ms(),
            complete: true,
            swarm_root: Some(added.swarm_root),
        };
        self.adding.insert(last_block, manifest);
    }

    /// A block given to the store by an add has committed.
    pub(super) fn block_added(&mut self, cid: &Cid) {
        if let Some(manifest) = self.adding.remove(cid) {
            self.keep(manifest);
        }
    }

    pub(super) fn fetch_started(&mut self, root: Cid, name: String) {
        if !self.manifests.contains_key(&root) {
            let since_ms = now_ms();
            let swarm_root = None;
            self.keep(Manifest { root, name, size: 0, since_ms, complete: false, swarm_root });
        }
    }

    pub(super) fn fetch_done(&mut self, root: Cid, size: u64) {
        let (name, since_ms, swarm_root) = match self.manifests.get(&root) {
            Some(m) => (m.name.clone(), m.since_ms, m.swarm_root),
            None => (String::new(), now_ms(), None),
        };
        self.keep(Manifest { root, name, size, since_ms, complete: true, swarm_root });
    }

    /// Forgets `root` and frees its blocks and Swarm chunks, except those another root the node
    /// holds needs. The manifest goes first: a node stopped half way is left with blocks no
    /// manifest names, never with a manifest whose blocks are gone.
    pub(super) fn remove(&mut self, root: Cid) {
        let swarm_root = self.manifests.remove(&root).and_then(|m| m.swarm_root);
        let others: Vec<Cid> = self.manifests.keys().copied().collect();
        let other_trees: Vec<Address> =
            self.manifests.values().filter_map(|m| m.swarm_root).collect();
        let (store, driver) = (self.store.clone(), self.driver.clone());
        self.report(async move {
            let freed = async {
                store.remove_manifest(&root).await?;
                let freed_blocks = free_blocks(&store, &driver, root, others).await?;
                let freed_chunks = match swarm_root {
                    Some(tree) => free_chunks(&driver, tree, other_trees).await?,
                    None => 0,
                };
                Ok((freed_blocks, freed_chunks))
            };
            match freed.await {
                Ok((freed_blocks, freed_chunks)) => {
                    tracing::info!(%root, freed_blocks, freed_chunks, "content removed");
                    NodeEvent::Stored(StoredChange::Removed { root, freed_blocks, freed_chunks })
                }
                Err(error) => NodeEvent::Error { error: manifest_error(root, error) },
            }
        });
    }

    /// Reads the whole file at `root` back from the store, verifying every block, and reports
    /// it ([`StoredChange::Read`]).
    pub(super) fn read_file(&self, root: Cid) {
        let store = self.store.clone();
        self.report(async move {
            match read_file(&store, root).await {
                Ok(data) => NodeEvent::Stored(StoredChange::Read { root, data }),
                Err(error) => {
                    NodeEvent::Error { error: NodeError::ReadFile { root, error: Arc::new(error) } }
                }
            }
        });
    }

    pub(super) fn export_car(&self, root: Cid) {
        let store = self.store.clone();
        self.report(async move {
            match dag_blocks(&store, root).await {
                Ok(blocks) => {
                    let car =
                        write_car(&[root], blocks.iter().map(|(cid, data)| (*cid, &data[..])));
                    NodeEvent::Stored(StoredChange::Car { root, data: car.into() })
                }
                Err(error) => {
                    NodeEvent::Error { error: NodeError::ReadFile { root, error: Arc::new(error) } }
                }
            }
        });
    }

    fn keep(&mut self, manifest: Manifest) {
        self.manifests.insert(manifest.root, manifest.clone());
        let store = self.store.clone();
        self.report(async move {
            match store.put_manifest(&manifest).await {
                Ok(()) => NodeEvent::Stored(StoredChange::Kept(manifest)),
                Err(error) => NodeEvent::Error { error: manifest_error(manifest.root, error) },
            }
        });
    }

    /// Runs `work` on the store beside the driver, after the work given before, and reports
    /// what it ends with.
    fn report(&self, work: impl Future<Output = NodeEvent> + CondSend + 'static) {
        let _ = self.jobs.unbounded_send(Box::pin(work));
    }
}

async fn run_jobs(
    mut jobs: mpsc::UnboundedReceiver<BoxFuture<'static, NodeEvent>>,
    mut events: mpsc::Sender<NodeEvent>,
) {
    while let Some(job) = jobs.next().await {
        let _ = events.try_send(job.await);
    }
}

/// Deletes the blocks of the DAG at `root` that none of `others` needs; returns how many.
async fn free_blocks(
    store: &NodeBlockStore,
    driver: &DriverRequests,
    root: Cid,
    others: Vec<Cid>,
) -> Result<usize, StoreError> {
    let mut freed = dag_keys(store, root).await?;
    for other in others {
        for key in dag_keys(store, other).await? {
            freed.remove(&key);
        }
    }
    let freed: Vec<BlockKey> = freed.into_iter().collect();
    // No longer served before it is gone.
    driver.forget_blocks(freed.clone());
    store.delete_many(freed.clone()).await?;
    Ok(freed.len())
}

/// Takes the chunks of the Swarm tree at `tree` that none of `others` needs out of the reserve;
/// returns how many it held.
async fn free_chunks(
    driver: &DriverRequests,
    tree: Address,
    others: Vec<Address>,
) -> Result<usize, StoreError> {
    let mine = driver.swarm_trees(vec![tree]).await?;
    let needed = driver.swarm_trees(others).await?;
    Ok(driver.remove_chunks(mine.difference(&needed).copied().collect()).await)
}

/// Every block of the DAG under `root` that the store holds (a partial one has gaps).
async fn dag_keys(store: &NodeBlockStore, root: Cid) -> Result<HashSet<BlockKey>, StoreError> {
    let mut keys = HashSet::new();
    let mut next = vec![root];
    while let Some(cid) = next.pop() {
        if !keys.insert(*cid.hash()) {
            continue;
        }
        match store.get(&cid).await? {
            Some(data) => next.extend(block_links(&cid, &data).unwrap_or_default()),
            None => {
                keys.remove(cid.hash());
            }
        }
    }
    Ok(keys)
}

async fn read_file(store: &NodeBlockStore, root: Cid) -> Result<Bytes, ReadFileError> {
    let mut exporter = UnixfsExporter::new(root, ExportLimits::default());
    let mut file = Vec::new();
    while let Some(&cid) = exporter.want() {
        let block = store.get(&cid).await?.ok_or(ExportError::Missing(cid))?;
        file.extend_from_slice(&exporter.provide(block)?);
    }
    Ok(file.into())
}

/// Every block of the DAG under `root`, root first and breadth-first, each verified: what a CAR
/// of it holds.
async fn dag_blocks(store: &NodeBlockStore, root: Cid) -> Result<Vec<(Cid, Bytes)>, ReadFileError> {
    let mut queue = VecDeque::from([root]);
    let mut seen = HashSet::from([root]);
    let mut blocks = Vec::new();
    while let Some(cid) = queue.pop_front() {
        let data = store.get(&cid).await?.ok_or(ExportError::Missing(cid))?;
        verify_block(&cid, &data).map_err(ExportError::Block)?;
        let links = block_links(&cid, &data).map_err(ExportError::Block)?;
        queue.extend(links.into_iter().filter(|link| seen.insert(*link)));
        blocks.push((cid, data));
    }
    Ok(blocks)
}

fn manifest_error(root: Cid, error: StoreError) -> NodeError {
    NodeError::Manifest { root, error: Arc::new(error) }
}

fn now_ms() -> u64 {
    web_time::SystemTime::now()
        .duration_since(web_time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as u64)
}
