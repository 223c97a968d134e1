//! One run of `softrouter bench`: CPU placement, the tester's calibration,
//! each DUT on a fresh testbed with its tests, and the outputs (tables,
//! one JSON file, one CSV file, one chart, one HTML report).
//!
//! Why apart from the CLI: `cli` turns arguments into [`Settings`]; this
//! module does the work those settings describe, so the command line can
//! change without touching the run, and the run reads only typed settings.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use bench::results::{BenchResults, DutInfo, RunMeta, RunResults};
use bench::search::{TrialOutcome, TrialSpec};
use bench::settings::{DutSettings, IpVersion, Settings, TestKind};
use bench::sizes::FrameSize;
use bench::suite::{self, Observer};
use bench::tables;
use dut::{self, DutOptions};

/// What the run needs besides the settings.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The softrouter binary to start as DUT (`None`: the DUT launcher's
    /// default).
    pub softrouter_bin: Option<PathBuf>,
    /// No progress bar.
    pub quiet: bool,
    /// The DUT (its name in the tables) the comparison divides by; the
    /// last run when `None`.
    pub baseline: Option<String>,
}

/// Runs every DUT of `runs` (one [`Settings`] per DUT, sharing the tester
/// options of the first) and writes the outputs the first one names. With
/// `repeat = N` the DUTs run N times in turn (A B A B ...: a slow phase of
/// the host then falls on every DUT alike), each a fresh start, every
/// round after its own calibration of the tester; each run records its
/// round. The JSON and CSV files are rewritten after every DUT, so they
/// hold every finished run even if a later one fails.
pub fn run(runs: &[Settings], opts: &RunOptions) -> Result<BenchResults> {
    let first = runs.first().context("no DUT to run")?;
    let backend = first.tester;

    // Tester and DUT on separate CPUs, as two boxes would be.
    let n = first.tester_cpus.max(1) as usize;
    let cpus = if first.pin_cpus {
        traffic::cpu::split_n(&traffic::cpu::allowed_cpus(), n)
    } else {
        None
    };
    if first.pin_cpus && cpus.is_none() && n > 1 {
        anyhow::bail!(
            "tester_cpus = {n}: this machine has {} CPU(s) for the bench, and the DUT needs one",
            traffic::cpu::allowed_cpus().len()
        );
    }
    traffic::cpu::set_tester_cpus(cpus.as_ref().map_or(&[][..], |c| &c.0[..]));
    traffic::cpu::set_dut_cpus(cpus.as_ref().map_or(&[][..], |c| &c.1[..]));
    // The DUT launchers place the tester's side by its first CPU.
    let split = cpus.as_ref().map(|(t, d)| (t[0], d.clone()));
    let mut placement = match &cpus {
        Some((t, d)) => format!("tester threads on CPU(s) {t:?}, DUT on CPU(s) {d:?}"),
        None => "CPU placement left to the scheduler".to_string(),
    };
    eprintln!("softrouter bench: {placement}");
    if let Some((_, d)) = split.as_ref().filter(|_| first.soak) {
        dut::soak::start(d, Duration::from_millis(300)).context("starting the CPU soakers")?;
        placement.push_str("; idle-priority CPU soakers on the DUT's CPUs");
    }

    let mut done = Vec::new();
    let mut results = BenchResults::new(Vec::new());
    let rounds = first.repeat.max(1);
    for round in 1..=rounds {
        // Each round calibrates the tester afresh: its maximum through a
        // DUT moves with the host by 10-15 % between runs minutes apart
        // while its generator alone holds within 4 % (bench/repeat), so a
        // DUT the tester limits gets the maximum of its own round, and the
        // median over rounds averages the host's phases as it does for
        // the DUTs' own figures.
        let calibration = calibrate_all(first, split.as_ref())?;
        // The DUT's CPUs to the DUT (and the bench's soakers) alone for
        // the round: the host's other threads move to the tester's CPU
        // until the shield drops (testbed::shield says why). Idle CPUs
        // poll rather than halt (testbed::cpu_latency says why).
        let guard = RoundGuard::raise(split.as_ref(), &placement);
        let start = done.len();
        for (k, settings) in runs.iter().enumerate() {
            let at = Position {
                dut: k + 1,
                duts: runs.len(),
                round,
                rounds,
            };
            let dut_opts = DutOptions {
                queues: settings.queues,
                softrouter_bin: opts.softrouter_bin.clone(),
                backend,
                dut_cpus: split.as_ref().map(|s| s.1.clone()),
                tester_cpu: split.as_ref().map(|s| s.0),
                profile_stages: settings.profile_stages,
                ..DutOptions::default()
            };
            let mut r = run_one(settings, &dut_opts, &calibration, opts.quiet, &at)?;
            r.meta.round = round;
            r.meta.notes.push(guard.placement.clone());
            done.push(r);
            // Names told apart within a round, the same in every round.
            distinct_names(&mut done[start..], runs);
            if rounds > 1 {
                println!("{at}:");
            }
            print!(
                "{}",
                tables::render_tables(done.last().expect("just pushed"))
            );
            results = BenchResults::with_baseline(done.clone(), opts.baseline.as_deref());
            write_files(first, &results)?;
        }
    }
    print!("{}", tables::comparison_table(&results));
    if let Some(p) = &first.plot {
        std::fs::write(p, bench::plot::svg(&results.runs))
            .with_context(|| format!("writing {}", p.display()))?;
        eprintln!("softrouter bench: chart in {}", p.display());
    }
    if let Some(p) = &first.report {
        let name = first
            .json
            .as_deref()
            .map_or_else(|| "this run".to_string(), crate::report::name_of);
        let exp = bench::html::Experiment {
            name,
            results: results.clone(),
        };
        crate::report::write(p, "softrouter bench report", &[exp], &[])?;
        eprintln!("softrouter bench: report in {}", p.display());
    }
    dut::soak::stop();
    Ok(results)
}

