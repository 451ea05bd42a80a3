//! Client and server behind one sans-IO front: what the libp2p glue and the simulator drive.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use cid::Cid;
use web_time::Instant;

use super::client::{self, Client};
use super::message::{Block, Message};
use super::server::{Server, ServerEvent};
use super::session::SessionId;
use super::stats::{Counters, Stats};
use super::window::Window;
use super::{Config, ProtocolVersion};
use crate::Core;

/// Everything the node reports, in one stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<P> {
    /// A verified block a session wanted. Store it, then call [`Node::add_block`].
    Block { session: SessionId, block: Block },
    /// Read this block from the store and call [`Node::block_loaded`].
    Load(Cid),
    /// The peer broke the protocol: disconnect it.
    Misbehaved { peer: P, error: Misbehaviour },
}

/// How a peer broke the protocol.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Misbehaviour {
    /// It sent more blocks nobody asked for than [`Config::max_unsolicited_blocks`].
    #[error("{0} unsolicited blocks")]
    UnsolicitedBlocks(u64),
}

#[derive(Debug)]
pub struct Node<P> {
    client: Client<P>,
    server: Server<P>,
    window: Window<P>,
    versions: BTreeMap<P, ProtocolVersion>,
    transport: Stats<P>,
    /// Reported by the node itself, ahead of the client's and server's.
    events: VecDeque<Event<P>>,
}

impl<P: Copy + Ord + std::hash::Hash + std::fmt::Debug> Node<P> {
    pub fn new(config: Config) -> Self {
        Self {
            window: Window::new(&config),
            client: Client::new(config.clone()),
            server: Server::new(config),
            versions: BTreeMap::new(),
            transport: Stats::default(),
            events: VecDeque::new(),
        }
    }

    pub fn client(&self) -> &Client<P> {
        &self.client
    }

    pub fn server(&self) -> &Server<P> {
        &self.server
    }

    /// The version negotiated with `peer`, to encode its frames with.
    pub fn version(&self, peer: P) -> Option<ProtocolVersion> {
        self.versions.get(&peer).copied()
    }

    /// The node holds `cid` now (`size` bytes of data in its store).
    pub fn add_block(&mut self, cid: Cid, size: usize) {
        self.server.add_block(cid, size);
    }

    /// The store dropped the block with this multihash ([`Server::remove_stored`]).
    pub fn remove_stored(&mut self, hash: &multihash::Multihash<64>) {
        self.server.remove_stored(hash);
    }

    /// A block that was in the store when the node started ([`Server::index_stored`]).
    pub fn index_stored(&mut self, hash: multihash::Multihash<64>, size: usize) {
        self.server.index_stored(hash, size);
    }

    pub fn block_loaded(&mut self, cid: Cid, data: Option<Bytes>) {
        self.server.block_loaded(cid, data);
    }

    pub fn new_session(&mut self, now: Instant) -> SessionId {
        self.client.new_session(now)
    }

    /// Wants `cids` in `session`. They reach the client (and the network) as the window allows:
    /// see the `window` module.
    pub fn want(&mut self, now: Instant, session: SessionId, cids: impl IntoIterator<Item = Cid>) {
        self.window.want(session, cids);
        self.refill(now);
    }

    pub fn cancel(
        &mut self,
        now: Instant,
        session: SessionId,
        cids: impl IntoIterator<Item = Cid>,
    ) {
        let cids: Vec<Cid> = cids.into_iter().collect();
        self.window.cancel(session, &cids);
        self.client.cancel(now, session, cids);
        self.refill(now);
    }

    /// Ends `session`: what it still wants is cancelled, and blocks already on their way for it
    /// are not held against their senders.
    pub fn close_session(&mut self, now: Instant, session: SessionId) {
        let wanted = self.client.session_wants(session);
        self.window.close(session, &wanted);
        self.client.close_session(now, session);
        self.refill(now);
    }

    /// Wants handed to the client and not yet answered, over all sessions.
    pub fn active_wants(&self) -> usize {
        self.window.active()
    }

    fn refill(&mut self, now: Instant) {
        for (session, cids) in self.window.refill() {
            self.client.want(now, session, cids);
        }
    }

    /// A decoded message from `peer`: the wantlist goes to the server, the rest to the client.
    pub fn handle_message(&mut self, now: Instant, peer: P, msg: &Message) {
        let len = self.framed_len(peer, msg) as u64;
        self.transport.record(peer, |c| {
            c.msgs_received += 1;
            c.bytes_received += len;
        });
        if !msg.wantlist.is_empty() || msg.full {
            self.server.handle_message(now, peer, msg);
        }
        if !msg.blocks.is_empty() || !msg.presences.is_empty() {
            self.handle_answers(now, peer, msg);
        }
    }

