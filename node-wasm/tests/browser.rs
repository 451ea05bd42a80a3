//! Runs in headless Chromium through wasm-bindgen-test-runner: real IndexedDB, real browser
//! transports.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)
#![cfg(target_arch = "wasm32")]

mod block_store_suite;

use std::sync::Arc;

use bytes::Bytes;
use libp2p::identity::Keypair;
use syncscope_node::node::{build_swarm, NodeConfig};
use syncscope_node::store::{
    claim_browser_node, BlockStore, Corruption, IndexedDbBlockStore, IndexedDbError,
    IndexedDbErrorKind, IndexedDbOp, MemoryBlockStore, NodeBlockStore, PullsyncState, StoreError,
};
use syncscope_proto::bitswap::raw_cid;
use syncscope_proto::swarm::Address;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// A database name no earlier run can have used, so that leftovers cannot make a test pass.
fn fresh_db(name: &str) -> String {
    format!("syncscope-test-{name}-{}", js_sys::Date::now())
}

#[wasm_bindgen_test]
async fn indexed_db_keeps_blocks_across_reopen() {
    let name = fresh_db("reopen");
    let data = Bytes::from_static(b"persisted");
    {
        let store = IndexedDbBlockStore::open(&name).await.unwrap();
        store.put(raw_cid(&data), data.clone()).await.unwrap();
    }
    let reopened = IndexedDbBlockStore::open(&name).await.unwrap();
    assert_eq!(reopened.get(&raw_cid(&data)).await.unwrap(), Some(data.clone()));
    assert_eq!(reopened.inventory().await.unwrap(), vec![(*raw_cid(&data).hash(), data.len())]);
}

