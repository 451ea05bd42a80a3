//! Bad input to the puller: each is a typed error, nothing is stored, and the cores keep going.

use super::*;

/// Drives a puller by hand against a scripted server on one page of bin 0.
struct Scripted {
    now: Instant,
    puller: Puller<u8, MemoryIntervalStore>,
    store: MemoryReserve,
    page: StreamId,
}

impl Scripted {
    fn new(config: Config) -> Self {
        let now = Instant::now();
        let mut puller = bin0_puller(config, MemoryIntervalStore::default());
        puller.add_peer(now, SERVER, SERVER_OVERLAY);
        let mut cursors = vec![0; 32];
        cursors[0] = 3;
        let ack = encode_frame(&Ack { cursors, epoch: 1 }, MAX_MESSAGE_SIZE).unwrap();
        let store = MemoryReserve::new(far(), 1);
        puller.handle_data(now, StreamId(0), &ack, &store);
        let mut s = Scripted { now, puller, store, page: StreamId(0) };
        // Streams: 0 cursors, 1 historical page of bin 0, 2 live page of bin 0.
        s.page = s.opened().into_iter().find(|(_, get)| get.start == 1).map(|(id, _)| id).unwrap();
        s
    }

    /// The Gets the puller sent, by stream.
    fn opened(&mut self) -> Vec<(StreamId, Get)> {
        let mut gets = Vec::new();
        while let Some(t) = self.puller.poll_transmit() {
            if let StreamAction::Send(frame) = t.action {
                let body = frame.slice(1..);
                if let Ok(get) = message::decode::<Get>(body) {
                    if t.stream.id() != StreamId(0) {
                        gets.push((t.stream.id(), get));
                    }
                }
            }
        }
        gets
    }

    fn feed<M: prost::Message>(&mut self, msg: &M) {
        let frame = encode_frame(msg, MAX_MESSAGE_SIZE).unwrap();
        self.puller.handle_data(self.now, self.page, &frame, &self.store);
    }

    fn events(&mut self) -> (Vec<swarm::Chunk>, Vec<PullError>) {
        let (mut chunks, mut errors) = (Vec::new(), Vec::new());
        while let Some(e) = self.puller.poll_event() {
            match e {
                PullerEvent::Chunk { chunk, .. } => chunks.push(chunk),
                PullerEvent::Misbehaved { error, .. } => errors.push(error),
                _ => {}
            }
        }
        (chunks, errors)
    }

    fn offer(&mut self, chunks: &[swarm::Chunk]) {
        self.offer_up_to(chunks, chunks.len() as u64);
    }

    fn offer_up_to(&mut self, chunks: &[swarm::Chunk], topmost: u64) {
        let offer = Offer {
            topmost,
            chunks: chunks
                .iter()
                .map(|c| message::Chunk {
                    address: Bytes::copy_from_slice(c.address().as_bytes()),
                    batch_id: Bytes::copy_from_slice(&c.stamp().batch_id()),
                    stamp_hash: Bytes::copy_from_slice(&c.stamp().hash()),
                })
                .collect(),
        };
        self.feed(&offer);
    }

    /// After a failure the page's stream was reset and a retry is scheduled.
    fn assert_reset_and_retry(&mut self) {
        let mut reset = false;
        while let Some(t) = self.puller.poll_transmit() {
            reset |= t.stream.id() == self.page && t.action == StreamAction::Reset;
        }
        assert!(reset, "stream not reset");
        let retry = self.puller.poll_timeout().unwrap();
        self.puller.handle_timeout(retry);
        let again = self.opened();
        assert!(again.iter().any(|(_, get)| get.bin == 0 && get.start == 1), "no retry: {again:?}");
    }
}

/// What the puller sent, in order: the Gets and Wants by peer and stream.
#[derive(Debug, Default)]
struct Sent {
    gets: Vec<(u8, StreamId)>,
    wants: Vec<(u8, StreamId, Want)>,
}

