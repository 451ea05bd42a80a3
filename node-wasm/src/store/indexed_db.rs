//! The node's IndexedDB database, and the [`BlockStore`] in it.
//!
//! Writes are batched: one read-write transaction per batch of puts ([`GroupCommit`]), and one
//! record per block. On disk in Chromium, one 4 KiB block per transaction manages about 1,500
//! puts/s; batched, two records per block (data and size) managed 7,500/s, one record 10,000/s
//! and more (`cargo xtask bench browser --cases idb_put_4k_batched`).

use bytes::Bytes;
use cid::Cid;
use idb::{
    Database, DatabaseEvent, Factory, KeyRange, ObjectStoreParams, Query, TransactionMode,
    TransactionResult,
};
use js_sys::{Array, ArrayBuffer, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::DomException;
use web_time::Duration;

use super::group_commit::{BatchWrite, GroupCommit};
use super::indexed_db_writer::IndexedDbWriter;
use super::{
    BlockKey, BlockStore, Corruption, IndexedDbError, IndexedDbErrorKind, IndexedDbOp, RecordWrite,
    Records, StoreError, Table,
};
use IndexedDbOp::{Begin, Commit, Delete, Open, Read, Write};

/// Blocks keyed by `[multihash, size]`: one record per block, and the keys alone (no data) say
/// what a node holds at start. A lookup by multihash is a key range over the sizes.
const BLOCKS: &str = "blocks_by_hash";
/// What the node keeps about itself, by name: its identity key.
const NODE: &str = "node";
const OBJECT_STORES: [&str; 2] = [BLOCKS, NODE];
/// Stores of earlier layouts, dropped on upgrade: 1's `values` (never a node's), 2's and 3's
/// `blocks` and `block_sizes` (two records per block; they lived only on the development branch).
const RETIRED_STORES: [&str; 3] = ["values", "blocks", "block_sizes"];
/// 5 adds the manifests, 6 pull-sync's chunks and state (the [`Table`]s).
const SCHEMA_VERSION: u32 = 6;
/// At most one block transaction per this under sustained load ([`GroupCommit::paced`]). A
/// transaction of one 256 KiB block commits in 5-10 ms, well within the time between two
/// deliveries of a fetch, so unpaced a 64 MiB fetch ran 200 transactions of one or two blocks,
/// whose fixed costs (on the page, in the writer worker and in the browser's IndexedDB backend)
/// took the CPU the fetch needed. Paced, it runs about 40 of 1-3 MiB.
const WRITE_PACE: Duration = Duration::from_millis(40);

/// One node's IndexedDB database.
struct IndexedDbStore {
    db: Database,
    /// Block writes, off the page's thread.
    writer: IndexedDbWriter,
}

impl IndexedDbStore {
    /// Opens (creating or upgrading if needed) the database `name`.
    pub async fn open(name: &str) -> Result<Self, StoreError> {
        let mut request = Factory::new()
            .map_err(failed(Open))?
            .open(name, Some(SCHEMA_VERSION))
            .map_err(failed(Open))?;
        request.on_upgrade_needed(|event| {
            let Ok(db) = event.database() else { return };
            let existing = db.store_names();
            for retired in RETIRED_STORES.iter().filter(|r| existing.iter().any(|s| s == *r)) {
                let _ = db.delete_object_store(retired);
            }
            for name in OBJECT_STORES.into_iter().chain(Table::ALL.map(Table::name)) {
                if !existing.iter().any(|s| s == name) {
                    let _ = db.create_object_store(name, ObjectStoreParams::new());
                }
            }
        });
        let db = request.await.map_err(failed(Open))?;
        Ok(Self { db, writer: IndexedDbWriter::start(name, SCHEMA_VERSION, BLOCKS)? })
    }

    /// Stores every block in one transaction: all of them, or none and an error (an aborted
    /// transaction, e.g. over quota, is [`IndexedDbErrorKind::Aborted`]).
    async fn put_blocks(&self, blocks: &[(BlockKey, Bytes)]) -> Result<(), StoreError> {
        self.writer.write(blocks, block_key).await
    }

    async fn get_block(&self, hash: &BlockKey) -> Result<Option<Bytes>, StoreError> {
        self.get_bytes(BLOCKS, hash_range(hash)?).await
    }

    /// The value under `key` in `store`, which must be bytes.
    async fn get_bytes(&self, store: &str, key: Query) -> Result<Option<Bytes>, StoreError> {
        let tx = self.transaction(&[store], TransactionMode::ReadOnly)?;
        let store = tx.object_store(store).map_err(failed(Begin))?;
        let value = store.get(key).map_err(failed(Read))?.await;
        let value = value.map_err(failed(Read))?;
        tx.await.map_err(failed(Read))?;
        value.map(|v| stored_bytes(v).map(Bytes::from)).transpose()
    }

    /// Whether a block is stored under `hash`, without reading it.
    async fn contains(&self, hash: &BlockKey) -> Result<bool, StoreError> {
        let tx = self.transaction(&[BLOCKS], TransactionMode::ReadOnly)?;
        let store = tx.object_store(BLOCKS).map_err(failed(Begin))?;
        let count = store.count(Some(hash_range(hash)?)).map_err(failed(Read))?.await;
        let count = count.map_err(failed(Read))?;
        tx.await.map_err(failed(Read))?;
        Ok(count > 0)
    }

    async fn delete_blocks(&self, hashes: &[BlockKey]) -> Result<(), StoreError> {
        let tx = self.transaction(&[BLOCKS], TransactionMode::ReadWrite)?;
        let store = tx.object_store(BLOCKS).map_err(failed(Begin))?;
        for hash in hashes {
            store.delete(hash_range(hash)?).map_err(failed(Write))?;
        }
        committed(tx).await
    }

    /// Every block's multihash and size, from the keys alone.
    async fn sizes(&self) -> Result<Vec<(BlockKey, usize)>, StoreError> {
        let tx = self.transaction(&[BLOCKS], TransactionMode::ReadOnly)?;
        let store = tx.object_store(BLOCKS).map_err(failed(Begin))?;
        let keys = store.get_all_keys(None, None).map_err(failed(Read))?.await;
        let keys = keys.map_err(failed(Read))?;
        tx.await.map_err(failed(Read))?;
        keys.into_iter().map(hash_and_size).collect()
    }

    /// Puts `value` under `key` in `store`, or deletes what is there when `value` is `None`.
    async fn write_value(
        &self,
        store: &str,
        key: JsValue,
        value: Option<&[u8]>,
    ) -> Result<(), StoreError> {
        let tx = self.transaction(&[store], TransactionMode::ReadWrite)?;
        let objects = tx.object_store(store).map_err(failed(Begin))?;
        write(&objects, &key, value)?;
        committed(tx).await
    }

    /// Applies `writes` in one transaction over the stores they touch.
    async fn write_records(&self, writes: &[RecordWrite]) -> Result<(), StoreError> {
        let mut names: Vec<&str> = writes.iter().map(|w| w.table.name()).collect();
        names.sort_unstable();
        names.dedup();
        let tx = self.transaction(&names, TransactionMode::ReadWrite)?;
        for w in writes {
            let objects = tx.object_store(w.table.name()).map_err(failed(Begin))?;
            write(&objects, &bytes(&w.key), w.value.as_deref())?;
        }
        committed(tx).await
    }

    /// The values under `keys` in `store`, in order, read in one transaction.
    async fn values_at(
        &self,
        store: &str,
        keys: &[Vec<u8>],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let tx = self.transaction(&[store], TransactionMode::ReadOnly)?;
        let objects = tx.object_store(store).map_err(failed(Begin))?;
        let requests = keys
            .iter()
            .map(|key| objects.get(Query::Key(bytes(key))).map_err(failed(Read)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut values = Vec::with_capacity(keys.len());
        for request in requests {
            let value = request.await.map_err(failed(Read))?;
            values.push(value.map(stored_bytes).transpose()?);
        }
        tx.await.map_err(failed(Read))?;
        Ok(values)
    }

    /// Every value in `store`, which must be bytes.
    async fn all_values(&self, store: &str) -> Result<Vec<Vec<u8>>, StoreError> {
        let tx = self.transaction(&[store], TransactionMode::ReadOnly)?;
        let objects = tx.object_store(store).map_err(failed(Begin))?;
        let values = objects.get_all(None, None).map_err(failed(Read))?.await;
        let values = values.map_err(failed(Read))?;
        tx.await.map_err(failed(Read))?;
        values.into_iter().map(stored_bytes).collect()
    }

    fn transaction(
        &self,
        stores: &[&str],
        mode: TransactionMode,
    ) -> Result<idb::Transaction, StoreError> {
        self.db.transaction(stores, mode).map_err(failed(Begin))
    }
}

impl BatchWrite for IndexedDbStore {
    async fn write(&self, batch: Vec<(BlockKey, Bytes)>) -> Result<(), StoreError> {
        self.put_blocks(&batch).await
    }
}

/// Blocks in a node's database, written in groups ([`GroupCommit`]).
pub struct IndexedDbBlockStore {
    writes: GroupCommit<IndexedDbStore>,
}

impl IndexedDbBlockStore {
    pub async fn open(name: &str) -> Result<Self, StoreError> {
        Self::open_paced(name, WRITE_PACE).await
    }

    /// With block transactions paced at `pace` rather than the node's ([`GroupCommit::paced`]);
    /// zero starts each as soon as the one before it has committed.
    pub async fn open_paced(name: &str, pace: Duration) -> Result<Self, StoreError> {
        Ok(Self { writes: GroupCommit::paced(IndexedDbStore::open(name).await?, pace) })
    }

    fn db(&self) -> &IndexedDbStore {
        self.writes.backend()
    }

    /// Deletes the database `name` and everything in it, once its open connections have closed.
    pub async fn delete(name: &str) -> Result<(), StoreError> {
        let request =
            Factory::new().map_err(failed(Delete))?.delete(name).map_err(failed(Delete))?;
        request.await.map_err(failed(Delete))?;
        Ok(())
    }

    /// A value the node keeps about itself under `name` (its identity key, say), beside its
    /// blocks so that the two never part.
    pub async fn node_value(&self, name: &str) -> Result<Option<Bytes>, StoreError> {
        self.db().get_bytes(NODE, Query::Key(JsValue::from_str(name))).await
    }

    pub async fn set_node_value(&self, name: &str, value: &[u8]) -> Result<(), StoreError> {
        self.db().write_value(NODE, JsValue::from_str(name), Some(value)).await
    }
}

impl BlockStore for IndexedDbBlockStore {
    async fn get(&self, cid: &Cid) -> Result<Option<Bytes>, StoreError> {
        self.db().get_block(cid.hash()).await
    }

    async fn put_many(&self, blocks: Vec<(Cid, Bytes)>) -> Result<(), StoreError> {
        self.writes.put(blocks.into_iter().map(|(cid, data)| (*cid.hash(), data)).collect()).await
    }

    async fn has(&self, cid: &Cid) -> Result<bool, StoreError> {
        self.db().contains(cid.hash()).await
    }

    async fn delete_many(&self, keys: Vec<BlockKey>) -> Result<(), StoreError> {
        self.db().delete_blocks(&keys).await
    }

    async fn inventory(&self) -> Result<Vec<(BlockKey, usize)>, StoreError> {
        self.db().sizes().await
    }
}

impl Records for IndexedDbBlockStore {
    async fn records(&self, table: Table) -> Result<Vec<Vec<u8>>, StoreError> {
        self.db().all_values(table.name()).await
    }

    async fn records_at(
        &self,
        table: Table,
        keys: Vec<Vec<u8>>,
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.db().values_at(table.name(), &keys).await
    }

    async fn write_records(&self, writes: Vec<RecordWrite>) -> Result<(), StoreError> {
        if writes.is_empty() {
            return Ok(());
        }
        self.db().write_records(&writes).await
    }
}

/// Queues a put of `value` under `key`, or a delete when `value` is `None`.
fn write(
    objects: &idb::ObjectStore,
    key: &JsValue,
    value: Option<&[u8]>,
) -> Result<(), StoreError> {
    match value {
        Some(value) => objects.put(&bytes(value), Some(key)).map(drop),
        None => objects.delete(Query::Key(key.clone())).map(drop),
    }
    .map_err(failed(Write))
}

/// Commits `tx`: `Ok` once it has, an error if it failed or was aborted (e.g. over quota).
async fn committed(tx: idb::Transaction) -> Result<(), StoreError> {
    match tx.commit().map_err(failed(Commit))?.await.map_err(failed(Commit))? {
        TransactionResult::Committed => Ok(()),
        TransactionResult::Aborted => {
            Err(IndexedDbError::new(Commit, IndexedDbErrorKind::Aborted).into())
        }
    }
}

/// A stored value, which the store always writes as bytes.
fn stored_bytes(value: JsValue) -> Result<Vec<u8>, StoreError> {
    let array = value.dyn_into::<Uint8Array>();
    array.map(|a| a.to_vec()).map_err(|_| StoreError::Corrupt(Corruption::NotBytes))
}

/// A block's key: `[multihash, size]`.
fn block_key(hash: &BlockKey, size: usize) -> JsValue {
    Array::of2(&bytes(&hash.to_bytes()), &JsValue::from(size as f64)).into()
}

/// Every key of a block with this multihash, whatever its size: an array sorts after its
/// prefix, and a number before any array.
fn hash_range(hash: &BlockKey) -> Result<Query, StoreError> {
    let hash = bytes(&hash.to_bytes());
    let lower = Array::of1(&hash);
    let upper = Array::of2(&hash, &Array::new());
    Ok(Query::KeyRange(KeyRange::bound(&lower, &upper, None, None).map_err(failed(Read))?))
}

fn hash_and_size(key: JsValue) -> Result<(BlockKey, usize), StoreError> {
    let corrupt = StoreError::Corrupt(Corruption::NotAMultihash);
    let key = key.dyn_into::<Array>().map_err(|_| corrupt.clone())?;
    // IndexedDB hands binary keys back as ArrayBuffers, whatever view they were written as.
    let hash = key.get(0).dyn_into::<ArrayBuffer>().map_err(|_| corrupt.clone())?;
    let hash = BlockKey::from_bytes(&Uint8Array::new(&hash).to_vec()).map_err(|_| corrupt)?;
    let size = key.get(1).as_f64().ok_or(StoreError::Corrupt(Corruption::NotASize))?;
    Ok((hash, size as usize))
}

impl Drop for IndexedDbStore {
    fn drop(&mut self) {
        self.db.close();
    }
}

fn bytes(data: &[u8]) -> JsValue {
    Uint8Array::from(data).into()
}

/// Turns what `idb` reported while the store did `op` into a [`StoreError`] that is `Send`: the
/// exception's name is kept (classified), the JS objects are dropped.
fn failed(op: IndexedDbOp) -> impl FnOnce(idb::Error) -> StoreError {
    move |error| IndexedDbError::new(op, kind_of(&error)).into()
}

fn kind_of(error: &idb::Error) -> IndexedDbErrorKind {
    use idb::Error as E;
    use IndexedDbErrorKind::Unexpected;
    let thrown = match error {
        E::DomException(exception) => return exception_kind(exception),
        E::IndexedDbNotFound(_) => return IndexedDbErrorKind::Unavailable,
        E::DomExceptionNotFound => return Unexpected("a failure without an exception"),
        E::UnexpectedJsType(..) => return Unexpected("a JS value of an unexpected type"),
        E::EventTargetNotFound => return Unexpected("an event without a target"),
        E::OneshotChannelReceiveError => return Unexpected("a request that never completed"),
        // What the browser threw when asked to do something.
        E::IndexedDbOpenFailed(thrown)
        | E::TransactionOpenFailed(thrown)
        | E::ObjectStoreNotFound(thrown)
        | E::UpdateFailed(thrown)
        | E::AddFailed(thrown)
        | E::GetFailed(thrown)
        | E::CountFailed(thrown)
        | E::DeleteFailed(thrown)
        | E::IndexedDbDeleteFailed(thrown)
        | E::TransactionCommitError(thrown)
        | E::TransactionAbortError(thrown)
        | E::RequestResultNotFound(thrown)
        | E::RequestErrorNotFound(thrown) => thrown,
        _ => return Unexpected("a failure the store does not expect from IndexedDB"),
    };
    match thrown.dyn_ref::<DomException>() {
        Some(exception) => exception_kind(exception),
        None => Unexpected("a thrown value that is not a DOMException"),
    }
}

fn exception_kind(exception: &DomException) -> IndexedDbErrorKind {
    IndexedDbErrorKind::from_exception_name(&exception.name())
}
