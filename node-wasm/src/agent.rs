//! What software a peer runs, as it announces itself in identify's agent string.
//!
//! The agent strings are written and read here and nowhere else: a syncscope node announces
//! `syncscope/VERSION (browser)` or `syncscope/VERSION (native)`, the relay
//! `syncscope-relay/VERSION`. Everyone else reads the [`PeerKind`] off the string with
//! [`PeerKind::of_agent`] instead of searching it.

/// The name a syncscope node puts before its version.
const NODE_AGENT: &str = "syncscope";
/// The name the relay puts before its version.
const RELAY_AGENT: &str = "syncscope-relay";
/// What every Bitswap protocol id starts with (`/ipfs/bitswap/1.2.0` and older).
const BITSWAP_PREFIX: &str = "/ipfs/bitswap";

/// What kind of peer is at the other end, read off its identify agent string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PeerKind {
    /// A syncscope node in a browser tab (wasm32).
    Browser,
    /// A native syncscope node, e.g. a seed or `syncscope-relay peer`.
    Native,
    /// The syncscope relay.
    Relay,
    /// A peer of the IPFS ecosystem (kubo, Helia, ...): not syncscope, but it speaks Bitswap.
    Ipfs,
    /// Anything else, or a peer whose agent string is not known yet.
    Other,
}

impl PeerKind {
    /// The kind of node this build is: a browser on wasm32, native elsewhere.
    pub const LOCAL: Self = if cfg!(target_arch = "wasm32") { Self::Browser } else { Self::Native };

    /// The kind a peer announcing `agent` is. Only the exact formats of [`PeerKind::agent`] count;
    /// anything else is [`PeerKind::Other`].
    pub fn of_agent(agent: &str) -> Self {
        let Some((name, rest)) = agent.split_once('/') else { return Self::Other };
        match name {
            RELAY_AGENT if is_version(rest) => Self::Relay,
            NODE_AGENT => match rest.split_once(' ') {
                Some((version, "(browser)")) if is_version(version) => Self::Browser,
                Some((version, "(native)")) if is_version(version) => Self::Native,
                _ => Self::Other,
            },
            _ => Self::Other,
        }
    }

    /// The kind of a peer by all its identify tells: its agent string, else [`PeerKind::Ipfs`] if
    /// it lists a Bitswap protocol.
    pub fn of_identify<P: AsRef<str>>(agent: &str, protocols: &[P]) -> Self {
        match Self::of_agent(agent) {
            Self::Other if protocols.iter().any(|p| p.as_ref().starts_with(BITSWAP_PREFIX)) => {
                Self::Ipfs
            }
            kind => kind,
        }
    }

    /// The agent string a peer of this kind announces, running `version`; `None` for
    /// [`PeerKind::Ipfs`] and [`PeerKind::Other`].
    pub fn agent(self, version: &str) -> Option<String> {
        Some(match self {
            Self::Relay => format!("{RELAY_AGENT}/{version}"),
            Self::Browser | Self::Native => format!("{NODE_AGENT}/{version} ({})", self.label()),
            Self::Ipfs | Self::Other => return None,
        })
    }

    /// The agent string of this build of the node.
    pub fn local_agent() -> String {
        Self::LOCAL.agent(env!("CARGO_PKG_VERSION")).unwrap_or_default()
    }

    /// A short lowercase name, shown in the UI and used in agent strings: `browser`, `native`,
    /// `relay`, `ipfs`, or `peer` for [`PeerKind::Other`].
    pub fn label(self) -> &'static str {
        match self {
            Self::Browser => "browser",
            Self::Native => "native",
            Self::Relay => "relay",
            Self::Ipfs => "ipfs",
            Self::Other => "peer",
        }
    }
}

/// A plausible version: non-empty, without spaces or slashes.
fn is_version(s: &str) -> bool {
    !s.is_empty() && !s.contains([' ', '/'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_the_agent_it_announces() {
        for kind in [PeerKind::Browser, PeerKind::Native, PeerKind::Relay] {
            let agent = kind.agent("0.1.0").unwrap();
            assert_eq!(PeerKind::of_agent(&agent), kind, "{agent}");
        }
        assert_eq!(PeerKind::Other.agent("0.1.0"), None);
        assert_eq!(PeerKind::of_agent(&PeerKind::local_agent()), PeerKind::LOCAL);
    }

    #[test]
    fn agents_classify_by_their_exact_format() {
        let cases = [
            ("syncscope/0.1.0 (browser)", PeerKind::Browser),
            ("syncscope/0.1.0 (native)", PeerKind::Native),
            ("syncscope/1.2.3-rc.1 (native)", PeerKind::Native),
            ("syncscope-relay/0.1.0", PeerKind::Relay),
            ("", PeerKind::Other),
            ("syncscope", PeerKind::Other),
            ("syncscope/0.1.0", PeerKind::Other),
            ("syncscope/0.1.0 (toaster)", PeerKind::Other),
            ("syncscope/ (browser)", PeerKind::Other),
            ("syncscope-relay/", PeerKind::Other),
            ("syncscope-relay/0.1.0 (browser)", PeerKind::Other),
            // A substring is not enough: the agent a peer chooses must match the format.
            ("kubo/0.30.0 (browser)", PeerKind::Other),
            ("rust-libp2p/0.57.1 syncscope/0.1.0 (native)", PeerKind::Other),
            ("syncscope/0.1.0 (browser) (native)", PeerKind::Other),
        ];
        for (agent, kind) in cases {
            assert_eq!(PeerKind::of_agent(agent), kind, "{agent:?}");
        }
    }

    #[test]
    fn a_foreign_peer_that_lists_bitswap_is_an_ipfs_peer() {
        let bitswap = ["/ipfs/id/1.0.0", "/ipfs/bitswap/1.2.0"];
        let no_bitswap = ["/ipfs/id/1.0.0", "/ipfs/ping/1.0.0"];
        let cases = [
            ("kubo/0.22.0/", &bitswap[..], PeerKind::Ipfs),
            ("helia/7.0.0 js-libp2p/3.0.0 UserAgent=v20.20.2", &bitswap[..], PeerKind::Ipfs),
            ("kubo/0.22.0/", &no_bitswap[..], PeerKind::Other),
            ("", &bitswap[..], PeerKind::Ipfs),
            // A syncscope node speaks Bitswap too, and stays what its agent says.
            ("syncscope/0.1.0 (native)", &bitswap[..], PeerKind::Native),
        ];
        for (agent, protocols, kind) in cases {
            assert_eq!(PeerKind::of_identify(agent, protocols), kind, "{agent:?} {protocols:?}");
        }
    }

    #[test]
    fn this_build_is_native_off_wasm32() {
        assert_eq!(PeerKind::LOCAL == PeerKind::Browser, cfg!(target_arch = "wasm32"));
    }
}
