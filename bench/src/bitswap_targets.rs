//! The Bitswap issue's targets for a sessions row of the seed's matrix, shared by the matrix table
//! and the sweep's frontier.

use syncscope_proto::bitswap::ClientMode;
use syncscope_sim::bitswap::{RunResult, Scenario};

/// The targets for one sessions row of the seed's matrix.
pub(crate) struct Targets {
    pub time_vs_poc: bool,
    pub dup_vs_poc: bool,
    pub dup_abs: bool,
    pub near_bound: bool,
}

/// The one scenario allowed 10 % duplicates instead of 2 %.
pub(crate) const DUP_EXCEPTION: &str = "200Nodes-AllToAll-BigBatch";

pub(crate) fn targets(s: &Scenario, r: &RunResult) -> Option<Targets> {
    let f = s.seed_figures()?;
    if r.mode != ClientMode::Sessions {
        return None;
    }
    let dup_limit = if s.name == DUP_EXCEPTION { 10.0 } else { 2.0 };
    Some(Targets {
        time_vs_poc: r.complete && ms(r.time) <= f.poc_time_ms,
        dup_vs_poc: r.dup_pct() <= f.poc_dup_pct + 1e-9,
        dup_abs: r.dup_pct() <= dup_limit,
        near_bound: r.complete && r.time.as_secs_f64() <= 1.15 * r.lower_bound.as_secs_f64(),
    })
}

/// Milliseconds, as the Bitswap tables print times.
pub(crate) fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
