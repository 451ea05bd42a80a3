//! A quinn-style pair harness: one puller node and one or more server nodes exchanging stream
//! actions over links with fixed latency, on virtual time.

use super::*;
use crate::framing::encode_frame;
use crate::swarm::{self, Address, ChunkRef, Stamp, STAMP_SIZE};
use bytes::Bytes;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::time::Duration;
use web_time::Instant;

const SERVER: u8 = 1;
const CLIENT: u8 = 2;
const SERVER_OVERLAY: Address = Address([0; 32]);

fn client_overlay() -> Address {
    // Proximity 31 to the server: a neighbour that syncs every bin from the radius up.
    let mut a = [0; 32];
    a[31] = 1;
    Address(a)
}

/// Random chunks, each with its own stamp, that fall into `bin` of [`SERVER_OVERLAY`].
fn chunks_in_bin(rng: &mut ChaCha8Rng, bin: u8, n: usize, size: usize) -> Vec<swarm::Chunk> {
    let mut out = Vec::with_capacity(n);
    let mut payload = vec![0u8; size];
    while out.len() < n {
        rng.fill_bytes(&mut payload);
        let mut stamp = vec![0u8; STAMP_SIZE];
        rng.fill_bytes(&mut stamp);
        let chunk = swarm::Chunk::new(&payload, Stamp::new(Bytes::from(stamp)).unwrap()).unwrap();
        if SERVER_OVERLAY.proximity(&chunk.address()) == bin {
            out.push(chunk);
        }
    }
    out
}

enum Side {
    ToServer,
    ToClient,
}

struct Packet {
    at: Instant,
    /// Index of the server node at the other end from the puller.
    server: usize,
    side: Side,
    stream: StreamId,
    action: StreamAction,
}

/// A server node: its core, its reserve and the latency of its link to the puller.
struct Served {
    peer: u8,
    overlay: Address,
    latency: Duration,
    server: Server<u8>,
    reserve: MemoryReserve,
    /// The node still offers its chunks but can no longer read them.
    data_lost: bool,
}

/// How a server's link fails in a test.
#[derive(Clone, Copy, Debug)]
enum Failure {
    /// The peer disconnects: both sides drop it and everything in transit is lost.
    Disconnect,
    /// Every stream with data in transit is reset; the peer stays connected.
    ResetStreams,
    /// The node loses its chunk data but not its index: it delivers the zero address for every
    /// chunk wanted from now on, as a server does for a chunk evicted after it was offered.
    DataLost,
}

struct Pair {
    now: Instant,
    /// Latency of the first server's link.
    latency: Duration,
    /// The first is [`SERVER`] at [`SERVER_OVERLAY`]; more join with [`Pair::add_server`].
    servers: Vec<Served>,
    puller: Puller<u8, MemoryIntervalStore>,
    store: MemoryReserve,
    /// Packets in transit, in arrival order.
    link: VecDeque<Packet>,
    /// Every chunk the puller handed on, with when and from which server.
    delivered: Vec<(Instant, ChunkRef)>,
    delivered_by: Vec<u8>,
    synced: Vec<(u8, u64, u64, bool)>,
    pull_errors: Vec<PullError>,
    serve_errors: Vec<ServeError>,
    /// Lengths of the frames the servers sent.
    server_frames: Vec<usize>,
    /// When the pair was made: second 0 of [`Pair::deliveries_per_second`].
    start: Instant,
}

impl Pair {
    fn new(config: Config) -> Self {
        Self::with_store(
            config,
            MemoryIntervalStore::default(),
            MemoryReserve::new(client_overlay(), 1),
        )
    }

    fn with_store(config: Config, intervals: MemoryIntervalStore, store: MemoryReserve) -> Self {
        let now = Instant::now();
        let latency = Duration::from_millis(10);
        Pair {
            now,
            latency,
            servers: vec![Served {
                peer: SERVER,
                overlay: SERVER_OVERLAY,
                latency,
                server: Server::new(config.clone()),
                reserve: MemoryReserve::new(SERVER_OVERLAY, 7),
                data_lost: false,
            }],
            puller: Puller::new(config, client_overlay(), intervals),
            store,
            link: VecDeque::new(),
            delivered: Vec::new(),
            delivered_by: Vec::new(),
            synced: Vec::new(),
            pull_errors: Vec::new(),
            serve_errors: Vec::new(),
            server_frames: Vec::new(),
            start: now,
        }
    }