/// The tester's calibrations for every IP version of the run, or none
/// when the settings give the maximum rate.
fn calibrate_all(
    first: &Settings,
    split: Option<&(usize, Vec<usize>)>,
) -> Result<Vec<traffic::Calibration>> {
    let mut calibration = Vec::new();
    if first.max_rate_fps.is_none() && first.link_bps.is_none() {
        for v6 in first.ip.versions() {
            let cal = calibrate_tester(first, split, v6)?;
            eprint!("{}", describe_calibration(&cal));
            calibration.push(cal);
        }
    }
    Ok(calibration)
}

/// What a round holds while its DUTs run: the shield over the DUT's CPUs
/// and idle CPUs polling, both dropped with the guard (before the next
/// round's calibration, which runs as the first round's did); and the
/// placement note every run of the round carries.
struct RoundGuard {
    _shield: Option<testbed::shield::Shield>,
    _awake: Option<testbed::cpu_latency::Held>,
    placement: String,
}

impl RoundGuard {
    fn raise(split: Option<&(usize, Vec<usize>)>, placement: &str) -> RoundGuard {
        let mut placement = placement.to_string();
        let shield = split.and_then(|(_, d)| testbed::shield::Shield::raise(d));
        if let Some(s) = &shield {
            let text = format!(
                "{} other threads of the host kept off the DUT's CPUs for the run (on CPU(s) {:?})",
                s.moved(),
                s.rest()
            );
            eprintln!("softrouter bench: {text}");
            placement.push_str("; ");
            placement.push_str(&text);
        }
        let awake = split.and_then(|_| testbed::cpu_latency::hold());
        if awake.is_some() {
            placement.push_str("; idle CPUs poll (PM QoS 0 µs exit latency)");
        }
        dut::probe::set_dut_cpus(split.map_or(&[][..], |(_, d)| &d[..]));
        RoundGuard {
            _shield: shield,
            _awake: awake,
            placement,
        }
    }
}

