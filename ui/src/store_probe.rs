//! Measures this browser's IndexedDB through the node's own block store, for
//! `cargo xtask bench browser` (its `idb_put_*` cases): the store's ceiling on this machine, in
//! the same run as the fetches that write through it.

use bytes::Bytes;
use cid::Cid;
use futures::future::try_join_all;
use syncscope_node::content::demo_content;
use syncscope_node::store::{BlockStore, IndexedDbBlockStore};
use syncscope_proto::bitswap::raw_cid;
use wasm_bindgen::prelude::*;
use web_time::Duration;

/// Puts `count` distinct blocks of `block_size` bytes into a fresh database and returns the
/// milliseconds until the last one committed. Batched, every put is issued at once and the store
/// groups them into transactions as it does under a fetch; otherwise each put waits for the one
/// before, one transaction each, unpaced (the node's pace would time its own interval instead).
/// The database is deleted afterwards.
#[wasm_bindgen]
pub async fn measure_block_store(
    block_size: usize,
    count: usize,
    batched: bool,
) -> Result<f64, JsError> {
    let name = format!("syncscope-measure-{}", js_sys::Date::now());
    let store = match batched {
        true => IndexedDbBlockStore::open(&name).await?,
        false => IndexedDbBlockStore::open_paced(&name, Duration::ZERO).await?,
    };
    let blocks: Vec<(Cid, Bytes)> = (0..count).map(|i| block(i, block_size)).collect();
    let started = now_ms();
    if batched {
        try_join_all(blocks.into_iter().map(|(cid, data)| store.put(cid, data))).await?;
    } else {
        for (cid, data) in blocks {
            store.put(cid, data).await?;
        }
    }
    let elapsed = now_ms() - started;
    drop(store);
    IndexedDbBlockStore::delete(&name).await?;
    Ok(elapsed)
}

/// Block `i`: distinct from every other, so that none is stored twice under one key, and as
/// incompressible as the demo file the fetches store. Chromium compresses a large value before it
/// stores it, so blocks of one repeated byte measured a store that real content never sees.
fn block(i: usize, size: usize) -> (Cid, Bytes) {
    let data = demo_content(i as u64, size.max(8)).into_vec();
    (raw_cid(&data), Bytes::from(data))
}

fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}