    /// Another server node, `peer`, whose overlay differs from [`SERVER_OVERLAY`] only in the
    /// last byte: it has the same proximity to the puller and the same bins.
    fn add_server(&mut self, peer: u8, config: Config, latency: Duration) {
        let mut overlay = SERVER_OVERLAY;
        overlay.0[31] = peer;
        let reserve = MemoryReserve::new(overlay, 7);
        let server = Server::new(config);
        self.servers.push(Served { peer, overlay, latency, server, reserve, data_lost: false });
    }

    /// The server node that answers for `peer`: its own, or the first for a peer without one (so
    /// that any overlay can be tried against one reserve).
    fn route(&self, peer: u8) -> usize {
        self.servers.iter().position(|s| s.peer == peer).unwrap_or(0)
    }

    fn served(&mut self, peer: u8) -> &mut Served {
        let i = self.route(peer);
        &mut self.servers[i]
    }

    fn server(&self) -> &Server<u8> {
        &self.servers[0].server
    }

    fn reserve(&self) -> &MemoryReserve {
        &self.servers[0].reserve
    }

    fn set_reserve(&mut self, reserve: MemoryReserve) {
        self.servers[0].reserve = reserve;
    }

    /// Chunks delivered in each whole second since the pair was made.
    fn deliveries_per_second(&self) -> Vec<u64> {
        let mut counts = Vec::new();
        for (at, _) in &self.delivered {
            let second = (*at - self.start).as_secs() as usize;
            counts.resize(counts.len().max(second + 1), 0);
            counts[second] += 1;
        }
        counts
    }

    fn add_to_reserve(&mut self, chunks: &[swarm::Chunk]) {
        self.add_to_reserve_of(SERVER, chunks);
    }

    fn add_to_reserve_of(&mut self, peer: u8, chunks: &[swarm::Chunk]) {
        let now = self.now;
        let s = self.served(peer);
        for c in chunks {
            s.reserve.put(c.clone());
        }
        s.server.handle_reserve_changed(now, &s.reserve);
    }

    fn connect(&mut self) {
        self.connect_to(SERVER);
    }

    fn connect_to(&mut self, peer: u8) {
        let overlay = self.served(peer).overlay;
        self.puller.add_peer(self.now, peer, overlay);
    }

    /// Makes `peer`'s link fail now, as `failure` says, once what the cores queued is in transit.
    fn fail_link(&mut self, peer: u8, failure: Failure) {
        self.drain();
        let i = self.route(peer);
        if let Failure::DataLost = failure {
            self.servers[i].data_lost = true;
            return;
        }
        let (lost, kept): (VecDeque<Packet>, _) =
            std::mem::take(&mut self.link).into_iter().partition(|p| p.server == i);
        self.link = kept;
        match failure {
            Failure::Disconnect => {
                self.served(peer).server.handle_peer_disconnected(CLIENT);
                self.puller.remove_peer(self.now, peer);
            }
            Failure::ResetStreams => {
                for p in lost {
                    self.served(peer).server.handle_stream_reset(CLIENT, p.stream);
                    self.puller.handle_stream_failed(self.now, p.stream);
                }
            }
            Failure::DataLost => {}
        }
    }

    /// Drains every core, delivers due packets and fires due timers; with nothing left to do
    /// now, jumps to the next packet or timer. Returns false when every side is idle.
    fn step(&mut self) -> bool {
        self.step_until(None)
    }

