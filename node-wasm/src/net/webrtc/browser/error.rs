use std::io;
use std::time::Duration;

use js_sys::Reflect;
use libp2p_stream::OpenStreamError;
use syncscope_proto::framing::FrameError;
use syncscope_proto::webrtc_signaling::SignalingError;
use wasm_bindgen::JsValue;

use crate::net::framed::ReadError;

/// Why a direct WebRTC connection was not made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebRtcError {
    #[error("cannot open the signalling stream: {0}")]
    Open(#[from] OpenStreamError),
    #[error("the signalling stream failed: {0}")]
    Io(#[from] io::Error),
    #[error("bad signalling message: {0}")]
    Read(#[from] ReadError<FrameError>),
    #[error("cannot send a signalling message: {0}")]
    Encode(#[from] FrameError),
    #[error(transparent)]
    Signaling(#[from] SignalingError),
    #[error("the peer closed the signalling stream before sending its session description")]
    Ended,
    #[error("the browser cannot {what} ({exception})")]
    Browser { what: &'static str, exception: &'static str },
    #[error("ICE found no path between the two peers (the connection {0})")]
    Failed(&'static str),
    #[error("no direct connection after {0:?}")]
    TimedOut(Duration),
}

impl WebRtcError {
    /// A failed browser call, with the name of the exception it threw.
    pub(super) fn browser(what: &'static str) -> impl FnOnce(JsValue) -> Self {
        move |thrown| Self::Browser { what, exception: exception_name(&thrown) }
    }
}

/// The exceptions WebRTC's calls and `JSON.parse` throw, by name (W3C WebRTC 1.0, WebIDL).
const EXCEPTIONS: [&str; 9] = [
    "InvalidStateError",
    "InvalidAccessError",
    "InvalidModificationError",
    "OperationError",
    "NotSupportedError",
    "SyntaxError",
    "TypeError",
    "RangeError",
    "DataError",
];

fn exception_name(thrown: &JsValue) -> &'static str {
    let name = Reflect::get(thrown, &JsValue::from_str("name")).ok().and_then(|n| n.as_string());
    name.and_then(|n| EXCEPTIONS.into_iter().find(|known| *known == n))
        .unwrap_or("an exception of another kind")
}
