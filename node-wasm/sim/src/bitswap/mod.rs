//! Bitswap on the simulated network: a node that wraps [`syncscope_proto::bitswap::Node`] with an
//! in-memory store and a fetch plan, the seed's scenarios, and the rows the benchmark prints.

mod fetch;
mod node;
mod run;
mod scenario;
mod seed_figures;

pub use fetch::{Distribution, FetchPattern};
pub use node::SimBitswapNode;
pub use run::{result_hash, run, run_with, RunResult};
pub use scenario::{
    datacenter_set, fixed_delay_matrix, realistic_set, slow_link_set, Scenario, SeedJoins,
};
pub use seed_figures::{seed_figures, SeedFigures};
