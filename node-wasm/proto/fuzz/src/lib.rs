//! Fuzz drivers for the sans-IO cores of `syncscope-proto`. Each module has a `run(data)` that a
//! target in `fuzz_targets/` hands libFuzzer's input to, and that panics only on a bug:
//!
//! - [`bitswap_message`]: `bitswap::Message::decode` of any bytes, and re-encoding what decodes;
//! - [`framing`]: the length-prefixed `FrameDecoder` fed one byte stream cut into arbitrary reads,
//!   against a whole-stream reference;
//! - [`pullsync_node`]: a pull-sync `Node` fed an arbitrary sequence of peers connecting and
//!   leaving, stream events (raw bytes or real frames) and timeouts.
//!
//! [`seeds`] writes the committed seed corpus (`seeds/<target>/`) from real encoded messages and
//! a recorded pull-sync exchange.

pub mod bitswap_message;
pub mod framing;
pub mod pullsync_node;
pub mod seeds;