/// Runs of one DUT configured several ways (an experiment's `[[duts]]`:
/// NAPI budgets, reception modes) would share a name in every table: each
/// such name gets the options that set its run apart from the others of
/// its kind (`linux napi_budget=300`; an option they all share is left
/// out), or its place (`#2`) when the options are the same.
/// `done[i]` ran with `settings[i]`.
fn distinct_names(done: &mut [RunResults], settings: &[Settings]) {
    let base = |r: &RunResults| {
        r.meta
            .dut
            .label()
            .split(' ')
            .next()
            .unwrap_or("")
            .to_string()
    };
    let opts: Vec<BTreeMap<String, String>> =
        settings.iter().map(|s| dut_options(&s.dut)).collect();
    let bases: Vec<String> = done.iter().map(base).collect();
    for i in 0..done.len() {
        let same: Vec<usize> = (0..done.len()).filter(|&j| bases[j] == bases[i]).collect();
        if same.len() < 2 {
            continue;
        }
        // The options whose value is not the same in every run of the kind.
        let words: Vec<String> = opts[i]
            .iter()
            .filter(|(k, v)| same.iter().any(|&j| opts[j].get(*k) != Some(*v)))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let suffix = if words.is_empty() {
            format!("#{}", same.iter().position(|&j| j == i).unwrap_or(0) + 1)
        } else {
            words.join(",")
        };
        done[i].meta.dut.name = format!("{} {suffix}", bases[i]);
    }
}

/// A DUT's options, key to value (its kind left out; a path by its file
/// name).
fn dut_options(d: &bench::settings::DutSettings) -> BTreeMap<String, String> {
    let v = serde_json::to_value(d).unwrap_or_default();
    v.as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| k.as_str() != "kind" && !v.is_null())
        .map(|(k, v)| {
            let v = match v {
                serde_json::Value::String(s) => s.rsplit('/').next().unwrap_or(s).to_string(),
                v => v.to_string(),
            };
            (k.clone(), v)
        })
        .collect()
}

/// The JSON and CSV files of `s` with everything in `r`.
fn write_files(s: &Settings, r: &BenchResults) -> Result<()> {
    let n = r.runs.len();
    if let Some(p) = &s.json {
        r.write_json(p)?;
        eprintln!("softrouter bench: results of {n} run(s) in {}", p.display());
    }
    if let Some(p) = &s.csv {
        r.write_csv(p)?;
        eprintln!("softrouter bench: trials of {n} run(s) in {}", p.display());
    }
    Ok(())
}

/// Where a DUT's run is in the whole bench: DUT k of n, round r of N.
#[derive(Debug, Clone, Copy)]
struct Position {
    dut: usize,
    duts: usize,
    round: u32,
    rounds: u32,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DUT {} of {}", self.dut, self.duts)?;
        if self.rounds > 1 {
            write!(f, ", round {} of {}", self.round, self.rounds)?;
        }
        Ok(())
    }
}

