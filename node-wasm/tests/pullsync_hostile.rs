//! A hostile peer that speaks pull-sync by hand over real libp2p streams: each kind of bad input
//! gets a clean error, stores nothing, disconnects the peer, and leaves the node syncing from
//! honest peers afterwards.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)
#![cfg(not(target_arch = "wasm32"))]

mod common;

use bytes::Bytes;
use common::pullsync::{node, overlay, random_chunks, upload, Pullsync};
use common::{eventually, swarm, Running};
use futures::{AsyncReadExt, AsyncWriteExt, StreamExt};
use libp2p::identity::Keypair;
use libp2p::{PeerId, Stream, StreamProtocol};
use syncscope_node::net::pullsync::{Config, Event, Misbehaviour};
use syncscope_proto::framing::{encode_frame, FrameDecoder, FrameError};
use syncscope_proto::pullsync::{
    self, Ack, Delivery, Get, Offer, PullError, ServeError, Want, WantError, CURSORS_PROTOCOL_NAME,
    MAX_MESSAGE_SIZE, PROTOCOL_NAME,
};
use syncscope_proto::swarm::Chunk;

type Hostile = Running<libp2p_stream::Behaviour>;

/// The victim keeps the half of the address space starting with bit 0 (radius 1).
const VICTIM_RADIUS: u8 = 1;

async fn victim(own: Vec<Chunk>) -> Running<Pullsync> {
    let config = Config::default().with_storage_radius(VICTIM_RADIUS);
    let node = Running::start(node(Keypair::generate_ed25519(), overlay(0), config)).await;
    upload(&node, own).await;
    node
}

/// A hostile peer the victim sees in the other half (proximity 0): it then syncs only that
/// peer's bin 0, on two streams, rather than all 32 bins of a neighbour.
async fn hostile(victim: &Running<Pullsync>) -> (Hostile, libp2p_stream::Control) {
    let behaviour = libp2p_stream::Behaviour::new();
    let control = behaviour.new_control();
    let hostile = Running::start(swarm(Keypair::generate_ed25519(), behaviour)).await;
    let peer = hostile.peer_id;
    victim.with(move |s| s.behaviour_mut().set_peer_overlay(peer, overlay(0x80))).await;
    (hostile, control)
}

fn within_victim_radius(chunks: Vec<Chunk>) -> Vec<Chunk> {
    chunks.into_iter().filter(|c| overlay(0).proximity(&c.address()) >= VICTIM_RADIUS).collect()
}

async fn write_msg<M: prost::Message>(io: &mut Stream, msg: &M) {
    io.write_all(&encode_frame(msg, MAX_MESSAGE_SIZE).expect("frame")).await.expect("write");
    io.flush().await.expect("flush");
}

/// The next whole frame, or `None` once the stream ends or breaks.
async fn read_frame(io: &mut Stream, decoder: &mut FrameDecoder) -> Option<Bytes> {
    let mut buf = [0u8; 4096];
    loop {
        if let Some(frame) = decoder.next_frame().expect("well-formed frames from the node") {
            return Some(frame);
        }
        match io.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => decoder.extend(&buf[..n]),
        }
    }
}

/// The hostile peer answers the node's cursor request with `reply`, raw bytes, then closes.
fn answer_cursors_with(control: &mut libp2p_stream::Control, reply: Vec<u8>) {
    let mut incoming =
        control.accept(StreamProtocol::new(CURSORS_PROTOCOL_NAME)).expect("cursors protocol");
    tokio::spawn(async move {
        while let Some((_, mut io)) = incoming.next().await {
            let mut decoder = FrameDecoder::new(MAX_MESSAGE_SIZE);
            let _syn = read_frame(&mut io, &mut decoder).await;
            let _ = io.write_all(&reply).await;
            let _ = io.close().await;
        }
    });
}

/// Waits for the node to report `peer`'s misbehaviour and returns it.
async fn misbehaviour_of(node: &mut Running<Pullsync>, peer: PeerId) -> Misbehaviour {
    node.wait_event(|e| match e {
        Event::Misbehaved { peer: p, error } if *p == peer => Some(error.clone()),
        _ => None,
    })
    .await
}

