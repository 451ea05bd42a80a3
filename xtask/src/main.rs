//! Project automation, run as `cargo xtask <command>`:
//!
//! - `demo [RELAY FLAGS]`: install what is missing, build the UI, start the relay serving it.
//! - `test`: every check CI runs, stage by stage, with a summary; the tidy checks come first.
//! - `tidy`: only the tidy checks (layout, lints, file sizes, import cycles, typed errors).
//! - `e2e [FILTER]`: only the browser end-to-end suite.
//! - `interop [--release] [FILTER]`: only the interop matrix against Helia and kubo.
//! - `fuzz [SECONDS]`: every fuzz target of the cores for SECONDS each (default 60).
//! - `bench [NAME [FLAGS]]`: list the benchmarks, or run one.

mod bench;
mod cmd;
mod compress;
mod demo;
mod e2e;
mod fuzz;
mod interop;
mod test;
mod tidy;
mod tools;
mod ui;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str =
    "usage: cargo xtask <demo [RELAY FLAGS] | test | tidy | e2e [FILTER] | interop [--release] [FILTER] | fuzz [SECONDS] | bench [NAME [FLAGS]]>";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let command = args.next();
    let rest: Vec<String> = args.collect();
    let result = match command.as_deref() {
        Some("demo") => demo::run(&rest),
        Some("test") if rest.is_empty() => test::run(),
        Some("tidy") if rest.is_empty() => tidy::run(),
        Some("e2e") => e2e::run(rest.first().map(String::as_str)),
        Some("interop") => interop::run(&rest),
        Some("fuzz") if rest.len() <= 1 => match rest.first().map(|s| s.parse::<u32>()) {
            None => fuzz::run(60),
            Some(Ok(seconds)) => fuzz::run(seconds),
            Some(Err(e)) => Err(anyhow::anyhow!("fuzz SECONDS: {e}; {USAGE}")),
        },
        Some("bench") => bench::run(&rest),
        Some("-h" | "--help") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => Err(anyhow::anyhow!("unknown command or arguments `{other}`; {USAGE}")),
        None => Err(anyhow::anyhow!("{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root, whatever directory cargo was started from.
pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}
