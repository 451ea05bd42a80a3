//! `cargo xtask bench [NAME [FLAGS]]`: one entry point for every benchmark. The benchmarks live in
//! the `syncscope-bench` binary, built in release mode; without a name its help lists them.

use anyhow::Result;

use crate::cmd;
use crate::project_root;

pub fn run(args: &[String]) -> Result<()> {
    if !project_root().join("bench/Cargo.toml").exists() {
        println!("no benchmarks exist yet");
        return Ok(());
    }
    let mut cmd = cmd::cargo();
    cmd.args(["run", "--quiet", "--release", "-p", "syncscope-bench", "--"]);
    if args.is_empty() {
        cmd.arg("--help");
    } else {
        cmd.args(args);
    }
    cmd::run(&mut cmd)
}
