//! The browser console log: INFO and above unless the page's `?log=` asks for another level
//! (`error`, `warn`, `info`, `debug`; `trace` only in a debug build: the release page is built
//! without TRACE events, `release_max_level_debug` in `Cargo.toml`, to keep its wasm small).
//!
//! Every event is a `console.log` call. At TRACE, tracing-wasm's default, libp2p's per-frame
//! events took more time than moving the data: 4.3 s of a 7.2 s fetch of 8 MiB went to the
//! console. Span timings (`performance.mark`) are off for the same reason.

use tracing::Level;
use tracing_wasm::WASMLayerConfigBuilder;

use crate::config::url_param;

pub fn init() {
    let level = url_param("log").and_then(|l| l.parse().ok()).unwrap_or(Level::INFO);
    let config = WASMLayerConfigBuilder::new()
        .set_max_level(level)
        .set_report_logs_in_timings(false)
        .build();
    tracing_wasm::set_as_global_default_with_config(config);
}
