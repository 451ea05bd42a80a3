//! syncscope's node library: Bitswap 1.2.0 and Swarm pull-sync as sans-IO cores, the libp2p glue
//! that runs them, storage and metrics. It builds for `wasm32-unknown-unknown` and natively.

pub mod proto;
pub mod sim;