/// One DUT: testbed, DUT, tests, teardown.
fn run_one(
    settings: &Settings,
    opts: &DutOptions,
    calibration: &[traffic::Calibration],
    quiet: bool,
    at: &Position,
) -> Result<RunResults> {
    let mut meta = RunMeta::now();
    let probe = crate::host_probe::measure(opts.dut_cpus.as_ref().and_then(|c| c.first().copied()));
    eprintln!("softrouter bench: {probe}");
    meta.host_probe = Some(probe);
    let kind = settings.dut.kind();
    eprintln!("softrouter bench: starting DUT {kind} ({at}) ...");
    let dut = dut::start(&settings.dut, settings.pattern, opts)?;
    let d = dut.describe();
    meta.dut = DutInfo {
        kind: kind.to_string(),
        name: d.name().unwrap_or(kind.name()).to_string(),
        version: d.version().to_string(),
        config: Some(d),
    };
    meta.max_rate_source = match (settings.max_rate_fps, settings.link_bps) {
        (Some(r), _) => format!("set by the user: {r:.0} frames/s"),
        (None, Some(b)) => format!("line rate {:.3} Gb/s", b / 1e9),
        (None, None) => calibration
            .iter()
            .map(traffic::Calibration::max_rate_source)
            .collect::<Vec<_>>()
            .join("; "),
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
    let mut bar = Progress::new(settings, quiet, at, format!("[{kind}, {at}]"));
    let mut tests = Vec::new();
    let mut failure = None;
    for v6 in settings.ip.versions() {
        let s = Settings {
            ip: IpVersion::single(v6),
            ..settings.clone()
        };
        let plan = dut.plan(v6, settings.flows);
        if meta.provenance.nic_drivers.is_empty() {
            meta.provenance.nic_drivers = plan
                .ports
                .iter()
                .map(|p| format!("{}: {}", p.iface, nic_driver(p.netns.as_deref(), &p.iface)))
                .collect();
        }
        let topts = traffic::TrafficOptions {
            rate_tolerance_pct: s.rate_tolerance_pct,
            drain_max: Duration::from_secs_f64(s.resolved().drain_seconds.unwrap_or(2.0)),
            ..traffic::TrafficOptions::default()
        };
        let mut trial = traffic::NetTrial::new(plan, Some(dut.probe()), topts)?;
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
        return Err(e.context(format!("benchmark of DUT {kind}")));
    }
    if let (Ok(v), Some(d)) = (final_stats, meta.dut.config.as_mut()) {
        d.set_final_stats(v);
    }
    Ok(RunResults {
        meta,
        settings: settings.resolved(),
        tests,
    })
}

/// The tester's maximum for IP version `v6`: calibrated in loopback and,
/// with the xdp tester, through the floor DUT; the lower of the two per
/// size (`traffic::calibrate` says why). A floor that cannot be started
/// leaves loopback's, and says so.
fn calibrate_tester(
    first: &Settings,
    split: Option<&(usize, Vec<usize>)>,
    v6: bool,
) -> Result<traffic::Calibration> {
    eprintln!("softrouter bench: calibrating the tester in loopback ...");
    // Loopback is one direction on one wire: its maximum is shared by the
    // pattern's senders; the floor runs the pattern itself.
    let cal =
        traffic::calibrate(first.tester, &first.sizes, v6)?.shared_by(first.pattern.senders());
    if !first.tester.counts_in_xdp() {
        return Ok(cal);
    }
    eprintln!("softrouter bench: calibrating the tester through the floor DUT ...");
    let opts = DutOptions {
        queues: first.queues,
        backend: first.tester,
        dut_cpus: split.map(|s| s.1.clone()),
        tester_cpu: split.map(|s| s.0),
        ..DutOptions::default()
    };
    let floor = dut::start(&DutSettings::Floor {}, first.pattern, &opts).and_then(|d| {
        // One flow per tester CPU: each generator sends its own.
        let c = traffic::calibrate_through(
            d.plan(v6, first.tester_cpus.max(1)),
            Some(d.probe()),
            &first.sizes,
            traffic::FLOOR,
        );
        d.stop()?;
        c
    });
    match floor {
        Ok(f) => Ok(cal.lower(&f)),
        Err(e) => {
            eprintln!(
                "softrouter bench: calibration through the floor DUT failed ({e:#}); \
                 the maximum is loopback's"
            );
            Ok(cal)
        }
    }
}

/// One line per size: the tester's maximum and latency floor.
fn describe_calibration(c: &traffic::Calibration) -> String {
    let mut out = String::new();
    for s in &c.sizes {
        out.push_str(&format!(
            "tester calibration ({:?} via {}, IPv{}): {} B max {:.3} Mpps {} (generator alone {:.3} Mpps{}), latency floor min {:.1} µs median {:.1} µs\n",
            c.backend,
            c.tx_path,
            if c.ipv6 { 6 } else { 4 },
            s.size,
            s.max_rate_fps / 1e6,
            s.whence(),
            s.generator_max_fps / 1e6,
            s.other_paths
                .iter()
                .map(|(p, r)| format!("; {p} max {:.3} Mpps", r / 1e6))
                .collect::<String>(),
            s.latency_floor.min_ns as f64 / 1e3,
            s.latency_floor.median_ns as f64 / 1e3,
        ));
    }
    out
}

/// What the user sees while the bench runs: with `--quiet`, nothing but
/// notes that matter (saturated CPUs); on a terminal, one indicatif bar
/// for the whole run (every DUT and round, with its ETA); otherwise
/// (logs, CI) a line per test with the run's ETA and a line per trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Show {
    Quiet,
    Bar,
    Lines,
}