    /// As [`Pair::step`], but never jumps virtual time past `limit`.
    fn step_until(&mut self, limit: Option<Instant>) -> bool {
        self.drain();
        let mut worked = false;
        while self.link.front().is_some_and(|p| p.at <= self.now) {
            let packet = self.link.pop_front().unwrap();
            self.deliver(packet);
            worked = true;
        }
        for s in &mut self.servers {
            if s.server.poll_timeout().is_some_and(|t| t <= self.now) {
                s.server.handle_timeout(self.now, &s.reserve);
                worked = true;
            }
        }
        if self.puller.poll_timeout().is_some_and(|t| t <= self.now) {
            self.puller.handle_timeout(self.now);
            worked = true;
        }
        if worked {
            return true;
        }
        self.drain();
        let next = [self.link.front().map(|p| p.at), self.puller.poll_timeout()]
            .into_iter()
            .chain(self.servers.iter().map(|s| s.server.poll_timeout()))
            .flatten()
            .min();
        match next {
            Some(at) if limit.is_some_and(|l| at > l) => {
                self.now = self.now.max(limit.unwrap_or(at));
                false
            }
            Some(at) => {
                self.now = self.now.max(at);
                true
            }
            None => false,
        }
    }

    fn drive(&mut self) {
        assert!(self.drive_bounded(1_000_000), "pair did not go idle");
    }

    /// Steps until idle or `max` steps; true if it went idle.
    fn drive_bounded(&mut self, max: usize) -> bool {
        (0..max).any(|_| !self.step())
    }

    /// Steps until virtual time reaches `until` (for setups that never go idle).
    fn drive_until(&mut self, until: Instant) {
        while self.now < until && self.step_until(Some(until)) {}
    }

    /// Steps until `done` holds; panics if everything goes idle first.
    fn drive_to(&mut self, done: impl Fn(&Pair) -> bool) {
        while !done(self) {
            assert!(self.step(), "went idle before the condition held");
        }
    }

    /// Queues a packet behind those arriving no later.
    fn send(&mut self, server: usize, side: Side, stream: StreamId, action: StreamAction) {
        let at = self.now + self.servers[server].latency;
        let i = self.link.partition_point(|p| p.at <= at);
        self.link.insert(i, Packet { at, server, side, stream, action });
    }

    fn drain(&mut self) {
        while let Some(t) = self.puller.poll_transmit() {
            self.send(self.route(t.peer), Side::ToServer, t.stream.id(), t.action);
        }
        while let Some(event) = self.puller.poll_event() {
            match event {
                PullerEvent::Chunk { chunk, peer, .. } => {
                    self.delivered.push((self.now, chunk.chunk_ref()));
                    self.delivered_by.push(peer);
                    self.store.put(chunk);
                }
                PullerEvent::IntervalSynced { bin, start, end, live, .. } => {
                    self.synced.push((bin, start, end, live))
                }
                PullerEvent::Misbehaved { error, .. } => self.pull_errors.push(error),
                PullerEvent::StoreFailed { error, .. } => panic!("memory store failed: {error}"),
            }
        }
        let mut out = Vec::new();
        for (i, s) in self.servers.iter_mut().enumerate() {
            while let Some(event) = s.server.poll_event() {
                match event {
                    ServerEvent::ChunksWanted { peer, stream, chunks } => {
                        let read = |c| s.reserve.get(c).filter(|_| !s.data_lost);
                        let found = chunks.iter().map(read).collect();
                        // A stream reset in the same step as its Want no longer waits, as in
                        // the glue.
                        match s.server.provide_chunks(peer, stream, found) {
                            Ok(()) | Err(ProvideError::NotWaiting) => {}
                            Err(e) => panic!("chunks not provided: {e}"),
                        }
                    }
                    ServerEvent::Misbehaved { error, .. } => self.serve_errors.push(error),
                }
            }
            while let Some(t) = s.server.poll_transmit(self.now) {
                if let StreamAction::Send(frame) = &t.action {
                    self.server_frames.push(frame.len());
                }
                out.push((i, t));
            }
        }
        for (server, t) in out {
            self.send(server, Side::ToClient, t.stream.id(), t.action);
        }
    }

