//! `cargo xtask interop [--release] [FILTER]`: the interop matrix (`interop/run.mjs`), syncscope's
//! native peer against Helia 7 and kubo 0.22 on loopback. The test stage runs it on the debug
//! build it shares with the native tests; `--release` gives the figures worth quoting.

use anyhow::Result;

use crate::e2e::RelayBuild;
use crate::{cmd, project_root, tools};

pub fn run(args: &[String]) -> Result<()> {
    let release = args.iter().any(|a| a == "--release");
    let filter = args.iter().find(|a| *a != "--release");
    tools::helia_peer()?;
    tools::kubo_peer()?;
    let build = if release { RelayBuild::Release } else { RelayBuild::Debug };
    let relay = crate::e2e::relay_binary(build)?;
    let mut node = cmd::command("node");
    node.arg("run.mjs")
        .args(filter)
        .current_dir(project_root().join("interop"))
        .env("SYNCSCOPE_RELAY_BIN", relay);
    cmd::run(&mut node)
}
