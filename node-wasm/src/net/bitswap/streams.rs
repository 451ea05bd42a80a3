//! One connection's Bitswap streams: the codec part of the adapter's connection handler.
//!
//! Outbound: one stream at a time, opened as soon as the connection is up (its negotiation tells
//! the version the peer speaks) and reopened when it fails. Queued messages are encoded for the
//! negotiated version, written in batches and flushed; a batch that fails is written again on the
//! next stream. After [`MAX_OPEN_ATTEMPTS`] failures in a row the handler gives up on the peer. A
//! stream with nothing to write for [`StreamsConfig::idle_close`] is closed (FIN), and the next
//! message opens a new one: Helia resets an inbound Bitswap stream that carries no message for
//! 10 s, and a message written as the reset crosses it would be lost without an error.
//!
//! Inbound: every stream the peer opens, on any configured version, is read until EOF, so peers
//! that keep one stream (boxo) and peers that open one per message (Helia) are both served (up to
//! the adapter's cap). A frame over the size cap or a message that does not decode resets its
//! stream and is reported: the adapter disconnects the peer.
//!
//! Both kinds of stream are left out of libp2p's keep-alive count (they never finish); the
//! connection is kept alive while messages wait to be written, and, once the peer is known to
//! speak Bitswap, while the node is fetching.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::BytesMut;
use futures::future::BoxFuture;
use futures::stream::{BoxStream, SelectAll};
use futures::{AsyncRead, AsyncWriteExt, FutureExt, StreamExt};
use futures_timer::Delay;
use libp2p::swarm::StreamUpgradeError;
use libp2p::Stream;

use crate::net::adapter::{Streams, StreamsEvent};
use crate::net::framed::{read_with_progress, Read, ReadError};
use crate::rt;
use syncscope_proto::bitswap::{DecodeError, Message, ProtocolVersion, WireBlock};
use syncscope_proto::framing::{encode_frame_into, FrameError};

/// Failed attempts in a row to open or write the outbound stream before giving up.
pub const MAX_OPEN_ATTEMPTS: u32 = 3;

/// Messages are written in batches of about this many bytes, then flushed.
const BATCH_BYTES: usize = 1 << 20;

/// What a connection's streams report.
#[derive(Debug)]
pub enum StreamsReport {
    /// The outbound stream was negotiated for the first time, at `version`.
    Ready(ProtocolVersion),
    /// The outbound stream failed [`MAX_OPEN_ATTEMPTS`] times in a row: nothing more is sent. (A
    /// peer that speaks none of our versions is left alone by the adapter, which sees the failed
    /// negotiation too; the streams only stop trying.)
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
}

/// Blocks from this size on are hashed by the platform's SHA-256 where it has one. A WebCrypto
/// call costs about 5 µs in Chromium whatever the size, so small blocks hash faster in wasm (a
/// 32 B block: 0.3 µs), and a message packed with tiny blocks cannot turn into a flood of calls.
const PLATFORM_HASH_MIN: usize = 8 * 1024;

