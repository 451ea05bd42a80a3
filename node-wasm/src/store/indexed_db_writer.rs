//! IndexedDB writes in a dedicated worker.
//!
//! `put` serialises its value on the calling thread: about 4 ms per MiB in Chromium, 254 ms of
//! main-thread time in a 64 MiB fetch (`cargo xtask bench browser --profile`), where the node,
//! the cipher and the page already share one thread. The writer copies each batch out of wasm
//! memory once, transfers the buffers to a worker (no further copy), and the worker runs the
//! transaction. (One buffer per batch, which the worker slices, measured slower: the slices are
//! copies in the worker, and the batch waits for its whole buffer.) A batch counts as written when the worker reports that its transaction
//! completed, so durability is IndexedDB's own.
//!
//! The worker is a few lines of JavaScript: it has no wasm of its own, and opens the database
//! only at the version the node made, never creating or upgrading it.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use futures::channel::oneshot;
use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Blob, BlobPropertyBag, MessageEvent, Url, Worker};

use super::{IndexedDbError, IndexedDbErrorKind, IndexedDbOp, StoreError};

/// Answers `{id, name, version, stores, entries: [[store, key, ArrayBuffer]...]}` with `{id}` once
/// the transaction over `stores` completed, or `{id, error}` with the exception's name. `{name, version}` alone
/// opens the database ahead of the first write.
const WORKER_JS: &str = r#"
const dbs = new Map();
function open(name, version) {
  if (!dbs.has(name)) {
    dbs.set(name, new Promise((resolve, reject) => {
      const request = indexedDB.open(name, version);
      request.onupgradeneeded = () => request.transaction.abort();
      request.onsuccess = () => {
        const db = request.result;
        db.onversionchange = () => { db.close(); dbs.delete(name); };
        resolve(db);
      };
      request.onerror = () => { dbs.delete(name); reject(request.error); };
    }));
  }
  return dbs.get(name);
}
onmessage = async ({ data: { id, name, version, stores, entries } }) => {
  if (!entries) return open(name, version).catch(() => {});
  const failed = (error) => postMessage({ id, error: error?.name ?? 'UnknownError' });
  let tx;
  try {
    tx = (await open(name, version)).transaction(stores, 'readwrite');
    tx.oncomplete = () => postMessage({ id });
    tx.onabort = () => failed(tx.error);
    for (const [store, key, data] of entries) tx.objectStore(store).put(new Uint8Array(data), key);
    tx.commit();
  } catch (error) {
    if (tx) tx.onabort = null, tx.abort();
    failed(error);
  }
};
"#;

type Waiters = Rc<RefCell<HashMap<u32, oneshot::Sender<Result<(), StoreError>>>>>;

/// One record to write: its object store, key and bytes.
pub(super) struct Put<'a> {
    pub store: &'static str,
    pub key: JsValue,
    pub value: &'a [u8],
}

/// Writes batches of records into one database, through a worker.
pub(super) struct IndexedDbWriter {
    worker: Worker,
    database: String,
    version: u32,
    waiters: Waiters,
    next_id: Cell<u32>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(JsValue)>,
}

impl IndexedDbWriter {
    pub(super) fn start(database: &str, version: u32) -> Result<Self, StoreError> {
        let unavailable =
            |_| IndexedDbError::new(IndexedDbOp::Open, IndexedDbErrorKind::Unavailable);
        let worker = worker_from_source(WORKER_JS).map_err(unavailable)?;
        let waiters = Waiters::default();
        let on_message = {
            let waiters = waiters.clone();
            Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
                let (id, result) = outcome(&event.data());
                if let Some(waiter) = waiters.borrow_mut().remove(&id) {
                    let _ = waiter.send(result);
                }
            })
        };
        // A worker that fails (its script, or the browser stopping it) answers no one: every
        // batch waiting on it fails.
        let on_error = {
            let waiters = waiters.clone();
            Closure::<dyn FnMut(JsValue)>::new(move |_| {
                for (_, waiter) in waiters.borrow_mut().drain() {
                    let _ = waiter.send(Err(write_failed(None)));
                }
            })
        };
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        // Opening takes a fresh profile hundreds of milliseconds: not on a fetch's first block.
        let _ = worker.post_message(&open_message(database, version));
        Ok(Self {
            worker,
            database: database.to_owned(),
            version,
            waiters,
            next_id: Cell::new(0),
            _on_message: on_message,
            _on_error: on_error,
        })
    }

    /// Writes every record in one transaction; resolves when it completed, or with why it did not.
    pub(super) async fn write(&self, puts: &[Put<'_>]) -> Result<(), StoreError> {
        let id = self.next_id.get();
        self.next_id.set(id.wrapping_add(1));
        let mut stores: Vec<&str> = puts.iter().map(|put| put.store).collect();
        stores.sort_unstable();
        stores.dedup();
        let entries = Array::new();
        let transfer = Array::new();
        for put in puts {
            let buffer = Uint8Array::from(put.value).buffer();
            entries.push(&Array::of3(&put.store.into(), &put.key, &buffer));
            transfer.push(&buffer);
        }
        let message = open_message(&self.database, self.version);
        let stores: Array = stores.into_iter().map(JsValue::from_str).collect();
        for (field, value) in
            [("id", JsValue::from(id)), ("stores", stores.into()), ("entries", entries.into())]
        {
            Reflect::set(&message, &field.into(), &value).map_err(|_| write_failed(None))?;
        }
        let (done, written) = oneshot::channel();
        self.waiters.borrow_mut().insert(id, done);
        if self.worker.post_message_with_transfer(&message, &transfer).is_err() {
            self.waiters.borrow_mut().remove(&id);
            return Err(write_failed(None));
        }
        written.await.unwrap_or(Err(StoreError::Stopped))
    }
}

impl Drop for IndexedDbWriter {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}

/// `{name, version}`: which database a message is about.
fn open_message(database: &str, version: u32) -> Object {
    let message = Object::new();
    let _ = Reflect::set(&message, &"name".into(), &JsValue::from_str(database));
    let _ = Reflect::set(&message, &"version".into(), &JsValue::from(version));
    message
}

/// A classic worker running `source`, from a blob URL (the page serves no file for it).
fn worker_from_source(source: &str) -> Result<Worker, JsValue> {
    let options = BlobPropertyBag::new();
    options.set_type("text/javascript");
    let blob = Blob::new_with_str_sequence_and_options(&Array::of1(&source.into()), &options)?;
    let url = Url::create_object_url_with_blob(&blob)?;
    let worker = Worker::new(&url);
    let _ = Url::revoke_object_url(&url);
    worker
}

/// The batch id of a worker's answer, and what it says.
fn outcome(data: &JsValue) -> (u32, Result<(), StoreError>) {
    let field = |name: &str| Reflect::get(data, &name.into()).unwrap_or(JsValue::UNDEFINED);
    let id = field("id").as_f64().unwrap_or(-1.0) as u32;
    match field("error").as_string() {
        None => (id, Ok(())),
        Some(name) => (id, Err(write_failed(Some(&name)))),
    }
}

/// A failed commit: by the exception's name when there is one.
fn write_failed(exception: Option<&str>) -> StoreError {
    let kind = match exception {
        Some(name) => IndexedDbErrorKind::from_exception_name(name),
        None => IndexedDbErrorKind::Unexpected("the write worker could not be reached"),
    };
    IndexedDbError::new(IndexedDbOp::Commit, kind).into()
}
