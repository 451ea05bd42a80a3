//! Which stored node a browser tab runs.
//!
//! A browser profile can hold several nodes, each in a slot: a database of its own
//! (`syncscope-node-<slot>`, with the node's identity key beside its blocks) and a Web Lock of the
//! same name that the tab holding the slot keeps while it lives, as Lumina does for its worker.
//! The first tab takes the lowest free slot, so a reload gets its node back, peer id and blocks;
//! a second tab finds that slot locked and becomes another node with its own identity and
//! database, so two tabs are two peers.

use futures::future::{select, Either};
use js_sys::{Function, Object, Promise, Reflect};
use libp2p::identity::Keypair;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::{IndexedDbBlockStore, StoreError};

/// Slots a profile may fill before a tab gives up: far more tabs than anyone runs as peers.
const MAX_SLOTS: u32 = 64;
const IDENTITY_KEY: &str = "identity-key";

/// A stored node claimed by this tab. Dropping it frees the slot for the next tab.
pub struct BrowserNode {
    pub slot: u32,
    /// The IndexedDB database the node keeps everything in.
    pub database: String,
    pub keypair: Keypair,
    pub blocks: IndexedDbBlockStore,
    pub lock: SlotLock,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BrowserNodeError {
    /// No `navigator.locks`: the page is not a secure context (https or localhost), or the browser
    /// is too old. Without locks two tabs could open one node.
    #[error("this page cannot coordinate tabs (no Web Locks: it needs https or localhost)")]
    NoWebLocks,
    #[error("all {MAX_SLOTS} stored nodes are in use by other tabs")]
    AllSlotsTaken,
    #[error("the browser refused the tab lock for stored node {slot}")]
    LockRefused { slot: u32 },
    #[error("stored node {slot}: {source}")]
    Store { slot: u32, source: StoreError },
    #[error("stored node {slot} has an identity key that is not a libp2p key")]
    BadIdentityKey { slot: u32 },
}

/// Claims the lowest free slot and opens its node: its identity (made on first use) and blocks.
pub async fn claim_browser_node() -> Result<BrowserNode, BrowserNodeError> {
    for slot in 0..MAX_SLOTS {
        let database = format!("syncscope-node-{slot}");
        let Some(lock) = SlotLock::try_acquire(&database, slot).await? else { continue };
        let store_error = |source| BrowserNodeError::Store { slot, source };
        let blocks = IndexedDbBlockStore::open(&database).await.map_err(store_error)?;
        let keypair = identity(&blocks, slot).await?;
        return Ok(BrowserNode { slot, database, keypair, blocks, lock });
    }
    Err(BrowserNodeError::AllSlotsTaken)
}

/// The node's identity key, made and stored on first use.
async fn identity(blocks: &IndexedDbBlockStore, slot: u32) -> Result<Keypair, BrowserNodeError> {
    let store_error = |source| BrowserNodeError::Store { slot, source };
    if let Some(stored) = blocks.node_value(IDENTITY_KEY).await.map_err(store_error)? {
        return Keypair::from_protobuf_encoding(&stored)
            .map_err(|_| BrowserNodeError::BadIdentityKey { slot });
    }
    let keypair = Keypair::generate_ed25519();
    let encoded =
        keypair.to_protobuf_encoding().map_err(|_| BrowserNodeError::BadIdentityKey { slot })?;
    blocks.set_node_value(IDENTITY_KEY, &encoded).await.map_err(store_error)?;
    Ok(keypair)
}

/// A held Web Lock; released when dropped (or when the page goes away).
pub struct SlotLock {
    release: Function,
    /// The lock request, which settles once the lock is released.
    released: JsFuture,
}

impl SlotLock {
    /// Takes the lock `name` if no one holds it; `None` if someone does.
    async fn try_acquire(name: &str, slot: u32) -> Result<Option<Self>, BrowserNodeError> {
        let locks = web_locks().ok_or(BrowserNodeError::NoWebLocks)?;
        let request = Reflect::get(&locks, &"request".into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
            .ok_or(BrowserNodeError::NoWebLocks)?;
        let (granted_tx, granted) = futures::channel::oneshot::channel();
        // The lock is held until the promise the callback returns settles: one that settles
        // when `release` is called.
        let callback = Closure::once_into_js(move |lock: JsValue| -> JsValue {
            if lock.is_null() {
                let _ = granted_tx.send(None);
                return JsValue::UNDEFINED;
            }
            let mut release = None;
            let held = Promise::new(&mut |resolve, _| release = Some(resolve));
            let _ = granted_tx.send(release);
            held.into()
        });
        let options = Object::new();
        Reflect::set(&options, &"ifAvailable".into(), &JsValue::TRUE)
            .map_err(|_| BrowserNodeError::LockRefused { slot })?;
        let requested = request
            .call3(&locks, &name.into(), &options, &callback)
            .map_err(|_| BrowserNodeError::LockRefused { slot })?;
        let settled = JsFuture::from(Promise::from(requested));
        match select(granted, settled).await {
            Either::Left((Ok(release), released)) => {
                Ok(release.map(|release| Self { release, released }))
            }
            Either::Left((Err(_), _)) | Either::Right(_) => {
                Err(BrowserNodeError::LockRefused { slot })
            }
        }
    }
}

impl SlotLock {
    /// Releases the lock and returns once the browser has: the slot is then free for a claim.
    pub async fn release(mut self) {
        let _ = self.release.call0(&JsValue::UNDEFINED);
        let _ = (&mut self.released).await;
    }
}

impl Drop for SlotLock {
    fn drop(&mut self) {
        let _ = self.release.call0(&JsValue::UNDEFINED);
    }
}

/// `navigator.locks`, in a window or a worker.
fn web_locks() -> Option<JsValue> {
    let navigator = Reflect::get(&js_sys::global(), &"navigator".into()).ok()?;
    Reflect::get(&navigator, &"locks".into()).ok().filter(|locks| !locks.is_undefined())
}
