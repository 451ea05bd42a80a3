//! The `/webrtc` transport: dials `<relay addr>/p2p-circuit/webrtc/p2p/<peer>` by signalling
//! over the relayed connection this node has with `<peer>`, and answers the signalling streams of
//! peers that dial its own `/p2p-circuit/webrtc` address. It opens and accepts those streams
//! through libp2p-stream's [`Control`], since a transport has no streams of its own.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use futures::future::{self, BoxFuture, Either};
use futures::{FutureExt, StreamExt};
use libp2p::core::transport::{DialOpts, ListenerId, TransportError, TransportEvent};
use libp2p::{multiaddr::Protocol, webrtc_websys::Connection, Multiaddr, PeerId};
use libp2p_stream::{Control, IncomingStreams};
use send_wrapper::SendWrapper;

use super::error::WebRtcError;
use super::handshake;
use crate::net::webrtc::answering::{Answering, MAX_ANSWERING};
use crate::net::webrtc::{is_listen_addr, peer_of, DirectWebRtcConfig, SIGNALING_PROTOCOL};
use crate::rt;

type Connecting = BoxFuture<'static, Result<(PeerId, Connection), WebRtcError>>;

pub struct Transport {
    config: Arc<DirectWebRtcConfig>,
    control: Control,
    /// Signalling streams from peers that dial us; none when direct WebRTC is off.
    incoming: Option<IncomingStreams>,
    listeners: Vec<(ListenerId, Multiaddr)>,
    /// Dials being answered now, up to [`MAX_ANSWERING`].
    answering: Answering,
    events: VecDeque<TransportEvent<Connecting, WebRtcError>>,
    waker: Option<Waker>,
}

impl Transport {
    /// `control` must come from the swarm's libp2p-stream behaviour: the signalling runs over
    /// its streams.
    pub fn new(config: DirectWebRtcConfig, mut control: Control) -> Self {
        let incoming = config.enabled.then(|| control.accept(SIGNALING_PROTOCOL).ok()).flatten();
        Self {
            config: Arc::new(config),
            control,
            incoming,
            listeners: Vec::new(),
            answering: Answering::default(),
            events: VecDeque::new(),
            waker: None,
        }
    }

    fn push(&mut self, event: TransportEvent<Connecting, WebRtcError>) {
        self.events.push_back(event);
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }
}

/// `connecting` within the configured time, on the page's one thread.
fn bounded<F>(connecting: F, config: &DirectWebRtcConfig) -> Connecting
where
    F: Future<Output = Result<(PeerId, Connection), WebRtcError>> + 'static,
{
    let timeout = config.connect_timeout;
    SendWrapper::new(async move {
        match future::select(Box::pin(connecting), Box::pin(rt::sleep(timeout))).await {
            Either::Left((result, _)) => result,
            Either::Right(_) => Err(WebRtcError::TimedOut(timeout)),
        }
    })
    .boxed()
}

impl libp2p::core::Transport for Transport {
    type Output = (PeerId, Connection);
    type Error = WebRtcError;
    type ListenerUpgrade = Connecting;
    type Dial = Connecting;

    fn listen_on(
        &mut self,
        id: ListenerId,
        addr: Multiaddr,
    ) -> Result<(), TransportError<Self::Error>> {
        if self.incoming.is_none() || !is_listen_addr(&addr) {
            return Err(TransportError::MultiaddrNotSupported(addr));
        }
        self.listeners.push((id, addr.clone()));
        self.push(TransportEvent::NewAddress { listener_id: id, listen_addr: addr });
        Ok(())
    }

    fn remove_listener(&mut self, id: ListenerId) -> bool {
        let before = self.listeners.len();
        self.listeners.retain(|(listener, _)| *listener != id);
        let removed = self.listeners.len() < before;
        if removed {
            self.push(TransportEvent::ListenerClosed { listener_id: id, reason: Ok(()) });
        }
        removed
    }

    fn dial(
        &mut self,
        addr: Multiaddr,
        opts: DialOpts,
    ) -> Result<Self::Dial, TransportError<Self::Error>> {
        let peer = peer_of(&addr).filter(|_| self.config.enabled && opts.role.is_dialer());
        let Some(peer) = peer else {
            return Err(TransportError::MultiaddrNotSupported(addr));
        };
        let (control, config) = (self.control.clone(), self.config.clone());
        let connecting = async move { handshake::initiate(control, peer, &config).await };
        Ok(bounded(connecting, &self.config))
    }

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<TransportEvent<Self::ListenerUpgrade, Self::Error>> {
        if let Some(event) = self.events.pop_front() {
            return Poll::Ready(event);
        }
        while let Some(incoming) = self.incoming.as_mut() {
            let Poll::Ready(Some((peer, stream))) = incoming.poll_next_unpin(cx) else { break };
            // Not listening (no reservation yet, or given up): the stream is dropped and the
            // peer's dial fails, so it stays on the circuit.
            let Some((listener_id, local_addr)) = self.listeners.first().cloned() else { continue };
            let Some(answering) = self.answering.start() else {
                tracing::warn!(%peer, "refusing a direct WebRTC dial: {MAX_ANSWERING} being answered");
                continue;
            };
            let config = self.config.clone();
            let connecting = async move {
                let _answering = answering;
                handshake::respond(peer, stream, &config).await
            };
            // Through the relay the dial came by, as for a circuit. Identify sends it back as the
            // address it sees the peer at, and js-libp2p fails an identify whose address starts
            // with no IP or DNS name (a bare `/webrtc/p2p/<peer>`).
            let send_back_addr = local_addr.clone().with(Protocol::P2p(peer));
            return Poll::Ready(TransportEvent::Incoming {
                listener_id,
                upgrade: bounded(connecting, &self.config),
                local_addr,
                send_back_addr,
            });
        }
        self.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}
