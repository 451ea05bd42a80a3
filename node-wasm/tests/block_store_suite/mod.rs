//! What every `BlockStore` backend must do: one suite, run over each backend on its target.

use bytes::Bytes;
use cid::Cid;
use syncscope_node::store::{BlockStore, Manifest, NodeBlockStore};
use syncscope_proto::bitswap::raw_cid;

const DAG_PB: u64 = 0x70;

pub async fn conformance(store: impl BlockStore) {
    let data = Bytes::from_static(b"a verified block");
    let cid = raw_cid(&data);
    assert!(!store.has(&cid).await.unwrap());
    assert_eq!(store.get(&cid).await.unwrap(), None);
    store.put(cid, data.clone()).await.unwrap();
    store.put(cid, data.clone()).await.unwrap();
    assert!(store.has(&cid).await.unwrap());
    assert_eq!(store.get(&cid).await.unwrap(), Some(data.clone()));
    assert_eq!(store.get(&raw_cid(b"other")).await.unwrap(), None);

    let same_hash = Cid::new_v1(DAG_PB, *cid.hash());
    assert_eq!(store.get(&same_hash).await.unwrap(), Some(data.clone()), "keyed by multihash");

    let big = Bytes::from(vec![0xa5; 2 << 20]);
    let big_cid = raw_cid(&big);
    store.put(big_cid, big.clone()).await.unwrap();
    assert_eq!(store.get(&big_cid).await.unwrap(), Some(big.clone()), "a 2 MiB block round-trips");

    let batch: Vec<(Cid, Bytes)> = (0..300u32)
        .map(|i| Bytes::from(i.to_be_bytes().repeat(64)))
        .map(|d| (raw_cid(&d), d))
        .collect();
    store.put_many(batch.clone()).await.unwrap();
    for (cid, data) in &batch {
        assert_eq!(store.get(cid).await.unwrap().as_ref(), Some(data), "batched block {cid}");
    }

    let mut inventory = store.inventory().await.unwrap();
    inventory.sort();
    let mut expected: Vec<_> = batch.iter().map(|(c, d)| (*c.hash(), d.len())).collect();
    expected.extend([(*cid.hash(), data.len()), (*big_cid.hash(), big.len())]);
    expected.sort();
    assert_eq!(inventory, expected, "each block once, by multihash, with its size");

    store.delete_many(vec![*big_cid.hash(), *raw_cid(b"never stored").hash()]).await.unwrap();
    assert!(!store.has(&big_cid).await.unwrap(), "deleted");
    assert_eq!(store.get(&big_cid).await.unwrap(), None);
    assert_eq!(store.inventory().await.unwrap().len(), expected.len() - 1);
    assert!(store.has(&cid).await.unwrap(), "the others stay");
}

/// Puts made at once, as deliveries are, all land; a backend may group them.
pub async fn concurrent_puts(store: impl BlockStore) {
    let blocks: Vec<(Cid, Bytes)> = (0..200u32)
        .map(|i| Bytes::from(i.to_le_bytes().repeat(1024)))
        .map(|d| (raw_cid(&d), d))
        .collect();
    let puts = blocks.iter().map(|(cid, data)| store.put(*cid, data.clone()));
    for result in futures::future::join_all(puts).await {
        result.unwrap();
    }
    for (cid, data) in &blocks {
        assert_eq!(store.get(cid).await.unwrap().as_ref(), Some(data));
    }
    assert_eq!(store.inventory().await.unwrap().len(), blocks.len());
}

/// Manifests are kept by root: a second put replaces the first, and a removed one is gone.
pub async fn manifests(store: NodeBlockStore) {
    assert!(store.manifests().await.unwrap().is_empty());
    let partial = Manifest {
        root: raw_cid(b"a root"),
        name: "notes.txt".into(),
        size: 0,
        since_ms: 1_764_000_000_000,
        complete: false,
    };
    let other = Manifest { root: raw_cid(b"another root"), ..partial.clone() };
    store.put_manifest(&partial).await.unwrap();
    store.put_manifest(&other).await.unwrap();
    let complete = Manifest { size: 1234, complete: true, ..partial.clone() };
    store.put_manifest(&complete).await.unwrap();
    let mut expected = vec![complete, other.clone()];
    expected.sort_by_key(|m| m.root);
    assert_eq!(store.manifests().await.unwrap(), expected);
    store.remove_manifest(&partial.root).await.unwrap();
    assert_eq!(store.manifests().await.unwrap(), vec![other]);
}