    fn deliver(&mut self, p: Packet) {
        let now = self.now;
        let s = &mut self.servers[p.server];
        match (p.side, p.action) {
            (Side::ToServer, StreamAction::Open(protocol)) => {
                s.server.handle_stream_opened(CLIENT, p.stream, protocol)
            }
            (Side::ToServer, StreamAction::Send(data)) => {
                s.server.handle_data(now, CLIENT, p.stream, &data, &s.reserve)
            }
            (Side::ToServer, StreamAction::Finish) => {
                s.server.handle_stream_finished(CLIENT, p.stream)
            }
            (Side::ToServer, StreamAction::Reset) => s.server.handle_stream_reset(CLIENT, p.stream),
            (Side::ToClient, StreamAction::Send(data)) => {
                self.puller.handle_data(now, p.stream, &data, &self.store)
            }
            (Side::ToClient, StreamAction::Finish) => {
                self.puller.handle_stream_finished(now, p.stream)
            }
            (Side::ToClient, StreamAction::Reset) => {
                self.puller.handle_stream_failed(now, p.stream)
            }
            (Side::ToClient, StreamAction::Open(_)) => unreachable!("servers do not open streams"),
        }
    }

    fn delivered_addresses(&self) -> Vec<Address> {
        self.delivered.iter().map(|(_, c)| c.address).collect()
    }
}

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(7)
}

/// Only bin 0 is synced: the puller's overlay is in bin 0 of the server and its radius is 1, so
/// the server is one below the radius and serves its own bin only.
fn bin0_pair(config: Config) -> Pair {
    let mut pair = Pair::with_store(
        config.clone(),
        MemoryIntervalStore::default(),
        MemoryReserve::new(far(), 1),
    );
    pair.puller = bin0_puller(config, MemoryIntervalStore::default());
    pair
}

fn far() -> Address {
    let mut far = [0; 32];
    far[0] = 0x80;
    Address(far)
}

fn bin0_puller(config: Config, intervals: MemoryIntervalStore) -> Puller<u8, MemoryIntervalStore> {
    let mut puller = Puller::new(config, far(), intervals);
    puller.set_storage_radius(Instant::now(), 1);
    puller
}

#[test]
fn historical_sync_of_a_bin_fetches_every_chunk_once_in_order() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 600, 4096);
    let mut pair = bin0_pair(Config::default());
    pair.add_to_reserve(&chunks);
    pair.connect();
    pair.drive();
    assert_eq!(pair.puller.syncing_bins(&SERVER), vec![0]);
    let expected: Vec<Address> = chunks.iter().map(|c| c.address()).collect();
    assert_eq!(pair.delivered_addresses(), expected);
    assert!(pair.pull_errors.is_empty() && pair.serve_errors.is_empty());
    // Pages of 250, 250 and 100, recorded as one interval.
    let historical: Vec<_> = pair.synced.iter().filter(|s| !s.3).collect();
    assert_eq!(historical, vec![&(0, 1, 250, false), &(0, 251, 500, false), &(0, 501, 600, false)]);
    let stats = pair.puller.stats();
    assert_eq!(
        (stats.chunks_offered, stats.chunks_wanted, stats.chunks_delivered),
        (600, 600, 600)
    );
    assert_eq!(pair.server().stats().chunks_sent, 600);
    assert_eq!(pair.puller.store().intervals(&SERVER_OVERLAY, 0).unwrap().ranges(), &[(1, 600)]);
}

#[test]
fn neighbour_syncs_every_bin_from_the_radius_up() {
    let mut rng = rng();
    let mut pair = Pair::new(Config::default());
    let low = chunks_in_bin(&mut rng, 0, 20, 64);
    let high = chunks_in_bin(&mut rng, 2, 5, 64);
    pair.add_to_reserve(&low);
    pair.add_to_reserve(&high);
    pair.puller.set_storage_radius(pair.now, 1);
    pair.connect();
    pair.drive();
    assert_eq!(pair.puller.syncing_bins(&SERVER), (1..32).collect::<Vec<u8>>());
    // The client's own radius also filters: bin-0 chunks are outside it and never wanted.
    let got = pair.delivered_addresses();
    assert_eq!(got, high.iter().map(|c| c.address()).collect::<Vec<_>>());
}

