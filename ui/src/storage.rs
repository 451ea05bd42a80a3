//! Where the page's node keeps its data. By default a stored node in IndexedDB, one per tab
//! ([`claim_browser_node`]): a reload gets the same peer id and what it had stored. `?store=memory`
//! keeps everything in memory, and so does a page that cannot use IndexedDB, saying why.

use syncscope_node::node::NodeConfig;
use syncscope_node::store::{claim_browser_node, NodeBlockStore, SlotLock};

use crate::config;

/// The storage a page's node runs on, and what the page says about it.
pub struct PageStorage {
    /// "IndexedDB syncscope-node-0 (stored node 0)", or why the node is in memory.
    pub description: String,
    /// Set when the page wanted IndexedDB and could not have it.
    pub problem: Option<String>,
    /// Held for the page's life: the tab owns its stored node while it lives.
    pub lock: Option<SlotLock>,
}

/// Sets `config` up with the page's storage.
pub async fn open(config: NodeConfig) -> (NodeConfig, PageStorage) {
    if config::url_param("store").as_deref() == Some("memory") {
        let description = "memory (?store=memory): nothing is kept after the page closes".into();
        return (config, PageStorage { description, problem: None, lock: None });
    }
    match claim_browser_node().await {
        Ok(node) => {
            let description = match node.slot {
                0 => format!("IndexedDB {} (this tab owns stored node 0)", node.database),
                n => format!(
                    "IndexedDB {} (stored node {n}: other tabs hold the lower-numbered ones)",
                    node.database
                ),
            };
            let blocks = NodeBlockStore::Persistent(node.blocks);
            let config = config.with_keypair(node.keypair).with_block_store(blocks);
            (config, PageStorage { description, problem: None, lock: Some(node.lock) })
        }
        Err(error) => {
            let problem = format!("cannot keep data in this browser ({error}); using memory");
            let description = "memory: nothing is kept after the page closes".into();
            (config, PageStorage { description, problem: Some(problem), lock: None })
        }
    }
}
