//! The signalling of libp2p's browser-to-browser WebRTC (spec `webrtc/webrtc.md`, protocol
//! `/webrtc-signaling/0.0.1`): over a stream on a relayed connection, the initiator sends its SDP
//! offer, the responder its answer, and both trickle ICE candidates until their
//! `RTCPeerConnection` connects.
//!
//! Messages are length-prefixed protobuf ([`crate::framing`]). The spec has no Noise handshake:
//! the certificate fingerprints inside the SDP travel over the relayed connection, which is
//! already authenticated, so the peer at the other end of the direct connection is the one the
//! relayed connection was made with.
//!
//! [`Negotiation`] checks what the remote sends against where the exchange stands and says what to
//! do with it; the browser's `RTCPeerConnection` does the rest.

use thiserror::Error;

pub const PROTOCOL: &str = "/webrtc-signaling/0.0.1";
/// The largest message taken from a peer. An offer or answer with one data channel is 1–2 KB;
/// an ICE candidate a few hundred bytes.
pub const MAX_MESSAGE: usize = 16 * 1024;
/// ICE candidates taken from a peer in one negotiation; a browser gathers a handful per network
/// interface.
pub const MAX_CANDIDATES: usize = 64;

/// One signalling message, as in the spec's `message.proto`. Both fields are `optional` there, so
/// a type of 0 (`SDP_OFFER`) is still written out, as js-libp2p expects.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Message {
    #[prost(enumeration = "MessageType", optional, tag = "1")]
    pub r#type: Option<i32>,
    /// The SDP text, or an ICE candidate as the JSON of `RTCIceCandidate.toJSON()`.
    #[prost(string, optional, tag = "2")]
    pub data: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum MessageType {
    SdpOffer = 0,
    SdpAnswer = 1,
    IceCandidate = 2,
}

impl MessageType {
    fn name(self) -> &'static str {
        match self {
            Self::SdpOffer => "an SDP offer",
            Self::SdpAnswer => "an SDP answer",
            Self::IceCandidate => "an ICE candidate",
        }
    }
}

impl Message {
    pub fn offer(sdp: String) -> Self {
        Self::new(MessageType::SdpOffer, sdp)
    }

    pub fn answer(sdp: String) -> Self {
        Self::new(MessageType::SdpAnswer, sdp)
    }

    /// `candidate`: the JSON of `RTCIceCandidate.toJSON()`.
    pub fn candidate(candidate: String) -> Self {
        Self::new(MessageType::IceCandidate, candidate)
    }

    fn new(kind: MessageType, data: String) -> Self {
        Self { r#type: Some(kind as i32), data: Some(data) }
    }
}

/// Which end of the exchange this node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Dialled: opens the signalling stream and sends the offer.
    Initiator,
    /// Dialled by the peer: answers its offer.
    Responder,
}

