//! A peer that floods the relay is cut off, and the relay goes on serving everyone else.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)

mod common;

use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use common::{http_get, metric, node, wait_for, Relay};
use futures::StreamExt;
use libp2p::{
    gossipsub::IdentTopic, multiaddr::Protocol, noise, swarm::SwarmEvent, tcp, yamux, Multiaddr,
    SwarmBuilder,
};
use syncscope_node::net::rooms_behaviour;
use syncscope_node::node::NodeEvent;
use syncscope_proto::rooms::topic_of;

fn socket_addr(addr: &Multiaddr) -> SocketAddr {
    let mut ip = None;
    let mut port = None;
    for p in addr.iter() {
        match p {
            Protocol::Ip4(i) => ip = Some(i.into()),
            Protocol::Tcp(t) => port = Some(t),
            _ => {}
        }
    }
    SocketAddr::new(ip.unwrap(), port.unwrap())
}

/// Opens a TCP connection from `source` that never says anything.
fn silent_connection(source: &str, to: SocketAddr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let from: SocketAddr = format!("{source}:0").parse().unwrap();
    socket.bind(&from.into()).unwrap();
    socket.connect(&to.into()).unwrap();
    socket.into()
}

#[tokio::test(flavor = "multi_thread")]
async fn one_host_holding_sockets_cannot_lock_others_out() {
    let relay = Relay::start(&["--max-connections-per-ip", "4"]);
    let target = socket_addr(&relay.addr("tcp"));
    let held: Vec<TcpStream> = (0..50).map(|_| silent_connection("127.0.0.2", target)).collect();

    let mut honest = node(&relay, "tcp").await;
    honest.join_room("still-open").unwrap();
    wait_for(&mut honest, Duration::from_secs(5), |e| matches!(e, NodeEvent::Room(_))).await;

    let text = http_get(&relay, "/metrics");
    let refused =
        metric(&text, "syncscope_relay_refused_total{reason=\"connection\"}").unwrap_or(0.0);
    assert!(refused >= 40.0, "the sockets over the limit were refused: {refused}");
    drop(held);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_peer_spamming_a_room_is_banned_and_members_are_still_served() {
    let relay = Relay::start(&["--offences-before-ban", "10"]);
    let mut honest = node(&relay, "tcp").await;
    honest.join_room("lab").unwrap();
    wait_for(&mut honest, Duration::from_secs(5), |e| matches!(e, NodeEvent::Room(_))).await;

    let mut spammer = SwarmBuilder::with_new_identity()
        .with_tokio()
        .with_tcp(tcp::Config::default(), noise::Config::new, yamux::Config::default)
        .unwrap()
        .with_behaviour(|key| rooms_behaviour(key).unwrap())
        .unwrap()
        .build();
    let topic = IdentTopic::new(topic_of("lab").unwrap());
    spammer.behaviour_mut().subscribe(&topic).unwrap();
    spammer.dial(relay.addr("tcp")).unwrap();

    let banned = tokio::time::timeout(Duration::from_secs(20), async {
        let mut sent = 0u32;
        let mut tick = tokio::time::interval(Duration::from_millis(20));
        loop {
            tokio::select! {
                event = spammer.select_next_some() => {
                    if let SwarmEvent::ConnectionClosed { num_established: 0, .. } = event {
                        return sent;
                    }
                }
                _ = tick.tick() => {
                    if spammer.behaviour_mut().publish(topic.clone(), format!("spam {sent}")).is_ok() {
                        sent += 1;
                    }
                }
            }
        }
    })
    .await
    .expect("the spammer was cut off");
    assert!(banned >= 10, "cut off after {banned} publishes");

    spammer.dial(relay.addr("tcp")).unwrap();
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match spammer.select_next_some().await {
                SwarmEvent::ConnectionClosed { .. }
                | SwarmEvent::OutgoingConnectionError { .. } => return,
                _ => {}
            }
        }
    })
    .await
    .expect("a banned peer's new connection is refused");

    let late = node(&relay, "ws").await;
    late.join_room("lab").unwrap();
    wait_for(
        &mut honest,
        Duration::from_secs(5),
        |e| matches!(e, NodeEvent::Room(u) if u.members.iter().any(|m| m.peer == late.peer_id)),
    )
    .await;
    let text = http_get(&relay, "/metrics");
    assert_eq!(metric(&text, "syncscope_relay_banned_peers"), Some(1.0), "{text}");
}
