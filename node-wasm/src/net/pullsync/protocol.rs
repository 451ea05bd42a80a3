//! Stream negotiation for pull-sync: which protocol names a stream may carry, and how a stream is
//! named between the behaviour and the connection handlers.

use std::convert::Infallible;
use std::future::{ready, Ready};

use libp2p::core::upgrade::{InboundUpgrade, OutboundUpgrade, UpgradeInfo};
use libp2p::{Stream, StreamProtocol};

use syncscope_proto::pullsync::Protocol;

fn stream_protocol(protocol: Protocol) -> StreamProtocol {
    StreamProtocol::new(protocol.name())
}

/// Negotiates one of pull-sync's protocols on a new stream.
#[derive(Debug, Clone)]
pub struct Upgrade {
    offered: Vec<Protocol>,
}

impl Upgrade {
    /// Accepts any pull-sync protocol on inbound streams.
    pub fn inbound() -> Self {
        Upgrade { offered: Protocol::ALL.to_vec() }
    }

    /// Opens a stream for exactly `protocol`.
    pub fn outbound(protocol: Protocol) -> Self {
        Upgrade { offered: vec![protocol] }
    }
}

impl UpgradeInfo for Upgrade {
    type Info = StreamProtocol;
    type InfoIter = std::iter::Map<std::vec::IntoIter<Protocol>, fn(Protocol) -> StreamProtocol>;

    fn protocol_info(&self) -> Self::InfoIter {
        self.offered.clone().into_iter().map(stream_protocol as fn(Protocol) -> StreamProtocol)
    }
}

/// The negotiated name is always one this upgrade offered, so it always maps back.
fn negotiated(stream: Stream, info: &StreamProtocol, offered: &[Protocol]) -> (Stream, Protocol) {
    let protocol = Protocol::from_name(info.as_ref()).unwrap_or(offered[0]);
    (stream, protocol)
}

impl InboundUpgrade<Stream> for Upgrade {
    type Output = (Stream, Protocol);
    type Error = Infallible;
    type Future = Ready<Result<Self::Output, Infallible>>;

    fn upgrade_inbound(self, stream: Stream, info: StreamProtocol) -> Self::Future {
        ready(Ok(negotiated(stream, &info, &self.offered)))
    }
}

impl OutboundUpgrade<Stream> for Upgrade {
    type Output = (Stream, Protocol);
    type Error = Infallible;
    type Future = Ready<Result<Self::Output, Infallible>>;

    fn upgrade_outbound(self, stream: Stream, info: StreamProtocol) -> Self::Future {
        ready(Ok(negotiated(stream, &info, &self.offered)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inbound_offers_every_protocol_and_outbound_one() {
        let names: Vec<String> =
            Upgrade::inbound().protocol_info().map(|p| p.as_ref().to_owned()).collect();
        assert_eq!(
            names,
            [Protocol::Cursors.name(), Protocol::Pullsync.name(), Protocol::PullsyncBatched.name()]
        );
        let out: Vec<StreamProtocol> =
            Upgrade::outbound(Protocol::Cursors).protocol_info().collect();
        assert_eq!(out, vec![StreamProtocol::new(Protocol::Cursors.name())]);
    }
}
