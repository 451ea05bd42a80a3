//! One connection's pull-sync streams, the codec part of the adapter's connection handler: opens
//! the outbound streams the core asks for, takes inbound ones, writes the frames the core produced
//! and reports what it reads. It never looks inside the bytes; the core does.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::task::AtomicWaker;
use futures::{AsyncRead, AsyncWrite};
use libp2p::swarm::StreamUpgradeError;
use libp2p::Stream;

use crate::net::adapter::{Streams, StreamsEvent};
use syncscope_proto::pullsync::{Protocol, StreamAction, StreamId, StreamKey};

/// What the core asks of one stream on this connection.
#[derive(Debug)]
pub struct StreamCommand {
    pub stream: StreamKey,
    pub action: StreamAction,
}

/// What happened on one stream of this connection.
#[derive(Debug)]
pub enum StreamsReport {
    /// The remote opened a stream; it is now known as `Inbound(stream)`.
    InboundOpened {
        stream: StreamId,
        protocol: Protocol,
    },
    Data {
        stream: StreamKey,
        data: Bytes,
    },
    /// The remote finished writing.
    Finished {
        stream: StreamKey,
    },
    /// The stream failed to open, was reset or broke; it is gone.
    Failed {
        stream: StreamKey,
    },
    /// Both sides finished cleanly; the stream is gone.
    Closed {
        stream: StreamKey,
    },
}

/// Bytes handed to handlers but not yet written, shared with the behaviour so that it stops
/// encoding deliveries while sockets are full. Each connection counts its own queue, so that a
/// closed connection's queue can be forgotten as a whole.
#[derive(Debug, Default)]
pub struct WriteQueue {
    bytes: AtomicUsize,
}

