//! Both ends of the spec's signalling, over a stream on the relayed connection: the initiator
//! offers, the responder answers, and both trickle ICE candidates until their peer connection is
//! up. Each end makes its libp2p [`Connection`] as soon as its peer connection exists, so that no
//! data channel the remote opens on connecting is missed.

use futures::io::{ReadHalf, WriteHalf};
use futures::stream::{FusedStream, LocalBoxStream};
use futures::{AsyncReadExt, AsyncWriteExt, FutureExt, StreamExt};
use libp2p::{webrtc_websys::Connection, PeerId, Stream};
use libp2p_stream::Control;
use web_sys::{RtcPeerConnectionState, RtcSdpType};

use super::error::WebRtcError;
use super::peer_connection::{close_channel, PeerConnection};
use crate::net::framed::{read_messages, ReadError};
use crate::net::webrtc::{DirectWebRtcConfig, SIGNALING_PROTOCOL};
use syncscope_proto::framing::{decode_body, encode_frame, FrameError};
use syncscope_proto::webrtc_signaling::{Message, Negotiation, Role, Step, MAX_MESSAGE};

/// Dials `peer` over the relayed connection this node has with it.
pub(super) async fn initiate(
    mut control: Control,
    peer: PeerId,
    config: &DirectWebRtcConfig,
) -> Result<(PeerId, Connection), WebRtcError> {
    let stream = control.open_stream(peer, SIGNALING_PROTOCOL).await?;
    let mut pc = PeerConnection::new(config)?;
    let connection = Connection::from_peer_connection(pc.inner().clone());
    // Only so that the offer has a data section for ICE to work on; closed once connected.
    let init = pc.inner().create_data_channel("init");
    let mut signal = Signaling::new(stream, Role::Initiator);
    let offer = pc.create_offer().await?;
    signal.send(Message::offer(offer.clone())).await?;
    pc.set_local(RtcSdpType::Offer, &offer).await?;
    let answer = signal.description().await?;
    pc.set_remote(RtcSdpType::Answer, &answer).await?;
    signal.until_connected(&mut pc).await?;
    close_channel(&init).await;
    signal.close().await;
    Ok((peer, connection))
}

/// Answers `peer`, which opened `stream` to dial this node.
pub(super) async fn respond(
    peer: PeerId,
    stream: Stream,
    config: &DirectWebRtcConfig,
) -> Result<(PeerId, Connection), WebRtcError> {
    let mut pc = PeerConnection::new(config)?;
    let connection = Connection::from_peer_connection(pc.inner().clone());
    let mut signal = Signaling::new(stream, Role::Responder);
    let offer = signal.description().await?;
    pc.set_remote(RtcSdpType::Offer, &offer).await?;
    let answer = pc.create_answer().await?;
    signal.send(Message::answer(answer.clone())).await?;
    pc.set_local(RtcSdpType::Answer, &answer).await?;
    signal.until_connected(&mut pc).await?;
    signal.close().await;
    Ok((peer, connection))
}

type Messages =
    futures::stream::Fuse<LocalBoxStream<'static, Result<Message, ReadError<FrameError>>>>;

enum Event {
    Local(String),
    StateChanged,
    Remote(Result<Option<Step>, WebRtcError>),
}

/// The signalling stream, read as messages the [`Negotiation`] checks.
struct Signaling {
    messages: Messages,
    writer: WriteHalf<Stream>,
    negotiation: Negotiation,
}

impl Signaling {
    fn new(stream: Stream, role: Role) -> Self {
        let (reader, writer): (ReadHalf<Stream>, _) = stream.split();
        let messages = read_messages(reader, MAX_MESSAGE, decode_body::<Message>);
        Self {
            messages: messages.boxed_local().fuse(),
            writer,
            negotiation: Negotiation::new(role),
        }
    }

    async fn send(&mut self, message: Message) -> Result<(), WebRtcError> {
        self.writer.write_all(&encode_frame(&message, MAX_MESSAGE)?).await?;
        Ok(self.writer.flush().await?)
    }

    async fn next_step(&mut self) -> Result<Option<Step>, WebRtcError> {
        match self.messages.next().await {
            Some(message) => Ok(Some(self.negotiation.on_message(message?)?)),
            None => Ok(None),
        }
    }

    /// The remote's offer or answer: the [`Negotiation`] refuses anything else first.
    async fn description(&mut self) -> Result<String, WebRtcError> {
        match self.next_step().await? {
            Some(Step::RemoteDescription(sdp)) => Ok(sdp),
            _ => Err(WebRtcError::Ended),
        }
    }

    /// Trades candidates until the peer connection is up. The remote may close the stream
    /// before that (it has sent all it has); the connection may still come up.
    async fn until_connected(&mut self, pc: &mut PeerConnection) -> Result<(), WebRtcError> {
        loop {
            match pc.state() {
                RtcPeerConnectionState::Connected => return Ok(()),
                RtcPeerConnectionState::Failed => return Err(WebRtcError::Failed("failed")),
                RtcPeerConnectionState::Closed => return Err(WebRtcError::Failed("closed")),
                _ => {}
            }
            match self.next_event(pc).await {
                Event::Local(candidate) => self.send(Message::candidate(candidate)).await?,
                Event::StateChanged => {}
                Event::Remote(step) => {
                    if let Some(Step::Candidate(candidate)) = step? {
                        if let Err(error) = pc.add_candidate(&candidate).await {
                            tracing::debug!(%error, "ignoring an ICE candidate");
                        }
                    }
                }
            }
        }
    }

    async fn next_event(&mut self, pc: &mut PeerConnection) -> Event {
        let remote = self.next_step_unless_ended().fuse();
        futures::pin_mut!(remote);
        futures::select! {
            candidate = pc.candidates.select_next_some() => Event::Local(candidate),
            _ = pc.states.select_next_some() => Event::StateChanged,
            step = remote => Event::Remote(step),
        }
    }

    /// The next step, or never once the remote closed its side: the loop above then waits on
    /// the peer connection alone.
    async fn next_step_unless_ended(&mut self) -> Result<Option<Step>, WebRtcError> {
        if self.messages.is_terminated() {
            return futures::future::pending().await;
        }
        self.next_step().await
    }

    /// Closes our side; the connection does not depend on it, so a failure changes nothing.
    async fn close(mut self) {
        let _ = self.writer.close().await;
    }
}
