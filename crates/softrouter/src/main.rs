//! `softrouter`: run the router, check a configuration, benchmark, or
//! report on benchmark results.
//!
//! Exit codes of `run` and `check-config`: 0 done (a signal, `--duration`,
//! or the end of the capture input); 1 a failure at start (a port that
//! cannot be opened) or while running (a worker that panicked, an
//! interface that disappeared, statistics not written at exit); 2 bad
//! arguments or an invalid configuration (file:line: field: message).

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
    /// Log lines as text (colours only on a terminal) or as JSON objects,
    /// one per line, for a log collector. RUST_LOG sets the level.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// Logs go to stderr (stdout carries `ctl` answers and check-config's
/// verdict).
fn init_logs(format: LogFormat) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let fmt = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => fmt.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => fmt.json().with_current_span(false).init(),
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run the router with a configuration file.
    Run {
        #[arg(long, short)]
        config: PathBuf,
        /// Stop after this many seconds (default: until SIGINT/SIGTERM, or
        /// until all capture input is consumed when every port is `pcap`).
        #[arg(long, value_name = "SECONDS", value_parser = parse_duration, allow_hyphen_values = true)]
        duration: Option<Duration>,
        /// Write statistics as JSON here at exit (and on SIGUSR1).
        #[arg(long)]
        stats_json: Option<PathBuf>,
    },
    /// Validate a configuration file without running.
    CheckConfig { config: PathBuf },
    /// Talk to a running router over its control socket: routes,
    /// neighbours, ports, statistics, reload.
    Ctl(softrouter::ctl::CtlArgs),
    /// RFC 2544 benchmark on a namespace testbed (no arguments: the quick
    /// softrouter vs Linux suite).
    #[cfg(feature = "bench")]
    Bench(Box<bench_cli::cli::BenchArgs>),
    /// One self-contained HTML page from bench results files (exit 2: a
    /// file that cannot be read or parsed).
    #[cfg(feature = "bench")]
    Report(bench_cli::report::ReportArgs),
}

/// Longest `--duration`: about 31 years, far below where a `Duration`
/// overflows.
const MAX_DURATION_S: f64 = 1e9;

/// `--duration`: a finite, non-negative number of seconds (fractions
/// allowed); anything else is a usage error (exit 2), never a panic.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{} is not a number of seconds", config::excerpt(s)))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!(
            "{v} is not a duration: give a finite number of seconds >= 0"
        ));
    }
    if v > MAX_DURATION_S {
        return Err(format!(
            "{v} s is longer than the {MAX_DURATION_S:e} s allowed (leave --duration out to run until stopped)"
        ));
    }
    Duration::try_from_secs_f64(v).map_err(|e| format!("{v}: {e}"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logs(cli.log_format);
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
            // The same validation as check-config, file:line errors: exit 2.
            let cfg = match softrouter::check::load(&config) {
                Ok(c) => c.config,
                Err(e) => {
                    eprintln!("softrouter: {e}");
                    return Ok(ExitCode::from(2));
                }
            };
            if let Some(p) = &stats_json {
                if let Err(e) = softrouter::report::check_target(p) {
                    eprintln!("softrouter: --stats-json: {e}");
                    return Ok(ExitCode::from(2));
                }
            }
            let opts = RunOptions {
                duration,
                stats_json,
            };
            let r = engine::run(&cfg, &opts)?;
            let fwd: u64 = r.ports.iter().map(|p| p.counters.tx_packets).sum();
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
        Command::Ctl(args) => Ok(softrouter::ctl::run(args)),
        #[cfg(feature = "bench")]
        Command::Bench(args) => bench_cli::cli::run(*args),
        #[cfg(feature = "bench")]
        Command::Report(args) => Ok(bench_cli::report::run(args)),
    }
}