#[test]
fn a_peer_below_the_radius_serves_only_its_own_bin_and_too_far_serves_none() {
    let mut pair = Pair::new(Config::default());
    let mut overlay = [0u8; 32];
    overlay[0] = 0b0010_0000; // proximity 2 to the client overlay
    pair.puller.set_storage_radius(pair.now, 5);
    pair.puller.add_peer(pair.now, 9, Address(overlay));
    pair.puller.add_peer(pair.now, SERVER, SERVER_OVERLAY);
    pair.drive();
    assert_eq!(pair.puller.syncing_bins(&9), Vec::<u8>::new());
    let mut pair = Pair::new(Config::default());
    pair.puller.set_storage_radius(pair.now, 3);
    overlay[0] = 0b0010_0000;
    // Proximity 2 with radius 3: within MAX_PO_DELTA, so only bin 2. The harness answers as the
    // server for peer SERVER only, so check the choice right after the cursors arrive.
    pair.puller.add_peer(pair.now, SERVER, Address(overlay));
    pair.drive();
    assert_eq!(pair.puller.syncing_bins(&SERVER), vec![2]);
}

#[test]
fn live_sync_long_polls_and_closes_the_page_after_the_quiet_period() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 12, 256);
    let mut pair = bin0_pair(Config::default());
    pair.connect();
    pair.drive();
    assert!(pair.delivered.is_empty());
    // Nothing to offer: the live Get waits on the server with no timer running.
    assert_eq!(pair.server().poll_timeout(), None);
    let t0 = pair.now + Duration::from_secs(5);
    pair.now = t0;
    pair.add_to_reserve(&chunks[..4]);
    pair.drive_until(t0 + Duration::from_millis(500));
    pair.add_to_reserve(&chunks[4..]);
    pair.drive();
    // One page for all twelve: it closed 1 s after the last arrival, not after the first.
    assert_eq!(pair.synced, vec![(0, 1, 12, true)]);
    let first = pair.delivered[0].0;
    let offered_at = first - pair.latency * 3;
    assert_eq!(offered_at, t0 + Duration::from_millis(500) + Duration::from_secs(1));
    assert_eq!(pair.delivered.len(), 12);
}

fn sync_frames(mode: DeliveryMode, n: usize) -> (Pair, Vec<usize>) {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, n, 4096);
    let mut pair = bin0_pair(Config::default().with_delivery(mode));
    pair.add_to_reserve(&chunks);
    pair.connect();
    pair.drive();
    assert_eq!(pair.delivered_addresses(), chunks.iter().map(|c| c.address()).collect::<Vec<_>>());
    // Full-chunk deliveries are about 4.3 kB, batches over 20 kB; the offer is about 12.5 kB.
    let is_delivery = |len: &usize| match mode {
        DeliveryMode::Streamed => (4200..5000).contains(len),
        DeliveryMode::Batched => *len > 20_000,
    };
    let frames = pair.server_frames.iter().copied().filter(is_delivery).collect();
    (pair, frames)
}

#[test]
fn streamed_sends_one_delivery_per_message_batched_up_to_25() {
    let (streamed, frames) = sync_frames(DeliveryMode::Streamed, 120);
    assert_eq!(frames.len(), 120);
    let (batched, frames) = sync_frames(DeliveryMode::Batched, 120);
    assert_eq!(frames.len(), 5);
    assert!(frames.iter().all(|len| *len <= MAX_MESSAGE_SIZE));
    assert_eq!(streamed.puller.stats().chunks_delivered, batched.puller.stats().chunks_delivered);
}

#[test]
fn rate_limit_holds_a_peer_to_250_chunks_per_second() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 2000, 32);
    let config = Config::default().with_rate_limit(Some(RateLimit::BEE));
    let mut pair = bin0_pair(config);
    pair.add_to_reserve(&chunks);
    pair.connect();
    pair.drive();
    assert_eq!(pair.delivered.len(), 2000);
    // The first two pages use the burst; every later page waits for 250 tokens (1 s).
    let page_starts: Vec<Instant> = pair.delivered.iter().step_by(250).map(|d| d.0).collect();
    let gaps: Vec<Duration> = page_starts.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps[0] < Duration::from_millis(100), "burst page waited {:?}", gaps[0]);
    // The first throttled page waited less by the round trips the burst pages spent.
    assert!(gaps[1] <= Duration::from_secs(1));
    for gap in &gaps[2..] {
        assert_eq!(*gap, Duration::from_secs(1));
    }
    // Pages 3 to 7 (1250 chunks) took from the start of page 3 to the start of page 8.
    let span = pair.delivered[1750].0 - pair.delivered[500].0;
    let rate = 1250.0 / span.as_secs_f64();
    assert!((rate - 250.0).abs() < 15.0, "sustained {rate} chunks/s");
    assert!(pair.server().stats().throttled >= 6);
    // The per-second delivery series shows the limiter exactly: one page per second.
    let per_second = pair.deliveries_per_second();
    assert_eq!(per_second[per_second.len() - 6..], [250; 6]);
    assert_eq!(per_second.iter().sum::<u64>(), 2000);
}

