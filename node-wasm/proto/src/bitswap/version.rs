//! The four Bitswap protocol ids and what a message may carry on each.

/// A negotiated Bitswap protocol version.
///
/// Ordered oldest first, so `version >= ProtocolVersion::V1_2_0` asks for HAVE/DONT_HAVE support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// Bare `/ipfs/bitswap`: accepted by boxo, carries what 1.0.0 carries.
    Legacy,
    /// `/ipfs/bitswap/1.0.0`: blocks as raw bytes (CIDv0 implied), want-block and cancel only.
    V1_0_0,
    /// `/ipfs/bitswap/1.1.0`: blocks with a CID prefix, want-block and cancel only.
    V1_1_0,
    /// `/ipfs/bitswap/1.2.0`: adds want-have, HAVE/DONT_HAVE presences and pending bytes.
    V1_2_0,
}

impl ProtocolVersion {
    /// Every version, newest first: the order to offer them in during negotiation.
    pub const ALL: [ProtocolVersion; 4] = [Self::V1_2_0, Self::V1_1_0, Self::V1_0_0, Self::Legacy];

    /// The libp2p protocol id.
    pub const fn protocol_id(self) -> &'static str {
        match self {
            Self::Legacy => "/ipfs/bitswap",
            Self::V1_0_0 => "/ipfs/bitswap/1.0.0",
            Self::V1_1_0 => "/ipfs/bitswap/1.1.0",
            Self::V1_2_0 => "/ipfs/bitswap/1.2.0",
        }
    }

    /// Parses a protocol id; `None` for anything that is not Bitswap.
    pub fn from_protocol_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.protocol_id() == id)
    }

    /// Whether want-have entries, HAVE/DONT_HAVE presences and `pendingBytes` exist.
    pub fn supports_have(self) -> bool {
        self >= Self::V1_2_0
    }

    /// Whether blocks travel with a CID prefix (1.1.0+) rather than as raw CIDv0 data.
    pub fn supports_block_prefix(self) -> bool {
        self >= Self::V1_1_0
    }
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.protocol_id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_ids_round_trip() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::from_protocol_id(v.protocol_id()), Some(v));
        }
        assert_eq!(ProtocolVersion::from_protocol_id("/ipfs/bitswap/1.3.0"), None);
    }

    #[test]
    fn capabilities_follow_the_spec() {
        assert!(ProtocolVersion::V1_2_0.supports_have());
        assert!(!ProtocolVersion::V1_1_0.supports_have());
        assert!(ProtocolVersion::V1_1_0.supports_block_prefix());
        assert!(!ProtocolVersion::V1_0_0.supports_block_prefix());
        assert!(!ProtocolVersion::Legacy.supports_block_prefix());
    }
}
