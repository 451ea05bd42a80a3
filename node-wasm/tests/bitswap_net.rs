//! Bitswap over real libp2p swarms: one fetcher and three seeds on loopback TCP, in both client
//! modes, every block checked against the original bytes and its CID.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::collections::HashMap;
use std::future::Future;
use std::time::{Duration, Instant};

use bytes::Bytes;
use cid::Cid;
use common::bitswap::{bitswap, blocks, connect, fetched, node_with, seed, seed_with};
use common::{swarm, Running};
use libp2p::identity::Keypair;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use syncscope_node::cond_send::CondSend;
use syncscope_node::net::bitswap::{Config, Event};
use syncscope_node::store::{BlockKey, BlockStore, MemoryBlockStore, StoreError};
use syncscope_proto::bitswap::{raw_cid, ProtocolVersion};

const BLOCKS: usize = 100;

/// Seed `s` of three holds every block `i` with `i % 3 != s`: each block is on two seeds, so
/// the fetcher meets HAVE, DONT_HAVE and blocks from everyone.
fn share(all: &[(Cid, Bytes)], s: usize) -> Vec<(Cid, Bytes)> {
    all.iter().enumerate().filter(|(i, _)| i % 3 != s).map(|(_, b)| b.clone()).collect()
}

async fn fetch_from_three_seeds(config: Config, expected: ProtocolVersion) {
    let all = blocks(BLOCKS, 7);
    let mut seeds = Vec::new();
    for s in 0..3 {
        seeds.push(seed(Config::default(), &share(&all, s)).await);
    }
    let mut fetcher = bitswap(config).await;
    let peers: Vec<_> = seeds.iter().map(|s| (s.peer_id, s.addr.clone())).collect();
    let versions = connect(&mut fetcher, &peers).await;
    assert_eq!(versions, vec![expected; 3], "highest common version negotiated");

    let started = Instant::now();
    let cids: Vec<Cid> = all.iter().map(|(c, _)| *c).collect();
    let fetch = fetcher.with(move |s| s.behaviour_mut().fetch(cids)).await;
    let got = fetched(&mut fetcher, fetch).await;
    let elapsed = started.elapsed();

    let want: HashMap<Cid, Bytes> = all.iter().cloned().collect();
    assert_eq!(got.len(), BLOCKS, "every block once");
    for (cid, data) in &got {
        assert_eq!(raw_cid(data), *cid, "data hashes to its CID");
        assert_eq!(Some(data), want.get(cid), "the seeded bytes");
    }
    let store_ok = fetcher
        .with(move |s| all.iter().all(|(c, d)| s.behaviour().store().block(c).as_ref() == Some(d)))
        .await;
    assert!(store_ok, "every block is in the fetcher's store");

    let stats = fetcher.with(|s| s.behaviour().stats()).await;
    let c = stats.counters;
    assert_eq!(c.blocks_received - c.duplicate_blocks, BLOCKS as u64);
    assert_eq!(c.unsolicited_blocks, 0);
    assert_eq!((stats.peers, stats.wanted_blocks, stats.peers_disconnected), (3, 0, 0));
    let mut served = 0;
    for s in &seeds {
        served += s.with(|s| s.behaviour().stats().counters.blocks_sent).await;
    }
    assert_eq!(served, c.blocks_received, "every block received was sent by a seed");
    eprintln!(
        "{expected}: {BLOCKS} blocks in {elapsed:?}, {} duplicates, {} msgs / {} bytes received",
        c.duplicate_blocks, c.msgs_received, c.bytes_received
    );
}

#[tokio::test]
async fn sessions_fetch_100_blocks_from_three_seeds() {
    fetch_from_three_seeds(Config::default(), ProtocolVersion::V1_2_0).await;
}

#[tokio::test]
async fn legacy_fetch_100_blocks_from_three_seeds() {
    fetch_from_three_seeds(Config::legacy(), ProtocolVersion::V1_1_0).await;
}

#[tokio::test]
async fn held_blocks_come_from_the_store_and_fetches_can_grow() {
    let all = blocks(20, 9);
    let seed_node = seed(Config::default(), &all).await;
    let mut fetcher = seed(Config::default(), &all[..5]).await;
    connect(&mut fetcher, &[(seed_node.peer_id, seed_node.addr.clone())]).await;
    let first: Vec<Cid> = all[..10].iter().map(|(c, _)| *c).collect();
    let fetch = fetcher.with(move |s| s.behaviour_mut().fetch(first)).await;
    assert_eq!(fetched(&mut fetcher, fetch).await.len(), 10);
    let rest: Vec<Cid> = all[10..].iter().map(|(c, _)| *c).collect();
    fetcher.with(move |s| s.behaviour_mut().fetch_more(fetch, rest)).await.expect("open fetch");
    assert_eq!(fetched(&mut fetcher, fetch).await.len(), 10);
    let stats = fetcher.with(|s| s.behaviour().stats()).await;
    assert_eq!(stats.counters.blocks_received, 15, "the five held blocks were not fetched");
    fetcher.with(move |s| s.behaviour_mut().close(fetch)).await;
    assert_eq!(fetcher.with(|s| s.behaviour().stats().open_fetches).await, 0);
}

