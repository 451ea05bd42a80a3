//! Blocks on disk, natively: one [redb](https://docs.rs/redb) database file.
//!
//! redb is a pure-Rust embedded key-value store with ACID transactions and crash safety (a commit
//! is durable once it returns, and a file left by a killed process opens at its last commit). It
//! needs no C toolchain, no background threads and no tuning, and it checks its own file on open,
//! which is what a peer killed mid-fetch needs. Its reads and writes block, so they run on tokio's
//! blocking pool; writes go through [`GroupCommit`], one `fsync` per batch of deliveries.
//!
//! Two tables, written in the same transactions: the blocks by multihash, and their sizes, which
//! let a node index what it holds at start without reading the data. The [`Records`] tables
//! (manifests, pull-sync's chunks and state) sit beside them.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use cid::Cid;
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};

use super::group_commit::{BatchWrite, GroupCommit};
use super::{BlockKey, BlockStore, Corruption, RecordWrite, Records, StoreError, Table};

const BLOCKS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("blocks");
const SIZES: TableDefinition<&[u8], u64> = TableDefinition::new("block_sizes");

/// Verified blocks in a database file.
pub struct DiskBlockStore {
    writes: GroupCommit<Tables>,
}

struct Tables {
    db: Arc<Database>,
}

impl DiskBlockStore {
    /// Opens the database at `path`, creating it if it does not exist. A file that is not a
    /// database, or is damaged beyond what redb repairs on open, is an error that names it.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let db = Database::create(path).map_err(failed("open the block database"))?;
        let tx = db.begin_write().map_err(failed("open the block database"))?;
        tx.open_table(BLOCKS).map_err(failed("create the blocks table"))?;
        tx.open_table(SIZES).map_err(failed("create the sizes table"))?;
        for table in Table::ALL {
            tx.open_table(records_table(table)).map_err(failed("create the record tables"))?;
        }
        tx.commit().map_err(failed("create the tables"))?;
        Ok(Self { writes: GroupCommit::new(Tables { db: Arc::new(db) }) })
    }

    fn db(&self) -> Arc<Database> {
        self.writes.backend().db.clone()
    }

    async fn read<T: Send + 'static>(
        &self,
        op: &'static str,
        read: impl FnOnce(&Database) -> Result<T, redb::Error> + Send + 'static,
    ) -> Result<T, StoreError> {
        on_blocking_pool(op, self.db(), read).await
    }
}

impl BlockStore for DiskBlockStore {
    async fn get(&self, cid: &Cid) -> Result<Option<Bytes>, StoreError> {
        let key = cid.hash().to_bytes();
        self.read("read a block", move |db| {
            let table = db.begin_read()?.open_table(BLOCKS)?;
            Ok(table.get(&key[..])?.map(|value| Bytes::copy_from_slice(value.value())))
        })
        .await
    }

    async fn put_many(&self, blocks: Vec<(Cid, Bytes)>) -> Result<(), StoreError> {
        self.writes.put(blocks.into_iter().map(|(cid, data)| (*cid.hash(), data)).collect()).await
    }

    async fn has(&self, cid: &Cid) -> Result<bool, StoreError> {
        let key = cid.hash().to_bytes();
        self.read("look a block up", move |db| {
            Ok(db.begin_read()?.open_table(SIZES)?.get(&key[..])?.is_some())
        })
        .await
    }

    async fn delete_many(&self, keys: Vec<BlockKey>) -> Result<(), StoreError> {
        on_blocking_pool("delete blocks", self.db(), move |db| {
            let tx = db.begin_write()?;
            {
                let mut blocks = tx.open_table(BLOCKS)?;
                let mut sizes = tx.open_table(SIZES)?;
                for key in &keys {
                    let key = key.to_bytes();
                    blocks.remove(&key[..])?;
                    sizes.remove(&key[..])?;
                }
            }
            Ok(tx.commit()?)
        })
        .await
    }

