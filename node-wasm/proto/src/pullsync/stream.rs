//! How the cores talk to the glue about streams: every pull-sync exchange runs on its own stream,
//! named by a [`StreamId`] and a [`Protocol`], and the cores ask for stream actions with
//! [`Transmit`]s.

use super::message::{BATCHED_PROTOCOL_NAME, CURSORS_PROTOCOL_NAME, PROTOCOL_NAME};
use bytes::Bytes;

/// Names one stream with one peer. The puller numbers the streams it opens; the glue numbers the
/// inbound streams it hands to the server (unique per peer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub u64);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    Cursors,
    Pullsync,
    PullsyncBatched,
}

impl Protocol {
    pub const ALL: [Protocol; 3] =
        [Protocol::Cursors, Protocol::Pullsync, Protocol::PullsyncBatched];

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Cursors => CURSORS_PROTOCOL_NAME,
            Protocol::Pullsync => PROTOCOL_NAME,
            Protocol::PullsyncBatched => BATCHED_PROTOCOL_NAME,
        }
    }

    pub fn from_name(name: &str) -> Option<Protocol> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// Which core a stream belongs to: the puller opens outbound streams, the server answers inbound
/// ones. Each side numbers its own streams, so [`Node`](super::Node) names a stream with both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StreamKey {
    Outbound(StreamId),
    Inbound(StreamId),
}

impl StreamKey {
    /// The stream's number within its side.
    pub fn id(self) -> StreamId {
        match self {
            StreamKey::Outbound(id) | StreamKey::Inbound(id) => id,
        }
    }

    /// The same stream seen from the other end.
    pub fn remote(self) -> StreamKey {
        match self {
            StreamKey::Outbound(id) => StreamKey::Inbound(id),
            StreamKey::Inbound(id) => StreamKey::Outbound(id),
        }
    }
}

/// What happened on one of a peer's streams: [`Node`](super::Node)'s input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    /// An inbound stream was opened by the peer on this protocol; on an outbound stream, the
    /// protocol was agreed.
    Opened(Protocol),
    /// Bytes read from the stream.
    Data(Bytes),
    /// The peer finished writing.
    Finished,
    /// The stream failed to open, was reset, or its connection closed.
    Reset,
}

impl From<StreamAction> for StreamEvent {
    /// What one end's action looks like at the other end of a perfect wire.
    fn from(action: StreamAction) -> StreamEvent {
        match action {
            StreamAction::Open(protocol) => StreamEvent::Opened(protocol),
            StreamAction::Send(data) => StreamEvent::Data(data),
            StreamAction::Finish => StreamEvent::Finished,
            StreamAction::Reset => StreamEvent::Reset,
        }
    }
}

/// One thing for the glue to do on a stream: an outbound stream (the puller's) or an inbound one
/// (the server's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transmit<P> {
    pub peer: P,
    pub stream: StreamKey,
    pub action: StreamAction,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamAction {
    /// Open a new outbound stream on this protocol; the `Send`s that follow go on it.
    Open(Protocol),
    /// Write one whole frame (length prefix included).
    Send(Bytes),
    /// Close the writing side once everything before has been written.
    Finish,
    /// Abort the stream in both directions.
    Reset,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_names_round_trip() {
        for p in Protocol::ALL {
            assert_eq!(Protocol::from_name(p.name()), Some(p));
        }
        assert_eq!(Protocol::Pullsync.name(), PROTOCOL_NAME);
        assert_eq!(Protocol::Cursors.name(), CURSORS_PROTOCOL_NAME);
        assert_eq!(Protocol::from_name("/swarm/pullsync/1.3.0/pullsync"), None);
    }
}
