//! The pull-sync benchmark op on virtual time: a server core and a puller core, each drained as
//! the libp2p glue drains them, joined by one link with a fixed one-way latency and a bandwidth
//! (one FIFO per direction: a frame is serialised after what the direction is still sending,
//! then travels the latency). Frames count their own bytes only: no yamux, noise or TCP
//! overhead, no flow-control windows. So these rows are what the protocol itself costs; the
//! libp2p rows add the real stack.
//!
//! When the shared discrete-event simulator (`syncscope_node::sim`) lands, [`SimPair`] becomes
//! two `SimNode`s on one of its links; the op below stays the same.

use std::collections::VecDeque;
use std::time::Duration;

use syncscope_node::proto::pullsync::{
    Config, IntervalStore, MemoryIntervalStore, MemoryReserve, Puller, PullerEvent, Server,
    ServerEvent, StreamAction, StreamId,
};
use syncscope_node::proto::swarm::{Address, Chunk};
use web_time::Instant;

const SERVER: u8 = 0;
const CLIENT: u8 = 1;

#[derive(Clone, Copy, Debug)]
pub struct Link {
    pub latency: Duration,
    pub bytes_per_second: u64,
}

struct Frame {
    arrives: Instant,
    stream: StreamId,
    action: StreamAction,
}

/// One direction of the link.
struct Direction {
    free_at: Instant,
    frames: VecDeque<Frame>,
}

impl Direction {
    fn new(now: Instant) -> Self {
        Direction { free_at: now, frames: VecDeque::new() }
    }

    fn send(&mut self, now: Instant, link: Link, stream: StreamId, action: StreamAction) {
        let bytes = match &action {
            StreamAction::Send(frame) => frame.len() as u64,
            _ => 0,
        };
        let serialise = Duration::from_nanos(bytes * 1_000_000_000 / link.bytes_per_second.max(1));
        self.free_at = self.free_at.max(now) + serialise;
        self.frames.push_back(Frame { arrives: self.free_at + link.latency, stream, action });
    }

    fn due(&mut self, now: Instant) -> Option<Frame> {
        match self.frames.front() {
            Some(f) if f.arrives <= now => self.frames.pop_front(),
            _ => None,
        }
    }
}

pub struct SimPair {
    now: Instant,
    link: Link,
    server_overlay: Address,
    client_overlay: Address,
    server: Server<u8>,
    reserve: MemoryReserve,
    puller: Puller<u8, MemoryIntervalStore>,
    store: MemoryReserve,
    to_server: Direction,
    to_client: Direction,
    stored: u64,
}

impl SimPair {
    /// A server holding `chunks` (with `server_config`) and a neighbouring puller (with
    /// `client_config`, radius 0), connected, with the first sync done.
    pub fn new(
        link: Link,
        server_config: Config,
        client_config: Config,
        server_overlay: Address,
        client_overlay: Address,
        chunks: &[Chunk],
    ) -> Self {
        let now = Instant::now();
        let mut reserve = MemoryReserve::new(server_overlay, 1);
        for c in chunks {
            reserve.put(c.clone());
        }
        let mut pair = SimPair {
            now,
            link,
            server_overlay,
            client_overlay,
            server: Server::new(server_config),
            reserve,
            puller: Puller::new(client_config, client_overlay, MemoryIntervalStore::default()),
            store: MemoryReserve::new(client_overlay, 1),
            to_server: Direction::new(now),
            to_client: Direction::new(now),
            stored: 0,
        };
        pair.puller.add_peer(now, SERVER, server_overlay);
        pair.run_until(chunks.len() as u64);
        pair
    }

    /// One op: bin 0 synced again from its start into an empty store, as
    /// `crate::pullsync`'s libp2p op does. Returns the virtual time it took.
    pub fn op(&mut self, n: u64) -> Duration {
        self.puller.set_storage_radius(self.now, 1);
        self.drain();
        // The memory interval store never fails.
        let _ = self.puller.store_mut().reset_peer(&self.server_overlay, 1);
        self.store = MemoryReserve::new(self.client_overlay, 1);
        let start = self.now;
        self.puller.set_storage_radius(self.now, 0);
        self.run_until(self.stored + n);
        self.now - start
    }

    fn run_until(&mut self, stored: u64) {
        while self.stored < stored {
            self.drain();
            if self.stored >= stored {
                return;
            }
            let next = [
                self.to_server.frames.front().map(|f| f.arrives),
                self.to_client.frames.front().map(|f| f.arrives),
                self.server.poll_timeout(),
                self.puller.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(next) = next else { return };
            self.now = self.now.max(next);
            self.deliver();
        }
    }

    fn deliver(&mut self) {
        let now = self.now;
        while let Some(f) = self.to_server.due(now) {
            match f.action {
                StreamAction::Open(p) => self.server.handle_stream_opened(CLIENT, f.stream, p),
                StreamAction::Send(d) => {
                    self.server.handle_bytes(now, CLIENT, f.stream, d, &self.reserve)
                }
                StreamAction::Finish => self.server.handle_stream_finished(CLIENT, f.stream),
                StreamAction::Reset => self.server.handle_stream_reset(CLIENT, f.stream),
            }
            self.drain();
        }
        while let Some(f) = self.to_client.due(now) {
            match f.action {
                StreamAction::Send(d) => self.puller.handle_bytes(now, f.stream, d, &self.store),
                StreamAction::Finish => self.puller.handle_stream_finished(now, f.stream),
                StreamAction::Reset => self.puller.handle_stream_failed(now, f.stream),
                StreamAction::Open(_) => {}
            }
            self.drain();
        }
        if self.server.poll_timeout().is_some_and(|t| t <= now) {
            self.server.handle_timeout(now, &self.reserve);
        }
        if self.puller.poll_timeout().is_some_and(|t| t <= now) {
            self.puller.handle_timeout(now);
        }
    }

    /// Drains both cores in the order the glue does.
    fn drain(&mut self) {
        let (now, link) = (self.now, self.link);
        loop {
            let mut progress = false;
            while let Some(t) = self.puller.poll_transmit() {
                progress = true;
                self.to_server.send(now, link, t.stream, t.action);
            }
            while let Some(t) = self.server.poll_transmit(now) {
                progress = true;
                self.to_client.send(now, link, t.stream, t.action);
            }
            while let Some(event) = self.puller.poll_event() {
                progress = true;
                if let PullerEvent::Chunk { chunk, .. } = event {
                    if self.store.put(chunk).is_some() {
                        self.stored += 1;
                    }
                }
            }
            while let Some(event) = self.server.poll_event() {
                progress = true;
                if let ServerEvent::ChunksWanted { peer, stream, chunks } = event {
                    let found = chunks.iter().map(|c| self.reserve.get(c)).collect();
                    // The stream is waiting for exactly these chunks.
                    let _ = self.server.provide_chunks(peer, stream, found);
                }
            }
            if !progress {
                return;
            }
        }
    }
}
