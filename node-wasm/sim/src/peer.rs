//! One adapter for every core: a [`Peer`] is a sans-IO [`Core`] plus the [`App`] that handles its
//! events (a store, a fetch plan), driven on the [`Network`](crate::Network) in the order the
//! core contract gives, exactly as the libp2p glue drives it.

use syncscope_proto::Core;
use web_time::Instant;

use crate::{NodeId, Outgoing, SimNode};

/// How a core's transmits cross the simulated wire and arrive as another core's input: a
/// perfect wire, in order, nothing lost.
pub trait Wire: Core<Peer = NodeId> {
    /// What the network carries.
    type Message;

    /// The transmit as the network carries it, with its size on the wire.
    fn send(transmit: Self::Transmit) -> Outgoing<Self::Message>;

    /// The receiving core's input for a message.
    fn receive(msg: Self::Message) -> Self::Input;

    /// A message sent with `report_sent` has left the sender's link.
    fn handle_sent(&mut self, _now: Instant, _to: NodeId) {}

    /// Bytes of a message from `from` are arriving; it is not complete yet.
    fn handle_progress(&mut self, _now: Instant, _from: NodeId) {}

    /// The input that tells one end that the stream `msg` travelled on was reset while `msg` was
    /// in transit ([`Network::reset_streams`](crate::Network::reset_streams)); `sent` if that end
    /// sent it. `None`, the default: the wire has no streams, and the message is just lost.
    fn reset(_msg: &Self::Message, _sent: bool) -> Option<Self::Input> {
        None
    }
}

/// What a simulated node does with its core's events, standing in for the node's store tasks.
pub trait App<C: Core> {
    /// Handles one event; may call commands on the core (store what arrived, answer a load).
    fn on_event(&mut self, core: &mut C, now: Instant, event: C::Event);

    /// Work of the app's own that was due (a slow store's reads), before the core's timeout.
    fn handle_timeout(&mut self, _core: &mut C, _now: Instant) {}

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
}

/// A core and its app as one node of the simulated network.
pub struct Peer<C, A> {
    pub core: C,
    pub app: A,
}

impl<C: Wire, A: App<C>> Peer<C, A> {
    pub fn new(core: C, app: A) -> Self {
        Peer { core, app }
    }

    /// Hands every pending event to the app.
    pub fn pump(&mut self, now: Instant) {
        while let Some(event) = self.core.poll_event() {
            self.app.on_event(&mut self.core, now, event);
        }
    }
}

impl<C: Wire, A: App<C>> SimNode for Peer<C, A> {
    type Message = C::Message;

    fn handle_message(&mut self, now: Instant, from: NodeId, msg: C::Message) {
        self.core.handle_input(now, from, C::receive(msg));
        self.pump(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.app.handle_timeout(&mut self.core, now);
        self.core.handle_timeout(now);
        self.pump(now);
    }

    fn handle_sent(&mut self, now: Instant, to: NodeId) {
        self.core.handle_sent(now, to);
        self.pump(now);
    }

    fn handle_progress(&mut self, now: Instant, from: NodeId) {
        self.core.handle_progress(now, from);
    }

    fn handle_disconnected(&mut self, now: Instant, peer: NodeId) {
        self.core.peer_disconnected(now, peer);
        self.pump(now);
    }

    fn handle_reset(&mut self, now: Instant, peer: NodeId, msg: &C::Message, sent: bool) {
        if let Some(input) = C::reset(msg, sent) {
            self.core.handle_input(now, peer, input);
            self.pump(now);
        }
    }

    /// Events first, so that what they lead to (a store's answer, the next step of a plan) goes
    /// out with this transmit's batch.
    fn poll_transmit(&mut self, now: Instant) -> Option<Outgoing<C::Message>> {
        self.pump(now);
        self.core.poll_transmit(now).map(C::send)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        [self.core.poll_timeout(), self.app.poll_timeout()].into_iter().flatten().min()
    }
}
