//! `softrouter bench`: the command line of the benchmark (the run itself
//! is [`crate::run`]).
//!
//! Every flag has a twin in the experiment file (TOML, see `settings`):
//! flags are typed by clap with the settings' own parsers, and applied as
//! a typed overlay over the file's settings in one place
//! ([`build_settings`]: [`apply_flags`], [`apply_dut_flags`]); the result
//! goes through the settings' one validator, and the resolved settings
//! written into the results repeat the run exactly (`--save-experiment`
//! writes them without running). A flag added here is a field of
//! [`BenchArgs`] and one line of the overlay. Not settings: `--experiment`,
//! `--save-experiment`, `--quiet` and `--softrouter-bin` (a path on this
//! machine; the DUT's version string is recorded instead).
//!
//! With no arguments it runs the quick comparison suite: softrouter and the
//! Linux kernel on the same namespace testbed, throughput (NDR and PDR)
//! and latency at 64, 512 and 1518 bytes and IMIX, side by side.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use crate::run::{self, RunOptions};
use bench::settings::{
    DutKind, DutSettings, FastPathMode, GoalEntry, IpVersion, Pattern, PortDriver, Preset, RpsMode,
    Settings, SoftrouterMode, TestKind, TesterBackend,
};

/// Options of `softrouter bench` (all optional; see `--help`).
#[derive(Args, Debug, Default, Clone)]
#[command(
    about = "RFC 2544 benchmark on a namespace testbed (no arguments: quick softrouter vs linux suite)"
)]
pub struct BenchArgs {
    /// Experiment file (TOML) with any of the options below; flags override it.
    #[arg(long, short = 'e', value_name = "FILE")]
    pub experiment: Option<PathBuf>,
    /// Devices under test, run one after the other on fresh testbeds:
    /// softrouter, linux, bridge, ovs, floor, command, external (comma
    /// separated).
    #[arg(long, value_delimiter = ',', value_name = "KIND")]
    pub dut: Vec<DutKind>,
    /// Tests: throughput, latency, loss, back-to-back, recovery.
    #[arg(long, value_delimiter = ',', value_name = "TEST")]
    pub test: Vec<TestKind>,
    /// Frame sizes: RFC 2544 sizes, imix, or a mix of sizes and their
    /// weights; e.g. 64,128,imix or "imix:64x7+594x4+1518x1" (what imix
    /// alone means).
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,
    /// IP version: 4, 6 or both.
    #[arg(long)]
    pub ip: Option<IpVersion>,
    /// Traffic pattern: one-to-one, bidirectional, mesh:N, many-to-one:N.
    #[arg(long)]
    pub pattern: Option<Pattern>,
    /// Flows per port pair (addresses and ports varied, for RSS).
    #[arg(long)]
    pub flows: Option<u32>,
    /// Queues per veth (multi-queue DUT).
    #[arg(long)]
    pub queues: Option<u32>,
    /// Durations preset: quick or rfc.
    #[arg(long)]
    pub preset: Option<Preset>,
    /// A smoke run of the experiment in a few minutes: its first frame
    /// size only, one 0.5 s stream of 0.1 s trials a load, a 5 % goal
    /// width, 0.25 s pauses and drains (flags given as well still win).
    /// The figures are rough; the full run is the result.
    #[arg(long)]
    pub quick: bool,
    /// Trial length of throughput and loss trials, seconds.
    #[arg(long)]
    pub trial_seconds: Option<f64>,
    /// Pause between trials, seconds.
    #[arg(long)]
    pub pause_seconds: Option<f64>,
    /// Drain time after the last frame, seconds.
    #[arg(long)]
    pub drain_seconds: Option<f64>,
    /// Latency trial length, seconds.
    #[arg(long)]
    pub latency_seconds: Option<f64>,
    /// Throughput search goals (RFC 9971), in order: built-in names
    /// (ndr, pdr: the preset's; rfc2544: strict RFC 2544) or goal codes
    /// <final s>f<sum s>d<loss %>l<exceed %>e[<width %>w][<initial s>i],
    /// e.g. `ndr,pdr,rfc2544` or `1f21d0.1l50e`. Default: ndr,pdr.
    #[arg(long, value_delimiter = ',', value_name = "GOALS")]
    pub goals: Vec<String>,
    /// Runs every DUT N times, in turn (A B A B ...), each a fresh start
    /// after the round's own calibration of the tester, and reports each
    /// DUT's median and range and the ratios from the medians with their
    /// range (default 1).
    #[arg(long, value_name = "N")]
    pub repeat: Option<u32>,
    /// CPUs for the xdp tester, the last N (default 1): one generator and
    /// one receive queue each; the DUT keeps the others. Every sending
    /// port needs a multiple of N flows (--flows).
    #[arg(long, value_name = "N")]
    pub tester_cpus: Option<u32>,
    /// The DUT the comparison divides by (its name in the tables, e.g.
    /// linux); default: the last DUT run.
    #[arg(long, value_name = "DUT")]
    pub baseline: Option<String>,
    /// Maximum offered rate per port, frames/s (default: the tester's
    /// calibrated maximum).
    #[arg(long)]
    pub max_rate_fps: Option<f64>,
    /// Link speed of the ports in bit/s (10GbE: e.g. 1e10): the rate
    /// searches start from its theoretical frame rate (RFC 2544 R2)
    /// instead of the tester's calibration. For real NICs; leave it out
    /// on veth, which has no line rate.
    #[arg(long, value_name = "BPS")]
    pub link_bps: Option<f64>,
    /// JSON results file: every DUT's run in one document.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// CSV file, one row per trial of every DUT (a `dut` column).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// SVG chart of throughput (and latency) per frame size, all DUTs in one.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// HTML report of the run (as `softrouter report` writes it): one
    /// self-contained page, every DUT, with the experiment's `[[paper]]` rows.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// softrouter DUT: worker threads.
    #[arg(long)]
    pub workers: Option<u32>,
    /// softrouter DUT: reception mode poll, interrupt (default) or adaptive.
    #[arg(long)]
    pub mode: Option<SoftrouterMode>,
    /// softrouter DUT: packet I/O driver afxdp or afpacket.
    #[arg(long)]
    pub driver: Option<PortDriver>,
    /// softrouter DUT: its XDP tier, xdp or off; both (`xdp,off`) runs
    /// softrouter twice, so both tiers are compared with the other DUTs.
    #[arg(long, value_delimiter = ',')]
    pub fast_path: Vec<FastPathMode>,
    /// softrouter DUT: use this router config instead of a generated one.
    #[arg(long, value_name = "FILE")]
    pub router_config: Option<PathBuf>,
    /// linux DUT: NAPI budget (net.core.netdev_budget).
    #[arg(long)]
    pub napi_budget: Option<u32>,
    /// linux DUT: receive-processing CPUs (RPS): off, all, per-port or a hex mask.
    #[arg(long)]
    pub rps: Option<RpsMode>,
    /// linux DUT: software interrupt coalescing, the DUT veth ends'
    /// napi_defer_hard_irqs (NAPI completions not re-armed; needs
    /// --gro-flush-timeout-us).
    #[arg(long, value_name = "N")]
    pub napi_defer_hard_irqs: Option<u32>,
    /// linux DUT: the DUT veth ends' gro_flush_timeout in µs, the timer
    /// that polls a deferring NAPI again.
    #[arg(long, value_name = "US")]
    pub gro_flush_timeout_us: Option<u32>,
    /// command DUT: the command line, run in the DUT namespace.
    #[arg(long)]
    pub command: Option<String>,
    /// external DUT: tester interfaces cabled to the device, in port order.
    #[arg(long, value_delimiter = ',')]
    pub interfaces: Vec<String>,
    /// Tester packet I/O: xdp (default: XDP live frames out, counting in
    /// XDP), afxdp (AF_XDP
    /// receiver, analysis in user space with IPDV) or afpacket.
    #[arg(long)]
    pub tester: Option<TesterBackend>,
    /// The softrouter binary to start as DUT (default: this program).
    #[arg(long, value_name = "FILE")]
    pub softrouter_bin: Option<PathBuf>,
    /// Write the resolved experiment (TOML) here and exit.
    #[arg(long, value_name = "FILE")]
    pub save_experiment: Option<PathBuf>,
    /// Leave CPU placement to the scheduler (default: the tester on the
    /// last CPU, the DUT on the others, the host's other threads kept off
    /// the DUT's CPUs for the run, idle CPUs polling). No soakers.
    #[arg(long)]
    pub no_pin: bool,
    /// CPU soakers: an idle-priority spinner on each DUT CPU measures the
    /// DUT's CPU use (`dut::soak`). Off by default: near the DUT's
    /// capacity the kernel runs them for up to 50 ms a second and the
    /// DUT loses frames meanwhile.
    #[arg(long, conflicts_with = "no_pin")]
    pub soak: bool,
    /// Profile the kernel DUTs (linux, bridge, ovs) with perf in every
    /// trial and report their cycles per packet by stage (rx, tx,
    /// memory, skb, processing; paper 001's Table II; `dut::stages`).
    #[arg(long)]
    pub profile_stages: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

impl BenchArgs {
    fn is_empty(&self) -> bool {
        self.experiment.is_none()
            && self.dut.is_empty()
            && self.test.is_empty()
            && self.sizes.is_none()
    }
}

/// Runs `softrouter bench`. Exit code 2 for bad settings.
pub fn run(args: BenchArgs) -> Result<ExitCode> {
    let runs = match build_settings(&args) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("softrouter bench: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    if let Some(path) = &args.save_experiment {
        for s in &runs {
            let name = match &s.dut {
                DutSettings::Softrouter {
                    fast_path: Some(FastPathMode::Off),
                    ..
                } => "softrouter-noxdp",
                d => d.kind().name(),
            };
            let p = per_dut_path(path, name, runs.len());
            std::fs::write(&p, s.to_toml()).with_context(|| format!("writing {}", p.display()))?;
            eprintln!("softrouter bench: wrote {}", p.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    testbed::install_ctrlc_cleanup()?;
    // A bench killed with SIGKILL leaves namespaces and settings behind:
    // undo them now, and journal this run's so the next one can.
    let reaped = testbed::journal::reap()?;
    if reaped != testbed::journal::Reaped::default() {
        eprintln!(
            "softrouter bench: removed what a killed run left: namespaces {:?}, restored {:?}",
            reaped.namespaces, reaped.settings
        );
    }
    testbed::journal::enable()?;
    let softrouter_bin = match &args.softrouter_bin {
        Some(p) => p.clone(),
        None => std::env::current_exe().context("locating the softrouter binary")?,
    };
    run::run(
        &runs,
        &RunOptions {
            softrouter_bin: Some(softrouter_bin),
            quiet: args.quiet,
            baseline: args.baseline.clone(),
        },
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `exp.toml` + linux -> `exp-linux.toml` when several DUTs are saved
/// (an experiment file holds one DUT).
fn per_dut_path(path: &Path, kind: &str, n: usize) -> PathBuf {
    if n <= 1 {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("experiment");
    let name = match path.extension().and_then(|e| e.to_str()) {
        Some(ext) => format!("{stem}-{kind}.{ext}"),
        None => format!("{stem}-{kind}"),
    };
    path.with_file_name(name)
}

/// `--quick`: the experiment's first frame size only, and short trials,
/// pauses and drains; each search goal decided by one 0.5 s trial at a
/// 5 % width (flags applied after this still override it).
fn quicken(s: &mut Settings) {
    s.sizes.truncate(1);
    let goals = s
        .goals
        .get_or_insert_with(|| vec![GoalEntry::named("ndr"), GoalEntry::named("pdr")]);
    // One 0.5 s stream of five 0.1 s windows decides a load.
    for g in goals {
        g.final_trial_seconds = Some(0.1);
        g.initial_trial_seconds = Some(0.1);
        g.duration_sum_seconds = Some(0.5);
        g.width_pct = Some(5.0);
    }
    s.trial_seconds = Some(0.5);
    s.latency_seconds = Some(0.5);
    s.pause_seconds = Some(0.25);
    s.drain_seconds = Some(0.25);
}

/// Sets `*to` when the flag was given.
fn set<T: Clone>(to: &mut T, flag: Option<&T>) {
    if let Some(v) = flag {
        *to = v.clone();
    }
}

/// Sets the `Option` setting `*to` when the flag was given.
fn set_some<T: Clone>(to: &mut Option<T>, flag: Option<&T>) {
    if let Some(v) = flag {
        *to = Some(v.clone());
    }
}

/// The flags that are top-level settings, applied over `s` (the typed
/// overlay: a flag given replaces the file's value, one not given leaves
/// it; the DUT's flags are [`apply_dut_flags`]).
fn apply_flags(args: &BenchArgs, s: &mut Settings) -> Result<()> {
    if !args.test.is_empty() {
        s.tests = args.test.clone();
    }
    if let Some(list) = &args.sizes {
        s.sizes = bench::sizes::parse_sizes(list).map_err(|e| anyhow::anyhow!("--sizes: {e}"))?;
    }
    if !args.goals.is_empty() {
        s.goals = Some(args.goals.iter().map(|g| GoalEntry::named(g)).collect());
    }
    set(&mut s.ip, args.ip.as_ref());
    set(&mut s.pattern, args.pattern.as_ref());
    set(&mut s.preset, args.preset.as_ref());
    set(&mut s.tester, args.tester.as_ref());
    set(&mut s.flows, args.flows.as_ref());
    set(&mut s.queues, args.queues.as_ref());
    set(&mut s.repeat, args.repeat.as_ref());
    set(&mut s.tester_cpus, args.tester_cpus.as_ref());
    set_some(&mut s.trial_seconds, args.trial_seconds.as_ref());
    set_some(&mut s.pause_seconds, args.pause_seconds.as_ref());
    set_some(&mut s.drain_seconds, args.drain_seconds.as_ref());
    set_some(&mut s.latency_seconds, args.latency_seconds.as_ref());
    set_some(&mut s.max_rate_fps, args.max_rate_fps.as_ref());
    set_some(&mut s.link_bps, args.link_bps.as_ref());
    set_some(&mut s.json, args.json.as_ref());
    set_some(&mut s.csv, args.csv.as_ref());
    set_some(&mut s.plot, args.plot.as_ref());
    set_some(&mut s.report, args.report.as_ref());
    if args.no_pin {
        s.pin_cpus = false;
        s.soak = false;
    }
    if args.soak {
        s.soak = true;
    }
    if args.profile_stages {
        s.profile_stages = true;
    }
    Ok(())
}

/// The flags that are options of the DUT `d`, applied over it (flags of
/// another kind of DUT are not its options and leave it alone).
fn apply_dut_flags(args: &BenchArgs, d: &mut DutSettings) {
    match d {
        DutSettings::Softrouter {
            config,
            workers,
            mode,
            driver,
            ..
        } => {
            set_some(workers, args.workers.as_ref());
            set_some(mode, args.mode.as_ref());
            set_some(driver, args.driver.as_ref());
            set_some(config, args.router_config.as_ref());
            // Sleeps when idle, works in budgeted rounds under load: the
            // fastest mode on the veth testbed (the DUT CPU also runs its
            // receive softirqs).
            mode.get_or_insert(SoftrouterMode::Interrupt);
        }
        DutSettings::Linux {
            napi_budget,
            rps,
            napi_defer_hard_irqs,
            gro_flush_timeout_us,
            ..
        } => {
            set_some(napi_budget, args.napi_budget.as_ref());
            set_some(rps, args.rps.as_ref());
            set_some(napi_defer_hard_irqs, args.napi_defer_hard_irqs.as_ref());
            set_some(gro_flush_timeout_us, args.gro_flush_timeout_us.as_ref());
        }
        DutSettings::Bridge {} | DutSettings::Ovs {} | DutSettings::Floor {} => {}
        DutSettings::Command { command, .. } => set(command, args.command.as_ref()),
        DutSettings::External { interfaces, .. } => {
            if !args.interfaces.is_empty() {
                *interfaces = args.interfaces.clone();
            }
        }
    }
}

/// A DUT of `kind` with its defaults, for `--dut` when the experiment
/// file configures another kind (or none); `file` names the settings'
/// source in the error for a kind whose required option no flag gave.
fn dut_of(kind: DutKind, args: &BenchArgs, file: &str) -> Result<DutSettings> {
    let missing = |field: &str, flag: &str| {
        anyhow::anyhow!("{file}: field `dut.{field}`: missing (give --{flag})")
    };
    Ok(match kind {
        DutKind::Softrouter => DutSettings::default(),
        DutKind::Linux => DutSettings::Linux {
            napi_budget: None,
            rps: None,
            napi: None,
            napi_defer_hard_irqs: None,
            gro_flush_timeout_us: None,
        },
        DutKind::Bridge => DutSettings::Bridge {},
        DutKind::Ovs => DutSettings::Ovs {},
        DutKind::Floor => DutSettings::Floor {},
        DutKind::Command => DutSettings::Command {
            command: args
                .command
                .clone()
                .ok_or_else(|| missing("command", "command"))?,
            version_command: None,
            addresses: None,
            settle_seconds: None,
        },
        DutKind::External if args.interfaces.is_empty() => {
            return Err(missing("interfaces", "interfaces"))
        }
        DutKind::External => DutSettings::External {
            interfaces: args.interfaces.clone(),
            description: None,
            peer_macs: None,
        },
    })
}

/// The settings of each DUT run: experiment file + flags (+ the quick
/// comparison suite's choices when nothing was asked for).
///
/// The file is parsed and validated alone first, so its errors name its
/// lines; the flags are then a typed overlay over its settings (ripgrep's
/// low-level arguments made into high-level ones), and each run's
/// settings are validated again, an error located where the file sets
/// the field.
pub fn build_settings(args: &BenchArgs) -> Result<Vec<Settings>> {
    let (mut base, text, file) = match &args.experiment {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            let file = p.display().to_string();
            let s = Settings::from_toml_str(&text, &file).map_err(anyhow::Error::msg)?;
            (s, text, file)
        }
        None => (
            Settings::default(),
            String::new(),
            "command line".to_string(),
        ),
    };
    if args.is_empty() {
        // The quick comparison suite (README's main job).
        base.tests = vec![TestKind::Throughput, TestKind::Latency];
        base.sizes = bench::sizes::parse_sizes("64,512,1518,imix").map_err(anyhow::Error::msg)?;
        base.trial_seconds = Some(1.0);
        // The pause stays the quick preset's 0.1 s (its reason in
        // `Settings::pause_seconds`): 0.5 s here was 0.4 s of every one of
        // the suite's ~300 trials, two of its 7-9 minutes.
        base.latency_seconds = Some(1.0);
        // The drain covers what is still in flight: microseconds on
        // veth, a few ms of a kernel backlog.
        base.drain_seconds = Some(0.25);
    }
    if args.quick {
        quicken(&mut base);
    }
    apply_flags(args, &mut base)?;
    let checked = |s: Settings| s.checked(&text, &file).map_err(anyhow::Error::msg);

    // `[[duts]]`: several configured DUTs, each run as `[dut]` would be
    // (unless `--dut` names the DUTs).
    let file_duts = std::mem::take(&mut base.duts);
    if !file_duts.is_empty() && args.dut.is_empty() {
        let mut out = Vec::new();
        for mut dut in file_duts {
            // A router configuration named in the experiment is found
            // next to it, wherever the bench runs from.
            if let (
                DutSettings::Softrouter {
                    config: Some(c), ..
                },
                Some(e),
            ) = (&mut dut, &args.experiment)
            {
                if c.is_relative() {
                    *c = e.parent().unwrap_or(Path::new(".")).join(&*c);
                }
            }
            apply_dut_flags(args, &mut dut);
            out.push(checked(Settings {
                dut,
                ..base.clone()
            })?);
        }
        return Ok(out);
    }
    let kinds: Vec<DutKind> = if !args.dut.is_empty() {
        args.dut.clone()
    } else if args.is_empty() {
        vec![DutKind::Softrouter, DutKind::Linux]
    } else {
        vec![base.dut.kind()]
    };
    let mut out = Vec::new();
    for kind in kinds {
        let mut dut = if base.dut.kind() == kind {
            base.dut.clone()
        } else {
            dut_of(kind, args, &file)?
        };
        apply_dut_flags(args, &mut dut);
        // `--fast-path xdp,off`: one softrouter run per tier.
        let variants: Vec<Option<FastPathMode>> =
            if kind == DutKind::Softrouter && !args.fast_path.is_empty() {
                args.fast_path.iter().copied().map(Some).collect()
            } else {
                vec![None]
            };
        for variant in variants {
            let mut dut = dut.clone();
            if let (DutSettings::Softrouter { fast_path, .. }, Some(f)) = (&mut dut, variant) {
                *fast_path = Some(f);
            }
            out.push(checked(Settings {
                dut,
                ..base.clone()
            })?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