#[test]
fn without_rate_limit_pages_follow_each_other_at_link_speed() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 2000, 32);
    let mut pair = bin0_pair(Config::default());
    pair.add_to_reserve(&chunks);
    pair.connect();
    pair.drive();
    let span = pair.delivered[1999].0 - pair.delivered[0].0;
    // Seven more pages, each one round trip for Get/Offer and one for Want/Delivery.
    assert_eq!(span, pair.latency * 4 * 7);
}

#[test]
fn restart_resumes_from_the_intervals_without_fetching_again() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 500, 128);
    let mut pair = bin0_pair(Config::default());
    pair.add_to_reserve(&chunks[..300]);
    pair.connect();
    pair.drive();
    assert_eq!(pair.delivered.len(), 300);
    let intervals = pair.puller.store().clone();
    let store = pair.store.clone();
    let reserve = pair.reserve().clone();
    let sent_before = pair.server().stats().chunks_sent;

    // A new puller (restart) with the same intervals and chunk store; the server got 200 more.
    let mut pair2 = Pair::with_store(Config::default(), MemoryIntervalStore::default(), store);
    pair2.puller = bin0_puller(Config::default(), intervals);
    pair2.set_reserve(reserve);
    pair2.add_to_reserve(&chunks[300..]);
    pair2.connect();
    pair2.drive();
    let expected: Vec<Address> = chunks[300..].iter().map(|c| c.address()).collect();
    assert_eq!(pair2.delivered_addresses(), expected);
    // Nothing below 301 was even offered again.
    assert_eq!(pair2.puller.stats().chunks_offered, 200);
    assert_eq!(pair2.server().stats().chunks_sent, 200);
    assert_eq!(sent_before, 300);
}

#[test]
fn offered_chunks_already_stored_are_not_wanted() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 40, 64);
    let mut pair = bin0_pair(Config::default());
    for c in &chunks[..25] {
        pair.store.put(c.clone());
    }
    pair.add_to_reserve(&chunks);
    pair.connect();
    pair.drive();
    assert_eq!(pair.puller.stats().chunks_offered, 40);
    assert_eq!(pair.puller.stats().chunks_wanted, 15);
    assert_eq!(pair.server().stats().chunks_sent, 15);
    assert_eq!(pair.store.len(), 40);
}

#[test]
fn epoch_change_resets_the_intervals() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 30, 64);
    let mut pair = bin0_pair(Config::default());
    pair.add_to_reserve(&chunks);
    pair.connect();
    pair.drive();
    let mut intervals = pair.puller.store().clone();
    intervals.reset_peer(&SERVER_OVERLAY, 6).unwrap();
    intervals.add(&SERVER_OVERLAY, 0, 1, 30).unwrap();
    // The server's epoch is 7, not 6: everything is offered again (and not wanted: we have it).
    let mut pair2 =
        Pair::with_store(Config::default(), MemoryIntervalStore::default(), pair.store.clone());
    pair2.puller = bin0_puller(Config::default(), intervals);
    pair2.set_reserve(pair.reserve().clone());
    pair2.connect();
    pair2.drive();
    assert_eq!(pair2.puller.stats().chunks_offered, 30);
    assert_eq!(pair2.puller.stats().chunks_wanted, 0);
}

// --- Bad input: each is a typed error, nothing is stored, and the cores keep going. ---

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

