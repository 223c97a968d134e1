//! Terminal tables of a run's results and the comparison of several runs.
//!
//! Why plain text: the tables go to a terminal and into logs; aligned
//! columns are enough, and a figure that was not measured prints `n/a`,
//! never a made-up 0. Lower bounds (the tester, not the DUT, set the
//! figure, or the maximum rate passed) carry a `+`.

use std::fmt::Write as _;

use crate::analyzer::LatencySummary;
use crate::results::{BenchResults, RunResults, TestResult, TestValue, ThroughputSummary};
use crate::settings::TestKind;
use crate::throughput::{Goal, GoalResult};

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
    fn new(title: String, headers: &[&str]) -> Table {
        Table {
            title,
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

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

/// A figure that may not have been measured.
fn or_na<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map_or_else(|| "n/a".to_string(), f)
}

/// A rate in Mpps, `+` for a lower bound, `-` when no rate passed.
fn rate_cell(g: &GoalResult) -> String {
    match g.fps {
        Some(f) => format!("{}{}", mpps(f), if g.lower_bound { "+" } else { "" }),
        None => "-".into(),
    }
}

/// What to say about one goal's figure, if anything.
fn goal_note(g: &GoalResult) -> Option<String> {
    if g.tester_limited {
        Some("tester-limited (lower bound)".into())
    } else if g.lower_bound {
        Some("maximum rate passed (lower bound)".into())
    } else {
        match g.confirmed {
            Some(false) => Some("re-searched at final duration".into()),
            Some(true) => Some("confirmed".into()),
            None => None,
        }
    }
}

/// The note column of a throughput row: one note when both goals agree.
fn throughput_note(s: &ThroughputSummary) -> String {
    match (goal_note(&s.ndr), goal_note(&s.pdr)) {
        (a, b) if a == b => a.unwrap_or_default(),
        (a, b) => [(Goal::Ndr, a), (Goal::Pdr, b)]
            .into_iter()
            .filter_map(|(g, n)| n.map(|n| format!("{}: {n}", g.name().to_uppercase())))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

fn throughput_table(title: String, tests: &[&TestResult]) -> Table {
    let mut tb = Table::new(
        title,
        &[
            "size", "NDR Mpps", "PDR Mpps", "NDR Mb/s", "max Mpps", "NDR %", "PDR %", "note",
        ],
    );
    for t in tests {
        let Some(s) = t.throughput_summary() else {
            continue;
        };
        let pct = |g: &GoalResult| g.pct_of_max.map_or("-".into(), |p| format!("{p:.1}"));
        tb.rows.push(vec![
            t.label(),
            rate_cell(&s.ndr),
            rate_cell(&s.pdr),
            s.ndr
                .l2_bps
                .map_or("-".into(), |b| format!("{:.1}", b / 1e6)),
            mpps(s.max_rate_fps),
            pct(&s.ndr),
            pct(&s.pdr),
            throughput_note(s),
        ]);
    }
    tb
}

fn latency_table(title: String, tests: &[&TestResult]) -> Table {
    let mut tb = Table::new(
        title,
        &[
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
        ],
    );
    for t in tests {
        if let TestValue::Latency(l) = &t.result {
            let m: &LatencySummary = &l.mean;
            // No sample at all: nothing was measured.
            let had = |v: f64| (m.count > 0).then_some(v);
            tb.rows.push(vec![
                t.label(),
                or_na(had(m.min_ns as f64), us),
                or_na(had(m.mean_ns), us),
                or_na(had(m.median_ns as f64), us),
                or_na(had(m.p99_ns as f64), us),
                or_na(had(m.p999_ns as f64), us),
                or_na(had(m.max_ns as f64), us),
                or_na(m.ipdv_mean_abs_ns.filter(|_| m.count > 0), us),
                l.repetitions.len().to_string(),
                if l.tester_limited > 0 {
                    format!("{} tester-limited", l.tester_limited)
                } else {
                    String::new()
                },
            ]);
        }
    }
    tb
}

fn loss_table(title: String, tests: &[&TestResult]) -> Table {
    let mut tb = Table::new(title, &["size", "load %", "Mpps", "loss %", "note"]);
    for t in tests {
        if let TestValue::Loss(l) = &t.result {
            for p in &l.points {
                tb.rows.push(vec![
                    t.label(),
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
    tb
}

fn back_to_back_table(title: String, tests: &[&TestResult]) -> Table {
    let mut tb = Table::new(
        title,
        &[
            "size",
            "mean burst",
            "stddev",
            "trials",
            "buffer ms",
            "corrected ms",
            "note",
        ],
    );
    for t in tests {
        if let TestValue::BackToBack(b) = &t.result {
            let note = [
                b.hit_max_burst
                    .then(|| "at max burst (lower bound)".to_string()),
                (b.tester_limited_trials > 0).then(|| {
                    format!(
                        "{} bursts tester-limited (lower bound)",
                        b.tester_limited_trials
                    )
                }),
            ];
            tb.rows.push(vec![
                t.label(),
                format!("{:.1}", b.mean_burst),
                format!("{:.1}", b.stddev_burst),
                b.bursts.len().to_string(),
                format!("{:.3}", b.implied_buffer_time_s * 1e3),
                b.corrected_buffer_time_s
                    .map_or("-".into(), |c| format!("{:.3}", c * 1e3)),
                note.into_iter().flatten().collect::<Vec<_>>().join("; "),
            ]);
        }
    }
    tb
}

fn recovery_table(title: String, tests: &[&TestResult]) -> Table {
    let mut tb = Table::new(
        title,
        &["size", "overload Mpps", "recovery s", "reps", "note"],
    );
    for t in tests {
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
                t.label(),
                mpps(rc.overload_rate_fps),
                format!("{:.3}", rc.mean_recovery_s),
                rc.recovery_s.len().to_string(),
                note.join("; "),
            ]);
        }
    }
    tb
}

/// One table per test kind that has results.
pub fn render_tables(r: &RunResults) -> String {
    let mut out = String::new();
    let dut = format!("{} {}", r.meta.dut.label(), r.meta.dut.version);
    for kind in TestKind::ALL.iter().copied() {
        let tests: Vec<&TestResult> = r.tests.iter().filter(|t| t.test == kind).collect();
        if tests.is_empty() {
            continue;
        }
        let title = format!("{} - {}", kind.name(), dut.trim());
        let tb = match kind {
            TestKind::Throughput => throughput_table(title, &tests),
            TestKind::Latency => latency_table(title, &tests),
            TestKind::Loss => loss_table(title, &tests),
            TestKind::BackToBack => back_to_back_table(title, &tests),
            TestKind::Recovery => recovery_table(title, &tests),
        };
        out.push_str(&tb.render());
        out.push('\n');
    }
    out
}

/// Throughput of every run side by side per size and IP version (NDR and
/// PDR each), a row per run, with each run's ratios to the last run (e.g.
/// softrouter vs linux) and the DUT cycles per packet at the NDR. Empty
/// with one run.
pub fn comparison_table(r: &BenchResults) -> String {
    if r.comparison.is_empty() {
        return String::new();
    }
    let names: Vec<String> = r
        .runs
        .iter()
        .map(|r| match r.meta.dut.label() {
            "" => "?".to_string(),
            l => l.to_string(),
        })
        .collect();
    let last = &names[names.len() - 1];
    let mut tb = Table {
        title: format!("throughput, Mpps, each run against {last}"),
        headers: [
            "size",
            "DUT",
            "NDR Mpps",
            "PDR Mpps",
            &format!("NDR/{last}"),
            &format!("PDR/{last}"),
            "cyc/pkt",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    let cell = |f: Option<f64>, lower: bool| match f {
        Some(f) => format!("{}{}", mpps(f), if lower { "+" } else { "" }),
        None => "-".into(),
    };
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "-".into(),
    };
    for row in &r.comparison {
        let d = &row.duts;
        let l = &d[d.len() - 1];
        for (i, x) in d.iter().enumerate() {
            // The last run is what the others are set against.
            let vs_last = |a: Option<f64>, b: Option<f64>| {
                if i + 1 == d.len() {
                    "-".to_string()
                } else {
                    ratio(a, b)
                }
            };
            tb.rows.push(vec![
                format!("{} v{}", row.size, row.ip),
                names.get(i).cloned().unwrap_or_else(|| x.dut.clone()),
                cell(x.ndr_fps, x.ndr_lower_bound),
                cell(x.pdr_fps, x.pdr_lower_bound),
                vs_last(x.ndr_fps, l.ndr_fps),
                vs_last(x.pdr_fps, l.pdr_fps),
                x.cycles_per_packet
                    .map_or("-".into(), |c| format!("{c:.0}")),
            ]);
        }
    }
    let mut s = tb.render();
    s.push_str(
        "(+ = lower bound: tester-limited or the maximum rate passed; cyc/pkt = busy cycles \
         of the DUT's CPUs per forwarded packet in the NDR trial)\n",
    );
    s
}