impl Show {
    /// `--quiet` wins over the terminal: quiet means quiet.
    fn pick(quiet: bool, tty: bool) -> Show {
        match (quiet, tty) {
            (true, _) => Show::Quiet,
            (false, true) => Show::Bar,
            (false, false) => Show::Lines,
        }
    }
}

/// Progress of the whole run: the bar spans every DUT and round (each
/// DUT's share is the suite's estimate), so its ETA is the run's.
struct Progress {
    bar: ProgressBar,
    show: Show,
    /// `[linux, DUT 2 of 2, round 1 of 3]`: which run of the bench this is.
    at: String,
    label: String,
    /// Trials run by this DUT so far.
    trials: u32,
    started: std::time::Instant,
    notes: Vec<String>,
    /// Trials with loss while every CPU was saturated, per test label.
    saturated: Vec<String>,
    /// The last trial's line (without a terminal), held until its
    /// procedure says what the trial was for and what it said.
    pending: Option<String>,
}

impl Progress {
    fn new(settings: &Settings, quiet: bool, pos: &Position, at: String) -> Progress {
        let est = suite::estimate(settings).as_millis() as u64;
        let show = Show::pick(quiet, std::io::stderr().is_terminal());
        let runs = pos.duts as u64 * u64::from(pos.rounds);
        let before = u64::from(pos.round - 1) * pos.duts as u64 + pos.dut as u64 - 1;
        let bar = ProgressBar::with_draw_target(
            Some(est * runs.max(1)),
            indicatif::ProgressDrawTarget::hidden(),
        );
        bar.set_position(est * before);
        if show == Show::Bar {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} ETA {eta} {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        Progress {
            bar,
            show,
            at,
            label: String::new(),
            trials: 0,
            started: std::time::Instant::now(),
            notes: Vec::new(),
            saturated: Vec::new(),
            pending: None,
        }
    }

    /// Print the held trial line, with `verdict` when there is one.
    fn flush_trial(&mut self, verdict: Option<&str>) {
        if let Some(line) = self.pending.take() {
            match verdict {
                Some(v) => eprintln!("{line}: {v}"),
                None => eprintln!("{line}"),
            }
        }
    }

    /// The run's remaining time as the bar estimates it, e.g. `4m 10s`.
    fn eta(&self) -> String {
        let s = self.bar.eta().as_secs();
        if self.started.elapsed() < Duration::from_secs(1) {
            return "?".into();
        }
        format!("{}m {:02}s", s / 60, s % 60)
    }

    fn finish(&mut self) {
        self.flush_trial(None);
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
        self.flush_trial(None);
        self.label = format!("{} IPv{ip} {size}", test.name());
        if self.show == Show::Lines {
            eprintln!(
                "softrouter bench: {} {} (run ETA {})",
                self.at,
                self.label,
                self.eta()
            );
        }
    }
    fn trial_start(&mut self, spec: &TrialSpec) {
        self.flush_trial(None);
        self.trials += 1;
        self.bar.set_message(format!(
            "{} {} trial {} @ {:.3} Mpps",
            self.at,
            self.label,
            self.trials,
            spec.rate_fps / 1e6
        ));
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
        if self.show == Show::Lines {
            self.pending = Some(format!(
                "softrouter bench:   {} trial {} {:.3} Mpps offered, {} sent, {} lost ({:.4} %){}",
                self.at,
                self.trials,
                spec.rate_fps / 1e6,
                o.sent,
                o.lost,
                o.loss_pct(),
                if o.tester_limited {
                    " (tester-limited)"
                } else {
                    ""
                }
            ));
        }
    }
    fn trial_verdict(&mut self, text: &str) {
        if self.show == Show::Bar {
            self.bar
                .set_message(format!("{} {} {text}", self.at, self.label));
        }
        self.flush_trial(Some(text));
    }
    fn note(&mut self, text: &str) {
        self.flush_trial(None);
        if self.show != Show::Quiet {
            self.bar.println(format!("note: {text}"));
            if self.show == Show::Lines {
                eprintln!("softrouter bench: note: {text}");
            }
        }
        self.notes.push(text.to_string());
    }
}

/// The driver of interface `iface` in namespace `ns` (`ethtool -i`), or
/// `unknown` when ethtool cannot tell.
fn nic_driver(ns: Option<&str>, iface: &str) -> String {
    let mut cmd = match ns {
        Some(ns) => {
            let mut c = std::process::Command::new("ip");
            c.args(["netns", "exec", ns, "ethtool", "-i", iface]);
            c
        }
        None => {
            let mut c = std::process::Command::new("ethtool");
            c.args(["-i", iface]);
            c
        }
    };
    cmd.output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .find_map(|l| l.strip_prefix("driver:"))
                .map(|d| d.trim().to_string())
        })
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// Every CPU had less than 5 % idle time during the trial.
fn cpus_saturated(o: &TrialOutcome) -> bool {
    o.sys
        .as_ref()
        .is_some_and(|s| !s.cpus.is_empty() && s.cpus.iter().all(|c| c.available_pct < 5.0))
}