#[test]
fn server_sends_the_zero_address_for_a_chunk_that_is_gone_and_the_puller_skips_it() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 3, 64);
    let mut pair = bin0_pair(Config::default());
    pair.add_to_reserve(&chunks);
    // Evict the middle chunk from the data store but not the index: a race bee also has.
    let mut thinned = MemoryReserve::new(SERVER_OVERLAY, 7);
    thinned.put(chunks[0].clone());
    thinned.put(chunks[2].clone());
    let index = pair.reserve().clone();
    pair.connect();
    for _ in 0..10_000 {
        pair.set_reserve(index.clone());
        pair.drain_with_data_store(&thinned);
        if !pair.step() {
            break;
        }
    }
    assert_eq!(pair.delivered_addresses(), vec![chunks[0].address(), chunks[2].address()]);
    assert_eq!(pair.puller.stats().chunks_missing, 1);
    assert_eq!(pair.server().stats().chunks_missing, 1);
}

impl Pair {
    /// Answers the server's chunk reads from `data` instead of the index reserve.
    fn drain_with_data_store(&mut self, data: &MemoryReserve) {
        let server = &mut self.servers[0].server;
        while let Some(event) = server.poll_event() {
            if let ServerEvent::ChunksWanted { peer, stream, chunks } = event {
                let found = chunks.iter().map(|c| data.get(c)).collect();
                server.provide_chunks(peer, stream, found).unwrap();
            }
        }
    }
}

// --- Several servers offering the same chunks: each is delivered once, and none is lost. ---

/// A bin-0 puller and the first server plus servers `more`, all on links of the same latency.
fn bin0_room(more: &[u8]) -> Pair {
    let mut pair = bin0_pair(Config::default());
    for &peer in more {
        pair.add_server(peer, Config::default(), pair.latency);
    }
    pair
}

/// [`bin0_room`] with SERVER and peer 3 both holding `chunks`, connected.
fn two_servers_holding(chunks: &[swarm::Chunk]) -> Pair {
    let mut pair = bin0_room(&[3]);
    pair.add_to_reserve_of(SERVER, chunks);
    pair.add_to_reserve_of(3, chunks);
    pair.connect_to(SERVER);
    pair.connect_to(3);
    pair
}

fn assert_each_delivered_once(pair: &Pair, chunks: &[swarm::Chunk]) {
    let mut got = pair.delivered_addresses();
    got.sort();
    let mut expected: Vec<Address> = chunks.iter().map(|c| c.address()).collect();
    expected.sort();
    assert_eq!(got, expected, "every chunk delivered exactly once");
    assert_eq!(pair.store.len(), chunks.len());
    assert!(pair.pull_errors.is_empty() && pair.serve_errors.is_empty());
}

fn bin0_ranges(pair: &Pair, peer: u8) -> Option<Vec<(u64, u64)>> {
    let overlay = pair.servers[pair.route(peer)].overlay;
    pair.puller.store().intervals(&overlay, 0).map(|i| i.ranges().to_vec())
}

fn chunks_sent(pair: &Pair) -> u64 {
    pair.servers.iter().map(|s| s.server.stats().chunks_sent).sum()
}

#[test]
fn two_servers_offering_the_same_chunks_deliver_each_chunk_once() {
    let chunks = chunks_in_bin(&mut rng(), 0, 600, 256);
    let mut pair = two_servers_holding(&chunks);
    pair.drive();
    assert_each_delivered_once(&pair, &chunks);
    let stats = pair.puller.stats();
    // Both offer every page at the same time: one page is wanted, the other skipped entirely.
    assert_eq!(
        (stats.chunks_offered, stats.chunks_wanted, stats.chunks_skipped_in_flight),
        (1200, 600, 600)
    );
    assert_eq!((stats.chunks_delivered, chunks_sent(&pair), stats.pages_refetched), (600, 600, 0));
    // Each peer's intervals are complete, though one of them delivered every chunk.
    assert_eq!(bin0_ranges(&pair, SERVER), Some(vec![(1, 600)]));
    assert_eq!(bin0_ranges(&pair, 3), Some(vec![(1, 600)]));
}