/// A database left by a newer schema: opening it is a typed `VersionError`, not a message.
#[wasm_bindgen_test]
async fn indexed_db_reports_a_newer_database_as_a_version_error() {
    let name = fresh_db("newer");
    let newer = idb::Factory::new().unwrap().open(&name, Some(99)).unwrap().await.unwrap();
    newer.close();
    let error = IndexedDbBlockStore::open(&name).await.err().unwrap();
    assert!(
        matches!(
            error,
            StoreError::IndexedDb(IndexedDbError {
                op: IndexedDbOp::Open,
                kind: IndexedDbErrorKind::Version,
                ..
            })
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("(VersionError)"), "{error}");
}

/// A database of schema 1 (one store of byte values) is upgraded to hold blocks.
#[wasm_bindgen_test]
async fn indexed_db_upgrades_a_first_schema_database() {
    let name = fresh_db("v1");
    use idb::DatabaseEvent;
    let mut request = idb::Factory::new().unwrap().open(&name, Some(1)).unwrap();
    request.on_upgrade_needed(|event| {
        let db = event.database().unwrap();
        db.create_object_store("values", idb::ObjectStoreParams::new()).unwrap();
    });
    request.await.unwrap().close();
    block_store_suite::conformance(IndexedDbBlockStore::open(&name).await.unwrap()).await;
}

#[wasm_bindgen_test]
async fn indexed_db_reports_a_value_that_is_not_bytes_as_corrupt() {
    let name = fresh_db("corrupt");
    let data = Bytes::from_static(b"k");
    let store = IndexedDbBlockStore::open(&name).await.unwrap();
    store.put(raw_cid(&data), data.clone()).await.unwrap();
    drop(store);
    let db = idb::Factory::new().unwrap().open(&name, None).unwrap().await.unwrap();
    let tx = db.transaction(&["block_packs"], idb::TransactionMode::ReadWrite).unwrap();
    tx.object_store("block_packs").unwrap().put(&"not bytes".into(), Some(&0.into())).unwrap();
    tx.commit().unwrap().await.unwrap();
    db.close();
    let store = IndexedDbBlockStore::open(&name).await.unwrap();
    let error = store.get(&raw_cid(&data)).await.unwrap_err();
    assert!(matches!(error, StoreError::Corrupt(Corruption::NotBytes)), "{error:?}");
}

/// Schema 6 kept one record per block under `[multihash, size]`: opening such a database moves
/// every block into packs, and drops a record that is not a block.
#[wasm_bindgen_test]
async fn indexed_db_packs_the_blocks_of_a_sixth_schema_database() {
    use idb::DatabaseEvent;
    let name = fresh_db("v6");
    let blocks: Vec<(cid::Cid, Bytes)> = (0..300u32)
        .map(|i| Bytes::from(i.to_be_bytes().repeat(1024)))
        .map(|d| (raw_cid(&d), d))
        .collect();
    let mut request = idb::Factory::new().unwrap().open(&name, Some(6)).unwrap();
    request.on_upgrade_needed(|event| {
        let db = event.database().unwrap();
        db.create_object_store("blocks_by_hash", idb::ObjectStoreParams::new()).unwrap();
    });
    let db = request.await.unwrap();
    let tx = db.transaction(&["blocks_by_hash"], idb::TransactionMode::ReadWrite).unwrap();
    let unpacked = tx.object_store("blocks_by_hash").unwrap();
    let key = |cid: &cid::Cid, size: usize| {
        let hash = js_sys::Uint8Array::from(&cid.hash().to_bytes()[..]);
        js_sys::Array::of2(&hash, &(size as f64).into()).into()
    };
    for (cid, data) in &blocks {
        let value = js_sys::Uint8Array::from(&data[..]);
        unpacked.put(&value, Some(&key(cid, data.len()))).unwrap();
    }
    unpacked.put(&"not bytes".into(), Some(&key(&raw_cid(b"x"), 1))).unwrap();
    tx.commit().unwrap().await.unwrap();
    db.close();

    let store = IndexedDbBlockStore::open(&name).await.unwrap();
    for (cid, data) in &blocks {
        assert_eq!(store.get(cid).await.unwrap().as_ref(), Some(data), "block {cid}");
    }
    assert_eq!(store.inventory().await.unwrap().len(), blocks.len());
    drop(store);
    let db = idb::Factory::new().unwrap().open(&name, None).unwrap().await.unwrap();
    let tx = db.transaction(&["blocks_by_hash"], idb::TransactionMode::ReadOnly).unwrap();
    let left = tx.object_store("blocks_by_hash").unwrap().count(None).unwrap().await.unwrap();
    assert_eq!(left, 0, "every record moved or dropped");
    db.close();
}

#[wasm_bindgen_test]
async fn indexed_db_is_a_conforming_block_store() {
    let open = |name| async move { IndexedDbBlockStore::open(&fresh_db(name)).await.unwrap() };
    block_store_suite::conformance(open("blocks").await).await;
    block_store_suite::concurrent_puts(open("concurrent").await).await;
    block_store_suite::manifests(NodeBlockStore::Persistent(open("manifests").await)).await;
    block_store_suite::records(NodeBlockStore::Persistent(open("records").await)).await;
    let pullsync = NodeBlockStore::Persistent(open("pullsync").await);
    block_store_suite::pullsync_state(Arc::from(pullsync)).await;
    let failing = Arc::from(NodeBlockStore::Persistent(open("failing").await));
    block_store_suite::pullsync_state_after_a_failed_write(failing).await;
    let removal = Arc::from(NodeBlockStore::Persistent(open("removal").await));
    block_store_suite::pullsync_state_after_a_removal(removal).await;
}

#[wasm_bindgen_test]
async fn memory_block_store_conforms_in_the_browser() {
    block_store_suite::conformance(MemoryBlockStore::new()).await;
}

#[wasm_bindgen_test]
async fn browser_swarm_builds() {
    let config = NodeConfig::without_relay();
    let peer_id = config.keypair.public().to_peer_id();
    let pullsync = PullsyncState::load(config.blocks.clone(), Address::ZERO, 1).await.unwrap();
    let swarm = build_swarm(&config, pullsync).await.unwrap();
    assert_eq!(*swarm.local_peer_id(), peer_id);
}

#[wasm_bindgen_test]
async fn the_browsers_sha2_256_is_used_and_agrees_with_the_crates() {
    use sha2::Digest;
    for data in [&b""[..], b"abc", &[7u8; 256 * 1024]] {
        let expected: [u8; 32] = sha2::Sha256::digest(data).into();
        let platform = syncscope_node::rt::platform_sha2_256(data).await;
        assert_eq!(platform, Some(expected), "{} bytes", data.len());
    }
}

/// An insecure context (plain http to an address other than localhost) has no `crypto.subtle`:
/// the platform offers no SHA-256 and blocks are hashed in wasm instead.
#[wasm_bindgen_test]
async fn without_crypto_subtle_the_platform_offers_no_sha2_256() {
    use wasm_bindgen::JsValue;
    let crypto = js_sys::Reflect::get(&js_sys::global(), &"crypto".into()).unwrap();
    let hidden = js_sys::Object::new();
    js_sys::Reflect::set(&hidden, &"value".into(), &JsValue::UNDEFINED).unwrap();
    js_sys::Reflect::set(&hidden, &"configurable".into(), &JsValue::TRUE).unwrap();
    js_sys::Object::define_property(&crypto.clone().into(), &"subtle".into(), &hidden);
    let platform = syncscope_node::rt::platform_sha2_256(b"abc").await;
    js_sys::Reflect::delete_property(&crypto.into(), &"subtle".into()).unwrap();
    assert_eq!(platform, None);
    assert!(syncscope_node::rt::platform_sha2_256(b"abc").await.is_some(), "restored");
}

/// Two claims in one page are two tabs: different slots, identities and databases. A freed slot
/// goes to the next claim with its identity and blocks.
#[wasm_bindgen_test]
async fn each_tab_claims_its_own_stored_node_and_a_reload_gets_it_back() {
    let first = claim_browser_node().await.unwrap();
    let second = claim_browser_node().await.unwrap();
    assert_ne!(first.slot, second.slot);
    assert_ne!(first.database, second.database);
    let first_id = first.keypair.public().to_peer_id();
    assert_ne!(first_id, second.keypair.public().to_peer_id());
    let data = Bytes::from_static(b"kept by the first tab");
    first.blocks.put(raw_cid(&data), data.clone()).await.unwrap();
    let slot = first.slot;
    first.lock.release().await;

    let reloaded = claim_browser_node().await.unwrap();
    assert_eq!(reloaded.slot, slot);
    assert_eq!(reloaded.keypair.public().to_peer_id(), first_id);
    assert_eq!(reloaded.blocks.get(&raw_cid(&data)).await.unwrap(), Some(data));
}

/// Every block of the DAG under `root` in `store`: each must be there.
async fn stored_dag(store: &NodeBlockStore, root: cid::Cid) -> usize {
    let (mut next, mut count) = (vec![root], 0);
    while let Some(cid) = next.pop() {
        let data = store.get(&cid).await.unwrap().unwrap_or_else(|| panic!("{cid} not stored"));
        next.extend(syncscope_node::content::block_links(&cid, &data).unwrap());
        count += 1;
    }
    count
}

#[wasm_bindgen_test]
async fn an_added_files_manifest_is_kept_only_once_its_blocks_are_stored() {
    use futures::StreamExt;
    use syncscope_node::node::{self, NodeEvent, RelayAddress, StoredChange};

    let store = IndexedDbBlockStore::open(&fresh_db("manifest-order")).await.unwrap();
    // A relay nothing answers at: adding is the node's own work.
    let relay = RelayAddress {
        peer_id: Keypair::generate_ed25519().public().to_peer_id(),
        addrs: vec!["/ip4/127.0.0.1/tcp/9/ws".parse().unwrap()],
    };
    let config = NodeConfig::new(relay).with_block_store(NodeBlockStore::Persistent(store));
    let store = config.blocks.clone();
    let mut node = node::start(config).await.unwrap();
    // A put just committed: the file's blocks wait for the store's pace (40 ms) before theirs,
    // so that a manifest kept too early would be seen before its blocks.
    let first = Bytes::from_static(b"first");
    store.put(raw_cid(&first), first).await.unwrap();
    // 1 MiB and a byte: five leaves and a root.
    let data: Vec<u8> =
        (0..(1 << 20) + 1).map(|i: u32| (i.wrapping_mul(2654435761) >> 7) as u8).collect();
    node.add_bytes("order.bin", &data).unwrap();
    let manifest = loop {
        match node.events.next().await.unwrap() {
            NodeEvent::Stored(StoredChange::Kept(m)) => break m,
            NodeEvent::Error { error } => panic!("{error}"),
            _ => {}
        }
    };
    assert!(manifest.complete && manifest.size == data.len() as u64, "{manifest:?}");
    assert_eq!(stored_dag(&store, manifest.root).await, 6, "every block stored when listed");
    assert_eq!(store.manifests().await.unwrap(), vec![manifest]);
}
