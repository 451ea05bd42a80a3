//! What IndexedDB reported, as plain data. The browser's errors are JS values (`DOMException`s),
//! neither `Send` nor `Sync`, while a [`super::StoreError`] must cross threads natively; so the
//! browser backend keeps what the exception says (its name, classified here) and what the store
//! was doing. These types exist on every target, so `StoreError` is the same everywhere; only the
//! conversion from the `idb` crate's errors is browser code (`indexed_db.rs`).

/// An IndexedDB operation that failed, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cannot {op}: {kind}")]
#[non_exhaustive]
pub struct IndexedDbError {
    pub op: IndexedDbOp,
    pub kind: IndexedDbErrorKind,
}

impl IndexedDbError {
    pub fn new(op: IndexedDbOp, kind: IndexedDbErrorKind) -> Self {
        Self { op, kind }
    }
}

/// What the store was doing when IndexedDB failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IndexedDbOp {
    /// Opening (or creating, or upgrading) the database.
    Open,
    /// Starting a transaction on the object store.
    Begin,
    Read,
    Write,
    /// Committing a read-write transaction: the writes are lost.
    Commit,
    /// Deleting the whole database.
    Delete,
}

impl std::fmt::Display for IndexedDbOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Open => "open the database",
            Self::Begin => "start a transaction",
            Self::Read => "read",
            Self::Write => "write",
            Self::Commit => "commit the writes",
            Self::Delete => "delete the database",
        })
    }
}

/// The kind of failure: the `DOMException`s a caller may act on by name, any other standard
/// exception by its name, and the failures that are not exceptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum IndexedDbErrorKind {
    /// `QuotaExceededError`: the origin's storage is full; nothing more can be written.
    #[error("the site's storage quota is used up (QuotaExceededError)")]
    QuotaExceeded,
    /// `NotFoundError`: e.g. the object store is missing from the database.
    #[error("what it names does not exist (NotFoundError)")]
    NotFound,
    /// `VersionError`: the database on disk has a newer schema than this build knows.
    #[error("the database was written by a newer version (VersionError)")]
    Version,
    /// `AbortError`, or a transaction that ended aborted: its writes were rolled back.
    #[error("the transaction was aborted (AbortError)")]
    Aborted,
    /// `InvalidStateError`: e.g. the connection is closed or closing.
    #[error("the database connection is closed or closing (InvalidStateError)")]
    InvalidState,
    /// `UnknownError`: a transient failure or a failing disk; a retry may work.
    #[error("the browser's storage failed (UnknownError)")]
    Unknown,
    /// Another standard `DOMException` (`DataError`, `ReadOnlyError`, `SecurityError`, ..), by
    /// name.
    #[error("{0}")]
    Other(&'static str),
    /// There is no IndexedDB here (no `indexedDB` on the global object).
    #[error("IndexedDB is not available here")]
    Unavailable,
    /// The browser answered in a way the `idb` crate did not expect: no exception where one was
    /// due, a JS value of the wrong type, or an exception of a non-standard name.
    #[error("unexpected answer from the browser: {0}")]
    Unexpected(&'static str),
}

/// The standard `DOMException` names (WebIDL's error names table), so that a name found at run
/// time can be kept as a `&'static str`.
const DOM_EXCEPTION_NAMES: &[&str] = &[
    "IndexSizeError",
    "HierarchyRequestError",
    "WrongDocumentError",
    "InvalidCharacterError",
    "NoModificationAllowedError",
    "NotFoundError",
    "NotSupportedError",
    "InUseAttributeError",
    "InvalidStateError",
    "SyntaxError",
    "InvalidModificationError",
    "NamespaceError",
    "InvalidAccessError",
    "TypeMismatchError",
    "SecurityError",
    "NetworkError",
    "AbortError",
    "URLMismatchError",
    "QuotaExceededError",
    "TimeoutError",
    "InvalidNodeTypeError",
    "DataCloneError",
    "EncodingError",
    "NotReadableError",
    "UnknownError",
    "ConstraintError",
    "DataError",
    "TransactionInactiveError",
    "ReadOnlyError",
    "VersionError",
    "OperationError",
    "NotAllowedError",
    "OptOutError",
];

impl IndexedDbErrorKind {
    /// The kind of a `DOMException` named `name`.
    pub fn from_exception_name(name: &str) -> Self {
        match name {
            "QuotaExceededError" => Self::QuotaExceeded,
            "NotFoundError" => Self::NotFound,
            "VersionError" => Self::Version,
            "AbortError" => Self::Aborted,
            "InvalidStateError" => Self::InvalidState,
            "UnknownError" => Self::Unknown,
            _ => match DOM_EXCEPTION_NAMES.iter().find(|&&known| known == name) {
                Some(known) => Self::Other(known),
                None => Self::Unexpected("a DOMException of a non-standard name"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreError;

    #[test]
    fn exception_names_become_kinds_and_keep_their_name() {
        assert_eq!(
            IndexedDbErrorKind::from_exception_name("QuotaExceededError"),
            IndexedDbErrorKind::QuotaExceeded
        );
        assert_eq!(
            IndexedDbErrorKind::from_exception_name("VersionError"),
            IndexedDbErrorKind::Version
        );
        assert_eq!(
            IndexedDbErrorKind::from_exception_name("ReadOnlyError"),
            IndexedDbErrorKind::Other("ReadOnlyError")
        );
        assert!(matches!(
            IndexedDbErrorKind::from_exception_name("MadeUpError"),
            IndexedDbErrorKind::Unexpected(_)
        ));
    }

    #[test]
    fn a_store_error_says_what_failed_and_why() {
        let error: StoreError =
            IndexedDbError::new(IndexedDbOp::Commit, IndexedDbErrorKind::QuotaExceeded).into();
        assert_eq!(
            error.to_string(),
            "storage backend failed: IndexedDB cannot commit the writes: the site's storage quota \
             is used up (QuotaExceededError)"
        );
        let other = IndexedDbError::new(IndexedDbOp::Write, IndexedDbErrorKind::Other("DataError"));
        assert_eq!(other.to_string(), "cannot write: DataError");
    }

    #[test]
    fn store_errors_cross_threads() {
        fn send_sync<T: Send + Sync + 'static>() {}
        send_sync::<StoreError>();
    }
}
