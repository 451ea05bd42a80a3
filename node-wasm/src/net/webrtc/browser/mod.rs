//! The `/webrtc` transport in the browser: the signalling's two ends ([`handshake`]) over the
//! browser's `RTCPeerConnection` ([`peer_connection`]), behind a libp2p [`Transport`].

mod error;
mod handshake;
mod peer_connection;
mod transport;

pub use error::WebRtcError;
pub use transport::Transport;
