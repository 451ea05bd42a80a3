//! The link probe over real swarms: a measurement carries exactly the bytes asked for, an
//! oversized ask is refused on both sides, and a server cut off mid-probe gives a clear error.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{swarm, Running};
use futures::{AsyncReadExt, AsyncWriteExt};
use libp2p::identity::Keypair;
use syncscope_node::net::link_probe::{self, ProbeError, MAX_PROBE_BYTES};

type Peer = Running<libp2p_stream::Behaviour>;

/// A server and an asker, connected, and the asker's control.
async fn pair() -> (Peer, Peer, libp2p_stream::Control) {
    let server = libp2p_stream::Behaviour::new();
    let incoming = server.new_control().accept(link_probe::PROTOCOL).unwrap();
    tokio::spawn(link_probe::serve(incoming));
    let server = Running::start(swarm(Keypair::generate_ed25519(), server)).await;
    let asker = libp2p_stream::Behaviour::new();
    let control = asker.new_control();
    let asker = Running::start(swarm(Keypair::generate_ed25519(), asker)).await;
    asker.dial(server.addr.clone()).await;
    asker.wait_connected(server.peer_id, true).await;
    (server, asker, control)
}

#[tokio::test]
async fn a_probe_carries_exactly_the_bytes_asked_for() {
    let (server, _asker, mut control) = pair().await;
    let server = server.peer_id;
    for bytes in [0, 1, 65_535, 3 << 20] {
        let m = link_probe::measure(&mut control, server, bytes).await.unwrap();
        assert_eq!((m.peer, m.bytes), (server, bytes));
        assert!(m.bytes_per_sec() >= 0.0);
    }
}

#[tokio::test]
async fn an_oversized_probe_is_refused_by_the_asker_and_by_the_server() {
    let (server, _asker, mut control) = pair().await;
    let server = server.peer_id;
    let err = link_probe::measure(&mut control, server, MAX_PROBE_BYTES + 1).await.unwrap_err();
    assert!(matches!(err, ProbeError::TooLarge(n) if n == MAX_PROBE_BYTES + 1), "{err}");

    let mut stream = control.open_stream(server, link_probe::PROTOCOL).await.unwrap();
    stream.write_all(&(MAX_PROBE_BYTES + 1).to_be_bytes()).await.unwrap();
    stream.close().await.unwrap();
    let mut got = Vec::new();
    let _ = stream.read_to_end(&mut got).await;
    assert!(got.is_empty(), "the server sends nothing for an oversized ask");
    // The server goes on serving.
    assert_eq!(link_probe::measure(&mut control, server, 10).await.unwrap().bytes, 10);
}

#[tokio::test]
async fn a_peer_without_the_protocol_gives_a_clear_error() {
    let other = Running::start(swarm(Keypair::generate_ed25519(), libp2p_stream::Behaviour::new()));
    let other = other.await;
    let asker = libp2p_stream::Behaviour::new();
    let mut control = asker.new_control();
    let asker = Running::start(swarm(Keypair::generate_ed25519(), asker)).await;
    asker.dial(other.addr.clone()).await;
    asker.wait_connected(other.peer_id, true).await;
    let err = link_probe::measure(&mut control, other.peer_id, 10).await.unwrap_err();
    assert!(matches!(err, ProbeError::Open(_)), "{err}");
}
