//! Data channels on the SCTP association under WebRTC-direct (the vendored webrtc-sctp and
//! webrtc-data), as webrtc-rs drives them: a negotiated channel both sides open without a word
//! (libp2p's Noise channel 0), written to by the remote before this side opened its end, as
//! happens when the remote's first message shares a flight with the end of the SCTP handshake;
//! and an association the remote ends, which must end the loop that accepts its channels.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::net::UdpSocket;
use tokio::task::JoinHandle;
use webrtc_data::data_channel::{Config as ChannelConfig, DataChannel};
use webrtc_sctp::association::{Association, Config};

/// A connected pair of associations over loopback UDP.
async fn associations() -> (Arc<Association>, Arc<Association>) {
    let (a, b) = (
        UdpSocket::bind("127.0.0.1:0").await.unwrap(),
        UdpSocket::bind("127.0.0.1:0").await.unwrap(),
    );
    a.connect(b.local_addr().unwrap()).await.unwrap();
    b.connect(a.local_addr().unwrap()).await.unwrap();
    let config = |socket: UdpSocket, name: &str| Config {
        net_conn: Arc::new(socket),
        max_receive_buffer_size: 0,
        max_message_size: 0,
        mtu: 0,
        name: name.to_owned(),
        local_port: 5000,
        remote_port: 5000,
    };
    let (client, server) = tokio::join!(
        Association::client(config(a, "client")),
        Association::server(config(b, "server"))
    );
    (Arc::new(client.unwrap()), Arc::new(server.unwrap()))
}

/// As webrtc-rs does from the moment an association is up: accepts the next channel the remote
/// opens.
fn accepting(
    association: &Arc<Association>,
) -> JoinHandle<Result<DataChannel, webrtc_data::Error>> {
    let association = Arc::clone(association);
    tokio::spawn(async move {
        DataChannel::accept(&association, ChannelConfig::default(), &[] as &[DataChannel]).await
    })
}

fn negotiated() -> ChannelConfig {
    ChannelConfig { negotiated: true, ..ChannelConfig::default() }
}

/// Writes `message` and waits until the remote has acknowledged it, so the remote's association
/// has the stream.
async fn write_acknowledged(channel: &DataChannel, message: &'static [u8]) {
    channel.write(&Bytes::from_static(message)).await.unwrap();
    while channel.buffered_amount() > 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn read(channel: &DataChannel) -> Vec<u8> {
    let mut buf = vec![0; 1024];
    let n = tokio::time::timeout(Duration::from_secs(10), channel.read(&mut buf))
        .await
        .unwrap()
        .unwrap();
    buf.truncate(n);
    buf
}

#[tokio::test(flavor = "multi_thread")]
async fn a_negotiated_channel_written_to_before_it_opens_here_opens_with_every_message() {
    let (local, remote) = associations().await;
    let accepted = accepting(&local);

    let remote_noise = DataChannel::dial(&remote, 0, negotiated()).await.unwrap();
    write_acknowledged(&remote_noise, b"first").await;
    let local_noise =
        DataChannel::dial(&local, 0, negotiated()).await.expect("the local end of channel 0");
    write_acknowledged(&remote_noise, b"second").await;
    assert_eq!(read(&local_noise).await, b"first");
    assert_eq!(read(&local_noise).await, b"second");

    // The accept loop went on: a channel the remote opens later is announced.
    let config = ChannelConfig { label: "ping".to_owned(), ..ChannelConfig::default() };
    let remote_ping = DataChannel::dial(&remote, 2, config).await.unwrap();
    write_acknowledged(&remote_ping, b"ping").await;
    let local_ping =
        tokio::time::timeout(Duration::from_secs(10), accepted).await.unwrap().unwrap().unwrap();
    assert_eq!((local_ping.stream_identifier(), local_ping.config.label.as_str()), (2, "ping"));
    assert_eq!(read(&local_ping).await, b"ping");
}

/// A browser that closes its peer connection aborts SCTP; webrtc-rs learns that the association
/// ended only from its accept loop ending, which then reports it (`RTCSctpTransport::on_error`).
#[tokio::test(flavor = "multi_thread")]
async fn an_association_the_remote_ends_ends_the_accept_loop() {
    let (local, remote) = associations().await;
    let accepted = accepting(&local);

    remote.shutdown().await.unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(10), accepted).await;
    let result = ended.expect("the accept loop still waits after the remote ended").unwrap();
    assert!(result.is_err(), "accepted a channel from an association that ended");
}
