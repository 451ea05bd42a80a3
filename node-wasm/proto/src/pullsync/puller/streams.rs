//! Stream bookkeeping: opening, finishing and writing outbound streams, and reusing their
//! receive buffers.

use std::fmt::Debug;
use std::hash::Hash;

use web_time::Instant;

use super::{Outbound, Puller, Task};
use crate::framing::{encode_frame_into, FrameDecoder};
use crate::pullsync::interval::IntervalStore;
use crate::pullsync::message::MAX_MESSAGE_SIZE;
use crate::pullsync::stream::{Protocol, StreamAction, StreamId, StreamKey, Transmit};

/// Receive buffers kept for reuse by the next streams: a page's buffer grows to its largest
/// message (a whole batch), and reusing it saves that allocation on every page.
const SPARE_DECODERS: usize = 8;

impl<P: Copy + Eq + Hash + Debug, S: IntervalStore> Puller<P, S> {
    pub(super) fn open(&mut self, peer: P, protocol: Protocol, task: Task) -> StreamId {
        let stream = StreamId(self.next_stream);
        self.next_stream += 1;
        let decoder =
            self.spare_decoders.pop().unwrap_or_else(|| FrameDecoder::new(MAX_MESSAGE_SIZE));
        self.streams.insert(stream, Outbound { peer, protocol, decoder, deadline: None, task });
        self.push(peer, stream, StreamAction::Open(protocol));
        stream
    }

    /// Ends our side of a completed exchange and forgets the stream.
    pub(super) fn close(&mut self, stream: StreamId) -> Option<P> {
        let out = self.streams.remove(&stream)?;
        if out.decoder.buffered() == 0 && self.spare_decoders.len() < SPARE_DECODERS {
            self.spare_decoders.push(out.decoder);
        }
        self.push(out.peer, stream, StreamAction::Finish);
        Some(out.peer)
    }

    /// Queues `msg` on `stream`; one that cannot be encoded fails the stream (our fault, so no
    /// penalty) and its worker retries later.
    pub(super) fn send<M: prost::Message>(&mut self, now: Instant, stream: StreamId, msg: &M) {
        let Some(peer) = self.streams.get(&stream).map(|s| s.peer) else { return };
        match encode_frame_into(msg, MAX_MESSAGE_SIZE, &mut self.out) {
            Ok(()) => {
                let frame = self.out.split().freeze();
                self.push(peer, stream, StreamAction::Send(frame));
            }
            Err(error) => {
                tracing::warn!(?stream, %error, "pull-sync message not sent");
                self.fail(now, stream, None);
            }
        }
    }

    pub(super) fn push(&mut self, peer: P, stream: StreamId, action: StreamAction) {
        self.transmits.push_back(Transmit { peer, stream: StreamKey::Outbound(stream), action });
    }
}
