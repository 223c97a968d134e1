//! The command line: its clap definitions, shared by the binary, the
//! generated shell completions and man pages (`softrouter completions`,
//! `softrouter man`) and the test that every example in the help texts and
//! the README parses (tests/help_examples.rs).

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "softrouter",
    version,
    about = "A multicore user-space IP router and RFC 2544 benchmark"
)]
pub struct Cli {
    /// Log lines as text (colours only on a terminal) or as JSON objects,
    /// one per line, for a log collector. RUST_LOG sets the level.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
pub enum Command {
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
    Ctl(crate::ctl::CtlArgs),
    /// RFC 2544 benchmark on a namespace testbed (no arguments: the quick
    /// softrouter vs Linux suite).
    #[cfg(feature = "bench")]
    Bench(Box<bench_cli::cli::BenchArgs>),
    /// One self-contained HTML page from bench results files (exit 2: a
    /// file that cannot be read or parsed).
    #[cfg(feature = "bench")]
    Report(bench_cli::report::ReportArgs),
    /// Shell completions for SHELL on stdout, made from these very
    /// definitions (`make install` puts them in place).
    Completions { shell: clap_complete::Shell },
    /// Man pages from these very definitions: softrouter(1) on stdout, or
    /// one page per subcommand (softrouter-ctl-route.1, ...) in --dir.
    Man {
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// Longest `--duration`: about 31 years, far below where a `Duration`
/// overflows.
pub const MAX_DURATION_S: f64 = 1e9;

/// `--duration`: a finite, non-negative number of seconds (fractions
/// allowed); anything else is a usage error (exit 2), never a panic.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
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

/// The full command line's definition (completions, man pages, tests).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// `NAME.1` for `cmd` and `NAME-SUB.1` for each of its subcommands, down
/// the tree.
pub fn write_man_pages(cmd: &clap::Command, name: &str, dir: &std::path::Path) -> Result<()> {
    use anyhow::Context;
    let page = cmd.clone().name(name.to_string());
    let path = dir.join(format!("{name}.1"));
    let mut f = std::fs::File::create(&path).with_context(|| path.display().to_string())?;
    clap_mangen::Man::new(page).render(&mut f)?;
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        write_man_pages(sub, &format!("{name}-{}", sub.get_name()), dir)?;
    }
    Ok(())
}
