//! syncscope's node library: Bitswap 1.2.0 and Swarm pull-sync as sans-IO cores, the libp2p glue
//! that runs them, storage and metrics. It builds for `wasm32-unknown-unknown` and natively.
//!
//! - [`proto`]: the sans-IO protocol cores; no I/O, no clock, no libp2p.
//! - [`content`]: files to UnixFS blocks and Swarm chunks and back, sans-IO as well.
//! - [`config_json`]: [`PageConfig`], the `/config.json` the relay serves to the page.
//! - [`agent`]: identify agent strings and the [`PeerKind`] read off them.
//! - [`net`]: libp2p glue; the only place where transports differ between targets.
//! - [`store`]: storage backends.
//! - [`metrics`]: counters and fixed-interval timeseries recorded from core events.
//! - [`sim`]: the deterministic discrete-event network that drives the cores in virtual time.
//! - [`rt`]: spawning and sleeping on tokio or in the browser.

pub mod agent;
pub mod cond_send;
pub mod config_json;
pub mod content;
pub mod metrics;
pub mod net;
pub mod proto;
pub mod rt;
pub mod sim;
pub mod store;

pub use agent::PeerKind;
pub use config_json::{PageConfig, RelayTransport};
