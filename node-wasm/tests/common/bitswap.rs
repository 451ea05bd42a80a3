//! Bitswap nodes with block stores, and blocks for them.

use bytes::Bytes;
use cid::Cid;
use libp2p::identity::Keypair;
use libp2p::{Multiaddr, PeerId};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use syncscope_node::content::Block;
use syncscope_node::net::bitswap::{Behaviour, Config, Event};
use syncscope_node::store::{BlockStore, MemoryBlockStore};
use syncscope_proto::bitswap::{raw_cid, ProtocolVersion, SessionId};

use super::{swarm, Running};

pub type Bitswap = Behaviour<MemoryBlockStore>;

/// `n` blocks as the benchmark has them: the first 800 bytes, the others 8000, random data.
pub fn blocks(n: usize, seed: u64) -> Vec<(Cid, Bytes)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let mut data = vec![0; if i == 0 { 800 } else { 8000 }];
            rng.fill_bytes(&mut data);
            (raw_cid(&data), Bytes::from(data))
        })
        .collect()
}

/// A Bitswap node with a memory store.
pub async fn bitswap(config: Config) -> Running<Bitswap> {
    node_with(config, MemoryBlockStore::new()).await
}

pub async fn node_with<S: BlockStore>(config: Config, store: S) -> Running<Behaviour<S>> {
    Running::start(swarm(Keypair::generate_ed25519(), Behaviour::new(config, store))).await
}

/// A node with a memory store that holds `blocks`, once the store has them all.
pub async fn seed(config: Config, blocks: &[(Cid, Bytes)]) -> Running<Bitswap> {
    seed_with(config, MemoryBlockStore::new(), blocks).await
}

pub async fn seed_with<S: BlockStore>(
    config: Config,
    store: S,
    blocks: &[(Cid, Bytes)],
) -> Running<Behaviour<S>> {
    let mut node = node_with(config, store).await;
    let given = blocks.to_vec();
    node.with(move |s| {
        for (cid, data) in given {
            s.behaviour_mut().add_block(Block::verified(cid, data).expect("valid block"));
        }
    })
    .await;
    for _ in blocks {
        node.wait_event(|e| matches!(e, Event::BlockAdded { .. }).then_some(())).await;
    }
    node
}

/// Dials `peers` and waits until each speaks Bitswap; returns the versions negotiated.
pub async fn connect<S: BlockStore>(
    node: &mut Running<Behaviour<S>>,
    peers: &[(PeerId, Multiaddr)],
) -> Vec<ProtocolVersion> {
    for (_, addr) in peers {
        node.dial(addr.clone()).await;
    }
    let mut versions = Vec::new();
    while versions.len() < peers.len() {
        let (peer, version) = node
            .wait_event(|e| match e {
                Event::PeerConnected { peer, version } => Some((*peer, *version)),
                _ => None,
            })
            .await;
        if peers.iter().any(|(p, _)| *p == peer) {
            versions.push(version);
        }
    }
    versions
}

/// Blocks fetched by `fetch`, in arrival order, once it is done.
pub async fn fetched<S: BlockStore>(
    node: &mut Running<Behaviour<S>>,
    fetch: SessionId,
) -> Vec<(Cid, Bytes)> {
    let mut got = Vec::new();
    loop {
        let event = node
            .wait_event(|e| match e {
                Event::Block { fetch: f, cid, data, .. } if *f == fetch => {
                    Some(Some((*cid, data.clone())))
                }
                Event::FetchDone { fetch: f } if *f == fetch => Some(None),
                _ => None,
            })
            .await;
        match event {
            Some(block) => got.push(block),
            None => return got,
        }
    }
}
