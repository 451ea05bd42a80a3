//! `cargo xtask demo`: from a fresh checkout to a relay serving the UI, in one command.

use std::os::unix::process::CommandExt;

use anyhow::{Context, Result};

use crate::cmd;
use crate::{project_root, ui};

pub fn run(relay_flags: &[String]) -> Result<()> {
    ui::build(ui::Page::Release)?;
    cmd::run(cmd::cargo().args(["build", "--release", "-p", "syncscope-relay"]))?;
    let root = project_root();
    let relay = root.join("target/release/syncscope-relay");
    let mut cmd = std::process::Command::new(&relay);
    // The demo keeps its identity in the checkout, so its peer id and links survive restarts.
    cmd.arg("--dist").arg(root.join("dist")).arg("--data-dir").arg(root.join(".syncscope/relay"));
    // Someone alone with the demo still has peers to fetch from; flags given later win.
    cmd.args(["--seed-peers", "3", "--seed-content", "8MiB"]);
    cmd.args(relay_flags);
    // Replace this process: Ctrl-C then reaches the relay alone, which shuts down cleanly.
    let err = cmd.exec();
    Err(err).with_context(|| format!("cannot start {}", relay.display()))
}