#[tokio::test]
async fn a_peer_without_bitswap_is_left_out_of_fetches() {
    let all = blocks(10, 3);
    let seed_node = seed(Config::default(), &all).await;
    let ping = libp2p::ping::Behaviour::default();
    let other = Running::start(swarm(Keypair::generate_ed25519(), ping)).await;
    let mut fetcher = bitswap(Config::default()).await;
    fetcher.dial(other.addr.clone()).await;
    fetcher.wait_connected(other.peer_id, true).await;
    connect(&mut fetcher, &[(seed_node.peer_id, seed_node.addr.clone())]).await;
    let cids: Vec<Cid> = all.iter().map(|(c, _)| *c).collect();
    let fetch = fetcher.with(move |s| s.behaviour_mut().fetch(cids)).await;
    assert_eq!(fetched(&mut fetcher, fetch).await.len(), 10);
    let stats = fetcher.with(|s| s.behaviour().stats()).await;
    assert_eq!(stats.peers, 1, "only the seed speaks Bitswap");
    let other_id = other.peer_id;
    let asked = fetcher.with(move |s| s.behaviour().peer_stats(other_id).msgs_sent).await;
    assert_eq!(asked, 0, "nothing was sent to the peer without Bitswap");
}

#[tokio::test]
async fn more_wants_than_a_peer_queues_are_fetched_through_the_window() {
    // The seed keeps at most 1024 wants per peer and ignores the rest, as boxo does: without a
    // window, wants beyond it would never be answered.
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let all: Vec<(Cid, Bytes)> = (0..1500)
        .map(|_| {
            let mut data = vec![0; 64];
            rng.fill_bytes(&mut data);
            (raw_cid(&data), Bytes::from(data))
        })
        .collect();
    let seed_node = seed(Config::default(), &all).await;
    let mut fetcher = bitswap(Config::default()).await;
    connect(&mut fetcher, &[(seed_node.peer_id, seed_node.addr.clone())]).await;
    let cids: Vec<Cid> = all.iter().map(|(c, _)| *c).collect();
    let fetch = fetcher.with(move |s| s.behaviour_mut().fetch(cids)).await;
    let active = fetcher.with(|s| s.behaviour().stats().active_wants).await;
    assert!(active <= Config::default().bitswap.max_active_wants, "{active} wants out at once");
    assert_eq!(fetched(&mut fetcher, fetch).await.len(), all.len());
    let refused = seed_node.with(|s| s.behaviour().stats().counters.refused_wants).await;
    assert_eq!(refused, 0, "no want was ever refused");
    assert_eq!(fetcher.with(|s| s.behaviour().stats().active_wants).await, 0);
}

/// The memory store behind a delay on every call, as a disk or IndexedDB store would be: loads
/// and puts stay pending across polls of the behaviour.
struct SlowStore {
    blocks: MemoryBlockStore,
    delay: Duration,
}

impl SlowStore {
    fn new() -> Self {
        Self { blocks: MemoryBlockStore::new(), delay: Duration::from_millis(3) }
    }
}

impl BlockStore for SlowStore {
    fn get(&self, cid: &Cid) -> impl Future<Output = Result<Option<Bytes>, StoreError>> + CondSend {
        let data = self.blocks.block(cid);
        let delay = self.delay;
        async move {
            tokio::time::sleep(delay).await;
            Ok(data)
        }
    }

    async fn put_many(&self, blocks: Vec<(Cid, Bytes)>) -> Result<(), StoreError> {
        tokio::time::sleep(self.delay).await;
        self.blocks.put_many(blocks).await
    }

    fn has(&self, cid: &Cid) -> impl Future<Output = Result<bool, StoreError>> + CondSend {
        self.blocks.has(cid)
    }

    fn delete_many(
        &self,
        keys: Vec<BlockKey>,
    ) -> impl Future<Output = Result<(), StoreError>> + CondSend {
        self.blocks.delete_many(keys)
    }

    fn inventory(
        &self,
    ) -> impl Future<Output = Result<Vec<(BlockKey, usize)>, StoreError>> + CondSend {
        self.blocks.inventory()
    }
}

