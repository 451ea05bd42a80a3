//! Runs in headless Chromium through wasm-bindgen-test-runner: real IndexedDB, real browser
//! transports.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)
#![cfg(target_arch = "wasm32")]

mod block_store_suite;

use libp2p::identity::Keypair;
use syncscope_node::node::{build_swarm, ProtocolSettings};
use syncscope_node::store::{
    Corruption, IndexedDbError, IndexedDbErrorKind, IndexedDbOp, IndexedDbStore, MemoryBlockStore,
    StoreError,
};
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// A database name no earlier run can have used, so that leftovers cannot make a test pass.
fn fresh_db(name: &str) -> String {
    format!("syncscope-test-{name}-{}", js_sys::Date::now())
}

#[wasm_bindgen_test]
async fn indexed_db_stores_and_reads_bytes() {
    let store = IndexedDbStore::open(&fresh_db("bytes")).await.unwrap();
    let big = vec![0xa5; 4096];
    store.put_many([(&b"small"[..], &b"hello"[..]), (&b"chunk"[..], &big[..])]).await.unwrap();

    assert_eq!(store.get(b"small").await.unwrap().as_deref(), Some(&b"hello"[..]));
    assert_eq!(store.get(b"chunk").await.unwrap(), Some(big));
    assert_eq!(store.get(b"absent").await.unwrap(), None);
}

#[wasm_bindgen_test]
async fn indexed_db_keeps_values_across_reopen() {
    let name = fresh_db("reopen");
    {
        let store = IndexedDbStore::open(&name).await.unwrap();
        store.put_many([(&b"k"[..], &b"persisted"[..])]).await.unwrap();
    }
    let reopened = IndexedDbStore::open(&name).await.unwrap();
    assert_eq!(reopened.get(b"k").await.unwrap().as_deref(), Some(&b"persisted"[..]));
}

/// A database left by a newer schema: opening it is a typed `VersionError`, not a message.
#[wasm_bindgen_test]
async fn indexed_db_reports_a_newer_database_as_a_version_error() {
    let name = fresh_db("newer");
    let newer = idb::Factory::new().unwrap().open(&name, Some(99)).unwrap().await.unwrap();
    newer.close();
    let error = IndexedDbStore::open(&name).await.err().unwrap();
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

/// A value that is not bytes under a key, written behind the store's back, reads as corrupt.
#[wasm_bindgen_test]
async fn indexed_db_reports_a_value_that_is_not_bytes_as_corrupt() {
    let name = fresh_db("corrupt");
    drop(IndexedDbStore::open(&name).await.unwrap());
    let db = idb::Factory::new().unwrap().open(&name, None).unwrap().await.unwrap();
    let tx = db.transaction(&["values"], idb::TransactionMode::ReadWrite).unwrap();
    let key = js_sys::Uint8Array::from(&b"k"[..]);
    tx.object_store("values").unwrap().put(&"not bytes".into(), Some(&key)).unwrap();
    tx.commit().unwrap().await.unwrap();
    db.close();
    let store = IndexedDbStore::open(&name).await.unwrap();
    let error = store.get(b"k").await.unwrap_err();
    assert!(matches!(error, StoreError::Corrupt(Corruption::NotBytes)), "{error:?}");
}

#[wasm_bindgen_test]
async fn indexed_db_is_a_conforming_block_store() {
    block_store_suite::conformance(IndexedDbStore::open(&fresh_db("blocks")).await.unwrap()).await;
}

#[wasm_bindgen_test]
async fn memory_block_store_conforms_in_the_browser() {
    block_store_suite::conformance(MemoryBlockStore::new()).await;
}

#[wasm_bindgen_test]
async fn browser_swarm_builds() {
    let key = Keypair::generate_ed25519();
    let peer_id = key.public().to_peer_id();
    let swarm = build_swarm(key, ProtocolSettings::default()).await.unwrap();
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
