//! Builds the browser UI into `dist/` with Trunk.

use anyhow::Result;

use crate::cmd;
use crate::tools;

pub fn build() -> Result<()> {
    tools::wasm_target()?;
    tools::wasm_bindgen()?;
    tools::trunk()?;
    let binaryen = tools::binaryen()?;
    let path = std::env::join_paths(
        std::iter::once(binaryen)
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )?;
    cmd::run(cmd::command("trunk").args(["build", "--release", "--offline"]).env("PATH", path))
}
