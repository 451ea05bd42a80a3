//! One connection's Bitswap streams.
//!
//! Outbound: one long-lived stream, opened as soon as the connection is up (its negotiation tells
//! the version the peer speaks) and reopened when it fails. Queued messages are encoded for the
//! negotiated version, written in batches and flushed; a batch that fails is written again on the
//! next stream. After [`MAX_OPEN_ATTEMPTS`] failures in a row the handler gives up on the peer.
//!
//! Inbound: every stream the peer opens, on any configured version, is read until EOF, so peers
//! that keep one stream (boxo) and peers that open one per message (Helia) are both served. At
//! most `max_inbound_streams` are read at once; more are refused. A frame over the size cap or a
//! message that does not decode resets its stream and is reported: the behaviour disconnects the
//! peer.
//!
//! Both kinds of stream are left out of libp2p's keep-alive count (they never finish); the
//! connection is kept alive while messages wait to be written, and, once the peer is known to
//! speak Bitswap, while the behaviour says the node is fetching.

use std::collections::VecDeque;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::BytesMut;
use futures::future::BoxFuture;
use futures::stream::{BoxStream, SelectAll};
use futures::{AsyncWriteExt, FutureExt, StreamExt};
use libp2p::swarm::handler::{
    ConnectionEvent, DialUpgradeError, FullyNegotiatedInbound, FullyNegotiatedOutbound,
};
use libp2p::swarm::{
    ConnectionHandler, ConnectionHandlerEvent, StreamUpgradeError, SubstreamProtocol,
};
use libp2p::Stream;

use super::protocol::Upgrade;
use crate::net::framed::{read_with_progress, Read, ReadError};
use syncscope_proto::bitswap::{DecodeError, Message, ProtocolVersion};
use syncscope_proto::framing::{encode_frame_into, FrameError};

/// Failed attempts in a row to open or write the outbound stream before giving up.
pub const MAX_OPEN_ATTEMPTS: u32 = 3;

/// Messages are written in batches of about this many bytes, then flushed.
const BATCH_BYTES: usize = 1 << 20;

/// What the behaviour asks of a connection.
#[derive(Debug)]
pub enum Command {
    /// Write `msg`; `from_server` messages are reported back once written ([`HandlerEvent::Sent`]).
    Send { msg: Message, from_server: bool },
    /// Whether the node is fetching: keep Bitswap connections open meanwhile.
    KeepAlive(bool),
}

/// What a connection reports.
#[derive(Debug)]
pub enum HandlerEvent {
    /// The outbound stream was negotiated for the first time, at `version`.
    Ready(ProtocolVersion),
    /// The peer speaks none of our versions: nothing will be sent on this connection.
    Unsupported,
    /// The outbound stream failed [`MAX_OPEN_ATTEMPTS`] times in a row: nothing more is sent.
    OutboundFailed,
    Message(Message),
    /// Bytes of a message arrived, the message is not complete yet.
    Progress,
    /// This many server messages left: written, or dropped because they could not be.
    Sent {
        server_msgs: usize,
    },
    /// The peer broke the protocol on an inbound stream; the stream was reset.
    Misbehaved(StreamError),
    /// An inbound stream beyond `max_inbound_streams` was refused.
    InboundRefused,
}

/// How a peer broke the protocol on a stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// Oversized frame, invalid length prefix, or a stream ending inside a frame.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// Malformed protobuf, invalid CID, or a block that cannot be addressed.
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

/// Limits a handler works within.
#[derive(Debug, Clone)]
pub struct HandlerConfig {
    /// Versions offered and accepted, newest first.
    pub versions: Arc<[ProtocolVersion]>,
    pub max_message_size: usize,
    pub max_inbound_streams: usize,
}

#[derive(Debug)]
struct Outgoing {
    msg: Message,
    from_server: bool,
}

type Written = BoxFuture<'static, std::io::Result<Stream>>;
type Inbound = BoxStream<'static, Result<Read<Message>, ReadError<DecodeError>>>;

enum Outbound {
    /// No stream: one is opened once there is something to send (or to learn the version).
    Closed,
    Opening,
    Idle(Stream, ProtocolVersion),
    /// A batch is being written; the stream comes back when done.
    Writing(Written, ProtocolVersion),
    /// The peer does not speak Bitswap, or the stream failed too often.
    Dead,
}

