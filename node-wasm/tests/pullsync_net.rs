//! Pull-sync between real libp2p nodes over TCP on loopback.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::pullsync::{node, overlay, random_chunks, upload, Pullsync};
use common::{eventually, swarm, Running};
use libp2p::identity::Keypair;
use syncscope_node::net::pullsync::{Behaviour, Config};
use syncscope_node::store::{
    NodeBlockStore, PullsyncState, RecordWrite, Records, StoreError, Table, MAX_QUEUED_CHUNKS,
};
use syncscope_proto::pullsync::{self, MemoryReserve, RateLimit};
use syncscope_proto::swarm::{Address, Chunk};

/// Checks that `node` holds exactly `expected`, every chunk verifying against its address.
async fn assert_holds_exactly(node: &Running<Pullsync>, expected: Vec<Chunk>, name: &str) {
    let count = expected.len();
    let held = node
        .with(move |s| {
            let store = s.behaviour().store();
            let all_there = expected.iter().all(|c| {
                store.get(&c.chunk_ref()).is_some_and(|stored| {
                    Chunk::verify(stored.address(), stored.data().clone(), stored.stamp().clone())
                        .is_ok()
                })
            });
            (all_there, store.len())
        })
        .await;
    assert_eq!(held, (true, count), "{name} holds exactly its {count} chunks, verified");
}

