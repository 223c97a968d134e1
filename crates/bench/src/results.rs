//! The results schema (R15), its JSON and CSV writers, and terminal tables.
//!
//! Why one schema: every trial is kept (rate, counts, latency, tester
//! limit, DUT CPU/IRQ figures, DUT's own statistics), next to the result a
//! procedure derived from them, and the run's metadata and resolved
//! settings, so that a result can be audited and the run repeated. The
//! report tools read the JSON; `docs/bench-results.md` documents it.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::analyzer::LatencySummary;
use crate::search::{
    BackToBackResult, LatencyResult, LossSeriesResult, RecoveryResult, ThroughputResult,
    TrialRecord,
};
use crate::settings::{Settings, TestKind};
use crate::sizes::{l2_bps, wire_bps, FrameSize};

/// Version of this schema; bumped on incompatible changes.
pub const SCHEMA_VERSION: u32 = 1;

/// The device under test, as recorded (R15).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DutInfo {
    /// softrouter, linux, command or external.
    pub kind: String,
    /// Its version string (softrouter --version, kernel release, ...).
    pub version: String,
    /// Its configuration (router config, sysctls, command line).
    pub config: serde_json::Value,
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
            ..RunMeta::default()
        }
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

/// Throughput result of one size (R8).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThroughputSummary {
    /// Throughput, frames/s per port (`None`: no rate passed).
    pub fps: Option<f64>,
    /// Layer-2 bit rate at the throughput (with FCS).
    pub l2_bps: Option<f64>,
    /// Wire bit rate (with preamble and gap).
    pub wire_bps: Option<f64>,
    /// The maximum (theoretical or calibrated) rate.
    pub max_rate_fps: f64,
    /// Throughput as % of the maximum.
    pub pct_of_max: Option<f64>,
    /// Search stopped at a tester limit: `fps` is a lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tester_limited: Option<String>,
    /// Confirmation trial outcome.
    pub confirmed: Option<bool>,
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
}

impl TestResult {
    /// From a throughput search.
    pub fn throughput(size: FrameSize, ip: u8, mut r: ThroughputResult) -> TestResult {
        let avg = size.average();
        let trials = std::mem::take(&mut r.trials);
        TestResult {
            test: TestKind::Throughput,
            ip,
            result: TestValue::Throughput(ThroughputSummary {
                fps: r.throughput_fps,
                l2_bps: r.throughput_fps.map(|f| l2_bps(f, avg)),
                wire_bps: r.throughput_fps.map(|f| wire_bps(f, avg)),
                max_rate_fps: r.max_rate_fps,
                pct_of_max: r.throughput_fps.map(|f| f * 100.0 / r.max_rate_fps),
                tester_limited: r.tester_limited,
                confirmed: r.confirmed,
            }),
            size,
            trials,
        }
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
        }
    }
}

/// A whole run: what the JSON file holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResults {
    /// Metadata.
    pub meta: RunMeta,
    /// The resolved settings (load them to repeat the run).
    pub settings: Settings,
    /// Results, in the order run.
    pub tests: Vec<TestResult>,
}

impl RunResults {
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
    pub fn read_json(path: &Path) -> Result<RunResults> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// Write the CSV (one row per trial; see [`CSV_HEADER`]).
    pub fn write_csv(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.to_csv()).with_context(|| format!("writing {}", path.display()))
    }

    /// The CSV text.
    pub fn to_csv(&self) -> String {
        let mut out = CSV_HEADER.join(",");
        out.push('\n');
        for t in &self.tests {
            for tr in &t.trials {
                let o = &tr.outcome;
                let l = &o.latency;
                let cpu_min = o.sys.as_ref().and_then(|s| {
                    s.cpus
                        .iter()
                        .map(|c| c.available_pct)
                        .min_by(f64::total_cmp)
                });
                let row: Vec<String> = vec![
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
                    l.min_ns.to_string(),
                    fmt_f(l.mean_ns),
                    l.median_ns.to_string(),
                    l.p99_ns.to_string(),
                    l.p999_ns.to_string(),
                    l.max_ns.to_string(),
                    fmt_f(l.ipdv_mean_abs_ns),
                    cpu_min.map(fmt_f).unwrap_or_default(),
                    o.sys
                        .as_ref()
                        .map(|s| fmt_f(s.irq_total_per_s))
                        .unwrap_or_default(),
                    tr.passed.to_string(),
                ];
                let row: Vec<String> = row.iter().map(|c| csv_field(c)).collect();
                out.push_str(&row.join(","));
                out.push('\n');
            }
        }
        out
    }
}

