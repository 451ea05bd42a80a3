//! `cargo xtask bench [NAME [FLAGS]]`: one entry point for every benchmark. The benchmarks live in
//! the `syncscope-bench` binary, built in release mode; without a name its help lists them. The
//! browser benchmark is a Playwright script in `e2e/bench/`, since it needs the UI and Chromium.

use anyhow::Result;

use crate::cmd;
use crate::e2e::{node_script, RelayBuild};
use crate::{project_root, ui};

const BROWSER_HELP: &str = "browser benchmark (run by xtask, not by syncscope-bench):
  browser      The browser node in headless Chromium against a release relay with seed peers:
               raw-link ceilings, fetches over WebSocket and WebRTC-direct (3 seeds and 1),
               their ratio to the ceiling, duplicates, seeds used, longest main-thread task,
               page weight and load time; one row per case (--cases, --runs, --format);
               --profile: page load, one fetch and its ceiling under Chrome's CPU profiler,
                         time by function, and the fetch's extra time per MB by kind of work
                         (--transport ws|webrtc-direct, ws unless given)";

/// Benchmarks that run other binaries of the workspace, which must be built first.
const NEEDS: &[(&str, &[&str])] = &[("relay", &["syncscope-relay"])];

pub fn run(args: &[String]) -> Result<()> {
    if !project_root().join("bench/Cargo.toml").exists() {
        println!("no benchmarks exist yet");
        return Ok(());
    }
    let name = args.first().map(String::as_str);
    if name == Some("browser") {
        let flags = &args[1..];
        let help = flags.iter().any(|a| a == "--help" || a == "-h");
        // Help needs the script's npm packages, nothing built.
        let mut node = match help {
            true => {
                crate::tools::e2e_packages()?;
                let mut node = cmd::command("node");
                node.arg("bench/browser.mjs").current_dir(project_root().join("e2e"));
                node
            }
            false => {
                let profiling = flags.iter().any(|a| a == "--profile");
                let page = if profiling { ui::Page::Profiling } else { ui::Page::Release };
                node_script("bench/browser.mjs", RelayBuild::Release, page)?
            }
        };
        node.args(flags);
        return cmd::run(&mut node);
    }
    for (_, packages) in NEEDS.iter().filter(|(bench, _)| Some(*bench) == name) {
        for package in *packages {
            cmd::run(cmd::cargo().args(["build", "--quiet", "--release", "-p", package]))?;
        }
    }
    let mut bench = cmd::cargo();
    bench.args(["run", "--quiet", "--release", "-p", "syncscope-bench", "--"]);
    if args.is_empty() {
        bench.arg("--help");
        cmd::run(&mut bench)?;
        println!("\n{BROWSER_HELP}");
        return Ok(());
    }
    bench.args(args);
    cmd::run(&mut bench)
}
