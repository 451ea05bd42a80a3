// Copyright 2022 Parity Technologies (UK) Ltd.
// Copyright 2023 Protocol Labs.
//
// Permission is hereby granted, free of charge, to any person obtaining a
// copy of this software and associated documentation files (the "Software"),
// to deal in the Software without restriction, including without limitation
// the rights to use, copy, modify, merge, publish, distribute, sublicense,
// and/or sell copies of the Software, and to permit persons to whom the
// Software is furnished to do so, subject to the following conditions:
//
// The above copyright notice and this permission notice shall be included in
// all copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS
// OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
// FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
// AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
// LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING
// FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
// DEALINGS IN THE SOFTWARE.

use std::{
    io,
    pin::Pin,
    task::{Context, Poll},
};

use bytes::Bytes;
use futures::{channel::oneshot, prelude::*, ready};

use crate::{
    proto::{Flag, Message},
    stream::{
        drop_listener::Dropped,
        framed_dc::FramedDc,
        state::{Closing, State},
    },
};

mod drop_listener;
mod framed_dc;
mod state;

/// Maximum length of a message.
///
/// "As long as message interleaving is not supported, the sender SHOULD limit the maximum message
/// size to 16 KB to avoid monopolization."
/// Source: <https://www.rfc-editor.org/rfc/rfc8831#name-transferring-user-data-on-a>
pub const MAX_MSG_LEN: usize = 16 * 1024;
/// Length of varint, in bytes.
const VARINT_LEN: usize = 2;
/// Overhead of the protobuf encoding, in bytes.
const PROTO_OVERHEAD: usize = 5;
/// Maximum length of data, in bytes.
const MAX_DATA_LEN: usize = MAX_MSG_LEN - VARINT_LEN - PROTO_OVERHEAD;

pub use drop_listener::DropListener;
/// A stream backed by a WebRTC data channel.
///
/// To be a proper libp2p stream, we need to implement [`AsyncRead`] and [`AsyncWrite`] as well
/// as support a half-closed state which we do by framing messages in a protobuf envelope.
pub struct Stream<T> {
    io: FramedDc<T>,
    state: State,
    read_buffer: Bytes,
    /// Tells the [`DropListener`] how the stream ended, once it is dropped (syncscope patch).
    drop_notifier: Option<oneshot::Sender<Dropped>>,
    /// We closed our writing with a FIN (syncscope patch).
    sent_fin: bool,
    /// The remote closed its writing (syncscope patch).
    received_fin: bool,
}

impl<T> Stream<T>
where
    T: AsyncRead + AsyncWrite + Unpin + Clone,
{
    /// Returns a new [`Stream`] and a [`DropListener`],
    /// which will notify the receiver when/if the stream is dropped.
    pub fn new(data_channel: T) -> (Self, DropListener<T>) {
        let (sender, receiver) = oneshot::channel();

        let stream = Self {
            io: framed_dc::new(data_channel.clone()),
            state: State::Open,
            read_buffer: Bytes::default(),
            drop_notifier: Some(sender),
            sent_fin: false,
            received_fin: false,
        };
        let listener = DropListener::new(framed_dc::new(data_channel), receiver);

        (stream, listener)
    }

    /// Gracefully closes the "read-half" of the stream.
    pub fn poll_close_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            match self.state.close_read_barrier()? {
                Some(Closing::Requested) => {
                    ready!(self.io.poll_ready_unpin(cx))?;

                    self.io.start_send_unpin(Message {
                        flag: Some(Flag::StopSending as i32),
                        message: None,
                    })?;
                    self.state.close_read_message_sent();

                    continue;
                }
                Some(Closing::MessageSent) => {
                    ready!(self.io.poll_flush_unpin(cx))?;

                    self.state.read_closed();

                    return Poll::Ready(Ok(()));
                }
                None => return Poll::Ready(Ok(())),
            }
        }
    }
}

