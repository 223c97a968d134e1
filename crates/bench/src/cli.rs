//! `softrouter bench`: the command line of the benchmark.
//!
//! Every flag has a twin in the experiment file (TOML, see `settings`):
//! flags are merged into the file's table *before* it is parsed, so both go
//! through one parser with one set of checks and error messages, and the
//! resolved settings written into the results repeat the run exactly
//! (`--save-experiment` writes them without running).
//!
//! With no arguments it runs the quick comparison suite: softrouter and the
//! Linux kernel on the same namespace testbed, throughput and latency at
//! 64, 512 and 1518 bytes and IMIX, and prints them side by side.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use toml::{Table, Value};

use crate::dut::{self, DutOptions};
use crate::plan::TesterBackend;
use crate::results::{self, DutInfo, RunMeta, RunResults};
use crate::search::{TrialOutcome, TrialSpec};
use crate::settings::{DutSettings, Settings, TestKind};
use crate::sizes::FrameSize;
use crate::suite::{self, Observer};
use crate::traffic;

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
    /// softrouter, linux, command, external (comma separated).
    #[arg(long, value_delimiter = ',', value_name = "KIND")]
    pub dut: Vec<String>,
    /// Tests: throughput, latency, loss, back-to-back, recovery.
    #[arg(long, value_delimiter = ',', value_name = "TEST")]
    pub test: Vec<String>,
    /// Frame sizes, e.g. 64,128,imix or a mix like "64:7,594:4,1518:1".
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,
    /// IP version: 4, 6 or both.
    #[arg(long)]
    pub ip: Option<String>,
    /// Traffic pattern: one-to-one, bidirectional, mesh:N, many-to-one:N.
    #[arg(long)]
    pub pattern: Option<String>,
    /// Flows per port pair (addresses and ports varied, for RSS).
    #[arg(long)]
    pub flows: Option<u32>,
    /// Queues per veth (multi-queue DUT).
    #[arg(long)]
    pub queues: Option<u32>,
    /// Durations preset: quick or rfc.
    #[arg(long)]
    pub preset: Option<String>,
    /// Trial length of throughput and loss trials, seconds.
    #[arg(long)]
    pub trial_seconds: Option<f64>,
    /// Pause between trials, seconds.
    #[arg(long)]
    pub pause_seconds: Option<f64>,
    /// Latency trial length, seconds.
    #[arg(long)]
    pub latency_seconds: Option<f64>,
    /// Confirmation trial length for throughput, seconds (0 = none).
    #[arg(long)]
    pub confirm_seconds: Option<f64>,
    /// Throughput search resolution, % of the maximum rate.
    #[arg(long)]
    pub resolution_pct: Option<f64>,
    /// Loss tolerated by the throughput search, % (0 = RFC 2544 zero loss).
    #[arg(long)]
    pub loss_tolerance_pct: Option<f64>,
    /// Maximum offered rate per port, frames/s (default: the tester's
    /// calibrated maximum).
    #[arg(long)]
    pub max_rate_fps: Option<f64>,
    /// JSON results file (with several DUTs: one file per DUT, the kind
    /// appended to the name).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// CSV file, one row per trial (per DUT like --json).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// SVG chart of throughput (and latency) per frame size, all DUTs in one.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// softrouter DUT: worker threads.
    #[arg(long)]
    pub workers: Option<u32>,
    /// softrouter DUT: reception mode poll, interrupt (default) or adaptive.
    #[arg(long)]
    pub mode: Option<String>,
    /// softrouter DUT: packet I/O driver afxdp or afpacket.
    #[arg(long)]
    pub driver: Option<String>,
    /// softrouter DUT: use this router config instead of a generated one.
    #[arg(long, value_name = "FILE")]
    pub router_config: Option<PathBuf>,
    /// linux DUT: NAPI budget (net.core.netdev_budget).
    #[arg(long)]
    pub napi_budget: Option<u32>,
    /// linux DUT: receive-processing CPUs (RPS): off, all, per-port or a hex mask.
    #[arg(long)]
    pub rps: Option<String>,
    /// command DUT: the command line, run in the DUT namespace.
    #[arg(long)]
    pub command: Option<String>,
    /// external DUT: tester interfaces cabled to the device, in port order.
    #[arg(long, value_delimiter = ',')]
    pub interfaces: Vec<String>,
    /// Tester packet I/O: xdp (default: AF_PACKET generation, XDP counting), afxdp (AF_XDP receiver,
    /// analysis in user space with IPDV), afpacket, or xdp-live (BPF_PROG_RUN live frames; slow on 6.18).
    #[arg(long)]
    pub tester: Option<String>,
    /// The softrouter binary to start as DUT (default: this program).
    #[arg(long, value_name = "FILE")]
    pub softrouter_bin: Option<PathBuf>,
    /// Write the resolved experiment (TOML) here and exit.
    #[arg(long, value_name = "FILE")]
    pub save_experiment: Option<PathBuf>,
    /// Leave CPU placement to the scheduler (default: the tester on the
    /// last CPU, the DUT on the others).
    #[arg(long)]
    pub no_pin: bool,
    /// No CPU soakers (default: an idle-priority spinner on each DUT CPU
    /// measures the DUT's CPU use and keeps those vCPUs out of halt; see
    /// `traffic::soak`).
    #[arg(long)]
    pub no_soak: bool,
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
            let p = per_dut_path(path, &s.dut, runs.len());
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
    let backend = match args.tester.as_deref() {
        Some("afxdp") => TesterBackend::AfXdp,
        Some("afpacket") => TesterBackend::AfPacket,
        None | Some("xdp") => TesterBackend::Xdp,
        Some(o) => {
            eprintln!(
                "softrouter bench: --tester {o:?}: expected afxdp, afpacket, xdp or xdp-live"
            );
            return Ok(ExitCode::from(2));
        }
    };
    let softrouter_bin = match &args.softrouter_bin {
        Some(p) => Some(p.clone()),
        None => Some(std::env::current_exe().context("locating the softrouter binary")?),
    };

    // Tester and DUT on separate CPUs, as two boxes would be.
    let split = if args.no_pin {
        None
    } else {
        traffic::cpu::split()
    };
    traffic::cpu::set_tester_cpu(split.as_ref().map(|s| s.0));
    let placement = match &split {
        Some((t, d)) => format!("tester threads on CPU {t}, DUT on CPU(s) {d:?}"),
        None => "CPU placement left to the scheduler".to_string(),
    };
    eprintln!("softrouter bench: {placement}");
    let soaked = match &split {
        Some((_, d)) if !args.no_soak => {
            traffic::soak::start(d, Duration::from_millis(300))
                .context("starting the CPU soakers")?;
            true
        }
        _ => false,
    };
    let placement = if soaked {
        format!("{placement}; idle-priority CPU soakers on the DUT's CPUs")
    } else {
        placement
    };

    // Calibrate once: the tester's own maximum rate and latency floor.
    let first = &runs[0];
    let mut calibration = Vec::new();
    if first.max_rate_fps.is_none() && first.link_bps.is_none() {
        eprintln!("softrouter bench: calibrating the tester in loopback ...");
        for v6 in first.ip.versions() {
            let cal = traffic::calibrate(backend, &first.sizes, v6)?;
            eprint!("{}", describe_calibration(&cal));
            calibration.push(cal);
        }
    }

    let mut all = Vec::new();
    for settings in &runs {
        let opts = DutOptions {
            queues: settings.queues,
            softrouter_bin: softrouter_bin.clone(),
            backend,
            dut_cpus: split.as_ref().map(|s| s.1.clone()),
            tester_cpu: split.as_ref().map(|s| s.0),
            ..DutOptions::default()
        };
        let mut r = run_one(settings, &opts, &calibration, args.quiet)?;
        r.meta.notes.push(placement.clone());
        print!("{}", results::render_tables(&r));
        let json = settings
            .json
            .as_ref()
            .map(|p| per_dut_path(p, &settings.dut, runs.len()));
        let csv = settings
            .csv
            .as_ref()
            .map(|p| per_dut_path(p, &settings.dut, runs.len()));
        if let Some(p) = json {
            r.write_json(&p)?;
            eprintln!("softrouter bench: results in {}", p.display());
        }
        if let Some(p) = csv {
            r.write_csv(&p)?;
            eprintln!("softrouter bench: trials in {}", p.display());
        }
        all.push(r);
    }
    if all.len() >= 2 {
        print!("\n{}", results::comparison_table(&all[0], &all[1]));
    }
    if let Some(p) = &args.plot {
        std::fs::write(p, crate::plot::svg(&all))
            .with_context(|| format!("writing {}", p.display()))?;
        eprintln!("softrouter bench: chart in {}", p.display());
    }
    traffic::soak::stop();
    Ok(ExitCode::SUCCESS)
}