pub struct Handler {
    config: HandlerConfig,
    outbound: Outbound,
    queue: VecDeque<Outgoing>,
    /// The batch being written, kept to be written again if the stream fails.
    writing: Vec<Outgoing>,
    failures: u32,
    /// The version of the first negotiated outbound stream.
    version: Option<ProtocolVersion>,
    inbound: SelectAll<Inbound>,
    events: VecDeque<HandlerEvent>,
    fetching: bool,
}

impl Handler {
    pub fn new(config: HandlerConfig, fetching: bool) -> Self {
        Self {
            config,
            outbound: Outbound::Closed,
            queue: VecDeque::new(),
            writing: Vec::new(),
            failures: 0,
            version: None,
            inbound: SelectAll::new(),
            events: VecDeque::new(),
            fetching,
        }
    }

    fn upgrade(&self) -> SubstreamProtocol<Upgrade, ()> {
        SubstreamProtocol::new(Upgrade::new(self.config.versions.clone()), ())
    }

    /// Drops every queued message, reporting the server's as gone.
    fn drop_queue(&mut self) {
        let server_msgs =
            self.writing.drain(..).chain(self.queue.drain(..)).filter(|o| o.from_server).count();
        if server_msgs > 0 {
            self.events.push_back(HandlerEvent::Sent { server_msgs });
        }
    }

    fn stream_failed(&mut self) {
        for o in self.writing.drain(..).rev() {
            self.queue.push_front(o);
        }
        self.failures += 1;
        if self.failures >= MAX_OPEN_ATTEMPTS {
            tracing::debug!(failures = self.failures, "bitswap outbound stream keeps failing");
            self.give_up(HandlerEvent::OutboundFailed);
        } else {
            self.outbound = Outbound::Closed;
        }
    }

    fn give_up(&mut self, event: HandlerEvent) {
        self.outbound = Outbound::Dead;
        self.drop_queue();
        self.events.push_back(event);
    }

    /// Encodes queued messages for `version` into one buffer, up to [`BATCH_BYTES`] (at least
    /// one message). A message too large to encode is dropped.
    fn next_batch(&mut self, version: ProtocolVersion) -> BytesMut {
        let mut buf = BytesMut::new();
        let mut dropped = 0;
        while buf.len() < BATCH_BYTES {
            let Some(o) = self.queue.pop_front() else { break };
            match encode_frame_into(&o.msg.to_pb(version), self.config.max_message_size, &mut buf) {
                Ok(()) => self.writing.push(o),
                Err(error) => {
                    tracing::warn!(%error, "bitswap message not sent");
                    dropped += usize::from(o.from_server);
                }
            }
        }
        if dropped > 0 {
            self.events.push_back(HandlerEvent::Sent { server_msgs: dropped });
        }
        buf
    }

    /// Moves the outbound stream along. Returns a stream request when one must be opened.
    fn poll_outbound(&mut self, cx: &mut Context<'_>) -> Option<SubstreamProtocol<Upgrade, ()>> {
        loop {
            match std::mem::replace(&mut self.outbound, Outbound::Closed) {
                Outbound::Closed if self.version.is_none() || !self.queue.is_empty() => {
                    self.outbound = Outbound::Opening;
                    return Some(self.upgrade());
                }
                Outbound::Idle(mut stream, version) if !self.queue.is_empty() => {
                    let buf = self.next_batch(version);
                    let write = async move {
                        stream.write_all(&buf).await?;
                        stream.flush().await?;
                        Ok(stream)
                    };
                    self.outbound = Outbound::Writing(write.boxed(), version);
                }
                Outbound::Writing(mut write, version) => match write.poll_unpin(cx) {
                    Poll::Ready(Ok(stream)) => {
                        self.failures = 0;
                        let server_msgs = self.writing.drain(..).filter(|o| o.from_server).count();
                        if server_msgs > 0 {
                            self.events.push_back(HandlerEvent::Sent { server_msgs });
                        }
                        self.outbound = Outbound::Idle(stream, version);
                    }
                    Poll::Ready(Err(error)) => {
                        tracing::debug!(%error, "bitswap outbound stream failed");
                        self.stream_failed();
                    }
                    Poll::Pending => {
                        self.outbound = Outbound::Writing(write, version);
                        return None;
                    }
                },
                other => {
                    self.outbound = other;
                    return None;
                }
            }
        }
    }