/// `message` with its `blocks` addressed: each one's data hashed into its CID, by the platform's
/// own SHA-256 where it has one (the page's wasm hashes at about a quarter of WebCrypto's speed),
/// all of a message's blocks at once.
async fn addressed(
    mut message: Message,
    blocks: Vec<WireBlock>,
) -> Result<Message, ReadError<DecodeError>> {
    let hashed = futures::future::join_all(blocks.into_iter().map(|block| async move {
        let digest = match block.is_sha2_256() && block.data().len() >= PLATFORM_HASH_MIN {
            true => rt::platform_sha2_256(block.data()).await,
            false => None,
        };
        match digest {
            Some(digest) => block.with_sha2_256(&digest),
            None => block.hash(),
        }
    }));
    message.blocks =
        hashed.await.into_iter().collect::<Result<_, _>>().map_err(ReadError::Decode)?;
    Ok(message)
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

/// Limits a connection's streams work within.
#[derive(Debug, Clone)]
pub struct StreamsConfig {
    /// Versions offered and accepted, newest first.
    pub versions: Arc<[ProtocolVersion]>,
    pub max_message_size: usize,
    /// How long the outbound stream stays open with nothing to write.
    pub idle_close: Duration,
}

/// A message to write; `from_server` messages are reported back once written
/// ([`StreamsReport::Sent`]).
#[derive(Debug)]
pub struct Outgoing {
    pub msg: Message,
    pub from_server: bool,
}

type Written = BoxFuture<'static, std::io::Result<SendStream>>;
type Closing = BoxFuture<'static, std::io::Result<()>>;
type Inbound = BoxStream<'static, Result<Read<Message>, ReadError<DecodeError>>>;

enum Outbound {
    /// No stream: one is opened once there is something to send (or to learn the version).
    Closed,
    Opening,
    /// Open, nothing to write; closed once the delay fires.
    Idle(SendStream, ProtocolVersion, Delay),
    /// A batch is being written; the stream comes back when done.
    Writing(Written, ProtocolVersion),
    /// Closed for being idle: the close is being sent.
    Closing(Closing),
    /// The peer does not speak Bitswap, or the stream failed too often.
    Dead,
}

/// The outbound stream. The peer has nothing to send on it, but it is read all the same, for the
/// peer's close of its side: over WebRTC that close is acknowledged (FIN_ACK) as it is read, and
/// js-libp2p, which waits 5 s for the acknowledgement, otherwise fails the close. Helia's Bitswap
/// closes its side of each stream it accepts before it reads it, so it then read nothing we sent.
struct SendStream {
    stream: Stream,
    peer_closed: bool,
}

impl SendStream {
    fn new(stream: Stream) -> Self {
        Self { stream, peer_closed: false }
    }

    /// Reads up to the peer's close; bytes the peer should not have sent are dropped. An error
    /// means the stream is gone (a peer may reset a stream that stayed idle).
    fn read_peer_close(&mut self, cx: &mut Context<'_>) -> std::io::Result<()> {
        let mut scratch = [0; 64];
        while !self.peer_closed {
            match Pin::new(&mut self.stream).poll_read(cx, &mut scratch)? {
                Poll::Ready(0) => self.peer_closed = true,
                Poll::Ready(_) => {}
                Poll::Pending => break,
            }
        }
        Ok(())
    }
}

pub struct BitswapStreams {
    config: StreamsConfig,
    outbound: Outbound,
    queue: VecDeque<Outgoing>,
    /// The batch being written, kept to be written again if the stream fails.
    writing: Vec<Outgoing>,
    failures: u32,
    /// The version of the first negotiated outbound stream.
    version: Option<ProtocolVersion>,
    inbound: SelectAll<Inbound>,
    events: VecDeque<StreamsReport>,
}

impl BitswapStreams {
    pub fn new(config: StreamsConfig) -> Self {
        Self {
            config,
            outbound: Outbound::Closed,
            queue: VecDeque::new(),
            writing: Vec::new(),
            failures: 0,
            version: None,
            inbound: SelectAll::new(),
            events: VecDeque::new(),
        }
    }

    /// Drops every queued message, reporting the server's as gone.
    fn drop_queue(&mut self) {
        let server_msgs =
            self.writing.drain(..).chain(self.queue.drain(..)).filter(|o| o.from_server).count();
        if server_msgs > 0 {
            self.events.push_back(StreamsReport::Sent { server_msgs });
        }
    }

    fn stream_failed(&mut self) {
        for o in self.writing.drain(..).rev() {
            self.queue.push_front(o);
        }
        self.failures += 1;
        if self.failures >= MAX_OPEN_ATTEMPTS {
            tracing::debug!(failures = self.failures, "bitswap outbound stream keeps failing");
            self.stop_sending();
            self.events.push_back(StreamsReport::OutboundFailed);
        } else {
            self.outbound = Outbound::Closed;
        }
    }

    /// Nothing more is sent on this connection; what waits is dropped.
    fn stop_sending(&mut self) {
        self.outbound = Outbound::Dead;
        self.drop_queue();
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
            self.events.push_back(StreamsReport::Sent { server_msgs: dropped });
        }
        buf
    }

    /// Moves the outbound stream along. Returns whether a stream must be opened.
    fn poll_outbound(&mut self, cx: &mut Context<'_>) -> bool {
        loop {
            match std::mem::replace(&mut self.outbound, Outbound::Closed) {
                Outbound::Closed if self.version.is_none() || !self.queue.is_empty() => {
                    self.outbound = Outbound::Opening;
                    return true;
                }
                Outbound::Idle(mut out, version, _) if !self.queue.is_empty() => {
                    let buf = self.next_batch(version);
                    let write = async move {
                        out.stream.write_all(&buf).await?;
                        out.stream.flush().await?;
                        Ok(out)
                    };
                    self.outbound = Outbound::Writing(write.boxed(), version);
                }
                Outbound::Writing(mut write, version) => match write.poll_unpin(cx) {
                    Poll::Ready(Ok(out)) => {
                        self.failures = 0;
                        let server_msgs = self.writing.drain(..).filter(|o| o.from_server).count();
                        if server_msgs > 0 {
                            self.events.push_back(StreamsReport::Sent { server_msgs });
                        }
                        self.outbound = self.idle(out, version);
                    }
                    Poll::Ready(Err(error)) => {
                        tracing::debug!(%error, "bitswap outbound stream failed");
                        self.stream_failed();
                    }
                    Poll::Pending => {
                        self.outbound = Outbound::Writing(write, version);
                        return false;
                    }
                },
                Outbound::Idle(mut out, version, mut idle) => {
                    if let Err(error) = out.read_peer_close(cx) {
                        // Not a failure to count: nothing was lost, the next message opens a new one.
                        tracing::debug!(%error, "bitswap outbound stream ended while idle");
                        return false;
                    }
                    match idle.poll_unpin(cx) {
                        Poll::Ready(()) => {
                            tracing::trace!("bitswap outbound stream idle; closing it");
                            self.outbound =
                                Outbound::Closing(async move { out.stream.close().await }.boxed());
                        }
                        Poll::Pending => {
                            self.outbound = Outbound::Idle(out, version, idle);
                            return false;
                        }
                    }
                }
                // A close that fails leaves nothing to do: the next message opens a new stream.
                Outbound::Closing(mut close) => match close.poll_unpin(cx) {
                    Poll::Ready(_) => self.outbound = Outbound::Closed,
                    Poll::Pending => {
                        self.outbound = Outbound::Closing(close);
                        return false;
                    }
                },
                other => {
                    self.outbound = other;
                    return false;
                }
            }
        }
    }

    fn idle(&self, out: SendStream, version: ProtocolVersion) -> Outbound {
        Outbound::Idle(out, version, Delay::new(self.config.idle_close))
    }

    fn poll_inbound(&mut self, cx: &mut Context<'_>) -> Option<StreamsReport> {
        loop {
            match self.inbound.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(Read::Message(msg)))) => {
                    return Some(StreamsReport::Message(msg))
                }
                Poll::Ready(Some(Ok(Read::Progress))) => return Some(StreamsReport::Progress),
                Poll::Ready(Some(Err(ReadError::Io(error)))) => {
                    tracing::debug!(%error, "bitswap inbound stream failed");
                }
                Poll::Ready(Some(Err(ReadError::Frame(e)))) => {
                    return Some(StreamsReport::Misbehaved(e.into()))
                }
                Poll::Ready(Some(Err(ReadError::Decode(e)))) => {
                    return Some(StreamsReport::Misbehaved(e.into()))
                }
                Poll::Ready(None) | Poll::Pending => return None,
            }
        }
    }
}

