//! syncscope's browser UI: joins the network through the relay and shows what the protocols do.

mod app;
mod chart;
mod config;
mod connection;
mod export;
mod font_warmup;
pub mod logging;
mod per_frame;
mod probe;
mod rates;
mod series;
mod storage;
mod store_probe;
mod stored;
pub mod timing;
mod transfers;

pub use app::App;

#[cfg(test)]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
