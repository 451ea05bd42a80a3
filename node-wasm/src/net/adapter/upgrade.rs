//! Stream negotiation for any protocol with a fixed set of names: a stream is offered (or accepted)
//! on a list of names, and yields the stream with the name multistream-select settled on.

use std::convert::Infallible;
use std::future::{ready, Ready};
use std::sync::Arc;

use libp2p::core::upgrade::{InboundUpgrade, OutboundUpgrade, UpgradeInfo};
use libp2p::Stream;

/// One of a protocol's names, as the type the protocol's code works with.
pub trait ProtocolId: Copy + Send + Sync + 'static {
    fn name(self) -> &'static str;
}

impl ProtocolId for syncscope_proto::bitswap::ProtocolVersion {
    fn name(self) -> &'static str {
        self.protocol_id()
    }
}

impl ProtocolId for syncscope_proto::pullsync::Protocol {
    fn name(self) -> &'static str {
        syncscope_proto::pullsync::Protocol::name(self)
    }
}

/// A protocol id as multistream-select sees it: a name that remembers what it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Name<P>(pub P);

impl<P: ProtocolId> AsRef<str> for Name<P> {
    fn as_ref(&self) -> &str {
        self.0.name()
    }
}

/// Negotiates a stream on any of its protocols, in order of preference.
#[derive(Debug)]
pub struct Upgrade<P> {
    protocols: Arc<[P]>,
}

impl<P> Clone for Upgrade<P> {
    fn clone(&self) -> Self {
        Self { protocols: self.protocols.clone() }
    }
}

impl<P: ProtocolId> Upgrade<P> {
    pub fn new(protocols: Arc<[P]>) -> Self {
        Self { protocols }
    }
}

impl<P: ProtocolId> UpgradeInfo for Upgrade<P> {
    type Info = Name<P>;
    type InfoIter = std::vec::IntoIter<Name<P>>;

    fn protocol_info(&self) -> Self::InfoIter {
        self.protocols.iter().map(|p| Name(*p)).collect::<Vec<_>>().into_iter()
    }
}

impl<P: ProtocolId> InboundUpgrade<Stream> for Upgrade<P> {
    type Output = (Stream, P);
    type Error = Infallible;
    type Future = Ready<Result<Self::Output, Infallible>>;

    fn upgrade_inbound(self, stream: Stream, name: Name<P>) -> Self::Future {
        ready(Ok((stream, name.0)))
    }
}

impl<P: ProtocolId> OutboundUpgrade<Stream> for Upgrade<P> {
    type Output = (Stream, P);
    type Error = Infallible;
    type Future = Ready<Result<Self::Output, Infallible>>;

    fn upgrade_outbound(self, stream: Stream, name: Name<P>) -> Self::Future {
        ready(Ok((stream, name.0)))
    }
}

#[cfg(test)]
mod tests {
    use syncscope_proto::bitswap::ProtocolVersion;
    use syncscope_proto::pullsync::Protocol;

    use super::*;

    fn names<P: ProtocolId>(upgrade: &Upgrade<P>) -> Vec<String> {
        upgrade.protocol_info().map(|n| n.as_ref().to_owned()).collect()
    }

    #[test]
    fn names_are_offered_in_the_given_order() {
        let bitswap = Upgrade::new(ProtocolVersion::ALL.into());
        assert_eq!(names(&bitswap), ProtocolVersion::ALL.map(ProtocolVersion::protocol_id));
        let pullsync = Upgrade::new(Protocol::ALL.into());
        assert_eq!(names(&pullsync), Protocol::ALL.map(Protocol::name));
    }

    #[test]
    fn a_restricted_upgrade_offers_only_its_protocols() {
        let upgrade = Upgrade::new([ProtocolVersion::V1_1_0].into());
        let offered: Vec<Name<ProtocolVersion>> = upgrade.protocol_info().collect();
        assert_eq!(offered, [Name(ProtocolVersion::V1_1_0)]);
    }
}
