//! The content importers give the same CIDs and addresses in wasm32 as natively, checked against
//! the same public vectors as the unit tests: ChaCha20, sha2-256 and the BMT must not depend on
//! the platform, or share links to seed peers' content would differ between browser and relay.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)
#![cfg(target_arch = "wasm32")]

use syncscope_node::content::{
    demo_stamp, export_file, import_bytes, join_file, split_bytes, DemoContent, ExportLimits,
    ImportConfig,
};
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

// js-ipfs-unixfs packages/ipfs-unixfs-importer/test/ipip-499-profiles.spec.ts: kubo's
// deterministic stream for "chunk-v1-seed", one byte over a 1 MiB chunk, raw leaves.
#[wasm_bindgen_test]
fn unixfs_import_matches_kubo_and_exports_back() {
    let data = DemoContent::from_label("chunk-v1-seed", 1_048_577).into_vec();
    let file = import_bytes(&data, ImportConfig::unixfs_v1_2025()).unwrap();
    assert_eq!(
        file.root.to_string(),
        "bafybeigmix7t42i6jacydtquhet7srwvgpizfg7gjbq7627d35mjomtu64"
    );
    let exported = export_file(file.root, ExportLimits::default(), |cid| {
        file.blocks.iter().find(|b| b.cid() == *cid).map(|b| b.data().clone())
    });
    assert_eq!(exported.unwrap(), data);
}

// bee pkg/file/testing/vector.go, vector 17: 129 chunks of sequential bytes (i mod 255).
#[wasm_bindgen_test]
fn swarm_split_matches_bee_and_joins_back() {
    let data: Vec<u8> = (0..4096 * 129).map(|i| (i % 255) as u8).collect();
    let split = split_bytes(&data, demo_stamp(0));
    assert_eq!(
        split.root.to_string(),
        "b8e1804e37a064d28d161ab5f256cc482b1423d5cd0a6b30fde7b0f51ece9199"
    );
    let joined = join_file(split.root, data.len() as u64, |address| {
        split.chunks.iter().find(|c| c.address() == *address).map(|c| c.data().clone())
    });
    assert_eq!(joined.unwrap(), data);
}