#[tokio::test]
async fn a_slow_store_serves_stores_and_answers_fetches() {
    let all = blocks(100, 4);
    let seeds = [
        seed_with(Config::default(), SlowStore::new(), &all).await,
        seed_with(Config::default(), SlowStore::new(), &all).await,
    ];
    let mut fetcher = node_with(Config::default(), SlowStore::new()).await;
    let peers: Vec<_> = seeds.iter().map(|s| (s.peer_id, s.addr.clone())).collect();
    connect(&mut fetcher, &peers).await;
    let cids: Vec<Cid> = all.iter().map(|(c, _)| *c).collect();
    let again = cids.clone();
    let fetch = fetcher.with(move |s| s.behaviour_mut().fetch(cids)).await;
    let want: HashMap<Cid, Bytes> = all.iter().cloned().collect();
    let got = fetched(&mut fetcher, fetch).await;
    assert_eq!(got.len(), all.len());
    assert!(got.iter().all(|(c, d)| want.get(c) == Some(d)));
    let stored = fetcher.with(|s| s.behaviour().store().blocks.len()).await;
    assert_eq!(stored, all.len(), "every block was put before it was reported");

    let before = fetcher.with(|s| s.behaviour().stats().counters.blocks_received).await;
    let refetch = fetcher.with(move |s| s.behaviour_mut().fetch(again)).await;
    assert_eq!(fetched(&mut fetcher, refetch).await.len(), all.len(), "now from the store");
    let stats = fetcher.with(|s| s.behaviour().stats()).await;
    assert_eq!(stats.counters.blocks_received, before, "nothing fetched twice");
    assert_eq!((stats.store_reads_in_flight, stats.store_writes_in_flight), (0, 0));
}

#[tokio::test]
async fn a_fetched_block_is_reported_verified_before_its_put_commits_and_as_a_block_after() {
    let all = blocks(1, 5);
    let seed_node = seed(Config::default(), &all).await;
    let store = SlowStore { blocks: MemoryBlockStore::new(), delay: Duration::from_millis(300) };
    let mut fetcher = node_with(Config::default(), store).await;
    connect(&mut fetcher, &[(seed_node.peer_id, seed_node.addr.clone())]).await;
    let (cid, data) = all[0].clone();
    let fetch = fetcher.with(move |s| s.behaviour_mut().fetch([cid])).await;
    let verified = fetcher
        .wait_event(|e| match e {
            Event::Verified { fetch: f, cid: c, data } if (*f, *c) == (fetch, cid) => {
                Some(data.clone())
            }
            _ => None,
        })
        .await;
    assert_eq!(verified, data);
    let stored = || fetcher.with(|s| s.behaviour().store().blocks.len());
    assert_eq!(stored().await, 0, "reported before the put committed");
    assert_eq!(fetched(&mut fetcher, fetch).await.len(), 1);
    assert_eq!(fetcher.with(|s| s.behaviour().store().blocks.len()).await, 1, "and then stored");
}

#[tokio::test]
async fn a_peer_with_two_connections_survives_losing_one_mid_fetch() {
    use libp2p::swarm::dial_opts::{DialOpts, PeerCondition};
    use syncscope_node::net::bitswap::Event;

    let all = blocks(200, 8);
    let seed_node = seed(Config::default(), &all).await;
    let mut fetcher = bitswap(Config::default()).await;
    connect(&mut fetcher, &[(seed_node.peer_id, seed_node.addr.clone())]).await;
    let (peer, addr) = (seed_node.peer_id, seed_node.addr.clone());
    let again = DialOpts::peer_id(peer).addresses(vec![addr]).condition(PeerCondition::Always);
    fetcher.with(move |s| s.dial(again.build())).await.expect("second dial");
    let deadline = tokio::time::Instant::now() + common::PATIENCE;
    while fetcher.connections(peer).len() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "second connection not up");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    let cids: Vec<Cid> = all.iter().map(|(c, _)| *c).collect();
    let fetch = fetcher.with(move |s| s.behaviour_mut().fetch(cids)).await;
    fetcher.wait_event(|e| matches!(e, Event::Block { .. }).then_some(())).await;
    // The oldest connection carries the traffic: it goes with messages in flight.
    let oldest = fetcher.connections(peer)[0];
    assert!(fetcher.with(move |s| s.close_connection(oldest)).await);
    let got = fetched(&mut fetcher, fetch).await;
    assert_eq!(got.len() + 1, all.len(), "the rest arrive over the other connection");
    assert!(fetcher.is_connected(peer).await);
    let stats = fetcher.with(|s| s.behaviour().stats()).await;
    assert_eq!((stats.peers, stats.wanted_blocks), (1, 0));
    // The peer was started afresh on the connection left, on both ends.
    let reset = |e: &Event| matches!(e, Event::PeerConnected { .. }).then_some(());
    fetcher.wait_event(reset).await;
    assert_eq!(seed_node.with(|s| s.behaviour().stats().peers).await, 1);
}
