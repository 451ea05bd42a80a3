use std::net::SocketAddr;

use libp2p_webrtc_utils::Fingerprint;
use web_sys::{RtcSdpType, RtcSessionDescriptionInit};

/// Creates the SDP answer used by the client, with one section for each of the offer's.
pub(crate) fn answer(
    addr: SocketAddr,
    server_fingerprint: Fingerprint,
    client_ufrag: &str,
    offered: &[OfferedSection],
) -> RtcSessionDescriptionInit {
    let answer_obj = RtcSessionDescriptionInit::new(RtcSdpType::Answer);
    answer_obj.set_sdp(&server_description(addr, server_fingerprint, client_ufrag, offered));
    answer_obj
}

/// syncscope patch: an m-section of the browser's offer, which the answer must repeat in the
/// same order. The offer holds the data channels' section and the video section that
/// `RtcPeerConnection::add_receive_buffer_video` adds (see this crate's README).
#[derive(Debug, PartialEq)]
pub(crate) struct OfferedSection {
    mid: String,
    kind: SectionKind,
}

/// syncscope patch: what the answer does with an offered section.
#[derive(Debug, PartialEq)]
enum SectionKind {
    /// The data channels' section, the only one that carries anything.
    DataChannels,
    /// The video section, with its first payload type and that type's `rtpmap` value, which a
    /// static payload type (RFC 3551) may go without.
    Video { pt: String, rtpmap: Option<String> },
    /// Any other section (audio, a second application section), answered as rejected: its
    /// `m=` line again with port 0 (RFC 3264, section 6), and left out of the bundle.
    Rejected { media_line: String },
}

/// syncscope patch: the offer's m-sections, in order.
pub(crate) fn offered_sections(offer: &str) -> Vec<OfferedSection> {
    let mut sections: Vec<OfferedSection> = Vec::new();
    for line in offer.lines() {
        if let Some(media) = line.strip_prefix("m=") {
            let kind =
                section_kind(media, sections.iter().any(|s| s.kind == SectionKind::DataChannels));
            sections.push(OfferedSection { mid: String::new(), kind });
        } else if let Some(section) = sections.last_mut() {
            if let Some(mid) = line.strip_prefix("a=mid:") {
                section.mid = mid.to_owned();
            } else if let SectionKind::Video { pt, rtpmap } = &mut section.kind {
                let map = line.strip_prefix("a=rtpmap:").and_then(|l| l.split_once(' '));
                if let Some((_, value)) = map.filter(|(p, _)| p == pt) {
                    *rtpmap = Some(value.to_owned());
                }
            }
        }
    }
    sections
}

/// The kind of section an `m=` line's value (`<media> <port> <proto> <fmt> ...`) opens.
fn section_kind(media: &str, has_data_channels: bool) -> SectionKind {
    let fields: Vec<&str> = media.split(' ').collect();
    match fields.as_slice() {
        ["application", _, "UDP/DTLS/SCTP", "webrtc-datachannel"] if !has_data_channels => {
            SectionKind::DataChannels
        }
        ["video", _, _, pt, ..] => SectionKind::Video { pt: (*pt).to_owned(), rtpmap: None },
        [kind, _, rest @ ..] => {
            SectionKind::Rejected { media_line: format!("m={kind} 0 {}", rest.join(" ")) }
        }
        _ => SectionKind::Rejected { media_line: format!("m={media}") },
    }
}