    fn accept_inbound(&mut self, mut stream: Stream) {
        if self.inbound.len() >= self.config.max_inbound_streams {
            tracing::debug!("bitswap inbound stream refused: too many open");
            self.events.push_back(HandlerEvent::InboundRefused);
            return;
        }
        stream.ignore_for_keep_alive();
        let messages = read_with_progress(stream, self.config.max_message_size, Message::decode);
        self.inbound.push(messages.boxed());
    }

    fn outbound_negotiated(&mut self, mut stream: Stream, version: ProtocolVersion) {
        stream.ignore_for_keep_alive();
        if self.version.is_none() {
            self.version = Some(version);
            self.events.push_back(HandlerEvent::Ready(version));
        }
        self.outbound = Outbound::Idle(stream, version);
    }

    fn outbound_refused(&mut self, error: StreamUpgradeError<std::convert::Infallible>) {
        match error {
            StreamUpgradeError::NegotiationFailed if self.version.is_none() => {
                self.give_up(HandlerEvent::Unsupported)
            }
            error => {
                tracing::debug!(%error, "bitswap outbound stream not opened");
                self.stream_failed();
            }
        }
    }

    fn poll_inbound(&mut self, cx: &mut Context<'_>) -> Option<HandlerEvent> {
        loop {
            match self.inbound.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(Read::Message(msg)))) => {
                    return Some(HandlerEvent::Message(msg))
                }
                Poll::Ready(Some(Ok(Read::Progress))) => return Some(HandlerEvent::Progress),
                Poll::Ready(Some(Err(ReadError::Io(error)))) => {
                    tracing::debug!(%error, "bitswap inbound stream failed");
                }
                Poll::Ready(Some(Err(ReadError::Frame(e)))) => {
                    return Some(HandlerEvent::Misbehaved(e.into()))
                }
                Poll::Ready(Some(Err(ReadError::Decode(e)))) => {
                    return Some(HandlerEvent::Misbehaved(e.into()))
                }
                Poll::Ready(None) | Poll::Pending => return None,
            }
        }
    }
}

impl ConnectionHandler for Handler {
    type FromBehaviour = Command;
    type ToBehaviour = HandlerEvent;
    type InboundProtocol = Upgrade;
    type OutboundProtocol = Upgrade;
    type InboundOpenInfo = ();
    type OutboundOpenInfo = ();

    fn listen_protocol(&self) -> SubstreamProtocol<Upgrade, ()> {
        self.upgrade()
    }

    fn connection_keep_alive(&self) -> bool {
        let busy = !self.queue.is_empty() || !self.writing.is_empty();
        let alive = !matches!(self.outbound, Outbound::Dead);
        busy || (alive && self.fetching && self.version.is_some())
    }

    fn on_behaviour_event(&mut self, command: Command) {
        match command {
            Command::Send { from_server, .. } if matches!(self.outbound, Outbound::Dead) => {
                tracing::trace!("bitswap message dropped: the connection cannot carry it");
                if from_server {
                    self.events.push_back(HandlerEvent::Sent { server_msgs: 1 });
                }
            }
            Command::Send { msg, from_server } => {
                self.queue.push_back(Outgoing { msg, from_server })
            }
            Command::KeepAlive(fetching) => self.fetching = fetching,
        }
    }

    fn on_connection_event(&mut self, event: ConnectionEvent<Upgrade, Upgrade, (), ()>) {
        match event {
            ConnectionEvent::FullyNegotiatedInbound(FullyNegotiatedInbound {
                protocol: (stream, _),
                ..
            }) => self.accept_inbound(stream),
            ConnectionEvent::FullyNegotiatedOutbound(FullyNegotiatedOutbound {
                protocol: (stream, version),
                ..
            }) => self.outbound_negotiated(stream, version),
            ConnectionEvent::DialUpgradeError(DialUpgradeError { error, .. }) => {
                self.outbound_refused(error)
            }
            _ => {}
        }
    }

    fn poll(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<ConnectionHandlerEvent<Upgrade, (), HandlerEvent>> {
        if let Some(protocol) = self.poll_outbound(cx) {
            return Poll::Ready(ConnectionHandlerEvent::OutboundSubstreamRequest { protocol });
        }
        if let Some(event) = self.events.pop_front() {
            return Poll::Ready(ConnectionHandlerEvent::NotifyBehaviour(event));
        }
        match self.poll_inbound(cx) {
            Some(event) => Poll::Ready(ConnectionHandlerEvent::NotifyBehaviour(event)),
            None => Poll::Pending,
        }
    }
}