#[test]
fn three_servers_holding_the_chunks_in_different_orders_deliver_each_chunk_once() {
    let mut rng = rng();
    let chunks = chunks_in_bin(&mut rng, 0, 700, 256);
    let mut shuffled = chunks.clone();
    rand::seq::SliceRandom::shuffle(&mut shuffled[..], &mut rng);
    let reversed: Vec<swarm::Chunk> = chunks.iter().rev().cloned().collect();
    let mut pair = bin0_room(&[3, 4]);
    pair.served(4).latency = Duration::from_millis(7);
    pair.add_to_reserve_of(SERVER, &chunks);
    pair.add_to_reserve_of(3, &reversed);
    pair.add_to_reserve_of(4, &shuffled);
    for peer in [SERVER, 3, 4] {
        pair.connect_to(peer);
    }
    pair.drive();
    // Pages now mix chunks stored, wanted here and skipped for another page.
    assert_each_delivered_once(&pair, &chunks);
    let stats = pair.puller.stats();
    assert_eq!((stats.chunks_wanted, stats.chunks_delivered, chunks_sent(&pair)), (700, 700, 700));
    assert!(stats.chunks_skipped_in_flight > 0);
    for peer in [SERVER, 3, 4] {
        assert_eq!(bin0_ranges(&pair, peer), Some(vec![(1, 700)]), "intervals of {peer}");
    }
}

#[test]
fn a_chunk_skipped_for_a_peer_that_then_fails_is_fetched_from_the_other() {
    for failure in [Failure::Disconnect, Failure::ResetStreams, Failure::DataLost] {
        let chunks = chunks_in_bin(&mut rng(), 0, 300, 256);
        let mut pair = two_servers_holding(&chunks);
        // SERVER's first page is wanted; peer 3's, offered just after, skips all of it and is
        // held. Then SERVER fails before delivering anything.
        pair.drive_to(|p| p.puller.stats().chunks_skipped_in_flight == 250);
        assert!(pair.delivered.is_empty());
        assert_eq!(bin0_ranges(&pair, 3), None, "the held page is not recorded");
        pair.fail_link(SERVER, failure);
        pair.drive();
        assert_each_delivered_once(&pair, &chunks);
        assert!(pair.delivered_by.iter().all(|&p| p == 3), "{failure:?}");
        let stats = pair.puller.stats();
        assert!(stats.pages_refetched >= 1, "{failure:?}");
        assert_eq!(stats.chunks_delivered, 300);
        assert_eq!(bin0_ranges(&pair, 3), Some(vec![(1, 300)]), "{failure:?}");
        // A peer that stays connected ends complete too; one that left recorded nothing.
        let first = match failure {
            Failure::Disconnect => None,
            Failure::ResetStreams | Failure::DataLost => Some(vec![(1, 300)]),
        };
        assert_eq!(bin0_ranges(&pair, SERVER), first, "{failure:?}");
    }
}

#[test]
fn live_pages_of_two_servers_deliver_each_new_chunk_once() {
    let chunks = chunks_in_bin(&mut rng(), 0, 12, 256);
    let mut pair = bin0_room(&[3]);
    pair.connect_to(SERVER);
    pair.connect_to(3);
    pair.drive();
    pair.now += Duration::from_secs(5);
    pair.add_to_reserve_of(SERVER, &chunks);
    pair.add_to_reserve_of(3, &chunks);
    pair.drive();
    assert_each_delivered_once(&pair, &chunks);
    assert_eq!(pair.puller.stats().chunks_skipped_in_flight, 12);
    assert_eq!(pair.synced, vec![(0, 1, 12, true), (0, 1, 12, true)]);
}

#[test]
fn a_held_page_of_a_bin_that_stops_is_dropped_and_synced_again_when_it_restarts() {
    let chunks = chunks_in_bin(&mut rng(), 0, 300, 256);
    let mut pair = two_servers_holding(&chunks);
    pair.drive_to(|p| p.puller.stats().chunks_skipped_in_flight == 250);
    // Radius 5 is more than MAX_PO_DELTA above both peers: bin 0 stops everywhere.
    pair.puller.set_storage_radius(pair.now, 5);
    assert!(
        pair.puller.syncing_bins(&SERVER).is_empty() && pair.puller.syncing_bins(&3).is_empty()
    );
    pair.drive();
    assert!(pair.delivered.is_empty());
    pair.puller.set_storage_radius(pair.now, 1);
    pair.drive();
    assert_each_delivered_once(&pair, &chunks);
    assert_eq!(bin0_ranges(&pair, SERVER), Some(vec![(1, 300)]));
    assert_eq!(bin0_ranges(&pair, 3), Some(vec![(1, 300)]));
}
