//! A stream the remote opens over WebRTC keeps its first message even when this side takes the
//! connection late. The browser-to-browser initiator still closes its `init` channel and its
//! signalling stream after its peer connection is up, while the responder already opens its
//! streams and writes its multistream-select proposals. A browser drops the messages of a data
//! channel without a `message` handler, so a stream made only when the swarm polled for it lost
//! them, and the remote's stream hung until libp2p's 10 s upgrade timeout.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns too (rust-clippy#11119)
#![cfg(target_arch = "wasm32")]

use std::pin::{pin, Pin};
use std::time::Duration;

use futures::future::{poll_fn, select, Either};
use futures::AsyncReadExt;
use js_sys::{Function, Promise, Uint8Array};
use libp2p::core::muxing::StreamMuxer;
use libp2p::webrtc_websys::Connection;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};
use web_sys::RtcPeerConnection;

wasm_bindgen_test_configure!(run_in_browser);

/// One spec frame (`webrtc/webrtc.md`): a varint length, then the protobuf `Message` with
/// `message` (field 2) set to `hello`.
const HELLO_FRAME: [u8; 8] = [7, 0x12, 5, b'h', b'e', b'l', b'l', b'o'];

/// In the page: connects a new peer connection to `pcB`, trickling candidates directly, opens a
/// data channel, sends `frame` on it as soon as it opens, then waits 300 ms before it resolves,
/// so that the frame has long arrived when the test first polls `pcB`'s connection.
const REMOTE: &str = "return (async () => {
  const pcA = new RTCPeerConnection();
  pcA.onicecandidate = (e) => e.candidate && pcB.addIceCandidate(e.candidate);
  pcB.onicecandidate = (e) => e.candidate && pcA.addIceCandidate(e.candidate);
  const dc = pcA.createDataChannel('');
  await pcA.setLocalDescription(await pcA.createOffer());
  await pcB.setRemoteDescription(pcA.localDescription);
  await pcB.setLocalDescription(await pcB.createAnswer());
  await pcA.setRemoteDescription(pcB.localDescription);
  await new Promise((resolve) => (dc.onopen = resolve));
  dc.send(frame);
  await new Promise((resolve) => setTimeout(resolve, 300));
  return pcA;
})()";

#[wasm_bindgen_test]
async fn a_stream_taken_late_keeps_the_first_message() {
    let pc_b = RtcPeerConnection::new().unwrap();
    // Made before the negotiation, as `net::webrtc::browser::handshake` does.
    let mut connection = Connection::from_peer_connection(pc_b.clone());
    let remote = Function::new_with_args("pcB, frame", REMOTE);
    let frame = Uint8Array::from(HELLO_FRAME.as_slice());
    let promise = remote.call2(&JsValue::NULL, &pc_b, &frame).unwrap();
    let _pc_a = JsFuture::from(Promise::from(promise)).await.unwrap();

    let mut stream = poll_fn(|cx| Pin::new(&mut connection).poll_inbound(cx)).await.unwrap();
    let mut hello = [0u8; 5];
    let read = pin!(stream.read_exact(&mut hello));
    let timeout = pin!(gloo_timers::future::sleep(Duration::from_secs(3)));
    match select(read, timeout).await {
        Either::Left((result, _)) => result.unwrap(),
        Either::Right(_) => panic!("the stream's first message was lost"),
    }
    assert_eq!(&hello, b"hello");
}
