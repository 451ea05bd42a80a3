//! Two native peers on a real relay process over WebSocket: one reserves a slot, the other dials
//! it through the circuit and fetches 10 MiB over Bitswap, every block verified; and a circuit
//! dialled while the node is still dialling its relay.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)

mod common;

use std::time::{Duration, Instant};

use common::{node, wait_for, Relay};
use syncscope_node::content::import_demo;
use syncscope_node::node::{self, FetchUpdate, NodeConfig, NodeEvent, TransportKind};

const SIZE: usize = 10 << 20;

#[tokio::test(flavor = "multi_thread")]
async fn ten_mebibytes_through_a_circuit_over_bitswap() {
    let relay = Relay::start(&[]);
    let mut provider = node(&relay, "ws").await;
    let mut fetcher = node(&relay, "ws").await;

    let demo = import_demo(7, SIZE);
    let root = demo.unixfs.root;
    provider.add_imported("demo", demo.unixfs, demo.swarm).unwrap();
    wait_for(&mut provider, Duration::from_secs(10), |e| matches!(e, NodeEvent::ContentAdded(_)))
        .await;

    provider.join_room("circuit").unwrap();
    fetcher.join_room("circuit").unwrap();
    // One of the two dialled, the other accepted: both must see the connection as a circuit.
    let (provider_id, fetcher_id) = (provider.peer_id, fetcher.peer_id);
    for (node, other) in [(&mut fetcher, provider_id), (&mut provider, fetcher_id)] {
        wait_for(node, Duration::from_secs(10), |e| {
            matches!(e, NodeEvent::Connected { peer, transport: TransportKind::Circuit, .. } if *peer == other)
        })
        .await;
    }

    let started = Instant::now();
    fetcher.fetch(root).unwrap();
    let done = wait_for(&mut fetcher, Duration::from_secs(60), |e| {
        matches!(e, NodeEvent::Fetch(FetchUpdate::Done { .. } | FetchUpdate::Failed { .. }))
    })
    .await;
    let NodeEvent::Fetch(FetchUpdate::Done { root: got, size, blocks, sources, .. }) = done else {
        panic!("fetch failed: {done:?}");
    };
    assert_eq!((got, size), (root, SIZE as u64));
    assert_eq!(blocks, 41, "40 leaves of 256 KiB and their parent");
    assert_eq!(sources.peers(), 1, "every block came from the one seed");
    println!("10 MiB through the circuit in {:?}", started.elapsed());
}

/// A node asked to dial a circuit right after it started, while its own dial of the relay is
/// still under way, reaches the peer once the relay is connected (vendor/libp2p-relay's client
/// used to drop such a dial: its own dial of the relay was refused as a second one).
#[tokio::test(flavor = "multi_thread")]
async fn a_circuit_dialled_before_the_relay_is_connected_comes_up() {
    let relay = Relay::start(&[]);
    let mut listener = node::start(NodeConfig::new(relay.relay_address("ws"))).await.unwrap();
    let reserved = wait_for(&mut listener, Duration::from_secs(10), |e| {
        matches!(e, NodeEvent::Reserved { .. })
    });
    let NodeEvent::Reserved { addr } = reserved.await else { unreachable!() };
    let circuit = addr.with_p2p(listener.peer_id).unwrap();

    let mut dialler = node::start(NodeConfig::new(relay.relay_address("ws"))).await.unwrap();
    dialler.dial(circuit.clone()).unwrap();
    let listener_id = listener.peer_id;
    let outcome = wait_for(&mut dialler, Duration::from_secs(10), |e| match e {
        NodeEvent::Connected { peer, transport: TransportKind::Circuit, .. } => {
            *peer == listener_id
        }
        NodeEvent::DialFailed { peer, .. } => *peer == Some(listener_id),
        _ => false,
    })
    .await;
    assert!(matches!(outcome, NodeEvent::Connected { .. }), "dialling {circuit}: {outcome:?}");
}
