// Copyright 2022 Parity Technologies (UK) Ltd.
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
    future::Future,
    io,
    pin::Pin,
    task::{Context, Poll},
};

use futures::{
    AsyncRead, AsyncWrite, FutureExt, SinkExt, StreamExt,
    channel::{oneshot, oneshot::Canceled},
};

use crate::{
    proto::{Flag, Message},
    stream::framed_dc::FramedDc,
};

#[must_use]
pub struct DropListener<T> {
    state: State<T>,
}

impl<T> DropListener<T> {
    pub fn new(stream: FramedDc<T>, receiver: oneshot::Receiver<Dropped>) -> Self {
        Self {
            state: State::Idle { stream, receiver },
        }
    }
}

enum State<T> {
    /// The [`DropListener`] is idle and waiting to be activated.
    Idle {
        stream: FramedDc<T>,
        receiver: oneshot::Receiver<Dropped>,
    },
    /// syncscope patch: the stream was dropped after our FIN and before the remote's; its FIN
    /// gets a FIN_ACK, as the spec asks (js-libp2p fails a close it sees unacknowledged).
    AwaitingFin {
        stream: FramedDc<T>,
    },
    SendingFinAck {
        stream: FramedDc<T>,
    },
    /// The stream got dropped and we are sending a reset flag.
    SendingReset {
        stream: FramedDc<T>,
    },
    Flushing {
        stream: FramedDc<T>,
    },
    /// Bad state transition.
    Poisoned,
}

impl<T> Future for DropListener<T>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let state = &mut self.get_mut().state;

        loop {
            match std::mem::replace(state, State::Poisoned) {
                State::Idle {
                    stream,
                    mut receiver,
                } => match receiver.poll_unpin(cx) {
                    Poll::Ready(Ok(Dropped {
                        sent_fin: true,
                        received_fin: true,
                    })) => {
                        return Poll::Ready(Ok(()));
                    }
                    Poll::Ready(Ok(Dropped {
                        sent_fin: true,
                        received_fin: false,
                    })) => {
                        *state = State::AwaitingFin { stream };
                        continue;
                    }
                    Poll::Ready(Ok(Dropped {
                        sent_fin: false, ..
                    }))
                    | Poll::Ready(Err(Canceled)) => {
                        tracing::info!("Stream dropped without graceful close, sending Reset");
                        *state = State::SendingReset { stream };
                        continue;
                    }
                    Poll::Pending => {
                        *state = State::Idle { stream, receiver };
                        return Poll::Pending;
                    }
                },
                State::AwaitingFin { mut stream } => match stream.poll_next_unpin(cx) {
                    Poll::Ready(Some(Ok(Message { flag: Some(flag), .. })))
                        if flag == Flag::Fin as i32 =>
                    {
                        *state = State::SendingFinAck { stream };
                        continue;
                    }
                    // Data the remote wrote after we dropped the stream: nobody reads it.
                    Poll::Ready(Some(Ok(Message { flag, .. }))) if flag != Some(Flag::Reset as i32) => {
                        *state = State::AwaitingFin { stream };
                        continue;
                    }
                    Poll::Ready(_) => return Poll::Ready(Ok(())),
                    Poll::Pending => {
                        *state = State::AwaitingFin { stream };
                        return Poll::Pending;
                    }
                },
                State::SendingFinAck { mut stream } => match stream.poll_ready_unpin(cx)? {
                    Poll::Ready(()) => {
                        stream.start_send_unpin(Message {
                            flag: Some(Flag::FinAck as i32),
                            message: None,
                        })?;
                        *state = State::Flushing { stream };
                        continue;
                    }
                    Poll::Pending => {
                        *state = State::SendingFinAck { stream };
                        return Poll::Pending;
                    }
                },
                State::SendingReset { mut stream } => match stream.poll_ready_unpin(cx)? {
                    Poll::Ready(()) => {
                        stream.start_send_unpin(Message {
                            flag: Some(Flag::Reset as i32),
                            message: None,
                        })?;
                        *state = State::Flushing { stream };
                        continue;
                    }
                    Poll::Pending => {
                        *state = State::SendingReset { stream };
                        return Poll::Pending;
                    }
                },
                State::Flushing { mut stream } => match stream.poll_flush_unpin(cx)? {
                    Poll::Ready(()) => return Poll::Ready(Ok(())),
                    Poll::Pending => {
                        *state = State::Flushing { stream };
                        return Poll::Pending;
                    }
                },
                State::Poisoned => {
                    unreachable!()
                }
            }
        }
    }
}

/// How the stream ended, sent as it is dropped (syncscope patch: it was sent on our FIN).
pub struct Dropped {
    pub sent_fin: bool,
    pub received_fin: bool,
}
