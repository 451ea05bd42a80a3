//! Pull-sync on the simulated network: the real [`Node`] on the shared [`Peer`] adapter, with an
//! in-memory reserve that stores what arrives and answers what peers want, and the benchmark's
//! server and puller pair.

mod pair;

use syncscope_proto::pullsync::{
    Event, IntervalStore, MemoryReserve, Node, StreamAction, StreamEvent, StreamKey, Transmit,
};
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
}

/// What the node's store did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Reserve {
    /// Delivered chunks stored for the first time.
    pub stored: u64,
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
                let found = chunks.iter().map(|c| node.reserve().get(c)).collect();
                // The stream is waiting for exactly these chunks.
                let _ = node.provide_chunks(peer, stream, found);
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