impl Streams for BitswapStreams {
    type Protocol = ProtocolVersion;
    type OpenInfo = ();
    type Command = Outgoing;
    type Event = StreamsReport;

    fn inbound_protocols(&self) -> Arc<[ProtocolVersion]> {
        self.config.versions.clone()
    }

    fn inbound_streams(&self) -> usize {
        self.inbound.len()
    }

    fn on_command(&mut self, outgoing: Outgoing) {
        if matches!(self.outbound, Outbound::Dead) {
            tracing::trace!("bitswap message dropped: the connection cannot carry it");
            if outgoing.from_server {
                self.events.push_back(StreamsReport::Sent { server_msgs: 1 });
            }
            return;
        }
        self.queue.push_back(outgoing);
    }

    fn on_inbound(&mut self, mut stream: Stream, _: ProtocolVersion) {
        stream.ignore_for_keep_alive();
        let messages =
            read_with_progress(stream, self.config.max_message_size, Message::decode_unhashed)
                .then(|read| async move {
                    match read? {
                        Read::Message((message, blocks)) => {
                            Ok(Read::Message(addressed(message, blocks).await?))
                        }
                        Read::Progress => Ok(Read::Progress),
                    }
                });
        self.inbound.push(messages.boxed());
    }

    fn on_outbound(&mut self, mut stream: Stream, version: ProtocolVersion, (): ()) {
        stream.ignore_for_keep_alive();
        if self.version.is_none() {
            self.version = Some(version);
            self.events.push_back(StreamsReport::Ready(version));
        }
        self.outbound = self.idle(SendStream::new(stream), version);
    }

    fn on_outbound_failed(&mut self, (): (), error: StreamUpgradeError<std::convert::Infallible>) {
        match error {
            StreamUpgradeError::NegotiationFailed if self.version.is_none() => self.stop_sending(),
            error => {
                tracing::debug!(%error, "bitswap outbound stream not opened");
                self.stream_failed();
            }
        }
    }

    fn keep_alive(&self, fetching: bool) -> bool {
        let busy = !self.queue.is_empty() || !self.writing.is_empty();
        let alive = !matches!(self.outbound, Outbound::Dead);
        busy || (alive && fetching && self.version.is_some())
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<StreamsEvent<Self>> {
        if self.poll_outbound(cx) {
            let protocols = self.config.versions.clone();
            return Poll::Ready(StreamsEvent::Open { protocols, info: () });
        }
        if let Some(event) = self.events.pop_front() {
            return Poll::Ready(StreamsEvent::Report(event));
        }
        match self.poll_inbound(cx) {
            Some(event) => Poll::Ready(StreamsEvent::Report(event)),
            None => Poll::Pending,
        }
    }
}
