//! An `RTCPeerConnection` for the signalling to drive: its ICE candidates and state changes as
//! streams, its promises as futures, its exceptions as [`WebRtcError`]s.

use futures::channel::{mpsc, oneshot};
use js_sys::{Array, Reflect, JSON};
use wasm_bindgen::{closure::Closure, JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Event, RtcConfiguration, RtcDataChannel, RtcDataChannelState, RtcIceCandidateInit,
    RtcIceServer, RtcIceTransportPolicy, RtcPeerConnection, RtcPeerConnectionIceEvent,
    RtcPeerConnectionState, RtcSdpType, RtcSessionDescriptionInit,
};

use super::error::WebRtcError;
use crate::net::webrtc::DirectWebRtcConfig;

pub(super) struct PeerConnection {
    inner: RtcPeerConnection,
    /// Local candidates to send, each as the JSON of `RTCIceCandidate.toJSON()`.
    pub candidates: mpsc::UnboundedReceiver<String>,
    pub states: mpsc::UnboundedReceiver<RtcPeerConnectionState>,
    _on_candidate: Closure<dyn FnMut(RtcPeerConnectionIceEvent)>,
    _on_state: Closure<dyn FnMut(Event)>,
}

impl PeerConnection {
    pub fn new(config: &DirectWebRtcConfig) -> Result<Self, WebRtcError> {
        let inner = RtcPeerConnection::new_with_configuration(&rtc_configuration(config))
            .map_err(WebRtcError::browser("create a peer connection"))?;
        let (candidate_tx, candidates) = mpsc::unbounded();
        let on_candidate = Closure::new(move |event: RtcPeerConnectionIceEvent| {
            // No candidate, or an empty one, ends a generation: js-libp2p sends nothing for it.
            let Some(candidate) = event.candidate().filter(|c| !c.candidate().is_empty()) else {
                return;
            };
            if let Some(json) =
                JSON::stringify(&candidate.to_json()).ok().and_then(|j| j.as_string())
            {
                let _ = candidate_tx.unbounded_send(json);
            }
        });
        inner.set_onicecandidate(Some(on_candidate.as_ref().unchecked_ref()));
        let (state_tx, states) = mpsc::unbounded();
        let watched = inner.clone();
        let on_state = Closure::new(move |_: Event| {
            let _ = state_tx.unbounded_send(watched.connection_state());
        });
        inner.set_onconnectionstatechange(Some(on_state.as_ref().unchecked_ref()));
        Ok(Self { inner, candidates, states, _on_candidate: on_candidate, _on_state: on_state })
    }

    pub fn inner(&self) -> &RtcPeerConnection {
        &self.inner
    }

    pub fn state(&self) -> RtcPeerConnectionState {
        self.inner.connection_state()
    }

    pub async fn create_offer(&self) -> Result<String, WebRtcError> {
        sdp_of(JsFuture::from(self.inner.create_offer()).await, "create an SDP offer")
    }

    pub async fn create_answer(&self) -> Result<String, WebRtcError> {
        sdp_of(JsFuture::from(self.inner.create_answer()).await, "create an SDP answer")
    }

    pub async fn set_local(&self, kind: RtcSdpType, sdp: &str) -> Result<(), WebRtcError> {
        let promise = self.inner.set_local_description(&description(kind, sdp));
        JsFuture::from(promise).await.map_err(WebRtcError::browser("take its own SDP"))?;
        Ok(())
    }

    pub async fn set_remote(&self, kind: RtcSdpType, sdp: &str) -> Result<(), WebRtcError> {
        let promise = self.inner.set_remote_description(&description(kind, sdp));
        JsFuture::from(promise).await.map_err(WebRtcError::browser("take the peer's SDP"))?;
        Ok(())
    }

    /// `json`: an `RTCIceCandidateInit` as the peer sent it.
    pub async fn add_candidate(&self, json: &str) -> Result<(), WebRtcError> {
        let init: RtcIceCandidateInit = JSON::parse(json)
            .map_err(WebRtcError::browser("read the peer's ICE candidate"))?
            .unchecked_into();
        let promise = self.inner.add_ice_candidate_with_opt_rtc_ice_candidate_init(Some(&init));
        JsFuture::from(promise)
            .await
            .map_err(WebRtcError::browser("add the peer's ICE candidate"))?;
        Ok(())
    }
}

impl Drop for PeerConnection {
    /// The handlers' closures go with this; the peer connection may live on in a libp2p
    /// connection, and must not call them.
    fn drop(&mut self) {
        self.inner.set_onicecandidate(None);
        self.inner.set_onconnectionstatechange(None);
    }
}

/// Closes `channel` once it has opened, and returns once it is closed. Until then the browser may
/// give its stream id to a new channel, which the remote, not yet past the close, would take for
/// the old one (js-libp2p waits alike).
pub(super) async fn close_channel(channel: &RtcDataChannel) {
    if channel.ready_state() == RtcDataChannelState::Connecting {
        opened_or_closed(channel).await;
    }
    channel.close();
    if channel.ready_state() != RtcDataChannelState::Closed {
        opened_or_closed(channel).await;
    }
}

async fn opened_or_closed(channel: &RtcDataChannel) {
    let (tx, rx) = oneshot::channel();
    let mut tx = Some(tx);
    let on_event = Closure::<dyn FnMut(Event)>::new(move |_: Event| {
        if let Some(tx) = tx.take() {
            let _ = tx.send(());
        }
    });
    channel.set_onopen(Some(on_event.as_ref().unchecked_ref()));
    channel.set_onclose(Some(on_event.as_ref().unchecked_ref()));
    // Detached however this ends, timed out included, before the closure goes.
    let _detach = Detach(channel);
    let _ = rx.await;
}

struct Detach<'a>(&'a RtcDataChannel);

impl Drop for Detach<'_> {
    fn drop(&mut self) {
        self.0.set_onopen(None);
        self.0.set_onclose(None);
    }
}

fn rtc_configuration(config: &DirectWebRtcConfig) -> RtcConfiguration {
    let rtc = RtcConfiguration::new();
    let servers = Array::new();
    for url in &config.ice_servers {
        let server = RtcIceServer::new();
        server.set_urls(&JsValue::from_str(url));
        servers.push(&server);
    }
    rtc.set_ice_servers(&servers);
    if config.relay_candidates_only {
        rtc.set_ice_transport_policy(RtcIceTransportPolicy::Relay);
    }
    rtc
}

fn description(kind: RtcSdpType, sdp: &str) -> RtcSessionDescriptionInit {
    let init = RtcSessionDescriptionInit::new(kind);
    init.set_sdp(sdp);
    init
}

fn sdp_of(created: Result<JsValue, JsValue>, what: &'static str) -> Result<String, WebRtcError> {
    let description = created.map_err(WebRtcError::browser(what))?;
    Reflect::get(&description, &JsValue::from_str("sdp"))
        .ok()
        .and_then(|sdp| sdp.as_string())
        .ok_or(WebRtcError::Browser { what, exception: "a description without SDP" })
}
