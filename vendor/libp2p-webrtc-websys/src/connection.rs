//! A libp2p connection backed by an [RtcPeerConnection](https://developer.mozilla.org/en-US/docs/Web/API/RTCPeerConnection).

use std::{
    pin::Pin,
    task::{Context, Poll, Waker, ready},
};

use futures::{StreamExt, channel::mpsc, stream::FuturesUnordered};
use js_sys::{Object, Reflect};
use libp2p_core::muxing::{StreamMuxer, StreamMuxerEvent};
use libp2p_webrtc_utils::Fingerprint;
use send_wrapper::SendWrapper;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    RtcConfiguration, RtcDataChannel, RtcDataChannelEvent, RtcDataChannelInit, RtcDataChannelType,
    RtcPeerConnectionState, RtcSessionDescriptionInit,
};

use super::{Error, Stream};
use crate::stream::DropListener;

/// Inbound data channels that may wait to be taken as streams (syncscope patch).
const INBOUND_CHANNELS_QUEUED: usize = 64;

/// A WebRTC Connection.
///
/// All connections need to be [`Send`] which is why some fields are wrapped in [`SendWrapper`].
/// This is safe because WASM is single-threaded.
pub struct Connection {
    /// The [RtcPeerConnection] that is used for the WebRTC Connection
    inner: SendWrapper<RtcPeerConnection>,

    /// Whether the connection is closed
    closed: bool,
    /// An [`mpsc::channel`] for all inbound data channels.
    ///
    /// Because the browser's WebRTC API is event-based, we need to use a channel to obtain all
    /// inbound data channels.
    /// syncscope patch: each is a stream already, made when its channel was announced, so that
    /// its `message` handler was set from the start.
    inbound_data_channels: SendWrapper<mpsc::Receiver<(Stream, DropListener)>>,
    /// A list of futures, which, once completed, signal that a [`Stream`] has been dropped.
    drop_listeners: FuturesUnordered<DropListener>,
    no_drop_listeners_waker: Option<Waker>,

    _ondatachannel_closure: SendWrapper<Closure<dyn FnMut(RtcDataChannelEvent)>>,
    /// syncscope patch: the peer connection failed or closed; the connection then ends.
    /// Upstream never noticed, and a connection whose peer was gone stayed open until idle.
    ended: SendWrapper<mpsc::Receiver<()>>,
    onstatechange_closure: SendWrapper<Closure<dyn FnMut(web_sys::Event)>>,
    /// syncscope patch: closes the peer connection when the page goes away (see `new`).
    onpagehide_closure: SendWrapper<Closure<dyn FnMut(web_sys::Event)>>,
}

impl Connection {
    /// syncscope patch: a connection over a peer connection made elsewhere, such as one a
    /// browser-to-browser `/webrtc` transport negotiates through a relayed signalling stream.
    /// Make it as soon as the peer connection exists, before the negotiation: the remote may open
    /// its first streams the moment it connects, and a data channel the browser announces while
    /// no `ondatachannel` handler is set is lost.
    pub fn from_peer_connection(peer_connection: web_sys::RtcPeerConnection) -> Self {
        Self::new(RtcPeerConnection { inner: peer_connection })
    }

