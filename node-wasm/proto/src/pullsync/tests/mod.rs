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

mod hostile;
mod paging;
mod rate_limit;
mod server;
mod several_servers;
mod syncing;

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