impl WriteQueue {
    pub fn queued(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// Shared by the behaviour and every handler.
#[derive(Debug, Default)]
pub(super) struct Shared {
    /// Numbers inbound streams uniquely across all connections.
    pub(super) next_inbound: AtomicU64,
    /// Wakes the behaviour when a queue drains.
    pub(super) writable: AtomicWaker,
}

/// The store's wake-ups go the same way as the sockets'.
impl futures::task::ArcWake for Shared {
    fn wake_by_ref(shared: &Arc<Self>) {
        shared.writable.wake();
    }
}

struct StreamIo {
    /// `None` while an outbound stream is being negotiated.
    io: Option<Stream>,
    out: VecDeque<Bytes>,
    /// Bytes of `out.front()` already written.
    written: usize,
    /// Written but not yet flushed: a flush that was pending is tried again on the next drive,
    /// since some streams (WebRTC's) hold the last frame until flushed.
    unflushed: bool,
    finish: bool,
    write_closed: bool,
    read_closed: bool,
}

impl StreamIo {
    fn new(io: Option<Stream>) -> Self {
        StreamIo {
            io,
            out: VecDeque::new(),
            written: 0,
            unflushed: false,
            finish: false,
            write_closed: false,
            read_closed: false,
        }
    }

    fn queued(&self) -> usize {
        self.out.iter().map(Bytes::len).sum()
    }
}

enum Progress {
    Idle,
    Event(StreamsReport),
    Done(StreamsReport),
}

pub struct PullsyncStreams {
    streams: HashMap<StreamKey, StreamIo>,
    opening: VecDeque<(StreamId, Protocol)>,
    events: VecDeque<StreamsReport>,
    queue: Arc<WriteQueue>,
    shared: Arc<Shared>,
    read_buf: Box<[u8]>,
    /// Reused by `poll` to walk the streams without allocating.
    keys: Vec<StreamKey>,
}

impl PullsyncStreams {
    /// `read_buffer` bounds the bytes taken from a stream in one read (see
    /// [`super::Config::read_buffer`]).
    pub(super) fn new(queue: Arc<WriteQueue>, shared: Arc<Shared>, read_buffer: usize) -> Self {
        PullsyncStreams {
            streams: HashMap::new(),
            opening: VecDeque::new(),
            events: VecDeque::new(),
            queue,
            shared,
            read_buf: vec![0; read_buffer.max(1)].into_boxed_slice(),
            keys: Vec::new(),
        }
    }

    fn release(&self, bytes: usize) {
        if bytes > 0 {
            self.queue.bytes.fetch_sub(bytes, Ordering::Relaxed);
            self.shared.writable.wake();
        }
    }

    fn remove(&mut self, key: StreamKey) -> Option<StreamIo> {
        let stream = self.streams.remove(&key)?;
        self.release(stream.queued());
        Some(stream)
    }

    /// Writes what is queued, closes the writing side once asked, and reads once. At most one
    /// event per call, so reads stop while events wait for the behaviour.
    fn drive(&mut self, cx: &mut Context<'_>, key: StreamKey) -> Progress {
        let Some(stream) = self.streams.get_mut(&key).filter(|s| s.io.is_some()) else {
            return Progress::Idle;
        };
        let mut released = 0;
        let progress = match write(cx, stream, &mut released) {
            Err(_) => Progress::Done(StreamsReport::Failed { stream: key }),
            Ok(()) if stream.read_closed => Progress::Idle,
            Ok(()) => read(cx, stream, key, &mut self.read_buf),
        };
        let progress = match progress {
            Progress::Idle if stream.read_closed && stream.write_closed => {
                Progress::Done(StreamsReport::Closed { stream: key })
            }
            p => p,
        };
        self.release(released);
        progress
    }
}

/// Writes queued frames until the stream would block; closes the writing side when asked and
/// everything is out. Counts in `released` the bytes of frames fully written.
fn write(cx: &mut Context<'_>, stream: &mut StreamIo, released: &mut usize) -> std::io::Result<()> {
    let StreamIo { io: Some(io), out, written, unflushed, finish, write_closed, .. } = stream
    else {
        return Ok(());
    };
    let mut io = Pin::new(io);
    while let Some(front) = out.front() {
        match io.as_mut().poll_write(cx, &front[*written..]) {
            Poll::Ready(Ok(0)) => return Err(std::io::ErrorKind::WriteZero.into()),
            Poll::Ready(Ok(n)) => {
                *unflushed = true;
                *written += n;
                if *written == front.len() {
                    *released += front.len();
                    *written = 0;
                    out.pop_front();
                }
            }
            Poll::Ready(Err(e)) => return Err(e),
            Poll::Pending => return Ok(()),
        }
    }
    if *finish && !*write_closed {
        if let Poll::Ready(result) = io.as_mut().poll_close(cx) {
            result?;
            *write_closed = true;
        }
    } else if *unflushed {
        if let Poll::Ready(result) = io.as_mut().poll_flush(cx) {
            result?;
            *unflushed = false;
        }
    }
    Ok(())
}

fn read(cx: &mut Context<'_>, stream: &mut StreamIo, key: StreamKey, buf: &mut [u8]) -> Progress {
    let Some(io) = stream.io.as_mut() else { return Progress::Idle };
    match Pin::new(io).poll_read(cx, buf) {
        Poll::Ready(Ok(0)) => {
            stream.read_closed = true;
            Progress::Event(StreamsReport::Finished { stream: key })
        }
        Poll::Ready(Ok(n)) => Progress::Event(StreamsReport::Data {
            stream: key,
            data: Bytes::copy_from_slice(&buf[..n]),
        }),
        Poll::Ready(Err(_)) => Progress::Done(StreamsReport::Failed { stream: key }),
        Poll::Pending => Progress::Idle,
    }
}

impl Drop for PullsyncStreams {
    fn drop(&mut self) {
        let queued: usize = self.streams.values().map(StreamIo::queued).sum();
        self.release(queued);
    }
}

impl Streams for PullsyncStreams {
    type Protocol = Protocol;
    type OpenInfo = StreamId;
    type Command = StreamCommand;
    type Event = StreamsReport;

    fn inbound_protocols(&self) -> Arc<[Protocol]> {
        Protocol::ALL.into()
    }

    fn inbound_streams(&self) -> usize {
        self.streams.keys().filter(|k| matches!(k, StreamKey::Inbound(_))).count()
    }

    fn on_command(&mut self, StreamCommand { stream: key, action }: StreamCommand) {
        match action {
            StreamAction::Open(protocol) => {
                if let StreamKey::Outbound(id) = key {
                    self.streams.insert(key, StreamIo::new(None));
                    self.opening.push_back((id, protocol));
                }
            }
            StreamAction::Send(frame) => match self.streams.get_mut(&key) {
                Some(stream) if !stream.finish => {
                    self.queue.bytes.fetch_add(frame.len(), Ordering::Relaxed);
                    stream.out.push_back(frame);
                }
                _ => {}
            },
            StreamAction::Finish => {
                if let Some(stream) = self.streams.get_mut(&key) {
                    stream.finish = true;
                }
            }
            // Dropping a yamux stream that is still open resets it.
            StreamAction::Reset => drop(self.remove(key)),
        }
    }

    fn on_inbound(&mut self, io: Stream, protocol: Protocol) {
        let id = StreamId(self.shared.next_inbound.fetch_add(1, Ordering::Relaxed));
        self.streams.insert(StreamKey::Inbound(id), StreamIo::new(Some(io)));
        self.events.push_back(StreamsReport::InboundOpened { stream: id, protocol });
    }

    fn on_outbound(&mut self, io: Stream, _: Protocol, id: StreamId) {
        // A stream reset before it was negotiated is dropped here, resetting it.
        if let Some(stream) = self.streams.get_mut(&StreamKey::Outbound(id)) {
            stream.io = Some(io);
        }
    }

    fn on_outbound_failed(&mut self, id: StreamId, error: StreamUpgradeError<Infallible>) {
        tracing::debug!(stream = ?id, %error, "pull-sync stream not opened");
        let key = StreamKey::Outbound(id);
        if self.remove(key).is_some() {
            self.events.push_back(StreamsReport::Failed { stream: key });
        }
    }

    fn keep_alive(&self, _: bool) -> bool {
        !self.streams.is_empty()
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<StreamsEvent<Self>> {
        if let Some(event) = self.events.pop_front() {
            return Poll::Ready(StreamsEvent::Report(event));
        }
        if let Some((id, protocol)) = self.opening.pop_front() {
            return Poll::Ready(StreamsEvent::Open { protocols: [protocol].into(), info: id });
        }
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        keys.extend(self.streams.keys().copied());
        for &key in &keys {
            match self.drive(cx, key) {
                Progress::Idle => {}
                Progress::Event(event) => self.events.push_back(event),
                Progress::Done(event) => {
                    self.remove(key);
                    self.events.push_back(event);
                }
            }
        }
        self.keys = keys;
        match self.events.pop_front() {
            Some(event) => Poll::Ready(StreamsEvent::Report(event)),
            None => Poll::Pending,
        }
    }
}