impl<T> AsyncRead for Stream<T>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            self.state.read_barrier()?;

            if !self.read_buffer.is_empty() {
                let n = std::cmp::min(self.read_buffer.len(), buf.len());
                let data = self.read_buffer.split_to(n);
                buf[0..n].copy_from_slice(&data[..]);

                return Poll::Ready(Ok(n));
            }

            let Self {
                read_buffer,
                io,
                state,
                received_fin,
                ..
            } = &mut *self;

            match ready!(io_poll_next(io, cx))? {
                Some((flag, message)) => {
                    if let Some(flag) = flag {
                        state.handle_inbound_flag(flag, read_buffer);
                    }
                    if flag == Some(Flag::Fin) {
                        *received_fin = true;
                        send_fin_ack(io, cx);
                    }

                    debug_assert!(read_buffer.is_empty());
                    match message {
                        Some(msg) if !msg.is_empty() => {
                            *read_buffer = msg.into();
                        }
                        // syncscope patch: only a FIN ends what there is to read. A message with
                        // no data may carry STOP_SENDING, which closes our writing, not the
                        // remote's: js-libp2p sends it as soon as it has negotiated a stream it
                        // only writes to, before its data.
                        _ if flag == Some(Flag::Fin) => {
                            tracing::debug!("poll_read buffer is empty, received None");
                            return Poll::Ready(Ok(0));
                        }
                        _ => {}
                    }
                }
                None => {
                    state.handle_inbound_flag(Flag::Fin, read_buffer);
                    *received_fin = true;
                    return Poll::Ready(Ok(0));
                }
            }
        }
    }
}

impl<T> AsyncWrite for Stream<T>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        while self.state.read_flags_in_async_write() {
            // TODO: In case AsyncRead::poll_read encountered an error or returned None earlier, we
            // will poll the underlying I/O resource once more. Is that allowed? How
            // about introducing a state IoReadClosed?

            let Self {
                read_buffer,
                io,
                state,
                ..
            } = &mut *self;

            match io_poll_next(io, cx)? {
                Poll::Ready(Some((Some(flag), message))) => {
                    // Read side is closed. Discard any incoming messages.
                    drop(message);
                    // But still handle flags, e.g. a `Flag::StopSending`.
                    state.handle_inbound_flag(flag, read_buffer)
                }
                Poll::Ready(Some((None, message))) => drop(message),
                Poll::Ready(None) | Poll::Pending => break,
            }
        }

        self.state.write_barrier()?;

        ready!(self.io.poll_ready_unpin(cx))?;

        let n = usize::min(buf.len(), MAX_DATA_LEN);

        Pin::new(&mut self.io).start_send(Message {
            flag: None,
            message: Some(buf[0..n].into()),
        })?;

        Poll::Ready(Ok(n))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_flush_unpin(cx).map_err(Into::into)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            match self.state.close_write_barrier()? {
                Some(Closing::Requested) => {
                    ready!(self.io.poll_ready_unpin(cx))?;

                    self.io.start_send_unpin(Message {
                        flag: Some(Flag::Fin as i32),
                        message: None,
                    })?;
                    self.state.close_write_message_sent();

                    continue;
                }
                Some(Closing::MessageSent) => {
                    ready!(self.io.poll_flush_unpin(cx))?;

                    self.state.write_closed();
                    self.sent_fin = true;

                    return Poll::Ready(Ok(()));
                }
                None => return Poll::Ready(Ok(())),
            }
        }
    }
}

/// syncscope patch: answers a FIN with FIN_ACK, as the spec asks. js-libp2p waits up to 5 s for
/// it when it closes a stream's writing, and then fails the close: Helia's Bitswap, which closes
/// the writing of each stream it accepts before it reads, then never read what we sent. Best
/// effort: a data channel with no room for it now gets it with the next flush.
fn send_fin_ack<T>(io: &mut FramedDc<T>, cx: &mut Context<'_>)
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    let fin_ack = Message { flag: Some(Flag::FinAck as i32), message: None };
    if let Poll::Ready(Ok(())) = io.poll_ready_unpin(cx) {
        if io.start_send_unpin(fin_ack).is_ok() {
            let _ = io.poll_flush_unpin(cx);
        }
    }
}

/// syncscope patch: the [`DropListener`] learns how the stream ended when it is dropped, not when
/// it is closed: after a FIN of ours it still has to answer the remote's FIN with FIN_ACK, which
/// the stream, gone, can no longer do.
impl<T> Drop for Stream<T> {
    fn drop(&mut self) {
        if let Some(notifier) = self.drop_notifier.take() {
            let _ = notifier.send(Dropped {
                sent_fin: self.sent_fin,
                received_fin: self.received_fin,
            });
        }
    }
}

