//! The node's IndexedDB database, and the [`BlockStore`] in it.
//!
//! Writes are batched: one read-write transaction per batch of puts ([`GroupCommit`]). One
//! transaction per value manages about 1,350 values/s on disk in Chromium; 250 per transaction
//! manage 5,000-7,500/s.

use bytes::Bytes;
use cid::Cid;
use idb::{
    Database, DatabaseEvent, Factory, ObjectStoreParams, Query, TransactionMode, TransactionResult,
};
use js_sys::{ArrayBuffer, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::DomException;

use super::group_commit::{BatchWrite, GroupCommit};
use super::{
    BlockKey, BlockStore, Corruption, IndexedDbError, IndexedDbErrorKind, IndexedDbOp, StoreError,
};
use IndexedDbOp::{Begin, Commit, Delete, Open, Read, Write};

/// Blocks by multihash, and their sizes (written in the same transactions), which let a node
/// index what it holds at start without reading the data.
const BLOCKS: &str = "blocks";
const BLOCK_SIZES: &str = "block_sizes";
/// What the node keeps about itself, by name: its identity key.
const NODE: &str = "node";
const OBJECT_STORES: [&str; 3] = [BLOCKS, BLOCK_SIZES, NODE];
/// 1: one store of byte values; 2: blocks and their sizes (the values of 1 were never a node's);
/// 3: the node's own values.
const SCHEMA_VERSION: u32 = 3;

/// One node's IndexedDB database.
struct IndexedDbStore {
    db: Database,
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
            if existing.iter().any(|s| s == "values") {
                let _ = db.delete_object_store("values");
            }
            for name in OBJECT_STORES {
                if !existing.iter().any(|s| s == name) {
                    let _ = db.create_object_store(name, ObjectStoreParams::new());
                }
            }
        });
        Ok(Self { db: request.await.map_err(failed(Open))? })
    }

    /// Stores every block and its size in one transaction: all of them, or none and an error
    /// (an aborted transaction, e.g. over quota, is [`IndexedDbErrorKind::Aborted`]).
    async fn put_blocks(&self, blocks: &[(BlockKey, Bytes)]) -> Result<(), StoreError> {
        let tx = self.transaction(&OBJECT_STORES, TransactionMode::ReadWrite)?;
        let data = tx.object_store(BLOCKS).map_err(failed(Begin))?;
        let sizes = tx.object_store(BLOCK_SIZES).map_err(failed(Begin))?;
        for (key, block) in blocks {
            let key = bytes(&key.to_bytes());
            data.put(&bytes(block), Some(&key)).map_err(failed(Write))?;
            sizes.put(&JsValue::from(block.len() as f64), Some(&key)).map_err(failed(Write))?;
        }
        committed(tx).await
    }

    async fn get_block(&self, key: &BlockKey) -> Result<Option<Bytes>, StoreError> {
        self.get_bytes(BLOCKS, bytes(&key.to_bytes())).await
    }

    /// The value under `key` in `store`, which must be bytes.
    async fn get_bytes(&self, store: &str, key: JsValue) -> Result<Option<Bytes>, StoreError> {
        let tx = self.transaction(&[store], TransactionMode::ReadOnly)?;
        let store = tx.object_store(store).map_err(failed(Begin))?;
        let value = store.get(Query::Key(key)).map_err(failed(Read))?.await;
        let value = value.map_err(failed(Read))?;
        tx.await.map_err(failed(Read))?;
        value
            .map(|v| {
                v.dyn_into::<Uint8Array>()
                    .map(|a| Bytes::from(a.to_vec()))
                    .map_err(|_| StoreError::Corrupt(Corruption::NotBytes))
            })
            .transpose()
    }

    /// Whether a block is stored under `key`, without reading it.
    async fn contains(&self, key: &BlockKey) -> Result<bool, StoreError> {
        let tx = self.transaction(&[BLOCK_SIZES], TransactionMode::ReadOnly)?;
        let store = tx.object_store(BLOCK_SIZES).map_err(failed(Begin))?;
        let query = Query::Key(bytes(&key.to_bytes()));
        let count = store.count(Some(query)).map_err(failed(Read))?.await;
        let count = count.map_err(failed(Read))?;
        tx.await.map_err(failed(Read))?;
        Ok(count > 0)
    }

    /// Every block's key and size, from two reads of the sizes store (keys, then values, in the
    /// same key order).
    async fn sizes(&self) -> Result<Vec<(BlockKey, usize)>, StoreError> {
        let tx = self.transaction(&[BLOCK_SIZES], TransactionMode::ReadOnly)?;
        let store = tx.object_store(BLOCK_SIZES).map_err(failed(Begin))?;
        // Both asked before either is awaited: the transaction stays active while they run.
        let keys = store.get_all_keys(None, None).map_err(failed(Read))?;
        let sizes = store.get_all(None, None).map_err(failed(Read))?;
        let keys = keys.await.map_err(failed(Read))?;
        let sizes = sizes.await.map_err(failed(Read))?;
        tx.await.map_err(failed(Read))?;
        keys.into_iter().zip(sizes).map(|(key, size)| block_size(key, size)).collect()
    }

    async fn put_node_value(&self, name: &str, value: &[u8]) -> Result<(), StoreError> {
        let tx = self.transaction(&[NODE], TransactionMode::ReadWrite)?;
        let store = tx.object_store(NODE).map_err(failed(Begin))?;
        store.put(&bytes(value), Some(&JsValue::from_str(name))).map_err(failed(Write))?;
        committed(tx).await
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
        Ok(Self { writes: GroupCommit::new(IndexedDbStore::open(name).await?) })
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
        self.db().put_node_value(name, value).await
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

    async fn inventory(&self) -> Result<Vec<(BlockKey, usize)>, StoreError> {
        self.db().sizes().await
    }
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

fn block_size(key: JsValue, size: JsValue) -> Result<(BlockKey, usize), StoreError> {
    // IndexedDB hands binary keys back as ArrayBuffers, whatever view they were written as.
    let key =
        key.dyn_into::<ArrayBuffer>().map_err(|_| StoreError::Corrupt(Corruption::NotBytes))?;
    let key = BlockKey::from_bytes(&Uint8Array::new(&key).to_vec())
        .map_err(|_| StoreError::Corrupt(Corruption::NotAMultihash))?;
    let size = size.as_f64().ok_or(StoreError::Corrupt(Corruption::NotASize))?;
    Ok((key, size as usize))
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
