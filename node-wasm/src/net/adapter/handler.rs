//! The one `ConnectionHandler`: what every protocol's connection does alike (negotiation, the
//! inbound-stream cap, keep-alive while the node is busy, whether the remote speaks the protocol),
//! around a protocol's [`Streams`], which does that protocol's reads and writes.

use std::collections::HashSet;
use std::convert::Infallible;
use std::fmt::Debug;
use std::sync::Arc;
use std::task::{Context, Poll};

use libp2p::swarm::handler::{
    ConnectionEvent, DialUpgradeError, FullyNegotiatedInbound, FullyNegotiatedOutbound,
    ProtocolsChange,
};
use libp2p::swarm::{
    ConnectionHandler, ConnectionHandlerEvent, StreamUpgradeError, SubstreamProtocol,
};
use libp2p::{Stream, StreamProtocol};

use super::upgrade::{ProtocolId, Upgrade};

/// One connection's streams of one protocol: the part of a connection handler that is the
/// protocol's own.
pub trait Streams: Send + 'static {
    type Protocol: ProtocolId;
    /// What the handler keeps about an outbound stream while it is negotiated.
    type OpenInfo: Send + 'static;
    type Command: Debug + Send + 'static;
    type Event: Debug + Send + 'static;

    /// The names inbound streams are accepted on.
    fn inbound_protocols(&self) -> Arc<[Self::Protocol]>;
    /// Inbound streams open now, counted against the adapter's cap.
    fn inbound_streams(&self) -> usize;
    fn on_command(&mut self, command: Self::Command);
    fn on_inbound(&mut self, stream: Stream, protocol: Self::Protocol);
    fn on_outbound(&mut self, stream: Stream, protocol: Self::Protocol, info: Self::OpenInfo);
    fn on_outbound_failed(&mut self, info: Self::OpenInfo, error: StreamUpgradeError<Infallible>);
    /// Whether the connection must stay open; `busy` says whether the node wants its
    /// connections kept meanwhile.
    fn keep_alive(&self, busy: bool) -> bool;
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<StreamsEvent<Self>>;
}

/// What a protocol's streams ask of the handler.
pub enum StreamsEvent<S: Streams + ?Sized> {
    /// Open an outbound stream on the first of `protocols` the peer speaks.
    Open { protocols: Arc<[S::Protocol]>, info: S::OpenInfo },
    /// Tell the behaviour.
    Report(S::Event),
}

/// What the behaviour asks of a connection.
#[derive(Debug)]
pub enum Command<C> {
    Streams(C),
    /// Whether the node is busy (fetching, say): keep connections that carry the protocol open.
    Busy(bool),
}

/// What a connection reports.
#[derive(Debug)]
pub enum HandlerEvent<E> {
    Streams(E),
    /// An inbound stream beyond the cap was refused (reset).
    InboundRefused,
    /// Whether the remote speaks the protocol changed: `false` once its identify lists none of
    /// the protocol's names, or once negotiating an outbound stream failed (for good, on this
    /// connection); `true` again if a later identify lists one, before any negotiation failed.
    RemoteSupport(bool),
}

pub struct Handler<S> {
    streams: S,
    max_inbound_streams: usize,
    busy: bool,
    /// Inbound streams refused and not reported yet.
    refused: usize,
    /// The protocols the remote lists in identify, once it has.
    remote_protocols: HashSet<StreamProtocol>,
    /// An outbound stream of this protocol failed to negotiate: the remote does not speak it, and
    /// asking again on this connection would only fail again.
    negotiation_failed: bool,
    /// What the behaviour was last told of the remote's support, and what it is to be told.
    support: Support,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Support {
    told: bool,
    now: bool,
}

impl<S: Streams> Handler<S> {
    pub fn new(streams: S, max_inbound_streams: usize, busy: bool) -> Self {
        Self {
            streams,
            max_inbound_streams,
            busy,
            refused: 0,
            remote_protocols: HashSet::new(),
            negotiation_failed: false,
            // Until identify says otherwise, a remote is taken to speak the protocol.
            support: Support { told: true, now: true },
        }
    }