#[cfg(test)]
mod tests {

    /// `--quiet` is quiet on a terminal too; lines only off a terminal.
    #[test]
    fn quiet_means_quiet() {
        use super::Show;
        assert_eq!(Show::pick(true, true), Show::Quiet);
        assert_eq!(Show::pick(true, false), Show::Quiet);
        assert_eq!(Show::pick(false, true), Show::Bar);
        assert_eq!(Show::pick(false, false), Show::Lines);
    }

    /// Runs of one kind configured differently are named by their
    /// options; identical ones by their place; others keep their name.
    #[test]
    fn runs_of_one_kind_get_distinct_names() {
        use bench::settings::DutSettings;
        let softrouter = |workers: Option<u32>, config: Option<&str>| {
            let v = serde_json::json!({
                "kind": "softrouter", "mode": "interrupt", "workers": workers, "config": config
            });
            serde_json::from_value::<DutSettings>(v).unwrap()
        };
        let linux = |b: Option<u32>| DutSettings::Linux {
            napi_budget: b,
            rps: None,
            napi: None,
            napi_defer_hard_irqs: None,
            gro_flush_timeout_us: None,
        };
        let coalesced = DutSettings::Linux {
            napi_budget: None,
            rps: None,
            napi: None,
            napi_defer_hard_irqs: Some(2),
            gro_flush_timeout_us: Some(50),
        };
        let settings: Vec<Settings> = [
            linux(Some(300)),
            linux(Some(2)),
            coalesced,
            DutSettings::Bridge {},
            DutSettings::Bridge {},
            softrouter(Some(1), None),
            softrouter(Some(2), None),
            softrouter(None, Some("routers/shared-tx.toml")),
        ]
        .into_iter()
        .map(|dut| Settings {
            dut,
            ..Settings::default()
        })
        .collect();
        let mut done: Vec<RunResults> = settings
            .iter()
            .map(|s| {
                let mut meta = RunMeta::default();
                meta.dut.kind = s.dut.kind().to_string();
                meta.dut.name = s.dut.kind().to_string();
                RunResults {
                    meta,
                    settings: s.clone(),
                    tests: Vec::new(),
                }
            })
            .collect();
        distinct_names(&mut done, &settings);
        let names: Vec<&str> = done.iter().map(|r| r.meta.dut.label()).collect();
        assert_eq!(
            names,
            [
                "linux napi_budget=300",
                "linux napi_budget=2",
                "linux gro_flush_timeout_us=50,napi_defer_hard_irqs=2",
                "bridge #1",
                "bridge #2",
                "softrouter workers=1",
                "softrouter workers=2",
                "softrouter config=shared-tx.toml",
            ]
        );
    }
    use super::*;

    #[test]
    fn saturation_needs_every_cpu_busy() {
        use bench::sysstat::{CpuAvailability, SysStats};
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
}
