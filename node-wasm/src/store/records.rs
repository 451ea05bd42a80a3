//! What a node keeps beside its blocks, as every backend stores it: values under byte keys in a
//! few tables, read back in key order and written in one transaction per batch, so that writes
//! to several tables land together or not at all (pull-sync's intervals never outlive the chunks
//! they cover).

use std::future::Future;

use crate::cond_send::CondSend;

use super::StoreError;

/// The tables beside the blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    /// Content manifests by root ([`super::Manifest`]).
    Manifests,
    /// The pull-sync reserve's chunks, by arrival number.
    Chunks,
    /// Pull-sync's bookkeeping: the reserve's epoch, and what was synced from each peer.
    Pullsync,
}

impl Table {
    pub const ALL: [Table; 3] = [Table::Manifests, Table::Chunks, Table::Pullsync];

    /// Its name in the backend.
    pub fn name(self) -> &'static str {
        match self {
            Table::Manifests => "manifests",
            Table::Chunks => "chunks",
            Table::Pullsync => "pullsync",
        }
    }
}

/// One write: the value to keep under the key, or `None` to delete it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordWrite {
    pub table: Table,
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
}

impl RecordWrite {
    pub fn put(table: Table, key: Vec<u8>, value: Vec<u8>) -> Self {
        Self { table, key, value: Some(value) }
    }

    pub fn delete(table: Table, key: Vec<u8>) -> Self {
        Self { table, key, value: None }
    }
}

pub trait Records {
    /// Every value in `table`, in key order (keys compare as bytes).
    fn records(
        &self,
        table: Table,
    ) -> impl Future<Output = Result<Vec<Vec<u8>>, StoreError>> + CondSend;

    /// The values under `keys` in `table`, in the order asked (`None` where there is none), read
    /// in one transaction.
    fn records_at(
        &self,
        table: Table,
        keys: Vec<Vec<u8>>,
    ) -> impl Future<Output = Result<Vec<Option<Vec<u8>>>, StoreError>> + CondSend;

    /// Applies `writes` in order, in one transaction.
    fn write_records(
        &self,
        writes: Vec<RecordWrite>,
    ) -> impl Future<Output = Result<(), StoreError>> + CondSend;
}
