//! Builds the browser UI with Trunk: into `dist/` with the size-optimised `ui-release` profile (set
//! in `public/index.html`), checked to import nothing from `env` and precompressed; or, for
//! profiling, the same code with its function names kept and without wasm-opt, into
//! `target/dist-profiling/`.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::cmd;
use crate::{compress, project_root, tidy, tools};

/// Which build of the page.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Page {
    /// What the relay serves users.
    Release,
    /// The release code with its names, so that a CPU profile says which functions ran.
    Profiling,
}

/// Builds `page` and returns its folder.
pub fn build(page: Page) -> Result<PathBuf> {
    tools::wasm_target()?;
    tools::wasm_bindgen()?;
    tools::trunk()?;
    let binaryen = tools::binaryen()?;
    let path = std::env::join_paths(
        std::iter::once(binaryen)
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )?;
    let mut trunk = cmd::command("trunk");
    trunk
        .args(["build", "--release", "--offline=true"])
        .env("PATH", path)
        .env("CARGO_ENCODED_RUSTFLAGS", rustflags());
    let dist = match page {
        Page::Release => project_root().join("dist"),
        Page::Profiling => {
            let dist = project_root().join("target/dist-profiling");
            trunk.arg(profiling_html()?).arg("--dist").arg(&dist);
            dist
        }
    };
    cmd::run(&mut trunk)?;
    if page == Page::Release {
        tidy::wasm::check_dir(&dist)?;
        for (file, raw, br) in compress::dist(&dist)? {
            println!("dist/{file}: {raw} bytes, {br} with brotli");
        }
    }
    Ok(dist)
}

/// `.cargo/config.toml`'s flags for wasm32, which `CARGO_ENCODED_RUSTFLAGS` replaces, and the
/// remapped source paths.
fn rustflags() -> String {
    ["-Ctarget-feature=+simd128".to_string(), remapped_source_paths()].join("\x1f")
}

/// Rustc flags that name each dependency's sources from its own folder: a panic location
/// otherwise carries the builder's absolute path (`/home/…/.cargo/registry/src/index.crates.io-
/// 1949cf8c6b5b557f/yamux-0.13.8/src/…`) into the page, which tells every visitor about the
/// build machine, makes the wasm differ from machine to machine and costs about 800 bytes with
/// brotli. Encoded (separated by 0x1f), so that a path may hold spaces; Trunk names the target,
/// so build scripts and proc macros do not get them.
fn remapped_source_paths() -> String {
    let cargo_home = std::env::var_os("CARGO_HOME").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo")
    });
    let registries = std::fs::read_dir(cargo_home.join("registry/src"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|index| index.path());
    let roots = registries.chain([cargo_home.join("git/checkouts")]).chain([project_root()]);
    roots
        .map(|root| format!("--remap-path-prefix={}/=", root.display()))
        .collect::<Vec<_>>()
        .join("\x1f")
}

/// `public/index.html` with the wasm's names kept and wasm-opt (which drops them) off, written
/// beside it so that its relative links still resolve; git ignores it.
fn profiling_html() -> Result<PathBuf> {
    let public = project_root().join("public");
    let html = std::fs::read_to_string(public.join("index.html"))?;
    let marker = r#"data-wasm-opt="z""#;
    anyhow::ensure!(html.contains(marker), "public/index.html no longer sets {marker}");
    let profiling = html.replace(marker, r#"data-wasm-opt="0" data-keep-debug"#);
    let out = public.join("profiling.html");
    std::fs::write(&out, profiling).with_context(|| format!("writing {}", out.display()))?;
    Ok(out)
}
