//! `softrouter`: run the router, check a configuration, or benchmark.

use anyhow::Result;
use clap::{Parser, Subcommand};
use softrouter::engine::{self, RunOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "softrouter",
    version,
    about = "A multicore user-space IP router and RFC 2544 benchmark"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the router with a configuration file.
    Run {
        #[arg(long, short)]
        config: PathBuf,
        /// Stop after this many seconds (default: until SIGINT/SIGTERM, or
        /// until all capture input is consumed when every port is `pcap`).
        #[arg(long)]
        duration: Option<f64>,
        /// Write statistics as JSON here at exit (and on SIGUSR1).
        #[arg(long)]
        stats_json: Option<PathBuf>,
    },
    /// Validate a configuration file without running.
    CheckConfig { config: PathBuf },
    /// RFC 2544 benchmark on a namespace testbed (no arguments: the quick
    /// softrouter vs Linux suite).
    #[cfg(feature = "bench")]
    Bench(Box<bench::cli::BenchArgs>),
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("softrouter: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Run {
            config,
            duration,
            stats_json,
        } => {
            let cfg = match config::load(&config) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("softrouter: {e}");
                    return Ok(ExitCode::from(2));
                }
            };
            let opts = RunOptions {
                duration: duration.map(Duration::from_secs_f64),
                stats_json,
            };
            let r = engine::run(&cfg, &opts)?;
            let fwd: u64 = r.ports.iter().map(|p| p.tx_packets).sum();
            eprintln!(
                "softrouter: {:.3} s, {} packets sent ({:.3} Mpps), {:.1} cycles/packet (rx {:.1}, process {:.1}, tx {:.1})",
                r.elapsed_s,
                fwd,
                fwd as f64 / r.elapsed_s.max(1e-9) / 1e6,
                r.cycles_per_packet.total,
                r.cycles_per_packet.rx,
                r.cycles_per_packet.process,
                r.cycles_per_packet.tx
            );
            for n in &r.notes {
                eprintln!("softrouter: warning: {n}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::CheckConfig { config } => match softrouter::check::check(&config) {
            Ok(summary) => {
                println!("{}: ok ({summary})", config.display());
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("{e}");
                Ok(ExitCode::from(2))
            }
        },
        #[cfg(feature = "bench")]
        Command::Bench(args) => bench::cli::run(*args),
    }
}