/// One DUT: testbed, DUT, tests, teardown.
fn run_one(
    settings: &Settings,
    opts: &DutOptions,
    calibration: &[traffic::Calibration],
    quiet: bool,
) -> Result<RunResults> {
    let mut meta = RunMeta::now();
    eprintln!("softrouter bench: starting DUT {} ...", settings.dut.kind());
    let dut = dut::start(&settings.dut, settings.pattern, opts)?;
    let d = dut.describe();
    meta.dut = DutInfo {
        kind: settings.dut.kind().to_string(),
        version: d["version"].as_str().unwrap_or_default().to_string(),
        config: d,
    };
    meta.max_rate_source = match (settings.max_rate_fps, settings.link_bps) {
        (Some(r), _) => format!("set by the user: {r:.0} frames/s"),
        (None, Some(b)) => format!("line rate {:.3} Gb/s", b / 1e9),
        (None, None) => "tester calibrated maximum in loopback (veth has no line rate)".into(),
    };
    meta.frame_format = "Ethernet II / IPv4 or IPv6 / UDP to port 7 (RFC 2544 Appendix C), \
        test header with signature, stream, sequence and timestamp"
        .into();

    let max_rate = |size: &FrameSize, v6: bool| -> f64 {
        if let Some(r) = settings.max_rate_fps {
            r
        } else if let Some(b) = settings.link_bps {
            size.max_rate_fps(b)
        } else {
            calibration
                .iter()
                .find(|c| c.ipv6 == v6)
                .and_then(|c| c.max_rate(size))
                .unwrap_or(1e6)
        }
    };
    let mut bar = Progress::new(settings, quiet);
    let mut tests = Vec::new();
    let mut failure = None;
    for v6 in settings.ip.versions() {
        let mut s = settings.clone();
        s.ip = if v6 {
            crate::settings::IpVersion::V6
        } else {
            crate::settings::IpVersion::V4
        };
        let plan = dut.plan(v6, settings.flows);
        let opts = traffic::TrafficOptions {
            rate_tolerance_pct: s.rate_tolerance_pct,
            drain_max: Duration::from_secs_f64(s.resolved().drain_seconds.unwrap_or(2.0)),
            ..traffic::TrafficOptions::default()
        };
        let mut trial = traffic::NetTrial::new(plan, Some(dut.probe()), opts)?;
        match suite::run(&s, &mut trial, &max_rate, &mut bar) {
            Ok(t) => tests.extend(t),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    bar.finish();
    meta.notes.append(&mut bar.notes);
    for c in calibration {
        meta.notes
            .push(describe_calibration(c).trim_end().replace('\n', "; "));
    }
    let final_stats = dut.stop();
    if let Some(e) = failure {
        return Err(e.context(format!("benchmark of DUT {}", settings.dut.kind())));
    }
    if let Ok(v) = final_stats {
        if let Some(obj) = meta.dut.config.as_object_mut() {
            obj.insert("final_stats".into(), v);
        }
    }
    Ok(RunResults {
        meta,
        settings: settings.resolved(),
        tests,
    })
}

/// `results.json` + softrouter → `results-softrouter.json` when several DUTs run.
fn per_dut_path(path: &Path, dut: &DutSettings, n: usize) -> PathBuf {
    if n <= 1 {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("results");
    let kind = dut.kind();
    let name = match path.extension().and_then(|e| e.to_str()) {
        Some(ext) => format!("{stem}-{kind}.{ext}"),
        None => format!("{stem}-{kind}"),
    };
    path.with_file_name(name)
}

/// The settings of each DUT run: experiment file + flags (+ the quick
/// comparison suite's choices when nothing was asked for).
pub fn build_settings(args: &BenchArgs) -> Result<Vec<Settings>> {
    let (mut table, file) = match &args.experiment {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            // Parse once as settings for located errors, then as a table to merge into.
            Settings::from_toml_str(&text, &p.display().to_string()).map_err(anyhow::Error::msg)?;
            (
                text.parse::<Table>().context("parsing the experiment")?,
                p.display().to_string(),
            )
        }
        None => (Table::new(), "command line".to_string()),
    };
    if args.is_empty() {
        // The quick comparison suite (README's main job).
        table.insert("tests".into(), strs(&["throughput", "latency"]));
        table.insert("sizes".into(), strs(&["64", "512", "1518", "imix"]));
        table.insert("trial_seconds".into(), Value::Float(1.0));
        table.insert("pause_seconds".into(), Value::Float(0.5));
        table.insert("latency_seconds".into(), Value::Float(1.0));
        table.insert("resolution_pct".into(), Value::Float(1.0));
    }
    let set_f = |t: &mut Table, k: &str, v: Option<f64>| {
        if let Some(v) = v {
            t.insert(k.into(), Value::Float(v));
        }
    };
    if !args.test.is_empty() {
        table.insert(
            "tests".into(),
            Value::Array(
                args.test
                    .iter()
                    .map(|t| Value::String(t.trim().into()))
                    .collect(),
            ),
        );
    }
    if let Some(s) = &args.sizes {
        let sizes = crate::sizes::parse_sizes(s).map_err(|e| anyhow::anyhow!("--sizes: {e}"))?;
        table.insert(
            "sizes".into(),
            Value::Array(sizes.iter().map(|s| Value::String(s.to_string())).collect()),
        );
    }
    if let Some(ip) = &args.ip {
        table.insert(
            "ip".into(),
            match ip.as_str() {
                "4" => Value::Integer(4),
                "6" => Value::Integer(6),
                o => Value::String(o.into()),
            },
        );
    }
    for (k, v) in [("pattern", &args.pattern), ("preset", &args.preset)] {
        if let Some(v) = v {
            table.insert(k.into(), Value::String(v.clone()));
        }
    }
    for (k, v) in [("flows", args.flows), ("queues", args.queues)] {
        if let Some(v) = v {
            table.insert(k.into(), Value::Integer(v.into()));
        }
    }
    set_f(&mut table, "trial_seconds", args.trial_seconds);
    set_f(&mut table, "pause_seconds", args.pause_seconds);
    set_f(&mut table, "latency_seconds", args.latency_seconds);
    set_f(&mut table, "confirm_seconds", args.confirm_seconds);
    set_f(&mut table, "resolution_pct", args.resolution_pct);
    set_f(&mut table, "loss_tolerance_pct", args.loss_tolerance_pct);
    set_f(&mut table, "max_rate_fps", args.max_rate_fps);
    for (k, v) in [("json", &args.json), ("csv", &args.csv)] {
        if let Some(v) = v {
            table.insert(k.into(), Value::String(v.display().to_string()));
        }
    }

    let file_dut = table.get("dut").and_then(|d| d.as_table()).cloned();
    let kinds: Vec<String> = if !args.dut.is_empty() {
        args.dut.iter().map(|k| k.trim().to_string()).collect()
    } else if let Some(d) = &file_dut {
        vec![d
            .get("kind")
            .and_then(|k| k.as_str())
            .unwrap_or("softrouter")
            .to_string()]
    } else if args.is_empty() {
        vec!["softrouter".into(), "linux".into()]
    } else {
        vec!["softrouter".into()]
    };
    let mut out = Vec::new();
    for kind in kinds {
        let mut dut = match &file_dut {
            Some(d) if d.get("kind").and_then(|k| k.as_str()) == Some(kind.as_str()) => d.clone(),
            _ => {
                let mut t = Table::new();
                t.insert("kind".into(), Value::String(kind.clone()));
                t
            }
        };
        let put = |d: &mut Table, k: &str, v: Option<Value>| {
            if let Some(v) = v {
                d.insert(k.into(), v);
            }
        };
        match kind.as_str() {
            "softrouter" => {
                put(
                    &mut dut,
                    "workers",
                    args.workers.map(|w| Value::Integer(w.into())),
                );
                put(&mut dut, "mode", args.mode.clone().map(Value::String));
                put(&mut dut, "driver", args.driver.clone().map(Value::String));
                put(
                    &mut dut,
                    "config",
                    args.router_config
                        .as_ref()
                        .map(|p| Value::String(p.display().to_string())),
                );
                if args.mode.is_none() && !dut.contains_key("mode") {
                    // Sleeps when idle, works in budgeted rounds under
                    // load: the fastest mode on the veth testbed (the DUT
                    // CPU also runs its receive softirqs).
                    dut.insert("mode".into(), Value::String("interrupt".into()));
                }
            }
            "linux" => {
                put(
                    &mut dut,
                    "napi_budget",
                    args.napi_budget.map(|w| Value::Integer(w.into())),
                );
                put(&mut dut, "rps", args.rps.clone().map(Value::String));
            }
            "command" => {
                put(&mut dut, "command", args.command.clone().map(Value::String));
            }
            "external" => {
                if !args.interfaces.is_empty() {
                    dut.insert(
                        "interfaces".into(),
                        Value::Array(
                            args.interfaces
                                .iter()
                                .map(|i| Value::String(i.clone()))
                                .collect(),
                        ),
                    );
                }
            }
            o => bail!("--dut {o:?}: expected softrouter, linux, command or external"),
        }
        let mut t = table.clone();
        t.insert("dut".into(), Value::Table(dut));
        let text = toml::to_string(&t).context("merging flags")?;
        let s = Settings::from_toml_str(&text, &file).map_err(anyhow::Error::msg)?;
        if let Err((field, msg)) = s.validate() {
            bail!("{file}: field `{field}`: {msg}");
        }
        out.push(s);
    }
    Ok(out)
}

/// One line per size: the tester's maximum and latency floor.
fn describe_calibration(c: &traffic::Calibration) -> String {
    let mut out = String::new();
    for s in &c.sizes {
        out.push_str(&format!(
            "tester calibration ({:?} via {}, IPv{}): {} B max {:.3} Mfps (generator alone {:.3} Mfps), latency floor min {:.1} us median {:.1} us\n",
            c.backend,
            c.tx_path,
            if c.ipv6 { 6 } else { 4 },
            s.size,
            s.max_rate_fps / 1e6,
            s.generator_max_fps / 1e6,
            s.latency_floor.min_ns as f64 / 1e3,
            s.latency_floor.median_ns as f64 / 1e3,
        ));
    }
    out
}

fn strs(v: &[&str]) -> Value {
    Value::Array(v.iter().map(|s| Value::String((*s).into())).collect())
}

/// Progress bar with ETA (indicatif; hidden when stderr is not a terminal,
/// then one log line per test instead).
struct Progress {
    bar: ProgressBar,
    tty: bool,
    label: String,
    notes: Vec<String>,
    /// Trials with loss while every CPU was saturated, per test label.
    saturated: Vec<String>,
}

impl Progress {
    fn new(settings: &Settings, quiet: bool) -> Progress {
        let est = suite::estimate(settings);
        let tty = !quiet && std::io::stderr().is_terminal();
        let bar = if tty {
            let b = ProgressBar::new(est.as_millis() as u64);
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} ETA {eta} {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(Duration::from_millis(200));
            b
        } else {
            ProgressBar::hidden()
        };
        Progress {
            bar,
            tty,
            label: String::new(),
            notes: Vec::new(),
            saturated: Vec::new(),
        }
    }
    fn finish(&mut self) {
        self.bar.finish_and_clear();
        if !self.saturated.is_empty() {
            let text = format!(
                "every CPU was saturated in lossy trials of {}: the tester and the DUT \
                 shared the machine's cores, so these losses reflect the machine, not only the DUT",
                self.saturated.join(", ")
            );
            eprintln!("softrouter bench: note: {text}");
            self.notes.push(text);
        }
    }
}

impl Observer for Progress {
    fn test(&mut self, test: TestKind, size: &FrameSize, ip: u8) {
        self.label = format!("{} IPv{ip} {size}", test.name());
        if !self.tty {
            eprintln!("softrouter bench: {}", self.label);
        }
    }
    fn trial_start(&mut self, spec: &TrialSpec) {
        self.bar
            .set_message(format!("{} @ {:.3} Mfps", self.label, spec.rate_fps / 1e6));
    }
    fn trial_done(&mut self, spec: &TrialSpec, o: &TrialOutcome) {
        let planned: Duration = if spec.phases.is_empty() {
            spec.duration
        } else {
            spec.phases.iter().map(|p| p.duration).sum()
        };
        self.bar.inc(planned.as_millis() as u64 + 300);
        if o.lost > 0 && cpus_saturated(o) && !self.saturated.contains(&self.label) {
            self.saturated.push(self.label.clone());
        }
        if !self.tty {
            eprintln!(
                "softrouter bench:   {:.3} Mfps offered, {} sent, {} lost{}",
                spec.rate_fps / 1e6,
                o.sent,
                o.lost,
                if o.tester_limited {
                    " (tester-limited)"
                } else {
                    ""
                }
            );
        }
    }
    fn note(&mut self, text: &str) {
        self.bar.println(format!("note: {text}"));
        self.notes.push(text.to_string());
    }
}

/// Every CPU had less than 5 % idle time during the trial.
fn cpus_saturated(o: &TrialOutcome) -> bool {
    o.sys
        .as_ref()
        .is_some_and(|s| !s.cpus.is_empty() && s.cpus.iter().all(|c| c.available_pct < 5.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_arguments_is_the_comparison_suite() {
        let runs = build_settings(&BenchArgs::default()).unwrap();
        let kinds: Vec<&str> = runs.iter().map(|s| s.dut.kind()).collect();
        assert_eq!(kinds, ["softrouter", "linux"]);
        assert_eq!(runs[0].tests, [TestKind::Throughput, TestKind::Latency]);
        assert_eq!(runs[0].sizes.len(), 4);
    }

    #[test]
    fn flags_override_the_experiment_and_keep_its_dut_options() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.toml");
        std::fs::write(&p, "tests = [\"loss\"]\nsizes = [\"128\"]\ntrial_seconds = 5.0\n[dut]\nkind = \"linux\"\nnapi_budget = 300\n").unwrap();
        let args = BenchArgs {
            experiment: Some(p),
            trial_seconds: Some(3.0),
            sizes: Some("64,imix".into()),
            ..BenchArgs::default()
        };
        let runs = build_settings(&args).unwrap();
        assert_eq!(runs.len(), 1);
        let s = &runs[0];
        assert_eq!(s.trial_seconds, Some(3.0));
        assert_eq!(s.tests, [TestKind::Loss]);
        assert_eq!(s.sizes.len(), 2);
        assert!(matches!(
            s.dut,
            DutSettings::Linux {
                napi_budget: Some(300),
                ..
            }
        ));
    }

    #[test]
    fn bad_values_are_named() {
        let args = BenchArgs {
            dut: vec!["softrouter".into()],
            test: vec!["speed".into()],
            ..BenchArgs::default()
        };
        let e = format!("{:#}", build_settings(&args).unwrap_err());
        assert!(e.contains("speed"), "{e}");
        let args = BenchArgs {
            dut: vec!["toaster".into()],
            ..BenchArgs::default()
        };
        let e = format!("{:#}", build_settings(&args).unwrap_err());
        assert!(e.contains("toaster"), "{e}");
        let args = BenchArgs {
            dut: vec!["linux".into()],
            resolution_pct: Some(0.0),
            ..BenchArgs::default()
        };
        let e = format!("{:#}", build_settings(&args).unwrap_err());
        assert!(e.contains("resolution_pct"), "{e}");
    }

    #[test]
    fn saved_experiment_repeats_the_settings() {
        let args = BenchArgs {
            dut: vec!["linux".into()],
            sizes: Some("256".into()),
            rps: Some("all".into()),
            ..BenchArgs::default()
        };
        let s = &build_settings(&args).unwrap()[0];
        let back = Settings::from_toml_str(&s.to_toml(), "saved").unwrap();
        assert_eq!(back, s.resolved());
    }

    #[test]
    fn saturation_needs_every_cpu_busy() {
        use crate::sysstat::{CpuAvailability, SysStats};
        let with = |avail: &[f64]| TrialOutcome {
            sys: Some(SysStats {
                interval_s: 1.0,
                cpus: avail
                    .iter()
                    .enumerate()
                    .map(|(i, &a)| CpuAvailability {
                        cpu: i as u32,
                        available_pct: a,
                    })
                    .collect(),
                irq_total_per_s: 0.0,
                irqs: vec![],
                softirqs: vec![],
            }),
            ..TrialOutcome::default()
        };
        assert!(cpus_saturated(&with(&[1.0, 3.0])));
        assert!(!cpus_saturated(&with(&[1.0, 40.0])));
        assert!(!cpus_saturated(&TrialOutcome::default()));
    }

    #[test]
    fn per_dut_paths() {
        let d = DutSettings::Linux {
            napi_budget: None,
            rps: None,
            napi: None,
        };
        assert_eq!(
            per_dut_path(Path::new("r/out.json"), &d, 2),
            Path::new("r/out-linux.json")
        );
        assert_eq!(
            per_dut_path(Path::new("r/out.json"), &d, 1),
            Path::new("r/out.json")
        );
    }
}