/// syncscope patch: `libp2p_webrtc_utils::sdp::answer`'s description, written with `format!`.
/// Upstream renders it through tinytemplate and serde, about 11 KB of the page's wasm for one
/// fixed template. The ufrag doubles as the ICE password, as upstream's does. Every section is
/// bundled on the one transport the server listens on, and the video section is inactive: it
/// only exists for the receive buffer it brings.
fn server_description(
    addr: SocketAddr,
    fingerprint: Fingerprint,
    ufrag: &str,
    offered: &[OfferedSection],
) -> String {
    let ip_version = if addr.is_ipv4() { "IP4" } else { "IP6" };
    let (ip, port) = (addr.ip(), addr.port());
    let (algorithm, value) = (fingerprint.algorithm(), fingerprint.to_sdp_format());
    let bundled = offered.iter().filter(|s| !matches!(s.kind, SectionKind::Rejected { .. }));
    let mids: Vec<&str> = bundled.map(|s| s.mid.as_str()).collect();
    let mut sdp = format!(
        "v=0\n\
         o=- 0 0 IN {ip_version} {ip}\n\
         s=-\n\
         t=0 0\n\
         a=ice-lite\n\
         a=group:BUNDLE {mids}\n",
        mids = mids.join(" ")
    );
    for OfferedSection { mid, kind } in offered {
        let (media_line, attributes) = match kind {
            SectionKind::DataChannels => (
                format!("m=application {port} UDP/DTLS/SCTP webrtc-datachannel"),
                "a=sctp-port:5000\na=max-message-size:16384\n".to_owned(),
            ),
            SectionKind::Video { pt, rtpmap } => {
                let rtpmap = rtpmap.as_ref().map(|value| format!("a=rtpmap:{pt} {value}\n"));
                (
                    format!("m=video {port} UDP/TLS/RTP/SAVPF {pt}"),
                    format!("a=inactive\na=rtcp-mux\n{}", rtpmap.unwrap_or_default()),
                )
            }
            SectionKind::Rejected { media_line } => {
                sdp.push_str(&format!("{media_line}\nc=IN {ip_version} {ip}\na=mid:{mid}\n"));
                continue;
            }
        };
        sdp.push_str(&format!(
            "{media_line}\n\
             c=IN {ip_version} {ip}\n\
             a=mid:{mid}\n\
             a=ice-options:ice2\n\
             a=ice-ufrag:{ufrag}\n\
             a=ice-pwd:{ufrag}\n\
             a=fingerprint:{algorithm} {value}\n\
             a=setup:passive\n\
             a=candidate:1467250027 1 UDP 1467250027 {ip} {port} typ host\n\
             a=end-of-candidates\n\
             {attributes}"
        ));
    }
    sdp
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

#[cfg(test)]
mod tests {
    use super::*;

    const OFFER: &str = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0 1\r\n\
        m=video 9 UDP/TLS/RTP/SAVPF 96 97 98\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\n\
        a=rtpmap:9 PCMU/8000\r\na=rtpmap:97 rtx/90000\r\na=rtpmap:96 VP8/90000\r\na=recvonly\r\n\
        m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\na=mid:1\r\n\
        a=sctp-port:5000\r\n";

    #[test]
    fn the_offers_sections_are_read_in_order() {
        assert_eq!(
            offered_sections(OFFER),
            vec![
                OfferedSection {
                    mid: "0".into(),
                    kind: SectionKind::Video { pt: "96".into(), rtpmap: Some("VP8/90000".into()) }
                },
                OfferedSection { mid: "1".into(), kind: SectionKind::DataChannels },
            ]
        );
    }

    #[test]
    fn the_answer_bundles_every_section_in_the_offers_order() {
        let addr = "127.0.0.1:4000".parse().unwrap();
        let sdp =
            server_description(addr, Fingerprint::raw([7; 32]), "u", &offered_sections(OFFER));
        assert!(sdp.contains("a=group:BUNDLE 0 1\n"));
        let video = sdp.find("m=video 4000 UDP/TLS/RTP/SAVPF 96\n").unwrap();
        let data = sdp.find("m=application 4000 UDP/DTLS/SCTP webrtc-datachannel\n").unwrap();
        assert!(video < data);
        assert_eq!(sdp.matches("a=candidate:").count(), 2);
        assert!(sdp[video..data].contains("a=inactive\na=rtcp-mux\na=rtpmap:96 VP8/90000\n"));
        assert!(sdp[data..].contains("a=mid:1\n"));
    }

    #[test]
    fn a_static_payload_type_without_rtpmap_gets_none() {
        let offer = OFFER.replace("96 97 98", "34 97").replace("a=rtpmap:96 VP8/90000\r\n", "");
        let offered = offered_sections(&offer);
        assert_eq!(offered[0].kind, SectionKind::Video { pt: "34".into(), rtpmap: None });
        let addr = "127.0.0.1:4000".parse().unwrap();
        let sdp = server_description(addr, Fingerprint::raw([7; 32]), "u", &offered);
        assert!(sdp.contains("m=video 4000 UDP/TLS/RTP/SAVPF 34\n"));
        assert!(sdp.contains("a=inactive\na=rtcp-mux\nm=application"));
        assert!(!sdp.contains("a=rtpmap"));
    }

    #[test]
    fn other_sections_are_rejected_and_left_out_of_the_bundle() {
        let audio = "m=audio 9 UDP/TLS/RTP/SAVPF 111 0\r\nc=IN IP4 0.0.0.0\r\na=mid:2\r\n\
            a=rtpmap:111 opus/48000/2\r\n\
            m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\na=mid:3\r\n";
        let offered = offered_sections(&format!("{OFFER}{audio}"));
        assert_eq!(
            offered[2..],
            [
                OfferedSection {
                    mid: "2".into(),
                    kind: SectionKind::Rejected {
                        media_line: "m=audio 0 UDP/TLS/RTP/SAVPF 111 0".into()
                    }
                },
                OfferedSection {
                    mid: "3".into(),
                    kind: SectionKind::Rejected {
                        media_line: "m=application 0 UDP/DTLS/SCTP webrtc-datachannel".into()
                    }
                },
            ]
        );
        let addr = "127.0.0.1:4000".parse().unwrap();
        let sdp = server_description(addr, Fingerprint::raw([7; 32]), "u", &offered);
        assert!(sdp.contains("a=group:BUNDLE 0 1\n"));
        assert!(sdp.ends_with(
            "m=audio 0 UDP/TLS/RTP/SAVPF 111 0\nc=IN IP4 127.0.0.1\na=mid:2\n\
             m=application 0 UDP/DTLS/SCTP webrtc-datachannel\nc=IN IP4 127.0.0.1\na=mid:3\n"
        ));
        assert_eq!(sdp.matches("a=candidate:").count(), 2);
    }
}
