//! Builds the browser UI into `dist/` with Trunk (the size-optimised `ui-release` profile, set in
//! `public/index.html`), checks its `.wasm` imports nothing from `env`, and precompresses it.

use anyhow::Result;

use crate::cmd;
use crate::{compress, project_root, tidy, tools};

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
    let dist = project_root().join("dist");
    tidy::wasm::check_dir(&dist)?;
    for (file, raw, br) in compress::dist(&dist)? {
        println!("dist/{file}: {raw} bytes, {br} with brotli");
    }
    Ok(())
}
