//! `syncscope-bench`: one binary, one subcommand per benchmark. Each prints a table.

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};

mod alloc_counter;
mod delay_proxy;
mod libp2p_host;
mod pullsync;
mod pullsync_sim;

#[global_allocator]
static ALLOCATOR: alloc_counter::Counting = alloc_counter::Counting;

#[derive(Parser)]
#[command(name = "syncscope-bench", about = "Deterministic syncscope benchmarks")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Pull-sync over real libp2p and in simulation: bee's BenchmarkDeliveryLibP2P matrix and
    /// sustained throughput.
    Pullsync(pullsync::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            e.exit()
        }
        Err(e) => {
            let msg = e.to_string();
            eprintln!("{}", msg.lines().next().unwrap_or("invalid arguments"));
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Pullsync(args) => pullsync::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