    /// Create a new inner WebRTC Connection
    pub(crate) fn new(peer_connection: RtcPeerConnection) -> Self {
        // An ondatachannel Future enables us to poll for incoming data channel events in
        // poll_incoming
        // syncscope patch: room for the streams a remote opens the moment it connects, while
        // this side is still finishing its handshake and nothing reads the channel yet (upstream:
        // 4, and the fifth was dropped without a word to the remote, whose stream then hung).
        let (mut tx_ondatachannel, rx_ondatachannel) = mpsc::channel(INBOUND_CHANNELS_QUEUED);

        let ondatachannel_closure = Closure::new(move |ev: RtcDataChannelEvent| {
            // syncscope patch: the browser-to-browser initiator opens a channel labelled `init`
            // only so that its offer has a data section; it closes it once connected (spec
            // `webrtc/webrtc.md`, as js-libp2p does). It is no libp2p stream.
            if ev.channel().label() == "init" {
                return;
            }
            tracing::trace!("New data channel");

            // syncscope patch: the stream (and with it the channel's `message` handler) is made
            // now, not when the swarm polls for inbound streams. A browser drops the messages of
            // a channel without a handler, and a remote writes its first message (the
            // multistream-select proposal) as soon as the channel opens, which can be long
            // before the swarm takes this connection: the browser-to-browser initiator still
            // closes its `init` channel and signalling stream then.
            let channel = ev.channel();
            if let Err(e) = tx_ondatachannel.try_send(Stream::new(channel.clone())) {
                if e.is_full() {
                    tracing::warn!("Remote is opening too many data channels, we can't keep up!");
                    // syncscope patch: closed, so that the remote's stream fails instead of
                    // waiting for an answer that cannot come.
                    channel.close();
                    return;
                }

                if e.is_disconnected() {
                    tracing::warn!("Receiver is gone, are we shutting down?");
                }
            }
        });
        peer_connection
            .inner
            .set_ondatachannel(Some(ondatachannel_closure.as_ref().unchecked_ref()));

        let (ended_tx, ended) = mpsc::channel(1);
        let onstatechange_closure = Closure::new({
            let (pc, mut ended_tx) = (peer_connection.inner.clone(), ended_tx);
            move |_: web_sys::Event| {
                if matches!(
                    pc.connection_state(),
                    RtcPeerConnectionState::Failed | RtcPeerConnectionState::Closed
                ) {
                    let _ = ended_tx.try_send(());
                }
            }
        });
        // An event listener, not the `onconnectionstatechange` property: whoever negotiated the
        // peer connection may still be using that.
        let _ = peer_connection.inner.add_event_listener_with_callback(
            "connectionstatechange",
            onstatechange_closure.as_ref().unchecked_ref(),
        );

        // syncscope patch: a tab that closes or navigates away with its peer connections open
        // sends nothing, and the remote (the relay, another page) takes it for gone only when
        // ICE gives up, 10 s or more later: meanwhile the relay lists the page in its room and
        // keeps its circuits, and a page opened next waits for it. Closed here, Chromium aborts
        // SCTP at once, and the relay ends the connection within milliseconds.
        let onpagehide_closure = Closure::new({
            let pc = peer_connection.inner.clone();
            move |_: web_sys::Event| pc.close()
        });
        if let Some(window) = web_sys::window() {
            let _ = window.add_event_listener_with_callback(
                "pagehide",
                onpagehide_closure.as_ref().unchecked_ref(),
            );
        }

        Self {
            inner: SendWrapper::new(peer_connection),
            closed: false,
            drop_listeners: FuturesUnordered::default(),
            no_drop_listeners_waker: None,
            inbound_data_channels: SendWrapper::new(rx_ondatachannel),
            _ondatachannel_closure: SendWrapper::new(ondatachannel_closure),
            ended: SendWrapper::new(ended),
            onstatechange_closure: SendWrapper::new(onstatechange_closure),
            onpagehide_closure: SendWrapper::new(onpagehide_closure),
        }
    }

    /// syncscope patch: whether the peer connection was closed on this side, by whoever holds
    /// it, which fires no `connectionstatechange`. Its data channels close with it, and their
    /// `close` events wake the connection's task, which polls this.
    fn closed_locally(&self) -> bool {
        self.inner.inner.connection_state() == RtcPeerConnectionState::Closed
    }

    fn new_stream_from_data_channel(&mut self, data_channel: RtcDataChannel) -> Stream {
        let (stream, drop_listener) = Stream::new(data_channel);
        self.track(stream, drop_listener)
    }

    /// Watches `stream` for being dropped without a close (see [`DropListener`]).
    fn track(&mut self, stream: Stream, drop_listener: DropListener) -> Stream {
        self.drop_listeners.push(drop_listener);
        if let Some(waker) = self.no_drop_listeners_waker.take() {
            waker.wake()
        }
        stream
    }

    /// Closes the Peer Connection.
    ///
    /// This closes the data channels also and they will return an error
    /// if they are used.
    fn close_connection(&mut self) {
        if !self.closed {
            tracing::trace!("connection::close_connection");
            // syncscope patch (rust-libp2p issue #6551): detach the handler whose closure this
            // connection owns before it is dropped.
            self.inner.inner.set_ondatachannel(None);
            let _ = self.inner.inner.remove_event_listener_with_callback(
                "connectionstatechange",
                self.onstatechange_closure.as_ref().unchecked_ref(),
            );
            if let Some(window) = web_sys::window() {
                let _ = window.remove_event_listener_with_callback(
                    "pagehide",
                    self.onpagehide_closure.as_ref().unchecked_ref(),
                );
            }
            self.inner.inner.close();
            self.closed = true;
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.close_connection();
    }
}

/// WebRTC native multiplexing
/// Allows users to open substreams
impl StreamMuxer for Connection {
    type Substream = Stream;
    type Error = Error;