/// After the attack: the hostile peer is disconnected and counted, the node stored nothing new,
/// and it still syncs every chunk of an honest peer.
async fn assert_recovers(node: &Running<Pullsync>, hostile: PeerId, own: usize) {
    eventually(node, move |s| !s.is_connected(&hostile)).await;
    let stats = node.with(|s| s.behaviour().stats()).await;
    assert_eq!(stats.peers_disconnected, 1);
    assert_eq!(stats.chunks_stored, 0);
    assert_eq!(node.with(|s| s.behaviour().store().len()).await, own);

    let honest = Running::start(common::pullsync::node(
        Keypair::generate_ed25519(),
        overlay(1),
        Config::default(),
    ))
    .await;
    let uploads = random_chunks(99, 40);
    upload(&honest, uploads.clone()).await;
    let chunks = within_victim_radius(uploads);
    let wanted = chunks.len();
    assert!(wanted > 0);
    let peer = honest.peer_id;
    node.with(move |s| s.behaviour_mut().set_peer_overlay(peer, overlay(1))).await;
    node.dial(honest.addr.clone()).await;
    eventually(node, move |s| s.behaviour().store().len() >= own + wanted).await;
    let exactly = node
        .with(move |s| {
            let store = s.behaviour().store();
            chunks.iter().all(|c| store.get(&c.chunk_ref()).is_some())
                && store.len() == own + wanted
        })
        .await;
    assert!(exactly, "the node holds its own chunks and the honest peer's within its radius");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_want_with_the_wrong_bit_vector_length_is_refused() {
    let own = random_chunks(1, 20);
    let mut node = victim(own.clone()).await;
    let (hostile, mut control) = hostile(&node).await;
    // The hostile peer takes the victim's own pulls and holds them: a peer that refused them
    // would be one the victim cannot sync with, and the victim would stop serving it too, at a
    // moment that races with the attack below.
    let empty =
        encode_frame(&Ack { cursors: vec![0; 32], epoch: 1 }, MAX_MESSAGE_SIZE).expect("ack");
    answer_cursors_with(&mut control, empty);
    let mut pulls = control.accept(StreamProtocol::new(PROTOCOL_NAME)).expect("pullsync protocol");
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Some((_, io)) = pulls.next().await {
            held.push(io);
        }
    });
    hostile.dial(node.addr.clone()).await;
    let target = node.peer_id;
    eventually(&hostile, move |s| s.is_connected(&target)).await;

    let mut io = control
        .open_stream(node.peer_id, StreamProtocol::new(PROTOCOL_NAME))
        .await
        .expect("pullsync stream");
    let mut decoder = FrameDecoder::new(MAX_MESSAGE_SIZE);
    write_msg(&mut io, &Get { bin: 0, start: 1 }).await;
    let offer: Offer =
        prost::Message::decode(read_frame(&mut io, &mut decoder).await.expect("offer"))
            .expect("offer decodes");
    let offered = offer.chunks.len();
    assert!(offered > 0);
    write_msg(&mut io, &Want { bit_vector: Bytes::from(vec![0xff; offered / 8 + 3]) }).await;

    let error = misbehaviour_of(&mut node, hostile.peer_id).await;
    let expected =
        WantError::Length { offered, expected: offered / 8 + 1, actual: offered / 8 + 3 };
    assert_eq!(error, Misbehaviour::Pulling(ServeError::Want(expected)));
    assert!(read_frame(&mut io, &mut decoder).await.is_none(), "stream reset, nothing delivered");
    assert_recovers(&node, hostile.peer_id, own.len()).await;
}

