//! Hostile peers against a Bitswap fetcher over real libp2p swarms: a peer that answers every
//! want with a block whose data does not match the CID asked for, one that sends an oversized
//! frame, and one that sends a frame that is not protobuf. Each is counted and disconnected,
//! and the fetch completes from the two honest seeds.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::collections::HashMap;

use bytes::Bytes;
use cid::Cid;
use common::bitswap::{bitswap, blocks, connect, fetched, seed, Bitswap};
use common::{eventually, swarm, Running};
use futures::{AsyncWriteExt, StreamExt};
use libp2p::identity::Keypair;
use libp2p::{PeerId, Stream, StreamProtocol};
use syncscope_node::net::bitswap::{Config, Event, Misbehaviour, StreamError};
use syncscope_node::net::framed::read_messages;
use syncscope_proto::bitswap::Misbehaviour as Protocol;
use syncscope_proto::bitswap::{
    pb, prefix_of, raw_cid, Message, ProtocolVersion, MAX_MESSAGE_SIZE,
};
use syncscope_proto::framing::{encode_frame, FrameError};

const BITSWAP: StreamProtocol = StreamProtocol::new(ProtocolVersion::V1_2_0.protocol_id());

#[derive(Debug, Clone, Copy)]
enum Attack {
    /// Answers every want with data that is not the block wanted, under that block's prefix.
    Forge,
    /// Announces a frame one byte over 4 MiB.
    Oversize,
    /// Sends a frame whose body is not a protobuf message.
    Garbage,
}

/// A raw libp2p peer that speaks just enough Bitswap to attack.
async fn hostile(attack: Attack) -> Running<libp2p_stream::Behaviour> {
    let behaviour = libp2p_stream::Behaviour::new();
    let mut control = behaviour.new_control();
    let mut incoming = control.accept(BITSWAP).expect("protocol free");
    tokio::spawn(async move {
        while let Some((peer, stream)) = incoming.next().await {
            tokio::spawn(attack_over(control.clone(), peer, stream, attack));
        }
    });
    Running::start(swarm(Keypair::generate_ed25519(), behaviour)).await
}

/// Reads the victim's messages on `inbound`; attacks on a stream of its own.
async fn attack_over(
    mut control: libp2p_stream::Control,
    peer: PeerId,
    inbound: Stream,
    attack: Attack,
) {
    let Ok(mut out) = control.open_stream(peer, BITSWAP).await else { return };
    let frame = match attack {
        Attack::Forge => return forge(inbound, out).await,
        Attack::Oversize => {
            let mut prefix = unsigned_varint::encode::usize_buffer();
            let mut frame =
                unsigned_varint::encode::usize(MAX_MESSAGE_SIZE + 1, &mut prefix).to_vec();
            frame.extend(vec![0; 64 * 1024]);
            frame
        }
        Attack::Garbage => vec![4, 0xff, 0xff, 0xff, 0xff],
    };
    let _ = out.write_all(&frame).await;
    let _ = out.flush().await;
    // Keep the streams open: the victim must act on its own.
    let _keep = inbound;
    std::future::pending::<()>().await;
}

async fn forge(inbound: Stream, mut out: Stream) {
    let mut wants = Box::pin(read_messages(inbound, MAX_MESSAGE_SIZE, Message::decode));
    while let Some(Ok(msg)) = wants.next().await {
        for entry in msg.wantlist.iter().filter(|e| !e.cancel) {
            let forged = pb::Message {
                payload: vec![pb::Block {
                    prefix: prefix_of(&entry.cid),
                    data: Bytes::from(format!("not the block {}", entry.cid)),
                }],
                ..pb::Message::default()
            };
            let frame = encode_frame(&forged, MAX_MESSAGE_SIZE).expect("small");
            if out.write_all(&frame).await.is_err() || out.flush().await.is_err() {
                return;
            }
        }
    }
}

