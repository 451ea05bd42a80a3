//! WebRTC-direct between two native hosts built as the relay builds its listener (libp2p-webrtc
//! over the vendored webrtc-rs crates): pings answered at once, also by a host with nothing else
//! to do, and bulk data both ways on one stream, every byte checked, while both hosts ping each
//! other and every ping keeps its round trip short. A dial that fails leaves nothing behind that
//! spoils the next from the same socket.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)

use std::time::{Duration, Instant};

use futures::{AsyncReadExt, AsyncWriteExt, StreamExt};
use libp2p::multiaddr::Protocol;
use libp2p::swarm::{NetworkBehaviour, SwarmEvent};
use libp2p::{ping, Multiaddr, PeerId, StreamProtocol, Swarm, SwarmBuilder};
use libp2p_webrtc::tokio::{Certificate, Transport};
use tokio::sync::mpsc;

const BULK: StreamProtocol = StreamProtocol::new("/syncscope-test/bulk/1");
const MESSAGES: usize = 100;
const MESSAGE_LEN: usize = 1 << 20;
const PING_INTERVAL: Duration = Duration::from_millis(50);
/// libp2p's default, which the relay uses.
const RELAY_PING_INTERVAL: Duration = Duration::from_secs(15);

#[derive(NetworkBehaviour)]
struct Behaviour {
    stream: libp2p_stream::Behaviour,
    ping: ping::Behaviour,
}

type Host = Swarm<Behaviour>;

fn host(ping_interval: Duration) -> Host {
    SwarmBuilder::with_new_identity()
        .with_tokio()
        .with_other_transport(|key| {
            Transport::new(key.clone(), Certificate::generate(&mut rand::rng()).unwrap())
        })
        .unwrap()
        .with_behaviour(|_| Behaviour {
            stream: libp2p_stream::Behaviour::new(),
            ping: ping::Behaviour::new(ping::Config::new().with_interval(ping_interval)),
        })
        .unwrap()
        .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(60)))
        .build()
}

/// Listens on a loopback UDP port and returns the address.
async fn listening(swarm: &mut Host) -> Multiaddr {
    swarm.listen_on("/ip4/127.0.0.1/udp/0/webrtc-direct".parse().unwrap()).unwrap();
    loop {
        if let SwarmEvent::NewListenAddr { address, .. } = swarm.select_next_some().await {
            return address;
        }
    }
}

/// Dials `addr` until a connection is up: a WebRTC handshake on a busy machine sometimes fails,
/// and that is not what this test is about.
async fn connect(swarm: &mut Host, addr: Multiaddr) {
    for _ in 0..5 {
        if dial(swarm, addr.clone()).await.is_ok() {
            return;
        }
    }
    panic!("no WebRTC-direct connection in 5 attempts");
}

/// Dials `addr` once and returns the error if the connection does not come up.
async fn dial(swarm: &mut Host, addr: Multiaddr) -> Result<(), libp2p::swarm::DialError> {
    swarm.dial(addr).unwrap();
    loop {
        match swarm.select_next_some().await {
            SwarmEvent::ConnectionEstablished { .. } => return Ok(()),
            SwarmEvent::OutgoingConnectionError { error, .. } => return Err(error),
            _ => {}
        }
    }
}

/// `addr` with the certificate hash of another certificate: a dial to it fails the handshake.
fn with_wrong_certhash(addr: &Multiaddr) -> Multiaddr {
    let other = Certificate::generate(&mut rand::rng()).unwrap().fingerprint().to_multihash();
    addr.iter()
        .map(|protocol| match protocol {
            Protocol::Certhash(_) => Protocol::Certhash(other),
            protocol => protocol,
        })
        .collect()
}

/// Message `i` of a side: a run of 251 bytes (prime, so no chunk size of the layers below is a
/// multiple of it) that differs per side and per message, repeated: a lost, repeated or misplaced
/// chunk shows. Built by copying, so that the test's own work does not starve the hosts.
fn message(side: u8, i: usize) -> Vec<u8> {
    let run: Vec<u8> =
        (0..251u64).map(|j| (j * 31 + i as u64 * 7 + u64::from(side) * 101) as u8).collect();
    let mut message = vec![0; MESSAGE_LEN];
    for chunk in message.chunks_mut(run.len()) {
        chunk.copy_from_slice(&run[..chunk.len()]);
    }
    message
}

/// Writes this side's messages and reads the other's, checking each; both at once.
async fn exchange(stream: libp2p::Stream, side: u8) {
    let (mut reader, mut writer) = stream.split();
    let send = async move {
        for i in 0..MESSAGES {
            writer.write_all(&message(side, i)).await.unwrap();
        }
        writer.flush().await.unwrap();
        writer
    };
    let receive = async move {
        let mut buf = vec![0; MESSAGE_LEN];
        for i in 0..MESSAGES {
            reader.read_exact(&mut buf).await.unwrap();
            assert!(buf == message(1 - side, i), "message {i} to side {side} arrived changed");
        }
    };
    let (mut writer, ()) = futures::join!(send, receive);
    writer.close().await.unwrap();
}

