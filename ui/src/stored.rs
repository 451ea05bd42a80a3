//! The "Stored here" panel's state: the content the page's node holds (its manifests), how much
//! the browser lets the page keep and whether it may evict it, and downloads of stored files.

use cid::Cid;
use leptos::prelude::*;
use syncscope_node::node::{NodeControl, StoredChange};
use syncscope_node::store::Manifest;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::export;

/// What the browser reports about the page's storage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    pub used: u64,
    pub quota: u64,
    /// Whether the browser keeps the page's data under storage pressure (`None`: unknown).
    pub persistent: Option<bool>,
}

#[derive(Clone, Copy)]
pub struct Stored {
    pub manifests: RwSignal<Vec<Manifest>>,
    pub usage: RwSignal<Option<Usage>>,
    pub error: RwSignal<Option<String>>,
    /// What the last removal freed, in words.
    pub removed: RwSignal<Option<String>>,
    control: RwSignal<Option<NodeControl>, LocalStorage>,
}

impl Stored {
    pub fn new() -> Self {
        Self {
            manifests: RwSignal::new(Vec::new()),
            usage: RwSignal::new(None),
            error: RwSignal::new(None),
            removed: RwSignal::new(None),
            control: RwSignal::new_local(None),
        }
    }

    /// The node runs with `content` stored; `persistent` storage asks the browser not to evict
    /// it.
    pub fn node_started(&self, control: NodeControl, mut content: Vec<Manifest>, persistent: bool) {
        self.control.set(Some(control));
        newest_first(&mut content);
        self.manifests.set(content);
        let this = *self;
        leptos::task::spawn_local(async move {
            if persistent {
                let _ = storage(web_sys::StorageManager::persist).await;
            }
            this.refresh_usage().await;
        });
    }

    pub fn on_change(&self, change: StoredChange) {
        match change {
            StoredChange::Kept(manifest) => self.manifests.update(|all| {
                all.retain(|m| m.root != manifest.root);
                all.push(manifest);
                newest_first(all);
            }),
            StoredChange::Removed { root, freed_blocks, freed_chunks } => {
                let name = self.file_name(&root);
                self.removed.set(Some(format!(
                    "removed {name}: freed {freed_blocks} {} and {freed_chunks} Swarm {} that \
                     no other stored file needs",
                    plural(freed_blocks, "block"),
                    plural(freed_chunks, "chunk"),
                )));
                self.manifests.update(|all| all.retain(|m| m.root != root))
            }
            StoredChange::Read { root, data } => self.offer(self.file_name(&root), &data),
            StoredChange::Car { root, data } => self.offer(format!("{root}.car"), &data),
        }
        let this = *self;
        leptos::task::spawn_local(async move { this.refresh_usage().await });
    }

    pub fn download(&self, root: Cid) {
        self.command(|control| control.read_file(root));
    }

    /// Offers the DAG at `root` as a CARv1 file, for kubo's `ipfs dag import` or Helia.
    pub fn download_car(&self, root: Cid) {
        self.command(|control| control.export_car(root));
    }

    /// Imports a CAR file chosen by the user: its blocks are verified, stored and served, and
    /// each root listed once its DAG is whole (fetching what the CAR lacks).
    pub fn import_car(&self, name: &str, data: Vec<u8>) {
        let name = name.trim_end_matches(".car");
        self.command(|control| control.import_car(data.into(), name).map(drop));
    }

    fn offer(&self, name: String, data: &[u8]) {
        if let Err(e) = export::download_bytes(&name, data) {
            self.error.set(Some(format!("cannot offer {name} for download: {e:?}")));
        }
    }

    pub fn remove(&self, root: Cid) {
        self.command(|control| control.remove(root));
    }

    fn command(
        &self,
        run: impl FnOnce(&NodeControl) -> Result<(), syncscope_node::node::CommandError>,
    ) {
        let result = match self.control.get_untracked() {
            Some(control) => run(&control).map_err(|e| e.to_string()),
            None => Err("the node is not running yet".into()),
        };
        self.error.set(result.err());
    }

    /// The name a stored file downloads under: its own, or its CID.
    fn file_name(&self, root: &Cid) -> String {
        let named = self.manifests.with_untracked(|all| {
            all.iter().find(|m| m.root == *root && !m.name.is_empty()).map(|m| m.name.clone())
        });
        named.unwrap_or_else(|| root.to_string())
    }

    async fn refresh_usage(&self) {
        let Ok(estimate) = storage(web_sys::StorageManager::estimate).await else { return };
        let estimate: web_sys::StorageEstimate = estimate.unchecked_into();
        let persisted = storage(web_sys::StorageManager::persisted).await;
        let persistent = persisted.ok().and_then(|p| p.as_bool());
        self.usage.set(Some(Usage {
            used: estimate.get_usage().unwrap_or(0.0) as u64,
            quota: estimate.get_quota().unwrap_or(0.0) as u64,
            persistent,
        }));
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

fn newest_first(manifests: &mut [Manifest]) {
    manifests.sort_by_key(|m| std::cmp::Reverse(m.since_ms));
}

/// `call` on `navigator.storage`, awaited.
async fn storage(
    call: impl FnOnce(&web_sys::StorageManager) -> Result<js_sys::Promise, JsValue>,
) -> Result<JsValue, JsValue> {
    let manager = web_sys::window().ok_or("no window")?.navigator().storage();
    JsFuture::from(call(&manager)?).await
}