fn io_poll_next<T>(
    io: &mut FramedDc<T>,
    cx: &mut Context<'_>,
) -> Poll<io::Result<Option<(Option<Flag>, Option<Vec<u8>>)>>>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    match ready!(io.poll_next_unpin(cx))
        .transpose()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
    {
        Some(Message { flag, message }) => {
            let flag = flag
                .map(|f| {
                    Flag::try_from(f).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
                })
                .transpose()?;
            Poll::Ready(Ok(Some((flag, message))))
        }
        None => Poll::Ready(Ok(None)),
    }
}

#[cfg(test)]
mod tests {
    use std::{cell::RefCell, rc::Rc};

    use asynchronous_codec::Encoder;
    use bytes::BytesMut;

    use super::*;
    use crate::stream::framed_dc::codec;

    /// A data channel that yields `input` and keeps what is written.
    #[derive(Clone, Default)]
    struct Replay {
        input: Rc<RefCell<futures::io::Cursor<Vec<u8>>>>,
        written: Rc<RefCell<Vec<u8>>>,
    }

    impl AsyncRead for Replay {
        fn poll_read(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut [u8],
        ) -> Poll<io::Result<usize>> {
            Pin::new(&mut *self.input.borrow_mut()).poll_read(cx, buf)
        }
    }

    impl AsyncWrite for Replay {
        fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            self.written.borrow_mut().extend_from_slice(buf);
            Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    fn encode(messages: &[(Option<Flag>, Option<&[u8]>)]) -> Vec<u8> {
        let mut out = BytesMut::new();
        for (flag, message) in messages {
            let message = Message { flag: flag.map(|f| f as i32), message: message.map(<[u8]>::to_vec) };
            codec().encode(message, &mut out).unwrap();
        }
        out.to_vec()
    }

    // syncscope patch: a STOP_SENDING with no data before the data is not the end of the data,
    // and a FIN is answered with FIN_ACK.
    #[test]
    fn stop_sending_before_data_does_not_end_reading_and_fin_is_acknowledged() {
        let channel = Replay::default();
        *channel.input.borrow_mut() = futures::io::Cursor::new(encode(&[
            (Some(Flag::StopSending), None),
            (None, Some(b"want")),
            (Some(Flag::Fin), None),
        ]));
        let (mut stream, _drop) = Stream::new(channel.clone());
        let mut read = Vec::new();
        futures::executor::block_on(stream.read_to_end(&mut read)).unwrap();
        assert_eq!(read, b"want");
        assert_eq!(*channel.written.borrow(), encode(&[(Some(Flag::FinAck), None)]));
    }

    // syncscope patch: a stream dropped after our FIN still answers the remote's FIN, and one
    // dropped without a FIN is reset.
    #[test]
    fn a_dropped_stream_acknowledges_the_remotes_fin_or_resets() {
        let channel = Replay::default();
        *channel.input.borrow_mut() = futures::io::Cursor::new(encode(&[
            (None, Some(b"unread")),
            (Some(Flag::Fin), None),
        ]));
        let (mut stream, drop_listener) = Stream::new(channel.clone());
        futures::executor::block_on(stream.close()).unwrap();
        drop(stream);
        futures::executor::block_on(drop_listener).unwrap();
        let fin_then_ack = encode(&[(Some(Flag::Fin), None), (Some(Flag::FinAck), None)]);
        assert_eq!(*channel.written.borrow(), fin_then_ack);

        let channel = Replay::default();
        let (stream, drop_listener) = Stream::new(channel.clone());
        drop(stream);
        futures::executor::block_on(drop_listener).unwrap();
        assert_eq!(*channel.written.borrow(), encode(&[(Some(Flag::Reset), None)]));
    }

    #[test]
    fn max_data_len() {
        // Largest possible message.
        let message = [0; MAX_DATA_LEN];

        let protobuf = Message {
            flag: Some(Flag::Fin as i32),
            message: Some(message.to_vec()),
        };

        let mut codec = codec();

        let mut dst = BytesMut::new();
        codec.encode(protobuf, &mut dst).unwrap();

        // Ensure the varint prefixed and protobuf encoded largest message is no longer than the
        // maximum limit specified in the libp2p WebRTC specification.
        assert_eq!(dst.len(), MAX_MSG_LEN);
    }
}
