//! Metrics recorded from the protocol cores, cheap to sample for the UI's charts. Cores count in
//! their plain `stats()` structs; this module turns those and their events into what is plotted.
//! Time is passed in, so the same code measures virtual time in the simulator and real time in a
//! node.

pub mod pullsync;
pub mod timeseries;

pub use pullsync::{PullsyncCounters, PullsyncMetrics};
pub use timeseries::{Sample, Timeseries};
