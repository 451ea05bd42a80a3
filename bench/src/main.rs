//! `syncscope-bench`: one binary, one subcommand per benchmark. Each prints a table.

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};

mod alloc_counter;
mod bitswap;
mod bitswap_net;
mod bitswap_sweep;
mod bitswap_targets;
mod delay_proxy;
mod libp2p_host;
mod pullsync;
mod relay;
mod report;

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
    /// Bitswap sessions vs the legacy client on the seed's matrix, realistic, datacenter and
    /// slow-link sets.
    Bitswap(bitswap::Args),
    /// Bitswap over real libp2p swarms on loopback TCP: sessions vs legacy, one and three seeds
    /// holding every block, and three behind a delay proxy holding one block each, beside the
    /// simulator's figures for that layout.
    BitswapNet(bitswap_net::Args),
    /// The relay under load: memory per connection, throughput through one circuit, relayed dial
    /// time (real processes on loopback).
    Relay(relay::Args),
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
        Command::Bitswap(args) => bitswap::run(args),
        Command::BitswapNet(args) => bitswap_net::run(args),
        Command::Relay(args) => relay::run(args).map_err(|e| format!("{e:#}")),
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

    #[test]
    fn pullsync_flags_parse_and_bad_ones_are_refused() {
        let ok = ["syncscope-bench", "pullsync", "--format", "json", "--ops", "7"];
        assert!(Cli::try_parse_from(ok).is_ok());
        for bad in [["--ops", "2"], ["--format", "xml"], ["--throughput-chunks", "5"]] {
            let args = ["syncscope-bench", "pullsync", bad[0], bad[1]];
            assert!(Cli::try_parse_from(args).is_err(), "{bad:?}");
        }
    }
}
