use std::net::SocketAddr;

use libp2p_webrtc_utils::Fingerprint;
use web_sys::{RtcSdpType, RtcSessionDescriptionInit};

/// Creates the SDP answer used by the client.
pub(crate) fn answer(
    addr: SocketAddr,
    server_fingerprint: Fingerprint,
    client_ufrag: &str,
) -> RtcSessionDescriptionInit {
    let answer_obj = RtcSessionDescriptionInit::new(RtcSdpType::Answer);
    answer_obj.set_sdp(&server_description(addr, server_fingerprint, client_ufrag));
    answer_obj
}

/// syncscope patch: `libp2p_webrtc_utils::sdp::answer`'s description, written with `format!`.
/// Upstream renders it through tinytemplate and serde, about 11 KB of the page's wasm for one
/// fixed template. The ufrag doubles as the ICE password, as upstream's does.
fn server_description(addr: SocketAddr, fingerprint: Fingerprint, ufrag: &str) -> String {
    let ip_version = if addr.is_ipv4() { "IP4" } else { "IP6" };
    let (ip, port) = (addr.ip(), addr.port());
    let (algorithm, value) = (fingerprint.algorithm(), fingerprint.to_sdp_format());
    format!(
        "v=0\n\
         o=- 0 0 IN {ip_version} {ip}\n\
         s=-\n\
         t=0 0\n\
         a=ice-lite\n\
         m=application {port} UDP/DTLS/SCTP webrtc-datachannel\n\
         c=IN {ip_version} {ip}\n\
         a=mid:0\n\
         a=ice-options:ice2\n\
         a=ice-ufrag:{ufrag}\n\
         a=ice-pwd:{ufrag}\n\
         a=fingerprint:{algorithm} {value}\n\
         a=setup:passive\n\
         a=sctp-port:5000\n\
         a=max-message-size:16384\n\
         a=candidate:1467250027 1 UDP 1467250027 {ip} {port} typ host\n\
         a=end-of-candidates\n"
    )
}

/// Creates the munged SDP offer from the Browser's given SDP offer
///
/// Certificate verification is disabled which is why we hardcode a dummy fingerprint here.
pub(crate) fn offer(offer: String, client_ufrag: &str) -> RtcSessionDescriptionInit {
    // find line and replace a=ice-ufrag: with "\r\na=ice-ufrag:{client_ufrag}\r\n"
    // find line and replace a=ice-pwd: with "\r\na=ice-ufrag:{client_ufrag}\r\n"

    let mut munged_sdp_offer = String::new();

    for line in offer.split("\r\n") {
        if line.starts_with("a=ice-ufrag:") {
            munged_sdp_offer.push_str(&format!("a=ice-ufrag:{client_ufrag}\r\n"));
            continue;
        }

        if line.starts_with("a=ice-pwd:") {
            munged_sdp_offer.push_str(&format!("a=ice-pwd:{client_ufrag}\r\n"));
            continue;
        }

        if !line.is_empty() {
            munged_sdp_offer.push_str(&format!("{line}\r\n"));
            continue;
        }
    }

    // remove any double \r\n
    let munged_sdp_offer = munged_sdp_offer.replace("\r\n\r\n", "\r\n");

    tracing::trace!(offer=%munged_sdp_offer, "Created SDP offer");

    let offer_obj = RtcSessionDescriptionInit::new(RtcSdpType::Offer);
    offer_obj.set_sdp(&munged_sdp_offer);

    offer_obj
}