/// Columns of the CSV file.
pub const CSV_HEADER: [&str; 26] = [
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
    "passed",
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

/// A plain text table: first column left-aligned, the others right-aligned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// Title line.
    pub title: String,
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Render with two spaces between columns and a rule under the header.
    pub fn render(&self) -> String {
        let n = self.headers.len();
        let mut w: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (i, width) in w.iter().enumerate() {
                let c = cells.get(i).map(String::as_str).unwrap_or("");
                if i > 0 {
                    s.push_str("  ");
                }
                if i == 0 {
                    let _ = write!(s, "{c:<width$}");
                } else {
                    let _ = write!(s, "{c:>width$}");
                }
            }
            s.trim_end().to_string()
        };
        let mut out = String::new();
        if !self.title.is_empty() {
            out.push_str(&self.title);
            out.push('\n');
        }
        out.push_str(&line(&self.headers));
        out.push('\n');
        let total: usize = w.iter().sum::<usize>() + 2 * n.saturating_sub(1);
        out.push_str(&"-".repeat(total));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }
}

fn mpps(f: f64) -> String {
    format!("{:.4}", f / 1e6)
}

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1e3)
}

fn label(t: &TestResult) -> String {
    format!("{} v{}", t.size, t.ip)
}

/// One table per test kind that has results.
pub fn render_tables(r: &RunResults) -> String {
    let mut out = String::new();
    let dut = format!("{} {}", r.meta.dut.kind, r.meta.dut.version);
    for kind in [
        TestKind::Throughput,
        TestKind::Latency,
        TestKind::Loss,
        TestKind::BackToBack,
        TestKind::Recovery,
    ] {
        let tests: Vec<&TestResult> = r.tests.iter().filter(|t| t.test == kind).collect();
        if tests.is_empty() {
            continue;
        }
        let mut tb = Table {
            title: format!("{} - {}", kind.name(), dut.trim()),
            ..Table::default()
        };
        match kind {
            TestKind::Throughput => {
                tb.headers = ["size", "Mpps", "Mb/s (L2)", "max Mpps", "% of max", "note"]
                    .map(String::from)
                    .to_vec();
                for t in &tests {
                    if let TestValue::Throughput(s) = &t.result {
                        let note = match (&s.tester_limited, s.confirmed) {
                            (Some(_), _) => "tester-limited (lower bound)".to_string(),
                            (None, Some(false)) => "not confirmed".to_string(),
                            (None, Some(true)) => "confirmed".to_string(),
                            (None, None) => String::new(),
                        };
                        tb.rows.push(vec![
                            label(t),
                            s.fps.map(mpps).unwrap_or_else(|| "-".into()),
                            s.l2_bps
                                .map(|b| format!("{:.1}", b / 1e6))
                                .unwrap_or_else(|| "-".into()),
                            mpps(s.max_rate_fps),
                            s.pct_of_max
                                .map(|p| format!("{p:.1}"))
                                .unwrap_or_else(|| "-".into()),
                            note,
                        ]);
                    }
                }
            }
            TestKind::Latency => {
                tb.headers = [
                    "size",
                    "min us",
                    "mean us",
                    "median us",
                    "p99 us",
                    "p99.9 us",
                    "max us",
                    "IPDV us",
                    "reps",
                    "note",
                ]
                .map(String::from)
                .to_vec();
                for t in &tests {
                    if let TestValue::Latency(l) = &t.result {
                        let m: &LatencySummary = &l.mean;
                        tb.rows.push(vec![
                            label(t),
                            us(m.min_ns as f64),
                            us(m.mean_ns),
                            us(m.median_ns as f64),
                            us(m.p99_ns as f64),
                            us(m.p999_ns as f64),
                            us(m.max_ns as f64),
                            us(m.ipdv_mean_abs_ns),
                            l.repetitions.len().to_string(),
                            if l.tester_limited > 0 {
                                format!("{} tester-limited", l.tester_limited)
                            } else {
                                String::new()
                            },
                        ]);
                    }
                }
            }
            TestKind::Loss => {
                tb.headers = ["size", "load %", "Mpps", "loss %", "note"]
                    .map(String::from)
                    .to_vec();
                for t in &tests {
                    if let TestValue::Loss(l) = &t.result {
                        for p in &l.points {
                            tb.rows.push(vec![
                                label(t),
                                format!("{:.1}", p.load_pct),
                                mpps(p.rate_fps),
                                format!("{:.3}", p.loss_pct),
                                if p.tester_limited {
                                    "tester-limited".into()
                                } else {
                                    String::new()
                                },
                            ]);
                        }
                    }
                }
            }
            TestKind::BackToBack => {
                tb.headers = [
                    "size",
                    "mean burst",
                    "stddev",
                    "trials",
                    "buffer ms",
                    "corrected ms",
                    "note",
                ]
                .map(String::from)
                .to_vec();
                for t in &tests {
                    if let TestValue::BackToBack(b) = &t.result {
                        tb.rows.push(vec![
                            label(t),
                            format!("{:.1}", b.mean_burst),
                            format!("{:.1}", b.stddev_burst),
                            b.bursts.len().to_string(),
                            format!("{:.3}", b.implied_buffer_time_s * 1e3),
                            b.corrected_buffer_time_s
                                .map(|c| format!("{:.3}", c * 1e3))
                                .unwrap_or_else(|| "-".into()),
                            [
                                b.hit_max_burst
                                    .then(|| "at max burst (lower bound)".to_string()),
                                (b.tester_limited_trials > 0).then(|| {
                                    format!(
                                        "{} bursts tester-limited (lower bound)",
                                        b.tester_limited_trials
                                    )
                                }),
                            ]
                            .into_iter()
                            .flatten()
                            .collect::<Vec<_>>()
                            .join("; "),
                        ]);
                    }
                }
            }
            TestKind::Recovery => {
                tb.headers = ["size", "overload Mpps", "recovery s", "reps", "note"]
                    .map(String::from)
                    .to_vec();
                for t in &tests {
                    if let TestValue::Recovery(rc) = &t.result {
                        let mut note = Vec::new();
                        if rc.capped {
                            note.push("110% capped at max rate".to_string());
                        }
                        if rc.tester_limited_reps > 0 {
                            note.push(format!(
                                "{} reps tester-limited (upper bounds)",
                                rc.tester_limited_reps
                            ));
                        }
                        if rc.no_overload_loss > 0 {
                            note.push(format!(
                                "{} reps without overload loss",
                                rc.no_overload_loss
                            ));
                        }
                        tb.rows.push(vec![
                            label(t),
                            mpps(rc.overload_rate_fps),
                            format!("{:.3}", rc.mean_recovery_s),
                            rc.recovery_s.len().to_string(),
                            note.join("; "),
                        ]);
                    }
                }
            }
        }
        out.push_str(&tb.render());
        out.push('\n');
    }
    out
}

