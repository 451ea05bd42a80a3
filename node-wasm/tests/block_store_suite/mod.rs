//! What every `BlockStore` backend must do: one suite, run over each backend on its target.

use bytes::Bytes;
use syncscope_node::store::BlockStore;
use syncscope_proto::bitswap::raw_cid;

pub async fn conformance(store: impl BlockStore) {
    let data = Bytes::from_static(b"a verified block");
    let cid = raw_cid(&data);
    assert!(!store.has(&cid).await.unwrap());
    assert_eq!(store.get(&cid).await.unwrap(), None);
    assert!(store.put(cid, data.clone()).await.unwrap(), "first put stores");
    assert!(!store.put(cid, data.clone()).await.unwrap(), "second put finds it there");
    assert!(store.has(&cid).await.unwrap());
    assert_eq!(store.get(&cid).await.unwrap(), Some(data));
    assert_eq!(store.get(&raw_cid(b"other")).await.unwrap(), None);

    let big = Bytes::from(vec![0xa5; 2 << 20]);
    let big_cid = raw_cid(&big);
    assert!(store.put(big_cid, big.clone()).await.unwrap());
    assert_eq!(store.get(&big_cid).await.unwrap(), Some(big), "a 2 MiB block round-trips");
}
