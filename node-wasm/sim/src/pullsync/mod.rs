//! Pull-sync on the simulated network: the real [`Node`] on the shared [`Peer`] adapter, with an
//! in-memory reserve that stores what arrives and answers what peers want, and the benchmark's
//! server and puller pair.

mod pair;

use std::collections::BTreeSet;

use syncscope_proto::pullsync::{
    Event, IntervalStore, MemoryReserve, Node, ProvideError, StreamAction, StreamEvent, StreamKey,
    Transmit,
};
use syncscope_proto::swarm::{Address, Chunk, ChunkRef};
use web_time::Instant;

use crate::{App, NodeId, Outgoing, Peer, Wire};

pub use pair::SimPair;

/// A pull-sync node of the simulated network, keeping its chunks in memory.
pub type SimPullsyncNode<I> = Peer<Node<NodeId, I, MemoryReserve>, Reserve>;

impl<I: IntervalStore> Wire for Node<NodeId, I, MemoryReserve> {
    /// A stream action, named as the receiver knows the stream.
    type Message = (StreamKey, StreamAction);

    /// Only frames take room on the wire; opening and closing streams is free.
    fn send(t: Transmit<NodeId>) -> Outgoing<Self::Message> {
        let size = match &t.action {
            StreamAction::Send(frame) => frame.len(),
            _ => 0,
        };
        Outgoing { to: t.peer, msg: (t.stream.remote(), t.action), size, report_sent: false }
    }

    fn receive((stream, action): Self::Message) -> (StreamKey, StreamEvent) {
        (stream, action.into())
    }

    /// Every message travels on a stream: both ends see it reset.
    fn reset((stream, _): &Self::Message, sent: bool) -> Option<(StreamKey, StreamEvent)> {
        let key = if sent { stream.remote() } else { *stream };
        Some((key, StreamEvent::Reset))
    }
}

/// What the node's store did, and which chunk data it lost.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reserve {
    /// Delivered chunks stored for the first time.
    pub stored: u64,
    /// The store lost all its chunk data ([`Reserve::lose_data`]).
    data_lost: bool,
    /// Chunks whose data the store lost ([`Reserve::lose_chunk`]).
    lost: BTreeSet<Address>,
}

impl Reserve {
    /// The store loses its chunk data but not its index, as a node whose data store is wiped
    /// under it: the node still offers its chunks, and answers every chunk wanted from now on as
    /// gone (bee's zero-address delivery), as a server does for a chunk evicted after it was
    /// offered.
    pub fn lose_data(&mut self) {
        self.data_lost = true;
    }

    /// As [`Reserve::lose_data`], for one chunk: evicted from the data store, still in the
    /// index.
    pub fn lose_chunk(&mut self, address: Address) {
        self.lost.insert(address);
    }

    fn read(&self, reserve: &MemoryReserve, chunk: &ChunkRef) -> Option<Chunk> {
        if self.data_lost || self.lost.contains(&chunk.address) {
            return None;
        }
        reserve.get(chunk)
    }
}

impl<I: IntervalStore> App<Node<NodeId, I, MemoryReserve>> for Reserve {
    fn on_event(
        &mut self,
        node: &mut Node<NodeId, I, MemoryReserve>,
        now: Instant,
        event: Event<NodeId>,
    ) {
        match event {
            Event::Chunk { chunk, .. } => {
                if node.reserve_mut().put(chunk).is_some() {
                    self.stored += 1;
                    node.handle_reserve_changed(now);
                }
            }
            Event::ChunksWanted { peer, stream, chunks } => {
                let found = chunks.iter().map(|c| self.read(node.reserve(), c)).collect();
                match node.provide_chunks(peer, stream, found) {
                    // A stream reset in the same step as its Want no longer waits, as in the
                    // glue.
                    Ok(()) | Err(ProvideError::NotWaiting) => {}
                    // One answer per chunk wanted: anything else is a bug here.
                    Err(e) => panic!("chunks not provided: {e}"),
                }
            }
            Event::IntervalSynced { .. }
            | Event::Misbehaved { .. }
            | Event::IntervalStoreFailed { .. } => {}
        }
    }
}

impl<I: IntervalStore> SimPullsyncNode<I> {
    /// Chunks this node stored from deliveries.
    pub fn stored(&self) -> u64 {
        self.app.stored
    }
}
