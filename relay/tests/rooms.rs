//! Discovery through rooms on a real relay process: members see each other within 2 s, a
//! member that leaves is gone from the others' lists within 10 s, and a member stays listed while
//! it holds a reservation, whatever its other connections do.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::{http_get, metric, node, wait_for, Relay};
use libp2p::futures::StreamExt;
use libp2p::swarm::{dummy, SwarmEvent};
use libp2p::{noise, tcp, yamux, PeerId, SwarmBuilder};
use syncscope_node::node::{self, NodeConfig, NodeEvent, NodeHandle};
use syncscope_node::PeerKind;

/// Waits until `handle`'s latest view of `room` equals `expected`.
async fn wait_members(
    handle: &mut NodeHandle,
    room: &str,
    expected: &BTreeSet<PeerId>,
    timeout: Duration,
) {
    wait_for(handle, timeout, |e| match e {
        NodeEvent::Room(update) if update.room == room => {
            update.members.iter().map(|m| m.peer).collect::<BTreeSet<_>>() == *expected
        }
        _ => false,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn members_see_each_other_and_leavers_disappear() {
    let relay = Relay::start(&[]);
    let mut nodes = Vec::new();
    for _ in 0..3 {
        nodes.push(node(&relay, "tcp").await);
    }
    let ids: Vec<PeerId> = nodes.iter().map(|n| n.peer_id).collect();

    let joined = Instant::now();
    for n in &mut nodes {
        n.join_room("lab").unwrap();
    }
    for n in &mut nodes {
        let others: BTreeSet<_> = ids.iter().copied().filter(|p| *p != n.peer_id).collect();
        wait_members(n, "lab", &others, Duration::from_secs(2)).await;
    }
    println!("all three saw each other after {:?}", joined.elapsed());

    let leaver = nodes.pop().unwrap();
    let left = Instant::now();
    drop(leaver);
    let remaining: Vec<PeerId> = nodes.iter().map(|n| n.peer_id).collect();
    for n in &mut nodes {
        let others: BTreeSet<_> = remaining.iter().copied().filter(|p| *p != n.peer_id).collect();
        wait_members(n, "lab", &others, Duration::from_secs(10)).await;
    }
    println!("the leaver was gone after {:?}", left.elapsed());
}

#[tokio::test(flavor = "multi_thread")]
async fn member_addresses_go_through_the_relay_and_are_dialable() {
    let relay = Relay::start(&[]);
    let mut a = node(&relay, "tcp").await;
    let b = node(&relay, "ws").await;
    a.join_room("dial").unwrap();
    b.join_room("dial").unwrap();
    let event = wait_for(
        &mut a,
        Duration::from_secs(5),
        |e| matches!(e, NodeEvent::Room(u) if !u.members.is_empty()),
    )
    .await;
    let NodeEvent::Room(update) = event else { unreachable!() };
    let member = &update.members[0];
    assert_eq!(member.peer, b.peer_id);
    assert_eq!(member.kind, PeerKind::Native, "agent {:?}", member.agent);
    assert!(member.addrs[0].to_string().contains("/p2p-circuit/"), "{:?}", member.addrs);
    assert!(
        !member.addrs[0].to_string().contains("/ws/"),
        "our own transport (tcp) comes first: {:?}",
        member.addrs
    );

    a.dial(member.addrs[0].clone()).unwrap();
    wait_for(&mut a, Duration::from_secs(5), |e| {
        matches!(e, NodeEvent::Connected { peer, transport: syncscope_node::node::TransportKind::Circuit, .. } if *peer == b.peer_id)
    })
    .await;
}

/// A peer may open a second connection to the relay beside the one holding its reservation (a
/// second dial of the relay, or a browser that took a room member's `/webrtc` address for the
/// relay's, before `vendor/libp2p-webrtc-utils` refused it) and close it again.
#[tokio::test(flavor = "multi_thread")]
async fn a_member_whose_other_connection_to_the_relay_closes_stays_listed() {
    let relay = Relay::start(&[]);
    let config = NodeConfig::new(relay.relay_address("tcp"));
    let key = config.keypair.clone();
    let mut a = node(&relay, "tcp").await;
    let mut b = node::start(config).await.unwrap();
    wait_for(&mut b, Duration::from_secs(10), |e| matches!(e, NodeEvent::Reserved { .. })).await;
    a.join_room("second").unwrap();
    b.join_room("second").unwrap();
    wait_members(&mut a, "second", &BTreeSet::from([b.peer_id]), Duration::from_secs(2)).await;

    let mut second = SwarmBuilder::with_existing_identity(key)
        .with_tokio()
        .with_tcp(tcp::Config::default(), noise::Config::new, yamux::Config::default)
        .unwrap()
        .with_behaviour(|_| dummy::Behaviour)
        .unwrap()
        .build();
    second.dial(relay.addr("tcp")).unwrap();
    while !matches!(second.next().await, Some(SwarmEvent::ConnectionEstablished { .. })) {}
    // The dialer is done with the handshake before the relay is; close only once the relay counts
    // the connection too.
    let tcp_connections = r#"syncscope_relay_connections{transport="TCP"} "#;
    let counted = tokio::time::timeout(Duration::from_secs(10), async {
        while metric(&http_get(&relay, "/metrics"), tcp_connections) != Some(3.0) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    counted.await.expect("the relay counts the second connection");
    drop(second);

    let unlisted = tokio::time::timeout(Duration::from_secs(2), async {
        loop {
            match a.events.next().await.expect("node stopped") {
                NodeEvent::Room(u) if u.members.iter().all(|m| m.peer != b.peer_id) => return u,
                _ => {}
            }
        }
    })
    .await;
    assert!(unlisted.is_err(), "the member was unlisted when its second connection closed");
    let metrics = http_get(&relay, "/metrics");
    assert_eq!(metric(&metrics, "syncscope_relay_reservations "), Some(2.0), "{metrics}");
}