/// DUT cycles per forwarded packet (`dut_stats.cpu.soak_cycles_per_packet`,
/// else `dut_cycles_per_packet`, see `dut::probe`) in the highest-rate
/// passing trial of a throughput test: the DUT's cost at its throughput.
pub fn dut_cycles_at_throughput(t: &TestResult) -> Option<f64> {
    t.trials
        .iter()
        // Passed, or loss-free at a tester-limited rate (the lower bound).
        .filter(|tr| tr.passed || tr.outcome.lost == 0 && tr.outcome.sent > 0)
        .max_by(|a, b| a.spec.rate_fps.total_cmp(&b.spec.rate_fps))
        .and_then(|tr| tr.outcome.dut_stats.as_ref())
        .and_then(|d| {
            let c = &d["cpu"];
            c["soak_cycles_per_packet"]
                .as_f64()
                .or_else(|| c["dut_cycles_per_packet"].as_f64())
        })
}

/// Throughput of two runs side by side per size and IP version, with the
/// ratio `a / b` (e.g. softrouter vs linux).
pub fn comparison_table(a: &RunResults, b: &RunResults) -> String {
    let name = |r: &RunResults| {
        if r.meta.dut.kind.is_empty() {
            "?".to_string()
        } else {
            r.meta.dut.kind.clone()
        }
    };
    let (na, nb) = (name(a), name(b));
    let mut tb = Table {
        title: format!("throughput: {na} vs {nb}"),
        headers: vec![
            "size".into(),
            format!("{na} Mpps"),
            format!("{nb} Mpps"),
            format!("{na}/{nb}"),
            format!("{na} cyc/pkt"),
            format!("{nb} cyc/pkt"),
        ],
        rows: Vec::new(),
    };
    let fps = |t: &TestResult| match &t.result {
        TestValue::Throughput(s) => s.fps.map(|f| (f, s.tester_limited.is_some())),
        _ => None,
    };
    let cell = |v: Option<(f64, bool)>| match v {
        Some((f, lim)) => format!("{}{}", mpps(f), if lim { "+" } else { "" }),
        None => "-".into(),
    };
    for ta in a.tests.iter().filter(|t| t.test == TestKind::Throughput) {
        let tb_match = b
            .tests
            .iter()
            .find(|t| t.test == TestKind::Throughput && t.size == ta.size && t.ip == ta.ip);
        let fa = fps(ta);
        let fb = tb_match.and_then(fps);
        let ratio = match (fa, fb) {
            (Some((x, _)), Some((y, _))) if y > 0.0 => format!("{:.2}", x / y),
            _ => "-".into(),
        };
        let cyc = |t: Option<&TestResult>| {
            t.and_then(dut_cycles_at_throughput)
                .map_or("-".to_string(), |c| format!("{c:.0}"))
        };
        tb.rows.push(vec![
            label(ta),
            cell(fa),
            cell(fb),
            ratio,
            cyc(Some(ta)),
            cyc(tb_match),
        ]);
    }
    let mut s = tb.render();
    s.push_str("(+ = tester-limited: a lower bound; cyc/pkt = busy cycles of the DUT's CPUs per forwarded packet in the highest passing trial)\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::*;
    use crate::sim::{SimConfig, SimDut};
    use std::time::Duration;

    fn run(cap: f64, kind: &str) -> RunResults {
        let mut dut = SimDut::new(SimConfig {
            capacity_fps: cap,
            buffer: 8,
            ..SimConfig::default()
        });
        let mut tests = Vec::new();
        for size in [FrameSize::Fixed(64), "imix".parse().unwrap()] {
            let r = throughput(
                &mut dut,
                &ThroughputConfig {
                    size: size.clone(),
                    max_rate_fps: 100_000.0,
                    loss_tolerance_pct: 0.0,
                    resolution_pct: 1.0,
                    trial_duration: Duration::from_millis(100),
                    confirm_duration: None,
                    rate_tolerance_pct: 1.0,
                },
            )
            .unwrap();
            tests.push(TestResult::throughput(size.clone(), 4, r));
            let l = latency(
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
            tests.push(TestResult::latency(size.clone(), 4, l));
        }
        let b = back_to_back(
            &mut dut,
            &BackToBackConfig {
                size: FrameSize::Fixed(64),
                max_rate_fps: 100_000.0,
                max_burst: 1000,
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
    fn json_round_trip_and_csv_rows() {
        let r = run(50_000.0, "softrouter");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        r.write_json(&p).unwrap();
        let back = RunResults::read_json(&p).unwrap();
        // serde_json's default float parsing may differ in the last ulp,
        // so compare everything but floats exactly and floats closely.
        assert_eq!(back.meta, r.meta);
        assert_eq!(back.settings, r.settings);
        assert_eq!(back.tests.len(), r.tests.len());
        for (a, b) in back.tests.iter().zip(&r.tests) {
            assert_eq!((a.test, &a.size, a.ip), (b.test, &b.size, b.ip));
            assert_eq!(a.trials.len(), b.trials.len());
            for (x, y) in a.trials.iter().zip(&b.trials) {
                assert_eq!(
                    (x.outcome.sent, x.outcome.lost),
                    (y.outcome.sent, y.outcome.lost)
                );
                assert_eq!(x.spec.burst, y.spec.burst);
                assert!((x.spec.rate_fps - y.spec.rate_fps).abs() < 1e-6);
                assert_eq!(x.outcome.latency.p999_ns, y.outcome.latency.p999_ns);
            }
        }
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(j["meta"]["schema_version"], 1);
        assert_eq!(j["tests"][0]["result"]["kind"], "throughput");
        assert_eq!(j["tests"][1]["size"], "64");
        assert_eq!(j["tests"][2]["size"], "imix");
        let csv = r.to_csv();
        let rows: usize = r.tests.iter().map(|t| t.trials.len()).sum();
        assert_eq!(csv.lines().count(), rows + 1);
        assert!(csv
            .lines()
            .all(|l| l.split(',').count() >= CSV_HEADER.len()));
        let cp = dir.path().join("r.csv");
        r.write_csv(&cp).unwrap();
        assert!(std::fs::read_to_string(cp)
            .unwrap()
            .starts_with("test,ip,size"));
    }

    #[test]
    fn csv_quotes_fields() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }

    #[test]
    fn tables_render_aligned() {
        let r = run(50_000.0, "softrouter");
        let s = render_tables(&r);
        assert!(s.contains("throughput - softrouter test"), "{s}");
        assert!(s.contains("latency"));
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
        let lin = run(25_000.0, "linux");
        let c = comparison_table(&r, &lin);
        assert!(c.contains("softrouter/linux"), "{c}");
        let row = c.lines().find(|l| l.starts_with("64 v4")).unwrap();
        // size, a, b, ratio, a cycles, b cycles ("-": the sim has no CPU figures)
        let cols: Vec<&str> = row.split_whitespace().collect();
        let ratio: f64 = cols[cols.len() - 3].parse().unwrap();
        assert_eq!(cols[cols.len() - 1], "-");
        assert!((ratio - 2.0).abs() < 0.1, "{row}");
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
    }
}