    fn remote_protocols_changed(&mut self, change: ProtocolsChange) {
        match change {
            ProtocolsChange::Added(added) => self.remote_protocols.extend(added.cloned()),
            ProtocolsChange::Removed(removed) => {
                for protocol in removed {
                    self.remote_protocols.remove(protocol);
                }
            }
        }
        let ours = self.streams.inbound_protocols();
        let listed =
            ours.iter().any(|p| self.remote_protocols.iter().any(|r| r.as_ref() == p.name()));
        self.support.now = listed && !self.negotiation_failed;
    }

    fn outbound_failed(&mut self, info: S::OpenInfo, error: StreamUpgradeError<Infallible>) {
        if matches!(error, StreamUpgradeError::NegotiationFailed) {
            self.negotiation_failed = true;
            self.support.now = false;
        }
        self.streams.on_outbound_failed(info, error);
    }

    fn accept(&mut self, stream: Stream, protocol: S::Protocol) {
        if self.streams.inbound_streams() >= self.max_inbound_streams {
            tracing::debug!(protocol = protocol.name(), "inbound stream refused: too many open");
            // Dropping a stream that is still open resets it.
            drop(stream);
            self.refused += 1;
            return;
        }
        self.streams.on_inbound(stream, protocol);
    }
}

impl<S: Streams> ConnectionHandler for Handler<S> {
    type FromBehaviour = Command<S::Command>;
    type ToBehaviour = HandlerEvent<S::Event>;
    type InboundProtocol = Upgrade<S::Protocol>;
    type OutboundProtocol = Upgrade<S::Protocol>;
    type InboundOpenInfo = ();
    type OutboundOpenInfo = S::OpenInfo;

    fn listen_protocol(&self) -> SubstreamProtocol<Upgrade<S::Protocol>, ()> {
        SubstreamProtocol::new(Upgrade::new(self.streams.inbound_protocols()), ())
    }

    fn connection_keep_alive(&self) -> bool {
        self.streams.keep_alive(self.busy)
    }

    fn on_behaviour_event(&mut self, command: Command<S::Command>) {
        match command {
            Command::Streams(command) => self.streams.on_command(command),
            Command::Busy(busy) => self.busy = busy,
        }
    }

    fn on_connection_event(
        &mut self,
        event: ConnectionEvent<Upgrade<S::Protocol>, Upgrade<S::Protocol>, (), S::OpenInfo>,
    ) {
        match event {
            ConnectionEvent::FullyNegotiatedInbound(FullyNegotiatedInbound {
                protocol: (stream, protocol),
                ..
            }) => self.accept(stream, protocol),
            ConnectionEvent::FullyNegotiatedOutbound(FullyNegotiatedOutbound {
                protocol: (stream, protocol),
                info,
            }) => self.streams.on_outbound(stream, protocol, info),
            ConnectionEvent::DialUpgradeError(DialUpgradeError { info, error }) => {
                self.outbound_failed(info, error)
            }
            ConnectionEvent::RemoteProtocolsChange(change) => self.remote_protocols_changed(change),
            _ => {}
        }
    }

    fn poll(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<ConnectionHandlerEvent<Upgrade<S::Protocol>, S::OpenInfo, HandlerEvent<S::Event>>>
    {
        if self.refused > 0 {
            self.refused -= 1;
            return Poll::Ready(ConnectionHandlerEvent::NotifyBehaviour(
                HandlerEvent::InboundRefused,
            ));
        }
        if self.support.told != self.support.now {
            self.support.told = self.support.now;
            return Poll::Ready(ConnectionHandlerEvent::NotifyBehaviour(
                HandlerEvent::RemoteSupport(self.support.now),
            ));
        }
        self.streams.poll(cx).map(|event| match event {
            StreamsEvent::Open { protocols, info } => {
                ConnectionHandlerEvent::OutboundSubstreamRequest {
                    protocol: SubstreamProtocol::new(Upgrade::new(protocols), info),
                }
            }
            StreamsEvent::Report(event) => {
                ConnectionHandlerEvent::NotifyBehaviour(HandlerEvent::Streams(event))
            }
        })
    }
}
