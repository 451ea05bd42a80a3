//! `cargo xtask e2e`: the browser end-to-end suite against a real relay and real Chromium. The
//! browser benchmark (`cargo xtask bench browser`) runs from the same npm package.

use std::path::PathBuf;
use std::process::Command;

use anyhow::Result;

use crate::cmd;
use crate::{project_root, tools, ui};

/// Which build of the relay a script runs against.
#[derive(Clone, Copy)]
pub enum RelayBuild {
    /// The tests: shares the debug build with the native tests.
    Debug,
    /// The benchmark: measures what users run.
    Release,
}

pub fn run(filter: Option<&str>) -> Result<()> {
    let mut node = node_script("run.mjs", RelayBuild::Debug, ui::Page::Release)?;
    node.args(filter);
    cmd::run(&mut node)
}

/// `node SCRIPT` in `e2e/`, once Chromium, the npm packages, the built `page` and the relay are
/// ready; the relay binary and the page's folder are passed in the environment.
pub fn node_script(script: &str, relay: RelayBuild, page: ui::Page) -> Result<Command> {
    tools::chromium()?;
    tools::e2e_packages()?;
    tools::helia_peer()?;
    let dist = ui::build(page)?;
    let relay = relay_binary(relay)?;
    let mut node = cmd::command("node");
    node.arg(script)
        .current_dir(project_root().join("e2e"))
        .env("SYNCSCOPE_RELAY_BIN", relay)
        .env("SYNCSCOPE_DIST", dist);
    Ok(node)
}

/// Builds the relay binary and returns its path.
pub fn relay_binary(relay: RelayBuild) -> Result<PathBuf> {
    let mut build = cmd::cargo();
    build.args(["build", "-p", "syncscope-relay"]);
    let profile = match relay {
        RelayBuild::Debug => "debug",
        RelayBuild::Release => {
            build.arg("--release");
            "release"
        }
    };
    cmd::run(&mut build)?;
    Ok(project_root().join("target").join(profile).join("syncscope-relay"))
}
