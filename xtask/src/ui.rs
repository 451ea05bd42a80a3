//! Builds the browser UI into `dist/` with Trunk, then checks its `.wasm` imports nothing from
//! `env`.

use anyhow::Result;

use crate::cmd;
use crate::{project_root, tidy, tools};

pub fn build() -> Result<()> {
    tools::wasm_target()?;
    tools::wasm_bindgen()?;
    tools::trunk()?;
    let binaryen = tools::binaryen()?;
    let path = std::env::join_paths(
        std::iter::once(binaryen)
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )?;
    cmd::run(cmd::command("trunk").args(["build", "--release", "--offline"]).env("PATH", path))?;
    tidy::wasm::check_dir(&project_root().join("dist"))
}