/// What to do with a message from the remote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Set this SDP as the remote description: the offer for a responder, the answer for an
    /// initiator. A responder then creates its answer.
    RemoteDescription(String),
    /// Add this ICE candidate (`RTCIceCandidateInit` as JSON).
    Candidate(String),
    /// The remote gathered all its candidates (a JSON `null` or an empty candidate).
    EndOfCandidates,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SignalingError {
    #[error("the peer sent {got} where {expected} was due")]
    OutOfOrder { expected: &'static str, got: &'static str },
    #[error("the peer sent a signalling message of unknown type {0:?}")]
    UnknownType(Option<i32>),
    #[error("the peer sent {0} without data")]
    Empty(&'static str),
    #[error("the peer sent more than {MAX_CANDIDATES} ICE candidates")]
    TooManyCandidates,
}

/// One side's view of a signalling exchange.
#[derive(Debug)]
pub struct Negotiation {
    role: Role,
    described: bool,
    candidates: usize,
}

impl Negotiation {
    pub fn new(role: Role) -> Self {
        Self { role, described: false, candidates: 0 }
    }

    /// What the remote's description must be: an initiator waits for the answer, a responder
    /// for the offer.
    fn description_due(&self) -> MessageType {
        match self.role {
            Role::Initiator => MessageType::SdpAnswer,
            Role::Responder => MessageType::SdpOffer,
        }
    }

    /// Checks `message` against the exchange so far. Candidates may only follow the remote's
    /// description: before it, the connection could not use them.
    pub fn on_message(&mut self, message: Message) -> Result<Step, SignalingError> {
        let kind = message
            .r#type
            .and_then(|t| MessageType::try_from(t).ok())
            .ok_or(SignalingError::UnknownType(message.r#type))?;
        let due = if self.described { MessageType::IceCandidate } else { self.description_due() };
        if kind != due {
            return Err(SignalingError::OutOfOrder { expected: due.name(), got: kind.name() });
        }
        let data = message.data.unwrap_or_default();
        if kind != MessageType::IceCandidate {
            if data.is_empty() {
                return Err(SignalingError::Empty(kind.name()));
            }
            self.described = true;
            return Ok(Step::RemoteDescription(data));
        }
        if is_end_of_candidates(&data) {
            return Ok(Step::EndOfCandidates);
        }
        self.candidates += 1;
        if self.candidates > MAX_CANDIDATES {
            return Err(SignalingError::TooManyCandidates);
        }
        Ok(Step::Candidate(data))
    }
}

/// js-libp2p sends `null` once gathering ends; an empty text or an empty JSON string mean the
/// same (W3C WebRTC, `RTCPeerConnectionIceEvent`).
fn is_end_of_candidates(data: &str) -> bool {
    matches!(data.trim(), "" | "null" | "\"\"")
}

#[cfg(test)]
mod tests {
    use prost::Message as _;

    use super::*;

    const CANDIDATE: &str =
        r#"{"candidate":"candidate:1 1 udp 2122260223 10.0.0.2 50000 typ host","sdpMid":"0"}"#;

    #[test]
    fn a_responder_takes_the_offer_then_candidates() {
        let mut n = Negotiation::new(Role::Responder);
        assert_eq!(
            n.on_message(Message::offer("v=0".into())),
            Ok(Step::RemoteDescription("v=0".into()))
        );
        assert_eq!(
            n.on_message(Message::candidate(CANDIDATE.into())),
            Ok(Step::Candidate(CANDIDATE.into()))
        );
        assert_eq!(n.on_message(Message::candidate("null".into())), Ok(Step::EndOfCandidates));
    }

    #[test]
    fn an_initiator_takes_the_answer_then_candidates() {
        let mut n = Negotiation::new(Role::Initiator);
        assert_eq!(
            n.on_message(Message::answer("v=0".into())),
            Ok(Step::RemoteDescription("v=0".into()))
        );
        assert_eq!(
            n.on_message(Message::candidate(CANDIDATE.into())),
            Ok(Step::Candidate(CANDIDATE.into()))
        );
    }

    #[test]
    fn messages_out_of_order_are_refused() {
        let cases = [
            (Role::Responder, Message::answer("v=0".into()), "an SDP offer"),
            (Role::Responder, Message::candidate(CANDIDATE.into()), "an SDP offer"),
            (Role::Initiator, Message::offer("v=0".into()), "an SDP answer"),
            (Role::Initiator, Message::candidate(CANDIDATE.into()), "an SDP answer"),
        ];
        for (role, message, expected) in cases {
            let err = Negotiation::new(role).on_message(message).unwrap_err();
            assert!(
                matches!(err, SignalingError::OutOfOrder { expected: e, .. } if e == expected),
                "{err}"
            );
        }
    }

    #[test]
    fn a_second_description_is_refused() {
        let mut n = Negotiation::new(Role::Responder);
        n.on_message(Message::offer("v=0".into())).unwrap();
        let err = n.on_message(Message::offer("v=0".into())).unwrap_err();
        assert_eq!(
            err,
            SignalingError::OutOfOrder { expected: "an ICE candidate", got: "an SDP offer" }
        );
    }

    #[test]
    fn untyped_unknown_and_empty_messages_are_refused() {
        let mut n = Negotiation::new(Role::Responder);
        let untyped = Message { r#type: None, data: Some("v=0".into()) };
        assert_eq!(n.on_message(untyped), Err(SignalingError::UnknownType(None)));
        let unknown = Message { r#type: Some(7), data: Some("v=0".into()) };
        assert_eq!(n.on_message(unknown), Err(SignalingError::UnknownType(Some(7))));
        let empty = Message { r#type: Some(0), data: None };
        assert_eq!(n.on_message(empty), Err(SignalingError::Empty("an SDP offer")));
    }

    #[test]
    fn each_form_of_end_of_candidates_is_understood() {
        for data in ["null", "", "\"\"", " null "] {
            let mut n = Negotiation::new(Role::Initiator);
            n.on_message(Message::answer("v=0".into())).unwrap();
            assert_eq!(n.on_message(Message::candidate(data.into())), Ok(Step::EndOfCandidates));
        }
    }

    #[test]
    fn a_flood_of_candidates_is_cut() {
        let mut n = Negotiation::new(Role::Initiator);
        n.on_message(Message::answer("v=0".into())).unwrap();
        for _ in 0..MAX_CANDIDATES {
            n.on_message(Message::candidate(CANDIDATE.into())).unwrap();
        }
        let err = n.on_message(Message::candidate(CANDIDATE.into())).unwrap_err();
        assert_eq!(err, SignalingError::TooManyCandidates);
    }

    /// The offer's type is 0, proto3's default: it must still be on the wire, or js-libp2p reads
    /// a message without a type.
    #[test]
    fn the_offer_type_is_written_out() {
        let bytes = Message::offer("v=0".into()).encode_to_vec();
        assert_eq!(bytes, [0x08, 0x00, 0x12, 0x03, b'v', b'=', b'0']);
        assert_eq!(Message::decode(bytes.as_slice()).unwrap(), Message::offer("v=0".into()));
    }
}
