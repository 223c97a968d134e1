//! The results schema (R15) and its JSON and CSV writers (the terminal
//! tables are in [`crate::tables`]).
//!
//! Why one schema: every trial is kept (rate, counts, latency, tester
//! limit, DUT CPU/IRQ figures, DUT's own statistics), next to the result a
//! procedure derived from them, and the run's metadata and resolved
//! settings, so that a result can be audited and the run repeated. One
//! run of the bench writes one file ([`BenchResults`]): every DUT's run
//! in `runs[]`, in run order, their throughput side by side in
//! `comparison[]`, and with `--repeat N` each DUT's median and range over
//! its rounds in `repeats[]` ([`crate::repeat`]). The report tools read
//! the JSON; `docs/bench-results.md` documents it.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::repeat::RepeatRow;
use crate::search::{
    BackToBackResult, LatencyResult, LossSeriesResult, RecoveryResult, TrialRecord,
};
use crate::settings::{Settings, TestKind};
use crate::sizes::FrameSize;
use crate::throughput::{GoalResult, ThroughputResult};

mod compare;
mod csv;

use compare::compare;
pub use compare::{
    capacity_at_top, dut_cycles_at_throughput, dut_cycles_at_top, trial_at_throughput, ComparedDut,
    ComparedGoal, ComparisonRow, FloorRatios, FLOOR_KIND,
};
use csv::csv_rows;
pub use csv::CSV_HEADER;

/// Version of this schema; bumped on incompatible changes (2: one file
/// with `runs[]`, throughput as `ndr` and `pdr`, IPDV null when not
/// measured, CSV `dut` and `bound` columns; 3: throughput as RFC 9971
/// search goals, `goals[]` with conditional throughput, relevant bounds
/// and every load's classification; the comparison per goal against a
/// baseline run; trials with `loss_split`, `measurement_fault`, `noise`
/// and `discarded`).
pub const SCHEMA_VERSION: u32 = 3;

/// The device under test, as recorded (R15).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DutInfo {
    /// softrouter, linux, command or external.
    pub kind: String,
    /// What tables and charts call it: the kind, or a variant of it
    /// (`softrouter-noxdp`: softrouter without its XDP tier).
    #[serde(default)]
    pub name: String,
    /// Its version string (softrouter --version, kernel release, ...).
    pub version: String,
    /// Its configuration (router config, sysctls, command line, the
    /// testbed) as its launcher described it, and its final counters;
    /// `None` (`null`) before the DUT started.
    pub config: Option<schema::dut_description::DutDescription>,
}

impl DutInfo {
    /// [`DutInfo::name`], or the kind for results written before names.
    pub fn label(&self) -> &str {
        if self.name.is_empty() {
            &self.kind
        } else {
            &self.name
        }
    }
}

/// Run metadata.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// `softrouter-bench`.
    pub tool: String,
    /// Tool version.
    pub tool_version: String,
    /// Start time, seconds since the Unix epoch (UTC).
    pub started_unix_s: u64,
    /// Start time, RFC 3339 UTC.
    pub started: String,
    /// Host name.
    pub host: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// Device under test.
    pub dut: DutInfo,
    /// Frame format, in words (R15), e.g. "Ethernet II / IPv4 / UDP 0xC020->7 ...".
    pub frame_format: String,
    /// Where the maximum rate came from: "line rate 10 Gb/s" or "tester
    /// calibrated maximum (veth has no line rate)" (R2).
    pub max_rate_source: String,
    /// Free-form notes (warnings, deviations from the RFC).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Which round of `--repeat N` this run is, from 1 (0 in files
    /// written before rounds: read as 1, see [`RunMeta::round`]).
    #[serde(default)]
    pub round: u32,
    /// Provenance (issue 19): what produced the figures, so a reader can
    /// tell two runs' setups apart. Empty in files written before.
    #[serde(default, skip_serializing_if = "Provenance::is_empty")]
    pub provenance: Provenance,
    /// The host probe timed on the DUT's CPU before this run (absent in
    /// files written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_probe: Option<HostProbe>,
}

