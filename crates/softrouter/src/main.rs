//! `softrouter`: run the router, check a configuration, benchmark, or
//! report on benchmark results.
//!
//! Exit codes of `run` and `check-config`: 0 done (a signal, `--duration`,
//! or the end of the capture input); 1 a failure at start (a port that
//! cannot be opened) or while running (a worker that panicked, an
//! interface that disappeared, statistics not written at exit); 2 bad
//! arguments or an invalid configuration (file:line: field: message).

use anyhow::Result;
use clap::Parser;
use softrouter::cli::{self, Cli, Command, LogFormat};
use softrouter::engine::{self, RunOptions};
use std::process::ExitCode;

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
            if let Err(e) = softrouter::kernel::check_run(&cfg) {
                eprintln!("softrouter: {e}");
                return Ok(ExitCode::from(1));
            }
            if let Some(p) = &stats_json {
                if let Err(e) = softrouter::stats_file::check_target(p) {
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
        Command::Bench(args) => {
            if let Err(e) = softrouter::kernel::check_bench(&args) {
                eprintln!("softrouter bench: {e}");
                return Ok(ExitCode::from(1));
            }
            bench_cli::cli::run(*args)
        }
        #[cfg(feature = "bench")]
        Command::Report(args) => Ok(bench_cli::report::run(args)),
        Command::Completions { shell } => {
            // Into a buffer first: clap_complete panics on a closed pipe.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cli::command(), "softrouter", &mut script);
            std::io::Write::write_all(&mut std::io::stdout(), &script)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { dir: None } => {
            clap_mangen::Man::new(cli::command()).render(&mut std::io::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { dir: Some(dir) } => {
            let mut cmd = cli::command();
            cmd.build();
            cli::write_man_pages(&cmd, "softrouter", &dir)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