fn sent(puller: &mut Puller<u8, MemoryIntervalStore>) -> Sent {
    let mut sent = Sent::default();
    let mut kinds: std::collections::HashMap<StreamId, Protocol> = Default::default();
    while let Some(t) = puller.poll_transmit() {
        match t.action {
            StreamAction::Open(protocol) => {
                kinds.insert(t.stream.id(), protocol);
            }
            StreamAction::Send(frame) if kinds.get(&t.stream.id()) != Some(&Protocol::Cursors) => {
                let body = frame.slice(1..);
                match message::decode::<Get>(body.clone()) {
                    Ok(get) if get.start > 0 => sent.gets.push((t.peer, t.stream.id())),
                    _ => sent.wants.push((t.peer, t.stream.id(), message::decode(body).unwrap())),
                }
            }
            _ => {}
        }
    }
    sent
}

fn delivery(c: &swarm::Chunk) -> Delivery {
    Delivery {
        address: Bytes::copy_from_slice(c.address().as_bytes()),
        data: c.data().clone(),
        stamp: c.stamp().as_bytes().clone(),
    }
}

#[test]
fn a_peer_that_keeps_losing_a_chunk_cannot_hold_back_another_peers_page() {
    let x = chunks_in_bin(&mut rng(), 0, 1, 256);
    let mut s = Scripted::new(Config::default());
    let mut liar_page = s.page;
    let _ = sent(&mut s.puller);
    let mut honest_overlay = SERVER_OVERLAY;
    honest_overlay.0[31] = 3;
    s.puller.add_peer(s.now, 3, honest_overlay);
    // Streams 0 to 2 are SERVER's cursors and pages; 3 is the honest peer's cursors.
    s.page = StreamId(3);
    s.feed(&Ack { cursors: [vec![3], vec![0; 31]].concat(), epoch: 1 });
    let mut honest_page = sent(&mut s.puller).gets.iter().find(|(p, _)| *p == 3).unwrap().1;
    let lost =
        Delivery { address: Bytes::from(vec![0; 32]), data: Bytes::new(), stamp: Bytes::new() };
    // Each round: the liar offers X and is sent a Want for it; the honest peer's page offers X
    // while it is in flight there; the liar answers that it lost X, and the honest page, which
    // skipped X, is fetched again.
    for round in 0..3u64 {
        s.page = liar_page;
        s.offer_up_to(&x, round + 1);
        s.page = honest_page;
        s.offer(&x);
        let wants = sent(&mut s.puller).wants;
        let wanted_from_honest = wants.iter().any(|(p, _, w)| *p == 3 && w.bit_vector[0] & 1 == 1);
        if wanted_from_honest {
            assert_eq!(round, 2, "skipped in the first fetch and the first refetch only");
            let stats = s.puller.stats();
            assert_eq!((stats.pages_refetched, stats.chunks_skipped_in_flight), (2, 2));
            return;
        }
        s.page = liar_page;
        s.feed(&lost);
        let gets = sent(&mut s.puller).gets;
        honest_page = gets.iter().find(|(p, _)| *p == 3).expect("refetched").1;
        // The liar's historical pages run out after the third (its cursor is 3).
        if let Some(&(_, next)) = gets.iter().find(|(p, _)| *p == SERVER) {
            liar_page = next;
        }
    }
    panic!("the honest page never wanted the chunk");
}

#[test]
fn delivery_of_an_address_not_offered_is_rejected() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 3, 64);
    let mut s = Scripted::new(Config::default());
    s.offer(&chunks[..2]);
    s.feed(&delivery(&chunks[2]));
    let (stored, errors) = s.events();
    assert!(stored.is_empty());
    assert_eq!(errors, vec![PullError::NotWanted(chunks[2].address())]);
    assert_eq!(s.puller.stats().chunks_rejected, 1);
    s.assert_reset_and_retry();
}

#[test]
fn delivery_whose_data_does_not_hash_to_its_address_is_rejected() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 2, 64);
    let mut s = Scripted::new(Config::default());
    s.offer(&chunks);
    s.feed(&delivery(&chunks[0]));
    let mut forged = delivery(&chunks[1]);
    forged.data = chunks[0].data().clone();
    s.feed(&forged);
    let (stored, errors) = s.events();
    assert_eq!(stored, vec![chunks[0].clone()]);
    assert!(matches!(
        errors[..],
        [PullError::InvalidChunk(swarm::ChunkError::AddressMismatch { .. })]
    ));
    assert_eq!(s.puller.stats().chunks_rejected, 1);
    // The page is not recorded: the retry asks from 1 again.
    s.assert_reset_and_retry();
}