/// A fixed workload timed on one CPU before a run: how fast the host was
/// (the bench's runner measures it, `bench-cli`'s `host_probe` says why).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostProbe {
    /// The CPU it ran on (the DUT's first), if it was pinned.
    pub cpu: Option<usize>,
    /// ns per step of a dependent multiply-add chain: the clock.
    pub alu_ns: f64,
    /// ns per load of a dependent walk through 4 MiB (within the caches).
    pub cache_load_ns: f64,
    /// ns per load of a dependent walk through 128 MiB (beyond them).
    pub memory_load_ns: f64,
    /// Seconds it spun on the CPU counting pauses (0: files before it).
    #[serde(default)]
    pub pause_watch_s: f64,
    /// Pauses over 250 µs in that time (the thread kept off its CPU by the
    /// host or the guest's kernel): the DUT's 256-frame ring at 1 Mpps.
    #[serde(default)]
    pub pauses_over_250us: u32,
    /// Of those, the ones over 1 ms (the ring at 0.256 Mpps).
    #[serde(default)]
    pub pauses_over_1ms: u32,
    /// The longest pause, µs.
    #[serde(default)]
    pub longest_pause_us: f64,
}

impl std::fmt::Display for HostProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let on = self.cpu.map_or(String::new(), |c| format!(" on CPU {c}"));
        write!(
            f,
            "host probe{on}: ALU step {:.2} ns, load {:.1} ns within the caches (4 MiB), \
             {:.0} ns beyond them (128 MiB)",
            self.alu_ns, self.cache_load_ns, self.memory_load_ns
        )?;
        if self.pause_watch_s > 0.0 {
            write!(
                f,
                "; pauses in {:.0} s spinning: {} over 250 µs, {} over 1 ms, longest {:.0} µs",
                self.pause_watch_s,
                self.pauses_over_250us,
                self.pauses_over_1ms,
                self.longest_pause_us
            )?;
        }
        Ok(())
    }
}

/// The build, machine and command line behind a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// `git describe --always --dirty --tags` of the tool's source at build
    /// time, else the crate version (built outside git).
    pub tool_build: String,
    /// `model name` of `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Online CPUs.
    pub cpus: usize,
    /// `/proc/cmdline`.
    pub kernel_cmdline: String,
    /// The command line, as given.
    pub command_line: Vec<String>,
    /// The tester's ports and their drivers (`ethtool -i`), e.g.
    /// `tst0: veth`: what the frames crossed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nic_drivers: Vec<String>,
}

impl Provenance {
    fn is_empty(&self) -> bool {
        *self == Provenance::default()
    }

    /// This build on this machine, run as this process.
    pub fn here() -> Provenance {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let cpuinfo = read("/proc/cpuinfo");
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, m)| m.trim().to_string())
            .unwrap_or_default();
        let git = env!("SOFTROUTER_GIT");
        Provenance {
            tool_build: if git.is_empty() {
                env!("CARGO_PKG_VERSION").to_string()
            } else {
                format!("{} ({git})", env!("CARGO_PKG_VERSION"))
            },
            cpu_model,
            cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
            kernel_cmdline: read("/proc/cmdline").trim().to_string(),
            command_line: std::env::args().collect(),
            nic_drivers: Vec::new(),
        }
    }
}

impl RunMeta {
    /// Metadata for a run starting now on this host, DUT left empty.
    pub fn now() -> RunMeta {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        RunMeta {
            schema_version: SCHEMA_VERSION,
            tool: "softrouter-bench".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            started_unix_s: t,
            started: rfc3339(t),
            host: read("/proc/sys/kernel/hostname"),
            kernel: read("/proc/sys/kernel/osrelease"),
            round: 1,
            provenance: Provenance::here(),
            ..RunMeta::default()
        }
    }

    /// The round, from 1.
    pub fn round(&self) -> u32 {
        self.round.max(1)
    }
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339(t: u64) -> String {
    let days = (t / 86_400) as i64;
    let rem = t % 86_400;
    // civil_from_days (H. Hinnant)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Throughput result of one size (R8): one result per search goal.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThroughputSummary {
    /// The maximum (theoretical or calibrated) rate.
    pub max_rate_fps: f64,
    /// One result per goal, in the settings' order.
    pub goals: Vec<GoalResult>,
    /// Trials run again because the tester spoiled them.
    #[serde(default)]
    pub measurement_repeats: u32,
    /// When the first goal's rate is only a lower bound (the tester, or
    /// the maximum load, ended the search): the DUT's capacity as its CPU
    /// busy share at that load projects it. Never a measured rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projection: Option<Projection>,
}

/// A DUT's projected capacity (issue 21): the rate it forwarded at the
/// highest load the search could offer, divided by the busy share of its
/// CPUs at that load. Why: when the tester, not the DUT, is the limit, the
/// measured rate says nothing of how much the DUT has left; its idle share
/// does, assuming its cost per packet stays the same up to saturation
/// (which batching makes pessimistic, cache and ring pressure optimistic).
/// Labelled as a projection everywhere it appears.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Projection {
    /// The first goal's conditional throughput, frames/s per port: the
    /// measured rate the projection starts from.
    pub measured_fps: f64,
    /// Busy share of the DUT's CPUs while the traffic of the trial
    /// carrying that rate ran, % (by the soakers, [`dut_busy_pct`]).
    pub busy_pct: f64,
    /// `measured_fps / (busy_pct / 100)`, frames/s per port: projected.
    pub projected_fps: f64,
}