/// Drives `swarm` for good, sending the round trip of each ping it makes to `rtts`.
fn drive(mut swarm: Host, rtts: mpsc::UnboundedSender<Duration>) {
    tokio::spawn(async move {
        while let Some(event) = swarm.next().await {
            if let SwarmEvent::Behaviour(BehaviourEvent::Ping(ping::Event {
                result: Ok(rtt),
                ..
            })) = event
            {
                let _ = rtts.send(rtt);
            }
        }
    });
}

/// The round trips `rtts` has received since it was last drained.
fn drain(rtts: &mut mpsc::UnboundedReceiver<Duration>) -> Vec<Duration> {
    std::iter::from_fn(|| rtts.try_recv().ok()).collect()
}

/// Two connected hosts, each driven by its own task, with the round trips of their pings.
struct Pair {
    listener_id: PeerId,
    listener_bulk: libp2p_stream::IncomingStreams,
    listener_rtts: mpsc::UnboundedReceiver<Duration>,
    dialer_control: libp2p_stream::Control,
    dialer_rtts: mpsc::UnboundedReceiver<Duration>,
}

async fn connected_pair(listener_ping_interval: Duration) -> Pair {
    let mut listener = host(listener_ping_interval);
    let listener_id = *listener.local_peer_id();
    let addr = listening(&mut listener).await.with(Protocol::P2p(listener_id));
    let listener_bulk = listener.behaviour().stream.new_control().accept(BULK).unwrap();
    let (listener_rtts_tx, listener_rtts) = mpsc::unbounded_channel();
    drive(listener, listener_rtts_tx);

    let mut dialer = host(PING_INTERVAL);
    // libp2p-webrtc dials from the UDP socket it listens on.
    listening(&mut dialer).await;
    tokio::time::timeout(Duration::from_secs(60), connect(&mut dialer, addr)).await.unwrap();
    let dialer_control = dialer.behaviour().stream.new_control();
    let (dialer_rtts_tx, dialer_rtts) = mpsc::unbounded_channel();
    drive(dialer, dialer_rtts_tx);
    Pair { listener_id, listener_bulk, listener_rtts, dialer_control, dialer_rtts }
}

/// Checks that a host kept pinging for `took` and that no ping was slow. A ping that is never
/// answered shows as too few pings rather than a slow one; a quarter of the pings one every
/// interval would make leaves room for the round trips themselves.
fn assert_pings_kept_up(host: &str, rtts: &[Duration], took: Duration) {
    let expected = took.as_millis() / PING_INTERVAL.as_millis() / 4;
    assert!(
        rtts.len() as u128 >= expected,
        "the {host} had {} pings answered in {took:?}, expected at least {expected}",
        rtts.len()
    );
    let slowest = rtts.iter().max().copied().unwrap_or_default();
    assert!(slowest < Duration::from_millis(100), "a ping of the {host} took {slowest:?}");
}

/// As the relay is: it pings rarely itself, so nothing but the page's next ping wakes the
/// connection to answer it.
#[tokio::test(flavor = "multi_thread")]
async fn a_host_that_pings_rarely_answers_each_ping_at_once() {
    let mut pair = connected_pair(RELAY_PING_INTERVAL).await;
    let took = Duration::from_secs(2);
    tokio::time::sleep(took).await;

    assert_pings_kept_up("dialer", &drain(&mut pair.dialer_rtts), took);
    // Its one ping, made as the connection came up, on a stream opened at once.
    assert!(
        !drain(&mut pair.listener_rtts).is_empty(),
        "the listener's first ping went unanswered"
    );
}

/// A native dialer sends from the socket it listens on, so its next dial comes from the same
/// address: neither side may still route that address to the connection that failed.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_dial_does_not_spoil_the_next_from_the_same_socket() {
    let mut listener = host(RELAY_PING_INTERVAL);
    let addr = listening(&mut listener).await.with(Protocol::P2p(*listener.local_peer_id()));
    drive(listener, mpsc::unbounded_channel().0);
    let mut dialer = host(PING_INTERVAL);
    listening(&mut dialer).await;

    let wrong = tokio::time::timeout(
        Duration::from_secs(60),
        dial(&mut dialer, with_wrong_certhash(&addr)),
    );
    assert!(wrong.await.unwrap().is_err(), "a dial with another certificate's hash connected");
    let right = tokio::time::timeout(Duration::from_secs(60), dial(&mut dialer, addr));
    right.await.unwrap().expect("the dial after a failed one");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_webrtc_direct_stream_carries_100_mib_each_way_while_pings_stay_fast() {
    let mut pair = connected_pair(PING_INTERVAL).await;
    let mut incoming = pair.listener_bulk;
    let served = tokio::spawn(async move {
        let (_, stream) = incoming.next().await.unwrap();
        exchange(stream, 1).await;
    });
    let stream = tokio::time::timeout(
        Duration::from_secs(30),
        pair.dialer_control.open_stream(pair.listener_id, BULK),
    )
    .await
    .unwrap()
    .unwrap();
    drain(&mut pair.dialer_rtts);
    drain(&mut pair.listener_rtts);

    let start = Instant::now();
    tokio::time::timeout(Duration::from_secs(240), async {
        exchange(stream, 0).await;
        served.await.unwrap();
    })
    .await
    .expect("200 MiB did not cross within 240 s");
    let took = start.elapsed();

    assert_pings_kept_up("dialer", &drain(&mut pair.dialer_rtts), took);
    assert_pings_kept_up("listener", &drain(&mut pair.listener_rtts), took);
}
