//! Sans-IO protocol cores.
//!
//! Nothing in here performs I/O, spawns tasks, reads a clock or depends on libp2p: bytes and events
//! go in, actions come out, and time is passed in by the caller. The same code therefore runs in
//! the deterministic simulator (`syncscope-sim`), in native peers and in the browser.

pub mod bitswap;
mod core;
pub mod framing;
pub mod pullsync;
pub mod rooms;
pub mod swarm;
pub mod webrtc_signaling;

pub use crate::core::Core;
#[cfg(any(test, feature = "test-utils"))]
pub mod test_utils;
