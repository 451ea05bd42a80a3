//! `syncscope-bench`: one binary, one subcommand per benchmark. Each prints a table.

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};

mod bitswap;
mod bitswap_net;
mod relay;
mod report;

#[derive(Parser)]
#[command(name = "syncscope-bench", about = "Deterministic syncscope benchmarks")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Bitswap sessions vs the legacy client on the seed's matrix, realistic and datacenter sets.
    Bitswap(bitswap::Args),
    /// Bitswap over real libp2p swarms on loopback TCP: sessions vs legacy, one and three seeds.
    BitswapNet(bitswap_net::Args),
    /// The relay under load: memory per connection, throughput through one circuit, relayed dial
    /// time (real processes on loopback).
    Relay(relay::Args),
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
        Command::Bitswap(args) => bitswap::run(args),
        Command::BitswapNet(args) => bitswap_net::run(args),
        Command::Relay(args) => relay::run(args).map_err(|e| format!("{e:#}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn custom_flags_parse() {
        let cli = Cli::try_parse_from([
            "syncscope-bench",
            "bitswap",
            "--nodes",
            "5",
            "--distribution",
            "random:0.5",
            "--fetch",
            "batchBy10",
            "--bandwidth-mbps",
            "100",
        ]);
        assert!(cli.is_ok());
        let bad = Cli::try_parse_from(["syncscope-bench", "bitswap", "--format", "xml"]);
        assert!(bad.is_err());
        let net = Cli::try_parse_from(["syncscope-bench", "bitswap-net", "--blocks", "10"]);
        assert!(net.is_ok());
        let no_runs = Cli::try_parse_from(["syncscope-bench", "bitswap-net", "--runs", "0"]);
        assert!(no_runs.is_err());
    }
}