/// Offers `offered` on the request for bin 0 from 1 and delivers `delivered` instead; leaves
/// every other request (the live long polls) unanswered.
async fn serve_wrong_delivery(mut io: Stream, offered: Chunk, delivered: Chunk) {
    let mut decoder = FrameDecoder::new(MAX_MESSAGE_SIZE);
    let Some(get) = read_frame(&mut io, &mut decoder).await else { return };
    let get: Get = prost::Message::decode(get).expect("get decodes");
    if (get.bin, get.start) == (0, 1) {
        let r = offered.chunk_ref();
        let chunk = pullsync::Chunk {
            address: Bytes::copy_from_slice(r.address.as_bytes()),
            batch_id: Bytes::copy_from_slice(&r.batch_id),
            stamp_hash: Bytes::copy_from_slice(&r.stamp_hash),
        };
        write_msg(&mut io, &Offer { topmost: 1, chunks: vec![chunk] }).await;
        let _want = read_frame(&mut io, &mut decoder).await;
        let delivery = Delivery {
            address: Bytes::copy_from_slice(delivered.address().as_bytes()),
            data: delivered.data().clone(),
            stamp: delivered.stamp().as_bytes().clone(),
        };
        write_msg(&mut io, &delivery).await;
    }
    // Hold the stream open until the node drops it.
    while read_frame(&mut io, &mut decoder).await.is_some() {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_of_a_chunk_that_was_not_offered_is_refused() {
    let mut node = victim(Vec::new()).await;
    let (hostile, mut control) = hostile(&node).await;
    let chunks = within_victim_radius(random_chunks(2, 8));
    let (offered, delivered) = (chunks[0].clone(), chunks[1].clone());

    let mut cursors = vec![0u64; 32];
    cursors[0] = 1;
    let ack = encode_frame(&Ack { cursors, epoch: 1 }, MAX_MESSAGE_SIZE).expect("ack");
    answer_cursors_with(&mut control, ack);
    let mut pages = control.accept(StreamProtocol::new(PROTOCOL_NAME)).expect("pullsync protocol");
    tokio::spawn(async move {
        while let Some((_, io)) = pages.next().await {
            tokio::spawn(serve_wrong_delivery(io, offered.clone(), delivered.clone()));
        }
    });
    hostile.dial(node.addr.clone()).await;

    let error = misbehaviour_of(&mut node, hostile.peer_id).await;
    assert_eq!(error, Misbehaviour::Serving(PullError::NotWanted(chunks[1].address())));
    let rejected = node.with(|s| s.behaviour().stats().puller.chunks_rejected).await;
    assert_eq!(rejected, 1);
    assert_recovers(&node, hostile.peer_id, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_message_is_refused() {
    let mut node = victim(Vec::new()).await;
    let (hostile, mut control) = hostile(&node).await;
    // A frame announcing 50 bytes of which only 10 come before the stream ends.
    let mut truncated = vec![50u8];
    truncated.extend([0x08; 10]);
    answer_cursors_with(&mut control, truncated);
    hostile.dial(node.addr.clone()).await;

    let error = misbehaviour_of(&mut node, hostile.peer_id).await;
    let expected = PullError::Frame(FrameError::Truncated { buffered: 11 });
    assert_eq!(error, Misbehaviour::Serving(expected));
    assert_recovers(&node, hostile.peer_id, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_message_is_refused_before_its_body_is_read() {
    let mut node = victim(Vec::new()).await;
    let (hostile, mut control) = hostile(&node).await;
    let len = MAX_MESSAGE_SIZE + 1;
    let mut prefix = unsigned_varint::encode::usize_buffer();
    let mut oversized = unsigned_varint::encode::usize(len, &mut prefix).to_vec();
    oversized.extend(vec![0u8; 1000]);
    answer_cursors_with(&mut control, oversized);
    hostile.dial(node.addr.clone()).await;

    let error = misbehaviour_of(&mut node, hostile.peer_id).await;
    let expected = PullError::Frame(FrameError::TooLarge { len, max: MAX_MESSAGE_SIZE });
    assert_eq!(error, Misbehaviour::Serving(expected));
    assert_recovers(&node, hostile.peer_id, 0).await;
}

#[tokio::test]
async fn inbound_streams_beyond_the_connections_cap_are_refused_without_a_disconnection() {
    const CAP: usize = 4;
    let mut config = Config::default().with_storage_radius(VICTIM_RADIUS);
    config.max_inbound_streams = CAP;
    let victim = Running::start(node(Keypair::generate_ed25519(), overlay(0), config)).await;
    let (hostile, mut control) = hostile(&victim).await;
    hostile.dial(victim.addr.clone()).await;
    hostile.wait_connected(victim.peer_id, true).await;

    // Requests that are never finished, so each stream stays open on the victim.
    let mut open = Vec::new();
    for _ in 0..CAP + 3 {
        let protocol = StreamProtocol::new(PROTOCOL_NAME);
        open.push(control.open_stream(victim.peer_id, protocol).await.expect("negotiated"));
    }
    eventually(&victim, |s| s.behaviour().stats().streams_refused == 3).await;
    let stats = victim.with(|s| s.behaviour().stats()).await;
    assert_eq!(stats.peers_disconnected, 0, "too many streams is not an offence");
    assert!(victim.is_connected(hostile.peer_id).await);
    drop(open);
}
