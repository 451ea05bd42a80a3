//! The node's IndexedDB database, and the [`BlockStore`] in it.
//!
//! Writes are batched: one read-write transaction per batch of puts ([`GroupCommit`]), with blocks
//! packed several to a record ([`Packs`]). On disk in Chromium, one 4 KiB block per transaction
//! manages under 1,000 puts/s (`cargo xtask bench browser --cases idb_put_4k_per_tx`); batched
//! and packed, over 20,000/s (`idb_put_4k_batched`).

use std::cell::RefCell;

use bytes::Bytes;
use cid::Cid;
use idb::{
    Database, DatabaseEvent, Factory, ObjectStoreParams, Query, TransactionMode, TransactionResult,
};
use js_sys::{Array, ArrayBuffer, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::DomException;
use web_time::Duration;

use super::block_packs::{Pack, Packs};
use super::group_commit::{BatchWrite, GroupCommit};
use super::indexed_db_writer::{IndexedDbWriter, Put};
use super::recent_pack::RecentPack;
use super::{
    BlockKey, BlockStore, Corruption, IndexedDbError, IndexedDbErrorKind, IndexedDbOp, RecordWrite,
    Records, StoreError, Table,
};
use IndexedDbOp::{Begin, Commit, Delete, Open, Read, Write};

/// Packs of blocks by number: their bytes end to end.
const PACKS: &str = "block_packs";
/// Each pack's index, under its number: what a node holds, read at start without the data.
const PACK_INDEXES: &str = "block_pack_indexes";
/// Schemas 4 to 6 kept a record per block, keyed by `[multihash, size]`; a database of theirs
/// has its blocks moved into packs when it is opened.
const UNPACKED: &str = "blocks_by_hash";
/// Blocks moved from [`UNPACKED`] per transaction.
const UNPACK_AT_ONCE: u32 = 256;
/// What the node keeps about itself, by name: its identity key.
const NODE: &str = "node";
const OBJECT_STORES: [&str; 3] = [PACKS, PACK_INDEXES, NODE];
/// Stores of earlier layouts, dropped on upgrade: 1's `values` (never a node's), 2's and 3's
/// `blocks` and `block_sizes` (two records per block; they lived only on the development branch).
const RETIRED_STORES: [&str; 3] = ["values", "blocks", "block_sizes"];
/// 5 adds the manifests, 6 pull-sync's chunks and state (the [`Table`]s), 7 packs blocks.
const SCHEMA_VERSION: u32 = 7;
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
    /// Where each stored block is.
    packs: RefCell<Packs>,
    recent_pack: RecentPack<Uint8Array>,
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
        let packs = RefCell::new(stored_packs(&db).await?);
        let writer = IndexedDbWriter::start(name, SCHEMA_VERSION)?;
        let store = Self { db, writer, packs, recent_pack: RecentPack::default() };
        if store.db.store_names().iter().any(|s| s == UNPACKED) {
            while store.pack_unpacked().await? {}
        }
        Ok(store)
    }

    /// Stores every block in one transaction: all of them, or none and an error (an aborted
    /// transaction, e.g. over quota, is [`IndexedDbErrorKind::Aborted`]).
    async fn put_blocks(&self, blocks: &[(BlockKey, Bytes)]) -> Result<(), StoreError> {
        let packs = self.packs.borrow_mut().pack(blocks);
        if packs.is_empty() {
            return Ok(());
        }
        let puts: Vec<Put> = packs.iter().flat_map(pack_puts).collect();
        self.writer.write(&puts).await?;
        self.packs.borrow_mut().committed(&packs);
        Ok(())
    }

    async fn get_block(&self, hash: &BlockKey) -> Result<Option<Bytes>, StoreError> {
        // A removal may move the block to another pack while the read is under way.
        let mut at = self.packs.borrow().location(hash);
        while let Some(location) = at {
            let read = || async {
                let pack = self.get_value(PACKS, pack_key(location.pack)).await?;
                pack.map(stored_array).transpose()
            };
            if let Some(pack) = self.recent_pack.get(location.pack, read).await? {
                let end = location.offset + location.len;
                if end > pack.length() as usize {
                    return Err(StoreError::Corrupt(Corruption::NotAPack));
                }
                return Ok(Some(pack.subarray(location.offset as u32, end as u32).to_vec().into()));
            }
            let now = self.packs.borrow().location(hash);
            if now == at {
                return Err(StoreError::Corrupt(Corruption::NotAPack));
            }
            at = now;
        }
        Ok(None)
    }

    /// Moves the oldest blocks of [`UNPACKED`] into packs, in one transaction; `false` once none
    /// are left. A record that is not a block is dropped: it could never be read as one.
    async fn pack_unpacked(&self) -> Result<bool, StoreError> {
        let tx = self.transaction(&[UNPACKED, PACKS, PACK_INDEXES], TransactionMode::ReadWrite)?;
        let unpacked = object_store(&tx, UNPACKED)?;
        let keys = unpacked.get_all_keys(None, Some(UNPACK_AT_ONCE)).map_err(failed(Read))?;
        let values = unpacked.get_all(None, Some(UNPACK_AT_ONCE)).map_err(failed(Read))?;
        let keys = keys.await.map_err(failed(Read))?;
        let values = values.await.map_err(failed(Read))?;
        if keys.is_empty() {
            return Ok(false);
        }
        let blocks: Vec<(BlockKey, Bytes)> = keys
            .iter()
            .zip(values)
            .filter_map(|(key, value)| {
                let data = stored_bytes(value).ok()?;
                Some((hash_and_size(key.clone()).ok()?.0, data.into()))
            })
            .collect();
        let packs = self.packs.borrow_mut().pack(&blocks);
        for put in packs.iter().flat_map(pack_puts) {
            write(&object_store(&tx, put.store)?, &put.key, Some(put.value))?;
        }
        for key in keys {
            unpacked.delete(Query::Key(key)).map_err(failed(Write))?;
        }
        committed(tx).await?;
        self.packs.borrow_mut().committed(&packs);
        Ok(true)
    }

    /// The value under `key` in `store`.
    async fn get_value(&self, store: &str, key: JsValue) -> Result<Option<JsValue>, StoreError> {
        let tx = self.transaction(&[store], TransactionMode::ReadOnly)?;
        let value = object_store(&tx, store)?.get(Query::Key(key)).map_err(failed(Read))?.await;
        let value = value.map_err(failed(Read))?;
        tx.await.map_err(failed(Read))?;
        Ok(value)
    }

    /// The value under `key` in `store`, which must be bytes.
    async fn get_bytes(&self, store: &str, key: JsValue) -> Result<Option<Bytes>, StoreError> {
        let value = self.get_value(store, key).await?;
        value.map(|v| stored_bytes(v).map(Bytes::from)).transpose()
    }

    /// Drops the blocks in one transaction: each pack that holds any is written again without
    /// them, as a new pack, or deleted.
    async fn delete_blocks(&self, hashes: &[BlockKey]) -> Result<(), StoreError> {
        let holding = self.packs.borrow().holding(hashes);
        if holding.is_empty() {
            return Ok(());
        }
        let tx = self.transaction(&[PACKS, PACK_INDEXES], TransactionMode::ReadWrite)?;
        let (data, indexes) = (object_store(&tx, PACKS)?, object_store(&tx, PACK_INDEXES)?);
        // Everything is read and checked before anything is written, so that a corrupt pack
        // leaves the transaction with nothing to commit.
        let mut reads = Vec::with_capacity(holding.len());
        for &number in holding.keys() {
            let key = || Query::Key(pack_key(number));
            let pack = data.get(key()).map_err(failed(Read))?;
            reads.push((pack, indexes.get(key()).map_err(failed(Read))?));
        }
        let mut rewritten = Vec::with_capacity(holding.len());
        for ((&number, dropped), (pack, index)) in holding.iter().zip(reads) {
            let pack = pack_value(pack.await.map_err(failed(Read))?)?;
            let index = pack_value(index.await.map_err(failed(Read))?)?;
            let kept = self.packs.borrow_mut().without(number, &pack, &index, dropped)?;
            rewritten.push((number, kept));
        }
        for (number, kept) in &rewritten {
            write(&data, &pack_key(*number), None)?;
            write(&indexes, &pack_key(*number), None)?;
            for put in kept.iter().flat_map(pack_puts) {
                write(&object_store(&tx, put.store)?, &put.key, Some(put.value))?;
            }
        }
        committed(tx).await?;
        let mut packs = self.packs.borrow_mut();
        for (number, kept) in &rewritten {
            packs.replaced(*number, kept.as_ref());
        }
        Ok(())
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
        self.db().get_bytes(NODE, JsValue::from_str(name)).await
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
        Ok(self.db().packs.borrow().location(cid.hash()).is_some())
    }

    async fn delete_many(&self, keys: Vec<BlockKey>) -> Result<(), StoreError> {
        self.db().delete_blocks(&keys).await
    }

    async fn inventory(&self) -> Result<Vec<(BlockKey, usize)>, StoreError> {
        Ok(self.db().packs.borrow().inventory())
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
fn stored_array(value: JsValue) -> Result<Uint8Array, StoreError> {
    value.dyn_into::<Uint8Array>().map_err(|_| StoreError::Corrupt(Corruption::NotBytes))
}

fn stored_bytes(value: JsValue) -> Result<Vec<u8>, StoreError> {
    stored_array(value).map(|a| a.to_vec())
}

/// What every stored pack holds, from the indexes alone.
async fn stored_packs(db: &Database) -> Result<Packs, StoreError> {
    let tx = db.transaction(&[PACK_INDEXES], TransactionMode::ReadOnly).map_err(failed(Begin))?;
    let indexes = object_store(&tx, PACK_INDEXES)?;
    let numbers = indexes.get_all_keys(None, None).map_err(failed(Read))?;
    let values = indexes.get_all(None, None).map_err(failed(Read))?;
    let numbers = numbers.await.map_err(failed(Read))?;
    let values = values.await.map_err(failed(Read))?;
    tx.await.map_err(failed(Read))?;
    let number = |key: JsValue| key.as_f64().ok_or(StoreError::Corrupt(Corruption::NotAPack));
    let indexes = numbers
        .into_iter()
        .zip(values)
        .map(|(key, value)| Ok((number(key)? as u32, stored_bytes(value)?)))
        .collect::<Result<Vec<_>, StoreError>>()?;
    Ok(Packs::from_indexes(indexes)?)
}

/// A pack's two records.
fn pack_puts(pack: &Pack) -> [Put<'_>; 2] {
    [
        Put { store: PACKS, key: pack_key(pack.number), value: &pack.data },
        Put { store: PACK_INDEXES, key: pack_key(pack.number), value: &pack.index },
    ]
}

fn pack_key(number: u32) -> JsValue {
    JsValue::from(number)
}

/// A pack's record, which its index says is there.
fn pack_value(value: Option<JsValue>) -> Result<Vec<u8>, StoreError> {
    stored_bytes(value.ok_or(StoreError::Corrupt(Corruption::NotAPack))?)
}

fn object_store(tx: &idb::Transaction, name: &str) -> Result<idb::ObjectStore, StoreError> {
    tx.object_store(name).map_err(failed(Begin))
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
