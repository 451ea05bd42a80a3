//! Fuzz drivers for the sans-IO cores of `syncscope-proto`. Each module has a `run(data)` that a
//! target in `fuzz_targets/` hands libFuzzer's input to, and that panics only on a bug:
//!
//! - [`bitswap_message`]: `bitswap::Message::decode` of any bytes, and re-encoding what decodes;
//! - [`bitswap_node`]: a Bitswap `Node` fed an arbitrary sequence of peers, messages, session
//!   commands, store arrivals and timeouts;
//! - [`framing`]: the length-prefixed `FrameDecoder` fed one byte stream cut into arbitrary reads,
//!   against a whole-stream reference;
//! - [`pullsync_node`]: a pull-sync `Node` fed an arbitrary sequence of peers connecting and
//!   leaving, stream events (raw bytes or real frames) and timeouts.
//!
//! [`driver`] is what the node harnesses share: the drain loop, the clock and the timer, as a glue
//! runs them. [`seeds`] writes the committed seed corpus (`seeds/<target>/`) from real encoded messages and
//! recorded Bitswap and pull-sync exchanges.

pub mod bitswap_message;
pub mod bitswap_node;
pub mod driver;
pub mod framing;
pub mod pullsync_node;
pub mod seeds;
