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

use crate::repeat::{self, RepeatRow};
use crate::search::{
    BackToBackResult, LatencyResult, LossSeriesResult, RecoveryResult, TrialRecord,
};
use crate::settings::{Settings, TestKind};
use crate::sizes::FrameSize;
use crate::throughput::{GoalResult, ThroughputResult};

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

/// One size and IP version of [`BenchResults::comparison`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRow {
    /// Frame size.
    pub size: FrameSize,
    /// 4 or 6.
    pub ip: u8,
    /// The DUT the ratios divide by (its label): the last run's unless
    /// a baseline was named. Each run divides by the baseline's run of the
    /// same round.
    pub baseline: String,
    /// One entry per run, in run order.
    pub duts: Vec<ComparedDut>,
}

impl ComparisonRow {
    /// Each DUT's median and range over its rounds at this size.
    pub fn repeats(&self) -> RepeatRow {
        let rounds: Vec<repeat::Round> = self
            .duts
            .iter()
            .map(|d| repeat::Round {
                dut: &d.dut,
                goals: d
                    .goals
                    .iter()
                    .map(|g| repeat::GoalFigure {
                        goal: &g.goal,
                        fps: g.fps,
                        lower_bound: g.lower_bound,
                        ratio: g.ratio,
                    })
                    .collect(),
            })
            .collect();
        repeat::aggregate(&self.size, self.ip, &self.baseline, &rounds)
    }
}

/// One run's throughput in a [`ComparisonRow`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparedDut {
    /// `meta.dut.label()` of the run.
    pub dut: String,
    /// `meta.round()` of the run.
    #[serde(default)]
    pub round: u32,
    /// Per goal, in the goals' order.
    pub goals: Vec<ComparedGoal>,
    /// Busy cycles of the DUT's CPUs per forwarded packet in the trial
    /// carrying the first goal's lower bound
    /// ([`dut_cycles_at_throughput`]).
    pub cycles_per_packet: Option<f64>,
    /// Busy cycles of the DUT's CPUs per forwarded packet at the highest
    /// load the search offered ([`dut_cycles_at_top`]): the same load for
    /// every DUT of a run, which the floor ratio needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_at_top: Option<f64>,
    /// Projected capacity at that load ([`capacity_at_top`]), frames/s
    /// per port: what the floor ratio's capacity compares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_at_top: Option<f64>,
    /// The run's [`Projection`], when its first goal is a lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projection: Option<Projection>,
    /// This run against the floor DUT's run of the same round (`--dut
    /// floor`), when the results have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_floor: Option<FloorRatios>,
}

/// A run's figures as multiples of the floor's (`--dut floor`: the XDP
/// redirect that does nothing else, the wire's own cost), same size, IP
/// version and round. Each is `None` when either figure is missing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct FloorRatios {
    /// First goal's conditional throughput / the floor's.
    pub fps: Option<f64>,
    /// Cycles per packet at the highest load offered / the floor's at
    /// the same load ([`ComparedDut::cycles_at_top`]). Why not at each
    /// one's throughput: a floor that lost a frame in a host stall at the
    /// top ends its search lower, and cycles a packet at a lower load
    /// are higher (fewer frames a wake-up), so the ratio compared unlike
    /// loads (1.23x the floor in one round, 1.00-1.04x in the two beside).
    pub cycles_per_packet: Option<f64>,
    /// Capacity / the floor's: both projected at the highest load
    /// offered ([`ComparedDut::capacity_at_top`]) when both have the
    /// soakers' busy share there; else each the projected one when there
    /// is a projection, else the measured rate. A projection when either
    /// is. Why the same load for both: a tier projected from the top
    /// against a floor whose measured rate a host stall had cut set a
    /// projection beside a measurement (1.80-3.18x the floor with the
    /// tier's cycles 0.98-1.22x the floor's).
    pub capacity: Option<f64>,
    /// `capacity` rests on at least one projection.
    pub projected: bool,
}

impl FloorRatios {
    /// `x` against `floor` (both of the same size, IP version and round).
    pub fn of(x: &ComparedDut, floor: &ComparedDut) -> FloorRatios {
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        let fps = |d: &ComparedDut| d.goals.first().and_then(|g| g.fps);
        let capacity = |d: &ComparedDut| d.projection.map(|p| p.projected_fps).or(fps(d));
        let (capacity, projected) = match (x.capacity_at_top, floor.capacity_at_top) {
            (Some(a), Some(b)) => (ratio(Some(a), Some(b)), true),
            _ => (
                ratio(capacity(x), capacity(floor)),
                x.projection.is_some() || floor.projection.is_some(),
            ),
        };
        FloorRatios {
            fps: ratio(fps(x), fps(floor)),
            cycles_per_packet: ratio(x.cycles_at_top, floor.cycles_at_top),
            capacity,
            projected,
        }
    }
}

