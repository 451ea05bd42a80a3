//! `cargo xtask fuzz [SECONDS]`, and the fuzz stage of `cargo xtask test`: runs every cargo-fuzz
//! target of the sans-IO cores (`node-wasm/proto/fuzz`) for a fixed time, starting from the
//! committed seeds, and fails on the first crash (cargo-fuzz prints how to reproduce it; the
//! input is kept in `node-wasm/proto/fuzz/artifacts/`).
//!
//! This is libFuzzer on the stable toolchain: with `-s none` (no sanitizer) cargo-fuzz passes
//! only stable flags (`-Cpasses=sancov-module` and LLVM options for the coverage counters), so
//! no nightly is needed. `-a` keeps debug assertions and overflow checks on in the optimised
//! build. The corpus grown by a run stays in the git-ignored `fuzz/corpus/`, so local runs build
//! on each other; CI starts from the seeds.

use anyhow::Result;

use crate::{cmd, tools};

/// Where `cargo fuzz` runs: the crate whose `fuzz/` folder holds the targets.
const CRATE_DIR: &str = "node-wasm/proto";
pub const MANIFEST: &str = "node-wasm/proto/fuzz/Cargo.toml";
pub const TARGETS: &[&str] = &["bitswap_message", "bitswap_node", "framing", "pullsync_node"];
/// Seconds per target in `cargo xtask test`: enough to replay the seeds and mutate them for a
/// while, little next to the build (about 2.5 min from scratch on two cores).
pub const TEST_SECONDS: u32 = 20;

pub fn run(seconds: u32) -> Result<()> {
    tools::cargo_fuzz()?;
    let fuzz = || {
        let mut cmd = cmd::cargo();
        cmd.current_dir(crate::project_root().join(CRATE_DIR)).arg("fuzz");
        cmd
    };
    cmd::run(fuzz().args(["build", "-s", "none", "-a"]))?;
    for target in TARGETS {
        let corpus = format!("fuzz/corpus/{target}");
        std::fs::create_dir_all(crate::project_root().join(CRATE_DIR).join(&corpus))?;
        cmd::run(
            fuzz()
                .args(["run", "-s", "none", "-a", target, &corpus, &format!("fuzz/seeds/{target}")])
                .args(["--", &format!("-max_total_time={seconds}"), "-print_final_stats=1"]),
        )?;
    }
    Ok(())
}