    async fn inventory(&self) -> Result<Vec<(BlockKey, usize)>, StoreError> {
        let sizes = self
            .read("list the blocks", |db| {
                let table = db.begin_read()?.open_table(SIZES)?;
                let mut sizes = Vec::new();
                for entry in table.iter()? {
                    let (key, size) = entry?;
                    sizes.push((key.value().to_vec(), size.value()));
                }
                Ok(sizes)
            })
            .await?;
        sizes
            .into_iter()
            .map(|(key, size)| {
                let key = BlockKey::from_bytes(&key)
                    .map_err(|_| StoreError::Corrupt(Corruption::NotAMultihash))?;
                Ok((key, usize::try_from(size).unwrap_or(usize::MAX)))
            })
            .collect()
    }
}

/// The redb table that holds `table`'s records.
fn records_table(table: Table) -> TableDefinition<'static, &'static [u8], &'static [u8]> {
    TableDefinition::new(table.name())
}

impl Records for DiskBlockStore {
    async fn records(&self, table: Table) -> Result<Vec<Vec<u8>>, StoreError> {
        self.read("read records", move |db| {
            let table = db.begin_read()?.open_table(records_table(table))?;
            let mut values = Vec::new();
            for entry in table.iter()? {
                values.push(entry?.1.value().to_vec());
            }
            Ok(values)
        })
        .await
    }

    async fn records_at(
        &self,
        table: Table,
        keys: Vec<Vec<u8>>,
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.read("read records", move |db| {
            let table = db.begin_read()?.open_table(records_table(table))?;
            let mut values = Vec::with_capacity(keys.len());
            for key in &keys {
                values.push(table.get(&key[..])?.map(|v| v.value().to_vec()));
            }
            Ok(values)
        })
        .await
    }

    async fn write_records(&self, writes: Vec<RecordWrite>) -> Result<(), StoreError> {
        on_blocking_pool("write records", self.db(), move |db| {
            let tx = db.begin_write()?;
            // Each table opened once per transaction, not once per write.
            let mut tables = Vec::with_capacity(Table::ALL.len());
            for table in Table::ALL {
                tables.push(tx.open_table(records_table(table))?);
            }
            for RecordWrite { table, key, value } in &writes {
                let table = &mut tables[*table as usize];
                match value {
                    Some(value) => table.insert(&key[..], &value[..]).map(drop)?,
                    None => table.remove(&key[..]).map(drop)?,
                }
            }
            drop(tables);
            Ok(tx.commit()?)
        })
        .await
    }
}

impl BatchWrite for Tables {
    async fn write(&self, batch: Vec<(BlockKey, Bytes)>) -> Result<(), StoreError> {
        on_blocking_pool("write blocks", self.db.clone(), move |db| {
            let tx = db.begin_write()?;
            {
                let mut blocks = tx.open_table(BLOCKS)?;
                let mut sizes = tx.open_table(SIZES)?;
                for (key, data) in &batch {
                    let key = key.to_bytes();
                    blocks.insert(&key[..], &data[..])?;
                    sizes.insert(&key[..], data.len() as u64)?;
                }
            }
            Ok(tx.commit()?)
        })
        .await
    }
}

/// redb blocks the thread on file I/O, so its work runs where tokio allows that.
async fn on_blocking_pool<T: Send + 'static>(
    op: &'static str,
    db: Arc<Database>,
    work: impl FnOnce(&Database) -> Result<T, redb::Error> + Send + 'static,
) -> Result<T, StoreError> {
    let joined = tokio::task::spawn_blocking(move || work(&db)).await;
    joined.map_err(failed(op))?.map_err(failed(op))
}

fn failed<E: std::error::Error + Send + Sync + 'static>(
    op: &'static str,
) -> impl FnOnce(E) -> StoreError {
    move |error| StoreError::Disk { op, source: Arc::new(error) }
}