/// One goal of one run in a [`ComparedDut`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparedGoal {
    /// The goal's name.
    pub goal: String,
    /// Its conditional throughput, frames/s per port.
    pub fps: Option<f64>,
    /// The rate is a lower bound.
    pub lower_bound: bool,
    /// `fps` / the `fps` of the baseline's run in the same round, for
    /// the same goal (null when either is missing).
    pub ratio: Option<f64>,
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

/// Every (size, IP version) with a throughput result in any run, in the
/// order first seen, with each run's figures per goal and their ratios
/// to those of the baseline's run in the same round.
fn compare(runs: &[RunResults], baseline: Option<&str>) -> Vec<ComparisonRow> {
    let mut keys: Vec<(FrameSize, u8)> = Vec::new();
    for r in runs {
        for t in r.tests.iter().filter(|t| t.test == TestKind::Throughput) {
            if !keys.iter().any(|(s, ip)| *s == t.size && *ip == t.ip) {
                keys.push((t.size.clone(), t.ip));
            }
        }
    }
    let base = baseline
        .and_then(|b| runs.iter().rposition(|r| r.meta.dut.label() == b))
        .unwrap_or(runs.len() - 1);
    let base_label = runs[base].meta.dut.label();
    let base_of = |r: &RunResults| {
        runs.iter()
            .rfind(|b| b.meta.dut.label() == base_label && b.meta.round() == r.meta.round())
    };
    keys.into_iter()
        .map(|(size, ip)| {
            let test = |r: &'_ RunResults| -> Option<TestResult> {
                r.tests
                    .iter()
                    .find(|t| t.test == TestKind::Throughput && t.size == size && t.ip == ip)
                    .cloned()
            };
            let duts = runs
                .iter()
                .map(|r| {
                    let base_test = base_of(r).and_then(test);
                    let base_sum = base_test.as_ref().and_then(TestResult::throughput_summary);
                    let t = test(r);
                    let s = t.as_ref().and_then(TestResult::throughput_summary);
                    let goals = s
                        .map(|s| {
                            s.goals
                                .iter()
                                .map(|g| {
                                    let b =
                                        base_sum.and_then(|b| b.goal(g.name())).and_then(|b| b.fps);
                                    ComparedGoal {
                                        goal: g.name().to_string(),
                                        fps: g.fps,
                                        lower_bound: g.lower_bound,
                                        ratio: match (g.fps, b) {
                                            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                                            _ => None,
                                        },
                                    }
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    ComparedDut {
                        dut: r.meta.dut.label().to_string(),
                        round: r.meta.round(),
                        goals,
                        cycles_per_packet: t.as_ref().and_then(dut_cycles_at_throughput),
                        cycles_at_top: t.as_ref().and_then(dut_cycles_at_top),
                        capacity_at_top: t.as_ref().and_then(capacity_at_top),
                        projection: s.and_then(|s| s.projection),
                        x_floor: None,
                    }
                })
                .collect();
            let duts = against_floor(runs, duts);
            ComparisonRow {
                size,
                ip,
                baseline: base_label.to_string(),
                duts,
            }
        })
        .collect()
}

/// Each run's [`FloorRatios`] against the floor run (`kind` `floor`) of
/// its round, when there is one.
fn against_floor(runs: &[RunResults], mut duts: Vec<ComparedDut>) -> Vec<ComparedDut> {
    let floors: Vec<(u32, ComparedDut)> = runs
        .iter()
        .zip(&duts)
        .filter(|(r, _)| r.meta.dut.kind == FLOOR_KIND)
        .map(|(r, d)| (r.meta.round(), d.clone()))
        .collect();
    for d in &mut duts {
        if let Some((_, f)) = floors.iter().find(|(round, _)| *round == d.round) {
            d.x_floor = Some(FloorRatios::of(d, f));
        }
    }
    duts
}

/// The kind of the floor DUT (`--dut floor`).
pub const FLOOR_KIND: &str = "floor";

/// The trial that carries the first goal's lower bound (else the
/// highest-rate loss-free trial): where the DUT's figures at its
/// throughput (CPU, cycles, interrupts) come from.
pub fn trial_at_throughput(t: &TestResult) -> Option<&TrialRecord> {
    let first = t
        .throughput_summary()
        .and_then(|s| s.first())
        .map(|g| g.name().to_string());
    let carrier = first.and_then(|name| {
        t.trials
            .iter()
            .find(|tr| !tr.discarded && tr.bound_for.contains(&name))
    });
    carrier.or_else(|| {
        t.trials
            .iter()
            .filter(|tr| !tr.discarded && tr.outcome.lost == 0 && tr.outcome.sent > 0)
            .max_by(|a, b| a.spec.rate_fps.total_cmp(&b.spec.rate_fps))
    })
}

/// DUT cycles per forwarded packet (`dut_stats.cpu.soak_cycles_per_packet`,
/// else `dut_cycles_per_packet`, see `dut::probe`) in the trial of a
/// throughput test whose rate is the NDR (else the highest-rate loss-free
/// trial): the DUT's cost at its throughput.
pub fn dut_cycles_at_throughput(t: &TestResult) -> Option<f64> {
    trial_at_throughput(t)
        .and_then(|tr| tr.outcome.dut_stats.as_ref())
        .and_then(|d| d.cycles_per_packet())
}

/// The median of `figure` over the trials at the highest rate a
/// throughput test offered (the search's first trial and any it ran
/// again there; the upper one of two). Every DUT of a run starts its
/// search at the same maximum, so this is one load for all of them.
fn median_at_top(t: &TestResult, figure: impl Fn(&TrialRecord) -> Option<f64>) -> Option<f64> {
    let live = || t.trials.iter().filter(|tr| !tr.discarded);
    let top = live().map(|tr| tr.spec.rate_fps).reduce(f64::max)?;
    let mut v: Vec<f64> = live()
        .filter(|tr| tr.spec.rate_fps == top)
        .filter_map(figure)
        .collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// DUT cycles per forwarded packet at the highest rate a throughput test
/// offered ([`median_at_top`]).
pub fn dut_cycles_at_top(t: &TestResult) -> Option<f64> {
    median_at_top(t, |tr| tr.outcome.dut_stats.as_ref()?.cycles_per_packet())
}

/// The capacity projected from the trials at the highest rate a
/// throughput test offered ([`median_at_top`]): per trial, the rate
/// forwarded per port (offered x received / sent) over the DUT CPUs' busy
/// share while sending ([`dut_busy_pct`], soakers only), as
/// [`projection`] projects.
pub fn capacity_at_top(t: &TestResult) -> Option<f64> {
    median_at_top(t, |tr| {
        let o = &tr.outcome;
        let busy = dut_busy_pct(tr).filter(|_| o.sent > 0)?;
        projected(tr.spec.rate_fps * o.received as f64 / o.sent as f64, busy)
    })
}

/// One CSV row per trial of `r`.
fn csv_rows(r: &RunResults, out: &mut String) {
    let opt = |v: Option<f64>| v.map(fmt_f).unwrap_or_default();
    for t in &r.tests {
        // The projection's trial carries it (see `projection`).
        let projected = t
            .throughput_summary()
            .and_then(|s| s.projection)
            .zip(trial_at_throughput(t));
        for tr in &t.trials {
            let o = &tr.outcome;
            let projected_fps = projected
                .filter(|(_, at)| std::ptr::eq(*at, tr))
                .map(|(p, _)| p.projected_fps);
            let l = &o.latency;
            // Latency cells stay empty for a trial without a sample.
            let lat = |v: f64| opt((l.count > 0).then_some(v));
            let cpu_min = o.sys.as_ref().and_then(|s| {
                s.cpus
                    .iter()
                    .map(|c| c.available_pct)
                    .min_by(f64::total_cmp)
            });
            let split = |f: fn(&crate::search::LossSplit) -> u64| {
                o.loss_split
                    .as_ref()
                    .map(|l| f(l).to_string())
                    .unwrap_or_default()
            };
            let noise = o.noise.as_ref();
            let row: Vec<String> = vec![
                r.meta.dut.label().to_string(),
                r.meta.round().to_string(),
                t.test.name().into(),
                t.ip.to_string(),
                t.size.to_string(),
                tr.purpose.clone(),
                fmt_f(tr.spec.rate_fps),
                fmt_f(tr.spec.duration.as_secs_f64()),
                tr.spec.burst.map(|b| b.to_string()).unwrap_or_default(),
                o.sent.to_string(),
                o.received.to_string(),
                o.lost.to_string(),
                fmt_f(o.loss_pct()),
                o.reordered.to_string(),
                o.duplicates.to_string(),
                fmt_f(o.achieved_tx_rate_fps),
                o.tester_limited.to_string(),
                o.tester_limit_reason.clone().unwrap_or_default(),
                lat(l.min_ns as f64),
                lat(l.mean_ns),
                lat(l.median_ns as f64),
                lat(l.p99_ns as f64),
                lat(l.p999_ns as f64),
                lat(l.max_ns as f64),
                opt(l.ipdv_mean_abs_ns.filter(|_| l.count > 0)),
                opt(cpu_min),
                opt(o.sys.as_ref().map(|s| s.irq_total_per_s)),
                split(|l| l.dut_ring),
                split(|l| l.dut_drops),
                split(|l| l.tester_ring),
                split(|l| l.elsewhere),
                o.measurement_fault.clone().unwrap_or_default(),
                tr.discarded.to_string(),
                opt(noise.and_then(|n| n.steal_pct.iter().copied().reduce(f64::max))),
                opt(noise.and_then(|n| n.longest_rx_gap_us)),
                opt(noise.and_then(|n| n.generator_paused_us)),
                opt(dut_busy_pct(tr)),
                opt(projected_fps),
                tr.passed.to_string(),
                tr.bound_for.join(" "),
            ];
            let row: Vec<String> = row.iter().map(|c| csv_field(c)).collect();
            out.push_str(&row.join(","));
            out.push('\n');
        }
    }
}

/// Columns of the CSV file. Empty cells: not applicable or not measured
/// (e.g. `ipdv_mean_abs_ns` with a tester that does not compute IPDV, the
/// latency of a trial in which no frame arrived). `round`: the run's
/// round of `--repeat N` (1 without it). `dut_busy_pct`: the DUT CPUs'
/// busy share in the trial (soakers); `projected_fps`: a projection, not a
/// measurement ([`Projection`]), on the trial it was projected from.
pub const CSV_HEADER: [&str; 40] = [
    "dut",
    "round",
    "test",
    "ip",
    "size",
    "purpose",
    "rate_fps",
    "duration_s",
    "burst",
    "sent",
    "received",
    "lost",
    "loss_pct",
    "reordered",
    "duplicates",
    "achieved_tx_rate_fps",
    "tester_limited",
    "tester_limit_reason",
    "lat_min_ns",
    "lat_mean_ns",
    "lat_median_ns",
    "lat_p99_ns",
    "lat_p999_ns",
    "lat_max_ns",
    "ipdv_mean_abs_ns",
    "dut_cpu_min_available_pct",
    "dut_irq_per_s",
    "lost_dut_ring",
    "lost_dut_drops",
    "lost_tester_ring",
    "lost_elsewhere",
    "measurement_fault",
    "discarded",
    "steal_max_pct",
    "longest_rx_gap_us",
    "generator_paused_us",
    "dut_busy_pct",
    "projected_fps",
    "passed",
    "bound",
];

fn fmt_f(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// RFC 4180 quoting.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::*;
    use crate::sim::{SimConfig, SimDut};
    use crate::tables::{comparison_table, render_tables, Table};
    use crate::throughput::{throughput, ThroughputConfig};
    use schema::dut_sample::{CpuBusy, CpuFigures, DutStats};
    use std::time::Duration;

    /// An NDR and a 0.1 % PDR of 0.1 s trials, decided by three of them.
    pub(crate) fn test_goals() -> Vec<crate::settings::SearchGoal> {
        ["ndr", "pdr"]
            .iter()
            .zip(["0.1f0.3d0l50e1w", "0.1f0.3d0.1l50e1w"])
            .map(|(name, code)| crate::settings::SearchGoal {
                name: name.to_string(),
                ..crate::settings::SearchGoal::from_code(code).unwrap()
            })
            .collect()
    }

    /// A run against the simulated DUT: throughput and latency at 64 B and
    /// IMIX, back-to-back at 64 B. `ipdv`: whether latency has IPDV (the
    /// analyzer's) or not (as the xdp counter reports it).
    pub(crate) fn run(cap: f64, kind: &str, ipdv: bool) -> RunResults {
        let mut dut = SimDut::new(SimConfig {
            capacity_fps: cap,
            buffer: 8,
            loss_prob: 0.0002,
            ..SimConfig::default()
        });
        let mut tests = Vec::new();
        for size in [FrameSize::Fixed(64), "imix".parse().unwrap()] {
            let r = throughput(
                &mut dut,
                &ThroughputConfig {
                    size: size.clone(),
                    max_rate_fps: 100_000.0,
                    goals: test_goals(),
                    rate_tolerance_pct: 1.0,
                    stream_seconds: crate::throughput::STREAM_SECONDS,
                },
            )
            .unwrap();
            tests.push(TestResult::throughput(size.clone(), 4, r));
            let mut l = latency(
                &mut dut,
                &LatencyConfig {
                    size: size.clone(),
                    rate_fps: cap / 2.0,
                    duration: Duration::from_millis(50),
                    repetitions: 2,
                    rate_tolerance_pct: 1.0,
                },
            )
            .unwrap();
            if !ipdv {
                let trials = l.trials.iter_mut().map(|t| &mut t.outcome.latency);
                for s in l.repetitions.iter_mut().chain([&mut l.mean]).chain(trials) {
                    (s.ipdv_mean_abs_ns, s.ipdv_max_abs_ns) = (None, None);
                }
            }
            tests.push(TestResult::latency(size.clone(), 4, l));
        }
        let b = back_to_back(
            &mut dut,
            &BackToBackConfig {
                size: FrameSize::Fixed(64),
                max_rate_fps: 100_000.0,
                max_burst: 1000,
                senders: 1,
                repetitions: 2,
                throughput_fps: Some(cap),
            },
        )
        .unwrap();
        tests.push(TestResult::back_to_back(FrameSize::Fixed(64), 4, b));
        let mut meta = RunMeta::now();
        meta.dut.kind = kind.into();
        meta.dut.version = "test".into();
        RunResults {
            meta,
            settings: Settings::default().resolved(),
            tests,
        }
    }

    #[test]
    fn one_file_holds_every_run_in_order() {
        let r = BenchResults::new(vec![
            run(50_000.0, "softrouter", true),
            run(25_000.0, "linux", false),
        ]);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        r.write_json(&p).unwrap();
        let back = BenchResults::read_json(&p).unwrap();
        // serde_json's default float parsing may differ in the last ulp,
        // so compare everything but floats exactly and floats closely.
        assert_eq!(back.runs.len(), 2);
        for (b, a) in back.runs.iter().zip(&r.runs) {
            assert_eq!(b.meta, a.meta);
            assert_eq!(b.settings, a.settings);
            assert_eq!(b.tests.len(), a.tests.len());
            for (x, y) in b.tests.iter().zip(&a.tests) {
                assert_eq!((x.test, &x.size, x.ip), (y.test, &y.size, y.ip));
                assert_eq!(x.trials.len(), y.trials.len());
                for (u, v) in x.trials.iter().zip(&y.trials) {
                    assert_eq!(
                        (u.outcome.sent, u.outcome.lost),
                        (v.outcome.sent, v.outcome.lost)
                    );
                    assert_eq!(u.bound_for, v.bound_for);
                    assert!((u.spec.rate_fps - v.spec.rate_fps).abs() < 1e-6);
                }
            }
        }
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(j["schema_version"], 3);
        assert_eq!(j["runs"][0]["meta"]["schema_version"], 3);
        assert_eq!(j["runs"][0]["meta"]["dut"]["kind"], "softrouter");
        assert_eq!(j["runs"][1]["meta"]["dut"]["kind"], "linux");
        let tp = &j["runs"][0]["tests"][0]["result"];
        assert_eq!(tp["kind"], "throughput");
        for (i, goal) in ["ndr", "pdr"].iter().enumerate() {
            let g = &tp["goals"][i];
            assert_eq!(g["goal"]["name"], *goal);
            for f in ["fps", "lower_fps", "upper_fps", "loss_at_bound_pct"] {
                assert!(g[f].is_number(), "{goal} {f}: {g}");
            }
            assert!(g["lower_bound"].is_boolean() && g["tester_limited"].is_boolean());
            assert!(g["regular"].is_boolean(), "{g}");
            let loads = g["loads"].as_array().unwrap();
            assert!(loads
                .iter()
                .all(|l| l["class"].is_string() && l["trials"].is_number()));
        }
        assert_eq!(tp["goals"][0]["goal"]["loss_pct"], 0.0);
        assert_eq!(tp["goals"][1]["goal"]["loss_pct"], 0.1);
        // IPDV: a number where measured, null where not.
        let ipdv =
            |run: usize| j["runs"][run]["tests"][1]["result"]["mean"]["ipdv_mean_abs_ns"].clone();
        assert!(ipdv(0).is_number());
        assert!(ipdv(1).is_null());
        // The comparison: per size, both runs, ratios per goal against the
        // baseline (the last run).
        let c = &j["comparison"];
        assert_eq!(c.as_array().unwrap().len(), 2);
        assert_eq!(c[0]["size"], "64");
        assert_eq!(c[0]["baseline"], "linux");
        assert_eq!(c[0]["duts"][1]["dut"], "linux");
        assert_eq!(c[0]["duts"][1]["goals"][1]["ratio"], 1.0);
        let ratio = c[0]["duts"][0]["goals"][1]["ratio"].as_f64().unwrap();
        assert!((ratio - 2.0).abs() < 0.15, "{ratio}");
        // A named baseline.
        let b = BenchResults::with_baseline(r.runs.clone(), Some("softrouter"));
        assert_eq!(b.comparison[0].baseline, "softrouter");
        assert_eq!(b.comparison[0].duts[0].goals[1].ratio, Some(1.0));
        // One run: no comparison.
        assert!(BenchResults::new(vec![run(50_000.0, "softrouter", true)])
            .comparison
            .is_empty());
    }

    #[test]
    fn one_csv_with_a_dut_column() {
        let r = BenchResults::new(vec![
            run(50_000.0, "softrouter", true),
            run(25_000.0, "linux", false),
        ]);
        let csv = r.to_csv();
        let rows: usize = r
            .runs
            .iter()
            .flat_map(|r| &r.tests)
            .map(|t| t.trials.len())
            .sum();
        assert_eq!(csv.lines().count(), rows + 1);
        assert!(csv.starts_with("dut,round,test,ip,size,"));
        assert!(csv
            .lines()
            .all(|l| l.split(',').count() >= CSV_HEADER.len()));
        let of = |dut: &str| {
            csv.lines()
                .filter(|l| l.starts_with(&format!("{dut},1,")))
                .count()
        };
        assert_eq!(of("softrouter") + of("linux"), rows);
        assert!(of("linux") > 0);
        // The rows that carry the NDR's lower bound are marked, for every
        // DUT and size.
        for dut in ["softrouter", "linux"] {
            let bound = csv
                .lines()
                .filter(|l| l.starts_with(dut) && (l.ends_with(",ndr") || l.ends_with(",ndr pdr")))
                .count();
            assert!(bound >= 2, "{dut}: {csv}");
        }
        // Unmeasured IPDV is an empty cell, measured a number.
        let latency_rows: Vec<Vec<&str>> = csv
            .lines()
            .filter(|l| l.contains(",latency,"))
            .map(|l| l.split(',').collect())
            .collect();
        let col = CSV_HEADER
            .iter()
            .position(|h| *h == "ipdv_mean_abs_ns")
            .unwrap();
        assert!(latency_rows
            .iter()
            .any(|r| r[0] == "softrouter" && !r[col].is_empty()));
        assert!(latency_rows
            .iter()
            .any(|r| r[0] == "linux" && r[col].is_empty()));
        // A trial without latency samples: empty cells, `n/a` in tables.
        let mut none = r.runs[0].clone();
        for t in &mut none.tests {
            for tr in &mut t.trials {
                tr.outcome.latency = crate::analyzer::LatencySummary::default();
            }
            if let TestValue::Latency(l) = &mut t.result {
                l.mean = crate::analyzer::LatencySummary::default();
            }
        }
        let lat_min = CSV_HEADER.iter().position(|h| *h == "lat_min_ns").unwrap();
        let empty = BenchResults::new(vec![none.clone()]).to_csv();
        assert!(empty
            .lines()
            .skip(1)
            .all(|l| l.split(',').nth(lat_min) == Some("")));
        let table = render_tables(&none);
        let row = table
            .lines()
            .skip_while(|l| !l.starts_with("latency"))
            .nth(3)
            .unwrap();
        assert_eq!(row.matches("n/a").count(), 7, "{row}");
        let dir = tempfile::tempdir().unwrap();
        let cp = dir.path().join("r.csv");
        r.write_csv(&cp).unwrap();
        assert_eq!(std::fs::read_to_string(cp).unwrap(), csv);
    }

    #[test]
    fn csv_quotes_fields() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }

    #[test]
    fn tables_show_both_goals_and_absent_figures() {
        let r = run(50_000.0, "softrouter", false);
        let s = render_tables(&r);
        assert!(s.contains("throughput - softrouter test"), "{s}");
        assert!(s.contains("RFC 9971 goals: ndr (0.1f0.3d0l50e1w)"), "{s}");
        let goals: Vec<&str> = s
            .lines()
            .filter(|l| l.starts_with("64 v4") && !l.contains("n/a"))
            .filter_map(|l| l.split_whitespace().nth(2))
            .collect();
        assert!(goals.starts_with(&["NDR", "PDR"]), "{s}");
        let lat = s
            .lines()
            .skip_while(|l| !l.starts_with("latency"))
            .nth(3)
            .unwrap();
        assert!(lat.starts_with("64 v4") && lat.contains("n/a"), "{s}");
        assert!(s.contains("back-to-back"));
        let t = Table {
            title: String::new(),
            headers: vec!["a".into(), "bb".into()],
            rows: vec![
                vec!["xyz".into(), "1".into()],
                vec!["q".into(), "100".into()],
            ],
        };
        assert_eq!(t.render(), "a     bb\n--------\nxyz    1\nq    100\n");
        let both = BenchResults::new(vec![
            run(50_000.0, "softrouter", true),
            run(25_000.0, "linux", true),
        ]);
        let c = comparison_table(&both);
        assert!(c.contains("NDR/linux") && c.contains("PDR/linux"), "{c}");
        // A row per run: size, DUT, NDR, PDR, the two ratios to the last
        // run, cycles ("-": no CPU figures).
        let rows: Vec<Vec<&str>> = c
            .lines()
            .filter(|l| l.starts_with("64 v4"))
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(rows.len(), 2, "{c}");
        assert_eq!(rows[0].len(), 8, "{c}");
        assert_eq!((rows[0][2], rows[1][2]), ("softrouter", "linux"), "{c}");
        let pdr_ratio: f64 = rows[0][6].parse().unwrap();
        assert!((pdr_ratio - 2.0).abs() < 0.15, "{c}");
        assert_eq!((rows[1][5], rows[1][6], rows[1][7]), ("-", "-", "-"), "{c}");
        assert_eq!(
            comparison_table(&BenchResults::new(vec![both.runs[0].clone()])),
            ""
        );
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    /// Give every trial of `r`'s throughput tests the DUT CPU figures of
    /// a probe with soakers (busy `busy_pct` while the traffic ran, in an
    /// interval twice the trial's, as a drain as long as the trial makes
    /// it), and project again.
    fn with_busy(mut r: RunResults, busy_pct: f64, cycles: f64) -> RunResults {
        for t in r
            .tests
            .iter_mut()
            .filter(|t| t.test == TestKind::Throughput)
        {
            for tr in &mut t.trials {
                let sending_s = tr.spec.duration.as_secs_f64();
                tr.outcome.dut_stats = Some(DutStats {
                    cpu: Some(CpuFigures {
                        interval_s: 2.0 * sending_s,
                        soak: Some(vec![CpuBusy {
                            cpu: 1,
                            busy_pct: busy_pct / 2.0,
                        }]),
                        soak_dut_cpu_s: Some(busy_pct / 100.0 * sending_s),
                        soak_cycles_per_packet: Some(cycles),
                        ..CpuFigures::default()
                    }),
                    ..DutStats::default()
                });
            }
            t.project();
        }
        r
    }

    /// A run of throughput tests (64 B and IMIX) against a loss-free
    /// simulated DUT of `cap` frames/s, the maximum load 100 kfps.
    fn throughput_run(cap: f64, kind: &str) -> RunResults {
        let mut dut = SimDut::new(SimConfig {
            capacity_fps: cap,
            buffer: 8,
            ..SimConfig::default()
        });
        let tests = [FrameSize::Fixed(64), "imix".parse().unwrap()]
            .into_iter()
            .map(|size| {
                let cfg = ThroughputConfig {
                    size: size.clone(),
                    max_rate_fps: 100_000.0,
                    goals: test_goals(),
                    rate_tolerance_pct: 1.0,
                    stream_seconds: crate::throughput::STREAM_SECONDS,
                };
                TestResult::throughput(size, 4, throughput(&mut dut, &cfg).unwrap())
            })
            .collect();
        let mut meta = RunMeta::now();
        meta.dut.kind = kind.into();
        RunResults {
            meta,
            settings: Settings::default().resolved(),
            tests,
        }
    }

    #[test]
    fn tester_limited_runs_are_projected_and_set_beside_the_floor() {
        // Both DUTs forward more than the tester's maximum (100 kfps): the
        // first goal's rate is a lower bound for each.
        let x = with_busy(throughput_run(400_000.0, "softrouter"), 25.0, 600.0);
        let floor = with_busy(throughput_run(400_000.0, "floor"), 50.0, 400.0);
        // The DUT ended the search: no projection.
        let limited = with_busy(throughput_run(50_000.0, "linux"), 90.0, 900.0);
        let b = BenchResults::new(vec![x, floor, limited]);
        let s = b.runs[0].tests[0].throughput_summary().unwrap();
        assert!(s.first().unwrap().lower_bound, "{s:?}");
        let p = s.projection.expect("a projection");
        // 25 % while sending, though the soakers saw 12.5 % of their
        // interval (drain included).
        assert!((p.busy_pct - 25.0).abs() < 1e-9, "{p:?}");
        assert!(
            (p.projected_fps - 4.0 * p.measured_fps).abs() < 1e-6,
            "{p:?}"
        );
        assert!(b.runs[2].tests[0]
            .throughput_summary()
            .unwrap()
            .projection
            .is_none());

        let row = &b.comparison[0];
        let (x, f, l) = (&row.duts[0], &row.duts[1], &row.duts[2]);
        assert!(x.projection.is_some() && l.projection.is_none());
        let r = x.x_floor.expect("against the floor");
        assert!((r.cycles_per_packet.unwrap() - 1.5).abs() < 1e-9, "{r:?}");
        // Projected capacities: 4x and 2x the same measured rate.
        assert!((r.capacity.unwrap() - 2.0).abs() < 0.05, "{r:?}");
        assert!(r.projected, "{r:?}");
        assert_eq!(f.x_floor.unwrap().cycles_per_packet, Some(1.0));
        assert!(l.x_floor.unwrap().fps.unwrap() < 1.0, "{:?}", l.x_floor);

        // Marked as projections wherever they appear.
        let json = serde_json::to_value(&b).unwrap();
        assert!(json["comparison"][0]["duts"][0]["projection"]["projected_fps"].is_f64());
        assert_eq!(
            json["comparison"][0]["duts"][0]["x_floor"]["projected"],
            true
        );
        let table = crate::tables::comparison_table(&b);
        assert!(
            table.contains("PROJECTED") && table.contains("capacity x floor"),
            "{table}"
        );
        assert!(table.contains("~x2.0"), "{table}");
        let runs = crate::tables::render_tables(&b.runs[0]);
        assert!(runs.contains("PROJECTED capacity"), "{runs}");
        let csv = b.to_csv();
        let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let col = head.iter().position(|h| *h == "projected_fps").unwrap();
        let projected: Vec<&str> = csv
            .lines()
            .skip(1)
            .filter_map(|l| l.split(',').nth(col).filter(|c| !c.is_empty()))
            .collect();
        // One trial per projected test (softrouter's and the floor's, two
        // sizes each).
        assert_eq!(projected.len(), 4, "{csv}");
        let e = crate::html::Experiment {
            name: "floor".into(),
            results: b.clone(),
        };
        let html = crate::html::page("report", &[e], &[]);
        assert!(html.contains("(projected)") && html.contains("capacity x floor"));
    }

    #[test]
    fn cycles_against_the_floor_are_taken_at_the_same_load() {
        // The tier is tester-limited (every trial at the top, 100 kfps);
        // the floor lost frames at the top and ended lower, where each
        // packet costs more (here 2x).
        let cost = |top: f64, below: f64| {
            move |tr: &mut TrialRecord| {
                let c = if tr.spec.rate_fps >= 100_000.0 {
                    top
                } else {
                    below
                };
                tr.outcome.dut_stats = Some(DutStats {
                    cpu: Some(CpuFigures {
                        soak_cycles_per_packet: Some(c),
                        ..CpuFigures::default()
                    }),
                    ..DutStats::default()
                });
            }
        };
        let mut x = throughput_run(400_000.0, "softrouter");
        let mut floor = throughput_run(60_000.0, "floor");
        for (r, mut f) in [
            (&mut x, cost(500.0, 500.0)),
            (&mut floor, cost(400.0, 800.0)),
        ] {
            r.tests
                .iter_mut()
                .flat_map(|t| &mut t.trials)
                .for_each(&mut f);
        }
        let b = BenchResults::new(vec![x, floor]);
        let (x, f) = (&b.comparison[0].duts[0], &b.comparison[0].duts[1]);
        // At each one's throughput: 500 against 800, unlike loads.
        assert_eq!(
            (x.cycles_per_packet, f.cycles_per_packet),
            (Some(500.0), Some(800.0))
        );
        assert_eq!(
            (x.cycles_at_top, f.cycles_at_top),
            (Some(500.0), Some(400.0))
        );
        let r = x.x_floor.unwrap().cycles_per_packet.unwrap();
        assert!((r - 1.25).abs() < 1e-9, "{r}");
        // No soakers: no capacity at the top, the measured rates compare.
        assert_eq!(x.capacity_at_top, None);
    }

    #[test]
    fn capacity_against_the_floor_is_projected_at_the_same_load_for_both() {
        // The tier tester-limited, 25 % busy at the top; the floor 50 %
        // busy there, but it lost a frame (a host stall) and ended lower,
        // so it has no projection of its own.
        let x = with_busy(throughput_run(400_000.0, "softrouter"), 25.0, 500.0);
        let floor = with_busy(throughput_run(60_000.0, "floor"), 50.0, 400.0);
        let b = BenchResults::new(vec![x, floor]);
        let (x, f) = (&b.comparison[0].duts[0], &b.comparison[0].duts[1]);
        assert!(x.projection.is_some() && f.projection.is_none());
        // At the top (100 kfps offered): 100 k / 0.25 and what the floor
        // forwarded there / 0.5.
        let fx = x.capacity_at_top.unwrap();
        assert!((fx - 400_000.0).abs() < 1.0, "{fx}");
        let ff = f.capacity_at_top.unwrap();
        assert!(ff > 100_000.0 && ff <= 200_000.0, "{ff}");
        let r = x.x_floor.unwrap();
        assert!((r.capacity.unwrap() - fx / ff).abs() < 1e-9, "{r:?}");
        assert!(r.projected);
    }
}
