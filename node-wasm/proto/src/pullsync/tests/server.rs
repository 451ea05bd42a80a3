//! Bad input to the server, and the server's own limits.

use super::*;

/// Drives a server by hand as a scripted puller.
fn server_with_offer(n: usize) -> (Server<u8>, MemoryReserve, Vec<swarm::Chunk>) {
    let now = Instant::now();
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, n, 64);
    let mut reserve = MemoryReserve::new(SERVER_OVERLAY, 7);
    chunks.iter().for_each(|c| {
        reserve.put(c.clone());
    });
    let mut server = Server::new(Config::default());
    server.handle_stream_opened(CLIENT, StreamId(5), Protocol::Pullsync);
    let get = encode_frame(&Get { bin: 0, start: 1 }, MAX_MESSAGE_SIZE).unwrap();
    server.handle_data(now, CLIENT, StreamId(5), &get, &reserve);
    let offer = server.poll_transmit(now).unwrap();
    assert!(matches!(offer.action, StreamAction::Send(_)));
    (server, reserve, chunks)
}

#[test]
fn want_with_the_wrong_bit_vector_length_is_rejected_by_the_server() {
    let now = Instant::now();
    let (mut server, reserve, _) = server_with_offer(9);
    let want =
        encode_frame(&Want { bit_vector: Bytes::from_static(&[0xff]) }, MAX_MESSAGE_SIZE).unwrap();
    server.handle_data(now, CLIENT, StreamId(5), &want, &reserve);
    assert_eq!(
        server.poll_event(),
        Some(ServerEvent::Misbehaved {
            peer: CLIENT,
            stream: StreamId(5),
            error: ServeError::Want(WantError::Length { offered: 9, expected: 2, actual: 1 })
        })
    );
    assert_eq!(server.poll_transmit(now).map(|t| t.action), Some(StreamAction::Reset));
    assert_eq!(server.stats().chunks_sent, 0);
    // The server keeps serving other streams.
    server.handle_stream_opened(CLIENT, StreamId(6), Protocol::Cursors);
    server.handle_data(now, CLIENT, StreamId(6), &encode_frame(&Syn {}, 16).unwrap(), &reserve);
    assert!(matches!(server.poll_transmit(now).map(|t| t.action), Some(StreamAction::Send(_))));
}

#[test]
fn server_rejects_a_bad_bin_and_an_unexpected_message() {
    let now = Instant::now();
    let reserve = MemoryReserve::new(SERVER_OVERLAY, 7);
    let mut server: Server<u8> = Server::new(Config::default());
    server.handle_stream_opened(CLIENT, StreamId(1), Protocol::Pullsync);
    server.handle_data(
        now,
        CLIENT,
        StreamId(1),
        &encode_frame(&Get { bin: 32, start: 1 }, 64).unwrap(),
        &reserve,
    );
    assert!(matches!(
        server.poll_event(),
        Some(ServerEvent::Misbehaved { error: ServeError::BadBin(32), .. })
    ));
    let (mut server, reserve, _) = server_with_offer(3);
    let again = encode_frame(&Get { bin: 0, start: 1 }, 64).unwrap();
    server.handle_data(now, CLIENT, StreamId(5), &again, &reserve);
    // A Get parses as a Want only if its fields line up; here bit vector is empty, so wrong length.
    assert!(matches!(server.poll_event(), Some(ServerEvent::Misbehaved { .. })));
}

#[test]
fn server_caps_inbound_streams_per_peer() {
    let mut server: Server<u8> = Server::new(Config::default().with_max_inbound_streams(2));
    for i in 0..3 {
        server.handle_stream_opened(CLIENT, StreamId(i), Protocol::Pullsync);
    }
    assert!(matches!(
        server.poll_event(),
        Some(ServerEvent::Misbehaved { error: ServeError::TooManyStreams, .. })
    ));
    server.handle_stream_reset(CLIENT, StreamId(0));
    server.handle_stream_opened(CLIENT, StreamId(3), Protocol::Pullsync);
    assert_eq!(server.poll_event(), None);
}
