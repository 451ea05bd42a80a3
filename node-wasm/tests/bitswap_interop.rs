//! How other implementations use Bitswap streams, against a syncscope seed over real swarms: a
//! peer that opens a new stream for every message and closes it (as Helia does) gets its answers
//! on a stream the seed opens, never on the request stream; a peer that resets the seed's stream
//! gets the next answers on a new one.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::collections::HashMap;

use bytes::Bytes;
use cid::Cid;
use common::bitswap::{blocks, seed, Bitswap};
use common::{swarm, Running, PATIENCE};
use futures::{AsyncReadExt, AsyncWriteExt, StreamExt};
use libp2p::identity::Keypair;
use libp2p::StreamProtocol;
use syncscope_node::net::bitswap::Config;
use syncscope_node::net::framed::read_messages;
use syncscope_proto::bitswap::{
    raw_cid, Message, Presence, ProtocolVersion, WantEntry, WantType, MAX_MESSAGE_SIZE,
};
use tokio::sync::mpsc;

const BITSWAP: StreamProtocol = StreamProtocol::new(ProtocolVersion::V1_2_0.protocol_id());

#[tokio::test]
async fn a_peer_opening_a_stream_per_message_is_answered_on_the_seeds_stream() {
    let all = blocks(3, 5);
    let seed = seed(Config::default(), &all).await;

    let (_peer, mut control, mut incoming) = plain_peer_of(&seed).await;
    let (answers, mut answers_rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some((_, stream)) = incoming.next().await {
            let answers = answers.clone();
            tokio::spawn(async move {
                let mut msgs = Box::pin(read_messages(stream, MAX_MESSAGE_SIZE, Message::decode));
                while let Some(Ok(msg)) = msgs.next().await {
                    let _ = answers.send(msg);
                }
            });
        }
    });

    let missing = raw_cid(b"nobody has this");
    let asks: Vec<Cid> = all.iter().map(|(c, _)| *c).chain([missing]).collect();
    for cid in asks {
        let mut request = control.open_stream(seed.peer_id, BITSWAP).await.expect("stream");
        let want = Message {
            wantlist: vec![WantEntry::want(cid, WantType::Block, 1, true)],
            ..Message::default()
        };
        request.write_all(&want.encode_frame(ProtocolVersion::V1_2_0).unwrap()).await.unwrap();
        request.close().await.expect("half-close");
        let mut back = Vec::new();
        request.read_to_end(&mut back).await.expect("clean end");
        assert!(back.is_empty(), "nothing is written back on a request stream");
    }

    let want: HashMap<Cid, Bytes> = all.iter().cloned().collect();
    let (mut got, mut dont_have) = (HashMap::new(), Vec::new());
    while got.len() < all.len() || dont_have.is_empty() {
        let msg = tokio::time::timeout(PATIENCE, answers_rx.recv()).await.expect("answer in time");
        let msg = msg.expect("answers");
        got.extend(msg.blocks.into_iter().map(|b| (b.cid(), b.into_data())));
        dont_have.extend(
            msg.presences.iter().filter(|p| p.presence == Presence::DontHave).map(|p| p.cid),
        );
    }
    assert_eq!(got, want);
    assert_eq!(dont_have, vec![missing]);
}

/// A peer with nothing but bare Bitswap streams, connected to `seed`: its control to open streams,
/// and the streams the seed opens to it.
async fn plain_peer_of(
    seed: &Running<Bitswap>,
) -> (Running<libp2p_stream::Behaviour>, libp2p_stream::Control, libp2p_stream::IncomingStreams) {
    let behaviour = libp2p_stream::Behaviour::new();
    let mut control = behaviour.new_control();
    let incoming = control.accept(BITSWAP).expect("protocol free");
    let peer: Running<_> = Running::start(swarm(Keypair::generate_ed25519(), behaviour)).await;
    peer.dial(seed.addr.clone()).await;
    peer.wait_connected(seed.peer_id, true).await;
    (peer, control, incoming)
}

/// Asks `seed` for `cid` on a stream of its own, as one message.
async fn ask(control: &mut libp2p_stream::Control, seed: libp2p::PeerId, cid: Cid) {
    let mut request = control.open_stream(seed, BITSWAP).await.expect("stream");
    let want = Message {
        wantlist: vec![WantEntry::want(cid, WantType::Block, 1, false)],
        ..Message::default()
    };
    request.write_all(&want.encode_frame(ProtocolVersion::V1_2_0).unwrap()).await.unwrap();
    request.close().await.expect("half-close");
}

#[tokio::test]
async fn the_seed_reopens_its_stream_when_the_peer_resets_it() {
    let all = blocks(3, 6);
    let seed = seed(Config::default(), &all).await;

    let (_peer, mut control, mut incoming) = plain_peer_of(&seed).await;

    let mut streams = 0;
    for (cid, data) in &all {
        ask(&mut control, seed.peer_id, *cid).await;
        let block = tokio::time::timeout(PATIENCE, async {
            loop {
                let (_, stream) = incoming.next().await.expect("incoming streams");
                streams += 1;
                let mut msgs = Box::pin(read_messages(stream, MAX_MESSAGE_SIZE, Message::decode));
                // One message is read, then the stream is dropped: reset under the seed's feet.
                if let Some(Ok(msg)) = msgs.next().await {
                    if let Some(block) = msg.blocks.into_iter().next() {
                        return block;
                    }
                }
            }
        })
        .await
        .expect("answer in time");
        assert_eq!((block.cid(), block.data()), (*cid, data));
        // Let the reset reach the seed before the next request.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(streams, all.len(), "one new stream per answer, each after a reset");
}

/// A stream with nothing to write is closed (FIN, read to a clean end), and the next answer comes
/// on a new stream: Helia resets an inbound Bitswap stream that is quiet for 10 s, and a message
/// crossing that reset would be lost.
#[tokio::test]
async fn the_seed_closes_its_idle_stream_and_answers_on_a_new_one() {
    let all = blocks(2, 7);
    let idle = std::time::Duration::from_millis(300);
    let seed = seed(Config::default().with_idle_stream_close(idle), &all).await;

    let (_peer, mut control, mut incoming) = plain_peer_of(&seed).await;

    for (cid, data) in &all {
        ask(&mut control, seed.peer_id, *cid).await;
        let (_, stream) = tokio::time::timeout(PATIENCE, incoming.next())
            .await
            .expect("a stream in time")
            .expect("incoming streams");
        let started = std::time::Instant::now();
        let msgs: Vec<Message> = tokio::time::timeout(
            PATIENCE,
            read_messages(stream, MAX_MESSAGE_SIZE, Message::decode).map(Result::unwrap).collect(),
        )
        .await
        .expect("the stream ends in time");
        let blocks: Vec<_> = msgs.into_iter().flat_map(|m| m.blocks).collect();
        assert!(
            blocks.iter().any(|b| (b.cid(), b.data()) == (*cid, data)),
            "the answer came on the stream before it closed"
        );
        assert!(started.elapsed() >= idle / 2, "closed for being idle, not at once");
    }
}