/// The misbehaviour reported for `peer`.
async fn misbehaviour_of(node: &mut Running<Bitswap>, peer: PeerId) -> Misbehaviour {
    node.wait_event(|e| match e {
        Event::Misbehaved { peer: p, error } if *p == peer => Some(error.clone()),
        _ => None,
    })
    .await
}

#[tokio::test]
async fn hostile_peers_are_counted_and_disconnected_and_the_fetch_completes() {
    let all = blocks(100, 11);
    let honest = [seed(Config::default(), &all).await, seed(Config::default(), &all).await];
    let forger = hostile(Attack::Forge).await;
    let oversizer = hostile(Attack::Oversize).await;
    let garbler = hostile(Attack::Garbage).await;

    let mut fetcher = bitswap(Config::default()).await;
    let peers: Vec<_> = honest
        .iter()
        .map(|s| (s.peer_id, s.addr.clone()))
        .chain([(forger.peer_id, forger.addr.clone())])
        .collect();
    connect(&mut fetcher, &peers).await;
    // The forger hears every want from the start: want-haves go to every peer.
    let cids: Vec<Cid> = all.iter().map(|(c, _)| *c).collect();
    let fetch = fetcher.with(move |s| s.behaviour_mut().fetch(cids)).await;

    let got = fetched(&mut fetcher, fetch).await;
    let want: HashMap<Cid, Bytes> = all.iter().cloned().collect();
    assert_eq!(got.len(), 100);
    for (cid, data) in &got {
        assert_eq!(raw_cid(data), *cid);
        assert_eq!(Some(data), want.get(cid));
    }
    let forged = misbehaviour_of(&mut fetcher, forger.peer_id).await;
    assert!(
        matches!(forged, Misbehaviour::Protocol(Protocol::UnsolicitedBlocks(n)) if n > 8),
        "{forged:?}"
    );

    fetcher.dial(oversizer.addr.clone()).await;
    let oversized = misbehaviour_of(&mut fetcher, oversizer.peer_id).await;
    assert!(
        matches!(oversized, Misbehaviour::Stream(StreamError::Frame(FrameError::TooLarge { .. }))),
        "{oversized:?}"
    );
    fetcher.dial(garbler.addr.clone()).await;
    let garbage = misbehaviour_of(&mut fetcher, garbler.peer_id).await;
    assert!(matches!(garbage, Misbehaviour::Stream(StreamError::Decode(_))), "{garbage:?}");

    for peer in [forger.peer_id, oversizer.peer_id, garbler.peer_id] {
        fetcher.wait_connected(peer, false).await;
    }
    for s in &honest {
        assert!(fetcher.is_connected(s.peer_id).await, "honest seeds stay");
    }
    let stats = fetcher.with(|s| s.behaviour().stats()).await;
    assert_eq!(stats.peers_disconnected, 3);
    assert!(stats.counters.unsolicited_blocks > 8, "forged blocks counted");
    assert_eq!(stats.peers, 2);
}

#[tokio::test]
async fn inbound_streams_beyond_the_cap_are_refused_and_counted_without_a_disconnection() {
    const CAP: usize = 4;
    let victim = bitswap(Config::default().with_max_inbound_streams(CAP)).await;
    let behaviour = libp2p_stream::Behaviour::new();
    let mut control = behaviour.new_control();
    let opener = Running::start(swarm(Keypair::generate_ed25519(), behaviour)).await;
    opener.dial(victim.addr.clone()).await;
    opener.wait_connected(victim.peer_id, true).await;

    let mut open = Vec::new();
    for _ in 0..CAP + 3 {
        open.push(control.open_stream(victim.peer_id, BITSWAP).await.expect("negotiated"));
    }
    eventually(&victim, |s| s.behaviour().stats().streams_refused == 3).await;
    let stats = victim.with(|s| s.behaviour().stats()).await;
    assert_eq!(stats.peers_disconnected, 0, "too many streams is not an offence");
    assert!(victim.is_connected(opener.peer_id).await);
    drop(open);
}
