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

/// One thing for the glue to do on a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transmit<P> {
    pub peer: P,
    pub stream: StreamId,
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