fn within(overlay: Address, radius: u8, chunks: &[Chunk]) -> Vec<Chunk> {
    chunks.iter().filter(|c| overlay.proximity(&c.address()) >= radius).cloned().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_sync_their_neighbourhoods() {
    // A (00..) and B (01..) share the first bit; C (1...) is alone in its half. B has the
    // deeper radius, so it keeps only the 01 quarter and syncs A's bin 1 and C's bin 0 only.
    let setup = [(overlay(0x00), 1u8), (overlay(0x40), 2), (overlay(0x80), 1)];
    let mut nodes = Vec::new();
    let mut uploads = Vec::new();
    for (i, &(o, radius)) in setup.iter().enumerate() {
        let config = Config::default().with_storage_radius(radius);
        let node = Running::start(node(Keypair::generate_ed25519(), o, config)).await;
        let chunks = random_chunks(100 + i as u64, 60);
        upload(&node, chunks.clone()).await;
        uploads.push(chunks);
        nodes.push(node);
    }
    let peers: Vec<_> = nodes.iter().map(|n| n.peer_id).collect();
    for node in &nodes {
        let peers = peers.clone();
        node.with(move |s| {
            for (peer, (o, _)) in peers.into_iter().zip(setup) {
                s.behaviour_mut().set_peer_overlay(peer, o);
            }
        })
        .await;
    }
    nodes[0].dial(nodes[1].addr.clone()).await;
    nodes[0].dial(nodes[2].addr.clone()).await;
    nodes[1].dial(nodes[2].addr.clone()).await;

    let all: Vec<Chunk> = uploads.concat();
    let mut expected = Vec::new();
    for (i, &(o, radius)) in setup.iter().enumerate() {
        let mut mine = uploads[i].clone();
        mine.extend(within(o, radius, &all).into_iter().filter(|c| !uploads[i].contains(c)));
        let count = mine.len();
        eventually(&nodes[i], move |s| s.behaviour().store().len() >= count).await;
        expected.push(mine);
    }
    // Nothing outside a radius arrives later either: give stragglers a moment, then compare.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    for (i, (node, mine)) in nodes.iter().zip(expected).enumerate() {
        assert_holds_exactly(node, mine, &format!("node {i}")).await;
        let stats = node.with(|s| s.behaviour().stats()).await;
        assert_eq!(stats.puller.chunks_rejected, 0);
        assert_eq!(stats.puller.misbehaviours + stats.server.misbehaviours, 0);
    }
    // B's radius is 2: it syncs only its own bin from A (proximity 1) and C (proximity 0).
    let (a, c) = (peers[0], peers[2]);
    let bins = nodes[1]
        .with(move |s| (s.behaviour().syncing_bins(&a), s.behaviour().syncing_bins(&c)))
        .await;
    assert_eq!(bins, (vec![1], vec![0]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_node_resumes_from_its_intervals_without_fetching_twice() {
    // A rate-limited server makes the sync take about a second, so it can be cut in the middle.
    // Both nodes use the same page size: a puller refuses offers larger than its own pages.
    let pages = pullsync::Config::default().with_max_page(50);
    let limited =
        pages.clone().with_rate_limit(Some(RateLimit { chunks_per_second: 600, burst: 50 }));
    let server_overlay = overlay(0x00);
    let server_config = Config::default().with_protocol(limited);
    let client_config = Config::default().with_protocol(pages);
    let server =
        Running::start(node(Keypair::generate_ed25519(), server_overlay, server_config)).await;
    let total = 600;
    upload(&server, random_chunks(7, total)).await;

    let key = Keypair::generate_ed25519();
    let me = overlay(0x01);
    let server_peer = server.peer_id;
    let puller = Running::start(node(key.clone(), me, client_config.clone())).await;
    puller.with(move |s| s.behaviour_mut().set_peer_overlay(server_peer, server_overlay)).await;
    puller.dial(server.addr.clone()).await;
    eventually(&puller, move |s| s.behaviour().store().len() >= total / 3).await;

    let mut stopped = puller.stop().await;
    let first = stopped.behaviour().stats();
    assert!(first.chunks_stored < total as u64, "stopped mid-sync");
    let store = std::mem::replace(stopped.behaviour_mut().store_mut(), MemoryReserve::new(me, 1));
    let intervals = std::mem::take(stopped.behaviour_mut().intervals_mut());
    drop(stopped);

    let behaviour = Pullsync::new(client_config, me, store, intervals);
    let restarted = Running::start(swarm(key, behaviour)).await;
    restarted.with(move |s| s.behaviour_mut().set_peer_overlay(server_peer, server_overlay)).await;
    restarted.dial(server.addr.clone()).await;
    eventually(&restarted, move |s| s.behaviour().store().len() >= total).await;

    let second = restarted.with(|s| s.behaviour().stats()).await;
    assert_eq!(
        first.puller.chunks_delivered + second.puller.chunks_delivered,
        total as u64,
        "every chunk delivered exactly once across the restart"
    );
    assert_eq!(first.chunks_duplicate + second.chunks_duplicate, 0);
    assert_eq!(second.peers_disconnected + first.peers_disconnected, 0);
    assert!(
        second.puller.chunks_offered < total as u64,
        "resumed from the recorded intervals: {} offered again",
        second.puller.chunks_offered
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_seeds_holding_the_same_chunks_deliver_each_chunk_once() {
    // A browser joining a room of seed peers: all three hold the same chunks, and the puller
    // starts syncing every bin from all of them at once.
    let total = 1500;
    let chunks = random_chunks(21, total);
    let mut seeds = Vec::new();
    for prefix in [0x00, 0x40, 0x80] {
        let o = overlay(prefix);
        let seed = Running::start(node(Keypair::generate_ed25519(), o, Config::default())).await;
        upload(&seed, chunks.clone()).await;
        seeds.push((seed, o));
    }
    // A radius no peer reaches keeps the puller idle until every seed is connected.
    let idle = Config::default().with_storage_radius(31);
    let puller = Running::start(node(Keypair::generate_ed25519(), overlay(0xc0), idle)).await;
    for (seed, o) in &seeds {
        let (peer, o) = (seed.peer_id, *o);
        puller.with(move |s| s.behaviour_mut().set_peer_overlay(peer, o)).await;
        puller.dial(seed.addr.clone()).await;
    }
    eventually(&puller, |s| s.behaviour().stats().peers == 3).await;
    puller.with(|s| s.behaviour_mut().set_storage_radius(0)).await;
    eventually(&puller, move |s| s.behaviour().store().len() >= total).await;

    assert_holds_exactly(&puller, chunks, "the puller").await;
    let stats = puller.with(|s| s.behaviour().stats()).await;
    assert_eq!(stats.chunks_duplicate, 0, "no chunk delivered twice: {stats:?}");
    assert_eq!((stats.chunks_stored, stats.puller.chunks_delivered), (total as u64, total as u64));
    assert!(stats.puller.chunks_skipped_in_flight > 0, "the seeds' offers overlapped: {stats:?}");
    assert_eq!(stats.puller.chunks_rejected + stats.puller.misbehaviours, 0);
    let sent: u64 = futures::future::join_all(
        seeds.iter().map(|(seed, _)| seed.with(|s| s.behaviour().stats().server.chunks_sent)),
    )
    .await
    .into_iter()
    .sum();
    assert_eq!(sent, total as u64, "the seeds sent each chunk once between them");
}

/// A peer that does not speak pull-sync (an IPFS node, say) is asked once per connection: the
/// failed negotiation marks the connection, and the core never sees the peer. Asked again, it
/// would be every half second for as long as the connection lives.
#[tokio::test]
async fn a_peer_that_does_not_speak_pullsync_is_asked_once_and_left_alone() {
    let node =
        Running::start(node(Keypair::generate_ed25519(), overlay(0), Config::default())).await;
    let foreign =
        Running::start(swarm(Keypair::generate_ed25519(), libp2p_stream::Behaviour::new())).await;
    node.dial(foreign.addr.clone()).await;
    node.wait_connected(foreign.peer_id, true).await;
    eventually(&node, |s| s.behaviour().stats().unsupported_connections == 1).await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let stats = node.with(|s| s.behaviour().stats()).await;
    assert_eq!((stats.peers, stats.unsupported_connections), (0, 1), "{stats:?}");
    assert_eq!(stats.peers_disconnected, 0, "not speaking a protocol is no offence");
    assert!(node.is_connected(foreign.peer_id).await, "the connection stays for other protocols");
}

/// A store whose record writes wait while `held` is set: one slower than the network.
struct HeldWrites {
    inner: NodeBlockStore,
    held: AtomicBool,
}

impl Records for HeldWrites {
    async fn records(&self, table: Table) -> Result<Vec<Vec<u8>>, StoreError> {
        self.inner.records(table).await
    }

    async fn records_at(
        &self,
        table: Table,
        keys: Vec<Vec<u8>>,
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.inner.records_at(table, keys).await
    }

    async fn write_records(&self, writes: Vec<RecordWrite>) -> Result<(), StoreError> {
        while self.held.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        self.inner.write_records(writes).await
    }
}

/// A puller whose store falls behind stops pulling once [`MAX_QUEUED_CHUNKS`] wait to be written,
/// rather than piling up what it pulls in memory, and goes on once the store catches up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_puller_waits_for_a_store_that_falls_behind() {
    let total = MAX_QUEUED_CHUNKS + 1000;
    let seed_overlay = overlay(0x00);
    let seed = Running::start(node(Keypair::generate_ed25519(), seed_overlay, Config::default()));
    let seed = seed.await;
    upload(&seed, random_chunks(31, total)).await;

    let store = Arc::new(HeldWrites { inner: NodeBlockStore::default(), held: true.into() });
    let me = overlay(0x01);
    let state = PullsyncState::load(store.clone(), me, 1).await.unwrap();
    let behaviour = Behaviour::new(Config::default(), me, state.reserve, state.intervals);
    let puller = Running::start(swarm(Keypair::generate_ed25519(), behaviour)).await;
    let seed_peer = seed.peer_id;
    puller.with(move |s| s.behaviour_mut().set_peer_overlay(seed_peer, seed_overlay)).await;
    puller.dial(seed.addr.clone()).await;
    eventually(&puller, |s| s.behaviour().store().len() >= MAX_QUEUED_CHUNKS).await;
    // Pages under way when the queue filled still land; nothing is asked for after them.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let held = puller.with(|s| s.behaviour().store().len()).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (still, paused) =
        puller.with(|s| (s.behaviour().store().len(), s.behaviour().is_paused())).await;
    assert!(held < total && still == held, "pulling stopped at {held} of {total} ({still})");
    assert!(!paused, "held back by the store, not paused by the node");

    store.held.store(false, Ordering::SeqCst);
    eventually(&puller, move |s| s.behaviour().store().len() >= total).await;
    let stats = puller.with(|s| s.behaviour().stats()).await;
    assert_eq!((stats.chunks_stored, stats.chunks_duplicate), (total as u64, 0), "{stats:?}");
}