    fn poll_inbound(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Self::Substream, Self::Error>> {
        match ready!(self.inbound_data_channels.poll_next_unpin(cx)) {
            Some((stream, drop_listener)) => Poll::Ready(Ok(self.track(stream, drop_listener))),
            None => {
                // This only happens if the [`RtcPeerConnection::ondatachannel`] closure gets freed
                // which means we are most likely shutting down the connection.
                tracing::debug!("`Sender` for inbound data channels has been dropped");
                Poll::Ready(Err(Error::Connection("connection closed".to_owned())))
            }
        }
    }

    fn poll_outbound(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Result<Self::Substream, Self::Error>> {
        tracing::trace!("Creating outbound data channel");
        // syncscope patch: `createDataChannel` throws on a closed peer connection.
        if self.closed_locally() {
            return Poll::Ready(Err(Error::Connection("the peer connection is closed".into())));
        }

        let data_channel = self.inner.new_regular_data_channel();
        let stream = self.new_stream_from_data_channel(data_channel);

        Poll::Ready(Ok(stream))
    }

    /// Closes the Peer Connection.
    fn poll_close(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Result<(), Self::Error>> {
        tracing::trace!("connection::poll_close");

        self.close_connection();
        Poll::Ready(Ok(()))
    }

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<StreamMuxerEvent, Self::Error>> {
        // syncscope patch: see `Connection::ended` and `closed_locally`.
        if self.closed_locally() || self.ended.poll_next_unpin(cx).is_ready() {
            return Poll::Ready(Err(Error::Connection(
                "the peer connection failed or closed".into(),
            )));
        }
        loop {
            match ready!(self.drop_listeners.poll_next_unpin(cx)) {
                Some(Ok(())) => {}
                Some(Err(e)) => {
                    tracing::debug!("a DropListener failed: {e}")
                }
                None => {
                    self.no_drop_listeners_waker = Some(cx.waker().clone());
                    return Poll::Pending;
                }
            }
        }
    }
}

pub(crate) struct RtcPeerConnection {
    inner: web_sys::RtcPeerConnection,
}

impl RtcPeerConnection {
    pub(crate) async fn new(algorithm: String) -> Result<Self, Error> {
        let algo: Object = Object::new();
        Reflect::set(&algo, &"name".into(), &"ECDSA".into()).unwrap();
        Reflect::set(&algo, &"namedCurve".into(), &"P-256".into()).unwrap();
        Reflect::set(&algo, &"hash".into(), &algorithm.into()).unwrap();

        let certificate_promise =
            web_sys::RtcPeerConnection::generate_certificate_with_object(&algo)
                .expect("certificate to be valid");

        let certificate = JsFuture::from(certificate_promise).await?;

        let config = RtcConfiguration::default();
        // wrap certificate in a js Array first before adding it to the config object
        let certificate_arr = js_sys::Array::new();
        certificate_arr.push(&certificate);
        config.set_certificates(&certificate_arr);

        let inner = web_sys::RtcPeerConnection::new_with_configuration(&config)?;

        Ok(Self { inner })
    }

    /// Creates the stream for the initial noise handshake.
    ///
    /// The underlying data channel MUST have `negotiated` set to `true` and carry the ID 0.
    pub(crate) fn new_handshake_stream(&self) -> (Stream, DropListener) {
        Stream::new(self.new_data_channel(true))
    }

    /// Creates a regular data channel for when the connection is already established.
    pub(crate) fn new_regular_data_channel(&self) -> RtcDataChannel {
        self.new_data_channel(false)
    }

    fn new_data_channel(&self, negotiated: bool) -> RtcDataChannel {
        const LABEL: &str = "";

        let dc = match negotiated {
            true => {
                let options = RtcDataChannelInit::new();
                options.set_negotiated(true);
                options.set_id(0); // id is only ever set to zero when negotiated is true

                self.inner
                    .create_data_channel_with_data_channel_dict(LABEL, &options)
            }
            false => self.inner.create_data_channel(LABEL),
        };
        dc.set_binary_type(RtcDataChannelType::Arraybuffer); // Hardcoded here, it's the only type we use

        dc
    }

    /// syncscope patch: a receive-only video section that never carries media. Chromium
    /// sizes the connection's UDP receive buffer for video when the connection has a video
    /// section (`WebRtcVideoReceiveChannel::SetInterface`), and for data channels alone leaves
    /// it at 64 KiB (128 KiB of kernel buffer), which limits how much a sender may keep in
    /// flight; see this crate's README.
    pub(crate) fn add_receive_buffer_video(&self) {
        let init = web_sys::RtcRtpTransceiverInit::new();
        init.set_direction(web_sys::RtcRtpTransceiverDirection::Recvonly);
        self.inner.add_transceiver_with_str_and_init("video", &init);
    }

    pub(crate) async fn create_offer(&self) -> Result<String, Error> {
        let offer = JsFuture::from(self.inner.create_offer()).await?;

        let offer = Reflect::get(&offer, &JsValue::from_str("sdp"))
            .expect("sdp should be valid")
            .as_string()
            .expect("sdp string should be valid string");

        Ok(offer)
    }

    pub(crate) async fn set_local_description(
        &self,
        sdp: RtcSessionDescriptionInit,
    ) -> Result<(), Error> {
        let promise = self.inner.set_local_description(&sdp);
        JsFuture::from(promise).await?;

        Ok(())
    }

    pub(crate) fn local_fingerprint(&self) -> Result<Fingerprint, Error> {
        let sdp = &self
            .inner
            .local_description()
            .ok_or_else(|| Error::Js("No local description".to_string()))?
            .sdp();

        let fingerprint =
            parse_fingerprint(sdp).ok_or_else(|| Error::Js("No fingerprint in SDP".to_string()))?;

        Ok(fingerprint)
    }

    pub(crate) async fn set_remote_description(
        &self,
        sdp: RtcSessionDescriptionInit,
    ) -> Result<(), Error> {
        let promise = self.inner.set_remote_description(&sdp);
        JsFuture::from(promise).await?;

        Ok(())
    }
}

/// Parse Fingerprint from a SDP.
fn parse_fingerprint(sdp: &str) -> Option<Fingerprint> {
    // split the sdp by new lines / carriage returns
    let lines = sdp.split("\r\n");

    // iterate through the lines to find the one starting with a=fingerprint:
    // get the value after the first space
    // return the value as a Fingerprint
    for line in lines {
        if line.starts_with("a=fingerprint:") {
            let fingerprint = line.split(' ').nth(1).unwrap();
            let bytes = hex::decode(fingerprint.replace(':', "")).unwrap();
            let arr: [u8; 32] = bytes.as_slice().try_into().unwrap();
            return Some(Fingerprint::raw(arr));
        }
    }
    None
}

#[cfg(test)]
mod sdp_tests {
    use super::*;

    #[test]
    fn test_fingerprint() {
        let sdp = "v=0\r\no=- 0 0 IN IP6 ::1\r\ns=-\r\nc=IN IP6 ::1\r\nt=0 0\r\na=ice-lite\r\nm=application 61885 UDP/DTLS/SCTP webrtc-datachannel\r\na=mid:0\r\na=setup:passive\r\na=ice-ufrag:libp2p+webrtc+v1/YwapWySn6fE6L9i47PhlB6X4gzNXcgFs\r\na=ice-pwd:libp2p+webrtc+v1/YwapWySn6fE6L9i47PhlB6X4gzNXcgFs\r\na=fingerprint:sha-256 A8:17:77:1E:02:7E:D1:2B:53:92:70:A6:8E:F9:02:CC:21:72:3A:92:5D:F4:97:5F:27:C4:5E:75:D4:F4:31:89\r\na=sctp-port:5000\r\na=max-message-size:16384\r\na=candidate:1467250027 1 UDP 1467250027 ::1 61885 typ host\r\n";

        let fingerprint = parse_fingerprint(sdp).unwrap();

        assert_eq!(fingerprint.algorithm(), "sha-256");
        assert_eq!(
            fingerprint.to_sdp_format(),
            "A8:17:77:1E:02:7E:D1:2B:53:92:70:A6:8E:F9:02:CC:21:72:3A:92:5D:F4:97:5F:27:C4:5E:75:D4:F4:31:89"
        );
    }
}