/// The busy share of the DUT's CPUs while a trial's traffic ran, % (by the
/// soakers, over the trial's duration: `DutStats::busy_pct_while`; `None`
/// without soakers).
pub fn dut_busy_pct(tr: &TrialRecord) -> Option<f64> {
    let d = tr.outcome.dut_stats.as_ref()?;
    d.busy_pct_while(tr.spec.duration.as_secs_f64())
}

/// The [`Projection`] of a throughput test whose first goal is a lower
/// bound, from the trial carrying it; `None` when the DUT ended the
/// search, or without a busy share above 1 % (a projection from an idle
/// CPU would be noise).
pub fn projection(t: &TestResult) -> Option<Projection> {
    let g = t.throughput_summary()?.first()?;
    if !g.lower_bound {
        return None;
    }
    let measured_fps = g.fps?;
    let busy_pct = dut_busy_pct(trial_at_throughput(t)?)?;
    Some(Projection {
        measured_fps,
        busy_pct,
        projected_fps: projected(measured_fps, busy_pct)?,
    })
}

/// What `fps` forwarded at `busy_pct` % busy projects to (`fps` over the
/// busy share, which [`dut_busy_pct`] caps at 100); `None` at 1 % busy or
/// less, where the share is noise.
fn projected(fps: f64, busy_pct: f64) -> Option<f64> {
    (busy_pct > 1.0).then(|| fps / (busy_pct / 100.0))
}

impl ThroughputSummary {
    /// The result of the goal named `name`.
    pub fn goal(&self, name: &str) -> Option<&GoalResult> {
        self.goals.iter().find(|g| g.name() == name)
    }

    /// The first goal's result (the one other tests start from).
    pub fn first(&self) -> Option<&GoalResult> {
        self.goals.first()
    }
}

/// The result a test derived from its trials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TestValue {
    /// R8.
    Throughput(ThroughputSummary),
    /// R9 (trials moved to [`TestResult::trials`]).
    Latency(LatencyResult),
    /// R10.
    Loss(LossSeriesResult),
    /// R11 with RFC 9004 buffer time.
    BackToBack(BackToBackResult),
    /// R12.
    Recovery(RecoveryResult),
}

/// One test at one frame size and IP version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// Which test.
    pub test: TestKind,
    /// Frame size as sent (IPv6 sizes raised to 78).
    pub size: FrameSize,
    /// 4 or 6.
    pub ip: u8,
    /// The derived result.
    pub result: TestValue,
    /// Every trial, in order.
    pub trials: Vec<TrialRecord>,
    /// Wall time the test took, s (trials, pauses, drains, the DUT's
    /// probes): what a run spent its time on.
    #[serde(default)]
    pub elapsed_s: f64,
}

impl TestResult {
    /// From a throughput search.
    pub fn throughput(size: FrameSize, ip: u8, r: ThroughputResult) -> TestResult {
        let mut t = TestResult {
            test: TestKind::Throughput,
            ip,
            result: TestValue::Throughput(ThroughputSummary {
                max_rate_fps: r.max_rate_fps,
                goals: r.goals,
                measurement_repeats: r.measurement_repeats,
                projection: None,
            }),
            size,
            trials: r.trials,
            elapsed_s: 0.0,
        };
        t.project();
        t
    }

    /// Set a throughput summary's [`Projection`] from the trials.
    pub(crate) fn project(&mut self) {
        let p = projection(self);
        if let TestValue::Throughput(s) = &mut self.result {
            s.projection = p;
        }
    }

    /// The throughput summary, if this is a throughput test.
    pub fn throughput_summary(&self) -> Option<&ThroughputSummary> {
        match &self.result {
            TestValue::Throughput(s) => Some(s),
            _ => None,
        }
    }

    /// `64 v4`: size and IP version, as tables and charts label a row.
    pub fn label(&self) -> String {
        format!("{} v{}", self.size, self.ip)
    }

