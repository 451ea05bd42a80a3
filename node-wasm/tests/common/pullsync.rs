//! Pull-sync nodes with in-memory stores, and chunks for them.

use bytes::Bytes;
use libp2p::identity::Keypair;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use syncscope_node::net::pullsync::{Behaviour, Config};
use syncscope_proto::pullsync::{MemoryIntervalStore, MemoryReserve};
use syncscope_proto::swarm::{Address, Chunk, Stamp, STAMP_SIZE};

use super::{swarm, Running};

pub type Pullsync = Behaviour<MemoryReserve, MemoryIntervalStore>;

/// A pull-sync node with an in-memory store at `overlay`.
pub fn node(key: Keypair, overlay: Address, config: Config) -> libp2p::Swarm<Pullsync> {
    let store = MemoryReserve::new(overlay, 1);
    swarm(key, Behaviour::new(config, overlay, store, MemoryIntervalStore::default()))
}

/// An overlay whose first byte is `prefix` and the rest zero.
pub fn overlay(prefix: u8) -> Address {
    let mut a = [0u8; 32];
    a[0] = prefix;
    Address(a)
}

/// `n` random full chunks with random stamps, from `seed`.
pub fn random_chunks(seed: u64, n: usize) -> Vec<Chunk> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut payload = vec![0u8; 4096];
    (0..n)
        .map(|_| {
            rng.fill_bytes(&mut payload);
            let mut stamp = vec![0u8; STAMP_SIZE];
            rng.fill_bytes(&mut stamp);
            Chunk::new(&payload, Stamp::new(Bytes::from(stamp)).expect("stamp")).expect("chunk")
        })
        .collect()
}

/// Stores `chunks` in a running pull-sync node as uploads.
pub async fn upload(node: &Running<Pullsync>, chunks: Vec<Chunk>) {
    node.with(move |s| {
        for c in chunks {
            s.behaviour_mut().store_chunk(c).expect("memory store");
        }
    })
    .await;
}
