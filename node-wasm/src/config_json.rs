//! `/config.json`: what the relay tells the page it serves. The relay serialises [`PageConfig`]
//! and the UI deserialises it, so the two cannot drift apart.
//!
//! ```json
//! {
//!   "peer_id": "12D3KooW...",
//!   "addrs": {
//!     "webrtc-direct": ["/ip4/127.0.0.1/udp/9002/webrtc-direct/certhash/uEi.../p2p/12D3KooW..."],
//!     "ws": ["/ip4/127.0.0.1/tcp/9001/ws/p2p/12D3KooW..."],
//!     "tcp": ["/ip4/127.0.0.1/tcp/9003/p2p/12D3KooW..."]
//!   },
//!   "room": "lobby",
//!   "ice_servers": ["stun:stun.example.org:3478"]
//! }
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a page needs to join: who the relay is, how to dial it, and the room to join.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageConfig {
    /// The relay's peer id, base58 (`12D3KooW...`); empty while the relay does not know it yet.
    pub peer_id: String,
    /// The relay's dialable multiaddrs per transport, each ending in `/p2p/<peer_id>`. A transport
    /// the relay does not listen on is absent.
    pub addrs: BTreeMap<RelayTransport, Vec<String>>,
    /// The room a page joins unless its URL names another (`?room=`).
    pub room: String,
    /// STUN or TURN servers for direct WebRTC between browsers; none on one machine. Absent
    /// from older relays' configs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ice_servers: Vec<String>,
}

/// A transport the relay listens on, named as in `/config.json` and the page's `?transport=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum RelayTransport {
    #[serde(rename = "webrtc-direct")]
    WebRtcDirect,
    #[serde(rename = "ws")]
    WebSocket,
    #[serde(rename = "tcp")]
    Tcp,
}

impl RelayTransport {
    pub const ALL: [Self; 3] = [Self::WebRtcDirect, Self::WebSocket, Self::Tcp];

    /// The name in `/config.json`: `webrtc-direct`, `ws` or `tcp`.
    pub fn name(self) -> &'static str {
        match self {
            Self::WebRtcDirect => "webrtc-direct",
            Self::WebSocket => "ws",
            Self::Tcp => "tcp",
        }
    }
}

impl fmt::Display for RelayTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A transport name that is none of [`RelayTransport::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown transport {0:?}: expected webrtc-direct, ws or tcp")]
pub struct UnknownTransport(pub String);

impl FromStr for RelayTransport {
    type Err = UnknownTransport;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|t| t.name() == s).ok_or_else(|| UnknownTransport(s.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_wire_format() {
        let wire = r#"{"peer_id":"12D3KooWRelay","addrs":{"webrtc-direct":["/ip4/127.0.0.1/udp/9002/webrtc-direct"],"ws":["/ip4/127.0.0.1/tcp/9001/ws","/ip6/::1/tcp/9001/ws"],"tcp":["/ip4/127.0.0.1/tcp/9003"]},"room":"lobby"}"#;
        let config: PageConfig = serde_json::from_str(wire).unwrap();
        assert_eq!(config.peer_id, "12D3KooWRelay");
        assert_eq!(config.room, "lobby");
        assert_eq!(config.addrs[&RelayTransport::WebSocket].len(), 2);
        assert_eq!(
            config.addrs[&RelayTransport::WebRtcDirect],
            ["/ip4/127.0.0.1/udp/9002/webrtc-direct"]
        );
        assert_eq!(serde_json::to_string(&config).unwrap(), wire);
        let again: PageConfig =
            serde_json::from_str(&serde_json::to_string(&config).unwrap()).unwrap();
        assert_eq!(again, config);
    }

    #[test]
    fn a_relay_without_listeners_yet_is_still_valid() {
        let config = PageConfig { room: "r".into(), ..PageConfig::default() };
        let wire = serde_json::to_string(&config).unwrap();
        assert_eq!(wire, r#"{"peer_id":"","addrs":{},"room":"r"}"#);
        assert_eq!(serde_json::from_str::<PageConfig>(&wire).unwrap(), config);
    }

    #[test]
    fn ice_servers_travel_when_the_relay_names_some() {
        let config = PageConfig {
            room: "r".into(),
            ice_servers: vec!["stun:stun.example.org:3478".into()],
            ..PageConfig::default()
        };
        let wire = serde_json::to_string(&config).unwrap();
        assert!(wire.ends_with(r#""ice_servers":["stun:stun.example.org:3478"]}"#), "{wire}");
        assert_eq!(serde_json::from_str::<PageConfig>(&wire).unwrap(), config);
    }

    #[test]
    fn transport_names_agree_between_serde_and_from_str() {
        for t in RelayTransport::ALL {
            assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{}\"", t.name()));
            assert_eq!(t.name().parse::<RelayTransport>(), Ok(t));
        }
        assert_eq!("wss".parse::<RelayTransport>(), Err(UnknownTransport("wss".into())));
        assert!(serde_json::from_str::<PageConfig>(
            r#"{"peer_id":"","addrs":{"quic":[]},"room":"r"}"#
        )
        .is_err());
    }
}
