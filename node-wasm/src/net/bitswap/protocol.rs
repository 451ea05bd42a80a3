//! Bitswap's protocol names and stream negotiation.
//!
//! Outbound streams offer the configured versions newest first, so multistream-select settles on
//! the highest version both sides speak; inbound streams accept every configured version (all four
//! by default, as boxo does). The negotiated name is the version the stream's messages are
//! encoded for.

use std::convert::Infallible;
use std::future::{ready, Ready};
use std::sync::Arc;

use libp2p::core::upgrade::{InboundUpgrade, OutboundUpgrade, UpgradeInfo};
use libp2p::Stream;

use syncscope_proto::bitswap::ProtocolVersion;

/// A protocol name that remembers which version it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtocolName(pub ProtocolVersion);

impl AsRef<str> for ProtocolName {
    fn as_ref(&self) -> &str {
        self.0.protocol_id()
    }
}

/// Negotiates a Bitswap stream on any of `versions`; yields the stream and the version chosen.
#[derive(Debug, Clone)]
pub struct Upgrade {
    versions: Arc<[ProtocolVersion]>,
}

impl Upgrade {
    /// `versions` in order of preference, newest first.
    pub fn new(versions: Arc<[ProtocolVersion]>) -> Self {
        Self { versions }
    }
}

impl UpgradeInfo for Upgrade {
    type Info = ProtocolName;
    type InfoIter = std::vec::IntoIter<ProtocolName>;

    fn protocol_info(&self) -> Self::InfoIter {
        self.versions.iter().map(|v| ProtocolName(*v)).collect::<Vec<_>>().into_iter()
    }
}

impl InboundUpgrade<Stream> for Upgrade {
    type Output = (Stream, ProtocolVersion);
    type Error = Infallible;
    type Future = Ready<Result<Self::Output, Infallible>>;

    fn upgrade_inbound(self, stream: Stream, name: ProtocolName) -> Self::Future {
        ready(Ok((stream, name.0)))
    }
}

impl OutboundUpgrade<Stream> for Upgrade {
    type Output = (Stream, ProtocolVersion);
    type Error = Infallible;
    type Future = Ready<Result<Self::Output, Infallible>>;

    fn upgrade_outbound(self, stream: Stream, name: ProtocolName) -> Self::Future {
        ready(Ok((stream, name.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_versions_ids_newest_first() {
        let upgrade = Upgrade::new(ProtocolVersion::ALL.into());
        let names: Vec<String> = upgrade.protocol_info().map(|n| n.as_ref().to_owned()).collect();
        assert_eq!(names, ProtocolVersion::ALL.map(ProtocolVersion::protocol_id));
    }

    #[test]
    fn a_restricted_upgrade_offers_only_its_versions() {
        let upgrade = Upgrade::new([ProtocolVersion::V1_1_0].into());
        let names: Vec<ProtocolName> = upgrade.protocol_info().collect();
        assert_eq!(names, [ProtocolName(ProtocolVersion::V1_1_0)]);
    }
}
