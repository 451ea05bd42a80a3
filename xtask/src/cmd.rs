//! Running commands: echo them, fail with the command line in the error, and find `cargo`.

use std::ffi::OsStr;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::project_root;

/// `$CARGO` when run through cargo, so the same toolchain builds everything.
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(project_root());
    cmd
}

pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(project_root());
    cmd
}

/// Runs `cmd` with inherited output and fails unless it exits with success.
pub fn run(cmd: &mut Command) -> Result<()> {
    let line = describe(cmd);
    println!("$ {line}");
    let status = cmd.status().with_context(|| format!("cannot start `{line}`"))?;
    if !status.success() {
        bail!("`{line}` failed ({status})");
    }
    Ok(())
}

/// Runs `cmd` quietly and returns its stdout, or `None` if it cannot start or fails.
pub fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd.stderr(Stdio::null()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn describe(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|s| s.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}