    /// Blocks and presences for the client, counting the blocks nobody asked for.
    fn handle_answers(&mut self, now: Instant, peer: P, msg: &Message) {
        let excused = msg.blocks.iter().filter(|b| self.window.excused(&b.cid())).count() as u64;
        let before = self.client.stats().peer(peer).unsolicited_blocks;
        self.client.handle_message(now, peer, msg);
        let unsolicited = self.client.stats().peer(peer).unsolicited_blocks - before;
        if let Some(count) = self.window.unsolicited(peer, unsolicited.saturating_sub(excused)) {
            let error = Misbehaviour::UnsolicitedBlocks(count);
            self.events.push_back(Event::Misbehaved { peer, error });
        }
    }

    /// Bytes of a message from `peer` arrived and the message is not complete yet: the peer is
    /// busy sending us something. Call it as reads come in; it is cheap.
    pub fn handle_progress(&mut self, now: Instant, peer: P) {
        self.client.handle_progress(now, peer);
    }

    /// The glue finished writing a server message to `peer` (releases its outstanding bytes).
    pub fn handle_sent(&mut self, peer: P) {
        self.server.handle_sent(peer);
    }

    /// Totals of every counter: a few additions, cheap enough to sample every frame.
    pub fn stats(&self) -> Counters {
        let mut c = self.transport.total;
        c += self.client.stats().total;
        c += self.server.stats().total;
        c
    }

    /// The client's counters, in total and per peer: what this node received.
    pub fn client_stats(&self) -> &Stats<P> {
        self.client.stats()
    }

    pub fn peer_stats(&self, peer: P) -> Counters {
        let mut c = self.transport.peer(peer);
        c += self.client.stats().peer(peer);
        c += self.server.stats().peer(peer);
        c
    }

    /// The connection to `peer` measured a round trip (libp2p's ping); see
    /// [`Client::peer_round_trip`].
    pub fn peer_round_trip(&mut self, peer: P, rtt: Duration) {
        self.client.peer_round_trip(peer, rtt);
    }

    /// Size of `msg` on the wire to `peer`.
    pub fn framed_len(&self, peer: P, msg: &Message) -> usize {
        msg.framed_len(self.version(peer).unwrap_or(ProtocolVersion::V1_2_0))
    }
}

impl<P: Copy + Ord + std::hash::Hash + std::fmt::Debug> Core for Node<P> {
    type Peer = P;
    type PeerInfo = ProtocolVersion;
    type Input = Message;
    type Transmit = Transmit<P>;
    type Event = Event<P>;

    /// A peer connected with `version` negotiated.
    fn peer_connected(&mut self, now: Instant, peer: P, version: ProtocolVersion) {
        self.versions.insert(peer, version);
        self.client.peer_connected(now, peer, version);
        self.server.peer_connected(peer, version);
    }

    fn peer_disconnected(&mut self, now: Instant, peer: P) {
        self.versions.remove(&peer);
        self.window.peer_disconnected(&peer);
        self.client.peer_disconnected(now, peer);
        self.server.peer_disconnected(peer);
    }

    fn handle_input(&mut self, now: Instant, peer: P, msg: Message) {
        self.handle_message(now, peer, &msg);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.client.handle_timeout(now);
    }

    /// Next message to send. Server responses come first: local work before new requests.
    /// Call [`Node::handle_sent`] for server messages ([`Transmit::from_server`]) once written.
    fn poll_transmit(&mut self, now: Instant) -> Option<Transmit<P>> {
        self.refill(now);
        let (peer, msg, from_server) = match self.server.poll_transmit() {
            Some((p, m)) => (p, m, true),
            None => {
                let (p, m) = self.client.poll_transmit()?;
                (p, m, false)
            }
        };
        let len = self.framed_len(peer, &msg);
        self.transport.record(peer, |c| {
            c.msgs_sent += 1;
            c.bytes_sent += len as u64;
        });
        Some(Transmit { peer, msg, len, from_server })
    }

    /// A block a session wanted frees its place in the window: the next wants go to the client
    /// here, and their transmits follow in the next round of the drain.
    fn poll_event(&mut self) -> Option<Event<P>> {
        if let Some(event) = self.events.pop_front() {
            return Some(event);
        }
        if let Some(ServerEvent::Load(cid)) = self.server.poll_event() {
            return Some(Event::Load(cid));
        }
        self.client.poll_event().map(|e| match e {
            client::Event::Block { session, block } => {
                self.window.delivered(session, &block.cid());
                Event::Block { session, block }
            }
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.client.poll_timeout()
    }
}

/// A message to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit<P> {
    pub peer: P,
    pub msg: Message,
    /// Framed size on the wire for the peer's version.
    pub len: usize,
    /// A server response: report it written with [`Node::handle_sent`].
    pub from_server: bool,
}
