//! `/config.json`, served by the relay: who the relay is and how to reach it.

use std::time::Duration;

use syncscope_node::net::webrtc::DirectWebRtcConfig;
use syncscope_node::node::{RelayAddress, DEFAULT_STATS_EVERY};
use syncscope_node::{PageConfig, RelayTransport};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// Transports in the order the page tries them: WebRTC-direct first, WebSocket as the fallback.
const TRANSPORT_PREFERENCE: [RelayTransport; 2] =
    [RelayTransport::WebRtcDirect, RelayTransport::WebSocket];

/// A parameter of the page's URL, e.g. `room` in `?room=lab`.
pub fn url_param(name: &str) -> Option<String> {
    let search = web_sys::window().and_then(|w| w.location().search().ok()).unwrap_or_default();
    web_sys::UrlSearchParams::new_with_str(&search).ok().and_then(|p| p.get(name))
}

/// The transports to try: the page's `?transport=` parameter if given, else all in preference
/// order.
pub fn transports_from_url() -> Result<Vec<RelayTransport>, String> {
    match url_param("transport") {
        Some(t) => Ok(vec![t.parse().map_err(|e| format!("?transport={t}: {e}"))?]),
        None => Ok(TRANSPORT_PREFERENCE.to_vec()),
    }
}

/// Shortest and longest `?sample=` intervals: faster than 10 a second, the page would spend more
/// on its charts than a fetch can spare; slower than a minute, the 1 min window would be empty.
const SAMPLE_RANGE: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(60));

/// How often the node reports its counters, and so the charts' resolution: `?sample=` (such as
/// `250ms` or `2s`), a second by default. A shared link keeps it, so the other side charts the
/// experiment at the same resolution.
pub fn stats_every_from_url() -> Result<Duration, String> {
    url_param("sample").map_or(Ok(DEFAULT_STATS_EVERY), |s| {
        parse_interval(&s).map_err(|e| format!("?sample={s}: {e}"))
    })
}

/// `250ms`, `2s` or `0.5s`, within [`SAMPLE_RANGE`].
fn parse_interval(text: &str) -> Result<Duration, String> {
    let (number, unit_secs) = match text.strip_suffix("ms") {
        Some(ms) => (ms, 1e-3),
        None => {
            (text.strip_suffix('s').ok_or("expected a number with ms or s, such as 250ms")?, 1.0)
        }
    };
    let value: f64 = number.trim().parse().map_err(|_| format!("{number:?} is not a number"))?;
    let interval = Duration::try_from_secs_f64(value * unit_secs).map_err(|e| e.to_string())?;
    let (shortest, longest) = SAMPLE_RANGE;
    if interval < shortest || interval > longest {
        return Err(format!(
            "expected an interval from {} to {}",
            interval_words(shortest),
            interval_words(longest)
        ));
    }
    Ok(interval)
}

/// `interval` as a person writes it: `250 ms`, `1 s`, `1.5 s`.
pub fn interval_words(interval: Duration) -> String {
    match interval.subsec_millis() {
        0 => format!("{} s", interval.as_secs()),
        _ if interval < Duration::from_secs(1) => format!("{} ms", interval.as_millis()),
        _ => format!("{} s", interval.as_secs_f64()),
    }
}

/// Direct WebRTC with other browsers in the room: on unless the URL says `?direct=off`, with the
/// relay's ICE servers. `?ice=relay` gathers relay (TURN) candidates only, so that with no TURN
/// server ICE fails and the page shows its fall-back to the circuit.
pub fn direct_webrtc_from_url(config: &PageConfig) -> Result<DirectWebRtcConfig, String> {
    let mut direct = DirectWebRtcConfig::default();
    direct.ice_servers = config.ice_servers.clone();
    direct.enabled = match url_param("direct").as_deref() {
        None | Some("on") => true,
        Some("off") => false,
        Some(other) => return Err(format!("?direct={other}: expected on or off")),
    };
    direct.relay_candidates_only = match url_param("ice").as_deref() {
        None | Some("all") => false,
        Some("relay") => true,
        Some(other) => return Err(format!("?ice={other}: expected all or relay")),
    };
    Ok(direct)
}

/// A link that opens this page in `room` (fetching `content`, a CID and its file name, if given),
/// keeping the page's other parameters except the link probe's, which measure this viewer's link,
/// not the experiment.
pub fn share_link(room: &str, content: Option<(&str, &str)>) -> String {
    let Some(location) = web_sys::window().map(|w| w.location()) else { return String::new() };
    let base = format!(
        "{}{}",
        location.origin().unwrap_or_default(),
        location.pathname().unwrap_or_default()
    );
    let search = location.search().unwrap_or_default();
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search) else { return base };
    params.set("room", room);
    params.delete("probe");
    params.delete("probe-size");
    params.delete("name");
    if let Some((cid, name)) = content {
        params.set("fetch", cid);
        if !name.is_empty() {
            params.set("name", name);
        }
    }
    format!("{base}?{}", String::from(params.to_string()))
}

/// The relay's address with its dialable multiaddrs for `transports`, in that order.
pub fn relay_address(
    config: &PageConfig,
    transports: &[RelayTransport],
) -> Result<RelayAddress, String> {
    let peer_id =
        config.peer_id.parse().map_err(|e| format!("relay peer id {:?}: {e}", config.peer_id))?;
    let addrs = transports
        .iter()
        .flat_map(|t| config.addrs.get(t).into_iter().flatten())
        .map(|a| a.parse().map_err(|e| format!("relay address {a:?}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    if addrs.is_empty() {
        let names: Vec<&str> = transports.iter().map(|t| t.name()).collect();
        return Err(format!("the relay announces no address for {}", names.join(" or ")));
    }
    Ok(RelayAddress { peer_id, addrs })
}

/// Fetches and parses `/config.json` from the page's origin.
pub async fn fetch() -> Result<PageConfig, String> {
    let window = web_sys::window().ok_or("no window")?;
    let response = JsFuture::from(window.fetch_with_str("/config.json"))
        .await
        .map_err(|e| format!("cannot reach the relay: {e:?}"))?;
    let response: web_sys::Response = response.dyn_into().map_err(|_| "not an HTTP response")?;
    if !response.ok() {
        return Err(format!("the relay answered /config.json with HTTP {}", response.status()));
    }
    let text = JsFuture::from(response.text().map_err(|e| format!("{e:?}"))?)
        .await
        .map_err(|e| format!("cannot read /config.json: {e:?}"))?
        .as_string()
        .unwrap_or_default();
    serde_json::from_str(&text).map_err(|e| format!("/config.json is malformed: {e}"))
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;

    #[test]
    fn sample_intervals_parse_in_milliseconds_or_seconds() {
        assert_eq!(parse_interval("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_interval("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_interval("0.5s"), Ok(Duration::from_millis(500)));
    }

    #[test]
    fn sample_intervals_out_of_range_or_without_a_unit_are_refused_in_words() {
        assert_eq!(parse_interval("50ms"), Err("expected an interval from 100 ms to 60 s".into()));
        assert_eq!(
            parse_interval("2m"),
            Err("expected a number with ms or s, such as 250ms".into())
        );
        assert_eq!(parse_interval("fasts"), Err("\"fast\" is not a number".into()));
        assert!(parse_interval("-1s").is_err());
    }

    #[test]
    fn intervals_are_written_as_people_write_them() {
        assert_eq!(interval_words(Duration::from_millis(250)), "250 ms");
        assert_eq!(interval_words(Duration::from_secs(1)), "1 s");
        assert_eq!(interval_words(Duration::from_millis(1500)), "1.5 s");
    }
}
