//! `cargo xtask test`: every check, in order, each stage reported on one line at the end.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::cmd;
use crate::{e2e, fuzz, interop, tidy, tools};

struct Stage {
    name: &'static str,
    run: fn() -> Result<()>,
}

const STAGES: &[Stage] = &[
    Stage { name: "tidy", run: tidy::run },
    Stage { name: "fmt", run: fmt },
    Stage { name: "clippy (native)", run: clippy_native },
    Stage { name: "clippy (wasm32)", run: clippy_wasm },
    Stage { name: "tests (native)", run: || cmd::run(cmd::cargo().arg("test")) },
    Stage { name: "fuzz (libFuzzer, 20 s per target)", run: || fuzz::run(fuzz::TEST_SECONDS) },
    Stage { name: "tests (wasm32, headless Chromium)", run: wasm_tests },
    Stage { name: "end-to-end (Playwright)", run: || e2e::run(None) },
    Stage { name: "interop (Helia, kubo)", run: || interop::run(&[]) },
];

fn fmt() -> Result<()> {
    cmd::run(cmd::cargo().args(["fmt", "--all", "--", "--check"]))?;
    // The fuzz targets are a workspace of their own.
    cmd::run(cmd::cargo().args(["fmt", "--manifest-path", fuzz::MANIFEST, "--", "--check"]))
}

fn clippy_native() -> Result<()> {
    cmd::run(cmd::cargo().args(["clippy", "--all-targets", "--", "-D", "warnings"]))
}

fn clippy_wasm() -> Result<()> {
    tools::wasm_target()?;
    cmd::run(
        wasm(cmd::cargo().args([
            "clippy",
            "-p",
            "syncscope-node",
            "-p",
            "syncscope-ui",
            "--all-targets",
        ]))
        .args(["--", "-D", "warnings"]),
    )
}

fn wasm_tests() -> Result<()> {
    tools::wasm_target()?;
    tools::wasm_bindgen()?;
    tools::chromium()?;
    cmd::run(wasm(cmd::cargo().args(["test", "-p", "syncscope-node", "-p", "syncscope-ui"])))
}

fn wasm(cmd: &mut Command) -> &mut Command {
    cmd.args(["--target", "wasm32-unknown-unknown"])
}

pub fn run() -> Result<()> {
    let mut results = Vec::new();
    for stage in STAGES {
        println!("\n=== {} ===", stage.name);
        let started = Instant::now();
        let outcome = (stage.run)();
        if let Err(e) = &outcome {
            eprintln!("error: {e:#}");
        }
        results.push((stage.name, outcome.is_ok(), started.elapsed()));
    }
    summarise(&results)
}

fn summarise(results: &[(&str, bool, Duration)]) -> Result<()> {
    println!("\n=== summary ===");
    for (name, ok, took) in results {
        println!("{} {name} ({:.1} s)", if *ok { "PASS" } else { "FAIL" }, took.as_secs_f64());
    }
    let failed = results.iter().filter(|(_, ok, _)| !ok).count();
    println!("{} passed, {failed} failed", results.len() - failed);
    if failed > 0 {
        anyhow::bail!("{failed} stage(s) failed");
    }
    Ok(())
}