    /// From a latency test.
    pub fn latency(size: FrameSize, ip: u8, mut r: LatencyResult) -> TestResult {
        let trials = std::mem::take(&mut r.trials);
        TestResult {
            test: TestKind::Latency,
            size,
            ip,
            result: TestValue::Latency(r),
            trials,
            elapsed_s: 0.0,
        }
    }

    /// From a loss series.
    pub fn loss(size: FrameSize, ip: u8, mut r: LossSeriesResult) -> TestResult {
        let trials = std::mem::take(&mut r.trials);
        TestResult {
            test: TestKind::Loss,
            size,
            ip,
            result: TestValue::Loss(r),
            trials,
            elapsed_s: 0.0,
        }
    }

    /// From a back-to-back test.
    pub fn back_to_back(size: FrameSize, ip: u8, mut r: BackToBackResult) -> TestResult {
        let trials = std::mem::take(&mut r.trials);
        TestResult {
            test: TestKind::BackToBack,
            size,
            ip,
            result: TestValue::BackToBack(r),
            trials,
            elapsed_s: 0.0,
        }
    }

    /// From a recovery test.
    pub fn recovery(size: FrameSize, ip: u8, mut r: RecoveryResult) -> TestResult {
        let trials = std::mem::take(&mut r.trials);
        TestResult {
            test: TestKind::Recovery,
            size,
            ip,
            result: TestValue::Recovery(r),
            trials,
            elapsed_s: 0.0,
        }
    }
}

/// A whole run: what the JSON file holds.
/// One DUT's run: the per-DUT document of `runs[]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResults {
    /// Metadata.
    pub meta: RunMeta,
    /// The resolved settings (load them to repeat the run).
    pub settings: Settings,
    /// Results, in the order run.
    pub tests: Vec<TestResult>,
}

/// One run of the bench: what the JSON file holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchResults {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Every DUT's run, in run order.
    pub runs: Vec<RunResults>,
    /// Throughput of the runs side by side, per size and IP version (empty
    /// with one run).
    pub comparison: Vec<ComparisonRow>,
    /// With several rounds of a DUT (`--repeat N`): per size and IP
    /// version, each DUT's median and range over its rounds, and the ratio
    /// of the medians with the range of the per-round ratios (empty, and
    /// left out, otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<RepeatRow>,
}

impl BenchResults {
    /// The document for `runs`, with their comparison against the last
    /// run.
    pub fn new(runs: Vec<RunResults>) -> BenchResults {
        BenchResults::with_baseline(runs, None)
    }

    /// The document for `runs`, with their comparison against the DUT
    /// whose label is `baseline` (the last run's when `None` or when no
    /// run has that label), and each DUT's spread over its rounds when a
    /// DUT ran more than once.
    pub fn with_baseline(runs: Vec<RunResults>, baseline: Option<&str>) -> BenchResults {
        let comparison = if runs.len() >= 2 {
            compare(&runs, baseline)
        } else {
            Vec::new()
        };
        let repeated = runs.iter().enumerate().any(|(i, r)| {
            runs[..i]
                .iter()
                .any(|o| o.meta.dut.label() == r.meta.dut.label())
        });
        let repeats = if repeated {
            comparison.iter().map(ComparisonRow::repeats).collect()
        } else {
            Vec::new()
        };
        BenchResults {
            schema_version: SCHEMA_VERSION,
            runs,
            comparison,
            repeats,
        }
    }

    /// The most rounds any DUT ran (1 without `--repeat`).
    pub fn rounds(&self) -> u32 {
        self.runs.iter().map(|r| r.meta.round()).max().unwrap_or(1)
    }

    /// Write pretty JSON.
    pub fn write_json(&self, path: &Path) -> Result<()> {
        let f =
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut w = std::io::BufWriter::new(f);
        serde_json::to_writer_pretty(&mut w, self)?;
        w.write_all(b"\n")?;
        w.flush()?;
        Ok(())
    }

    /// Read a JSON results file.
    pub fn read_json(path: &Path) -> Result<BenchResults> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// Write the CSV (one row per trial of every run; see [`CSV_HEADER`]).
    pub fn write_csv(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.to_csv()).with_context(|| format!("writing {}", path.display()))
    }

    /// The CSV text.
    pub fn to_csv(&self) -> String {
        let mut out = CSV_HEADER.join(",");
        out.push('\n');
        for r in &self.runs {
            csv_rows(r, &mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests;
