//! `cargo xtask bench [NAME [FLAGS]]`: one entry point for every benchmark. The benchmarks live in
//! the `syncscope-bench` binary, built in release mode; without a name its help lists them.

use anyhow::Result;

use crate::cmd;
use crate::project_root;

/// Benchmarks that run other binaries of the workspace, which must be built first.
const NEEDS: &[(&str, &[&str])] = &[("relay", &["syncscope-relay"])];

pub fn run(args: &[String]) -> Result<()> {
    if !project_root().join("bench/Cargo.toml").exists() {
        println!("no benchmarks exist yet");
        return Ok(());
    }
    let name = args.first().map(String::as_str);
    for (_, packages) in NEEDS.iter().filter(|(bench, _)| Some(*bench) == name) {
        for package in *packages {
            cmd::run(cmd::cargo().args(["build", "--quiet", "--release", "-p", package]))?;
        }
    }
    let mut bench = cmd::cargo();
    bench.args(["run", "--quiet", "--release", "-p", "syncscope-bench", "--"]);
    if args.is_empty() {
        bench.arg("--help");
    } else {
        bench.args(args);
    }
    cmd::run(&mut bench)
}
