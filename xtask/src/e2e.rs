//! `cargo xtask e2e`: the browser end-to-end suite against a real relay and real Chromium.

use anyhow::Result;

use crate::cmd;
use crate::{project_root, tools, ui};

pub fn run(filter: Option<&str>) -> Result<()> {
    tools::chromium()?;
    tools::e2e_packages()?;
    ui::build()?;
    cmd::run(cmd::cargo().args(["build", "-p", "syncscope-relay"]))?;
    let root = project_root();
    let mut node = cmd::command("node");
    node.arg("run.mjs")
        .current_dir(root.join("e2e"))
        .env("SYNCSCOPE_RELAY_BIN", root.join("target/debug/syncscope-relay"))
        .env("SYNCSCOPE_DIST", root.join("dist"));
    node.args(filter);
    cmd::run(&mut node)
}