#[test]
fn delivery_with_another_stamp_is_rejected() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 1, 64);
    let mut s = Scripted::new(Config::default());
    s.offer(&chunks);
    let mut d = delivery(&chunks[0]);
    d.stamp = Bytes::from(vec![0; STAMP_SIZE]);
    s.feed(&d);
    let (stored, errors) = s.events();
    assert!(stored.is_empty());
    assert_eq!(errors, vec![PullError::StampMismatch(chunks[0].address())]);
}

#[test]
fn truncated_message_is_an_error_at_end_of_stream() {
    let mut s = Scripted::new(Config::default());
    let frame = encode_frame(&Offer { topmost: 1, chunks: vec![] }, MAX_MESSAGE_SIZE).unwrap();
    let mut long = encode_frame(
        &Offer {
            topmost: 1,
            chunks: vec![message::Chunk {
                address: Bytes::from(vec![1; 32]),
                batch_id: Bytes::from(vec![1; 32]),
                stamp_hash: Bytes::from(vec![1; 32]),
            }],
        },
        MAX_MESSAGE_SIZE,
    )
    .unwrap();
    long.truncate(long.len() - 10);
    assert!(frame.len() < long.len());
    s.puller.handle_data(s.now, s.page, &long, &s.store);
    s.puller.handle_stream_finished(s.now, s.page);
    let (stored, errors) = s.events();
    assert!(stored.is_empty());
    assert!(matches!(errors[..], [PullError::Frame(crate::framing::FrameError::Truncated { .. })]));
    s.assert_reset_and_retry();
}

#[test]
fn message_cut_short_inside_its_frame_is_a_protobuf_error() {
    let mut s = Scripted::new(Config::default());
    // A frame of 5 bytes claiming a 32-byte address field.
    s.puller.handle_data(s.now, s.page, &[5, 0x12, 34, 0x0a, 32, 1], &s.store);
    let (_, errors) = s.events();
    assert!(matches!(errors[..], [PullError::Frame(crate::framing::FrameError::Protobuf(_))]));
}

#[test]
fn oversized_message_is_refused_before_its_body_arrives() {
    let mut s = Scripted::new(Config::default());
    let mut prefix = unsigned_varint::encode::usize_buffer();
    let prefix = unsigned_varint::encode::usize(MAX_MESSAGE_SIZE + 1, &mut prefix).to_vec();
    s.puller.handle_data(s.now, s.page, &prefix, &s.store);
    let (_, errors) = s.events();
    assert_eq!(
        errors,
        vec![PullError::Frame(crate::framing::FrameError::TooLarge {
            len: MAX_MESSAGE_SIZE + 1,
            max: MAX_MESSAGE_SIZE
        })]
    );
    s.assert_reset_and_retry();
}

#[test]
fn offer_with_a_bad_address_or_too_many_chunks_is_rejected() {
    let mut s = Scripted::new(Config::default().with_max_page(2));
    let bad = Offer {
        topmost: 1,
        chunks: vec![message::Chunk {
            address: Bytes::from(vec![1; 31]),
            batch_id: Bytes::from(vec![1; 32]),
            stamp_hash: Bytes::from(vec![1; 32]),
        }],
    };
    s.feed(&bad);
    let (_, errors) = s.events();
    assert_eq!(errors, vec![PullError::OfferedAddress(swarm::AddressError::Length(31))]);
    s.assert_reset_and_retry();
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 3, 64);
    s.page = StreamId(3);
    s.offer(&chunks);
    let (_, errors) = s.events();
    assert_eq!(errors, vec![PullError::OfferTooLarge { offered: 3, max: 2 }]);
}

#[test]
fn cursors_of_the_wrong_length_are_rejected() {
    let now = Instant::now();
    let mut puller: Puller<u8, _> =
        Puller::new(Config::default(), client_overlay(), MemoryIntervalStore::default());
    puller.add_peer(now, SERVER, SERVER_OVERLAY);
    let ack = encode_frame(&Ack { cursors: vec![1; 31], epoch: 1 }, MAX_MESSAGE_SIZE).unwrap();
    puller.handle_data(now, StreamId(0), &ack, &MemoryReserve::new(client_overlay(), 1));
    assert_eq!(
        puller.poll_event(),
        Some(PullerEvent::Misbehaved { peer: SERVER, error: PullError::CursorCount(31) })
    );
    assert!(puller.syncing_bins(&SERVER).is_empty());
}
