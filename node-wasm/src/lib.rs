//! syncscope's node library: the libp2p glue that runs the sans-IO protocol cores of
//! [`syncscope_proto`] (Bitswap 1.2.0 and Swarm pull-sync), storage and metrics. It builds for
//! `wasm32-unknown-unknown` and natively. The cores, and the simulator that drives them in
//! virtual time (`syncscope-sim`), are crates of their own, so that nothing I/O-bound can creep
//! into them.
//!
//! - [`content`]: files to UnixFS blocks and Swarm chunks and back, sans-IO as well.
//! - [`config_json`]: [`PageConfig`], the `/config.json` the relay serves to the page.
//! - [`agent`]: identify agent strings and the [`PeerKind`] read off them.
//! - [`net`]: the libp2p glue of each protocol core.
//! - [`node`]: the application node that composes them; the only place where transports differ
//!   between targets.
//! - [`store`]: storage backends.
//! - [`metrics`]: counters and fixed-interval timeseries recorded from core events.
//! - [`rt`]: spawning and sleeping on tokio or in the browser.

pub mod agent;
pub mod cond_send;
pub mod config_json;
pub mod content;
pub mod metrics;
pub mod net;
pub mod node;
pub mod rt;
pub mod store;

pub use agent::PeerKind;
pub use config_json::{PageConfig, RelayTransport};
