//! The sections of one experiment in the HTML report.
//!
//! Why each section reads the results as they are: the page explains a
//! run, it does not re-derive it; a figure that was not measured prints
//! `n/a`, and a lower bound says so in the cell, not only in a colour.

use std::fmt::Write as _;

use schema::dut_sample::{CpuFigures, StageReport};

use super::{esc, figure, table, Cell};
use crate::chart::{self, Entry, Line, StackRow};
use crate::results::{trial_at_throughput, BenchResults, RunResults, TestResult, TestValue};
use crate::search::TrialRecord;
use crate::settings::TestKind;
use crate::throughput::GoalResult;

mod comparison;
mod dut;

pub(super) use comparison::comparison;
pub(super) use dut::{cpu, dut_own, interrupts};

/// Rates to three significant figures: the search's width goal and the
/// run-to-run spread are a few per cent, more digits would be noise.
fn mpps(f: f64) -> String {
    chart::sig(f / 1e6, 3)
}

/// Latency in µs to three significant figures (the tester's timestamps
/// resolve a fraction of a µs, the spread is wider).
fn us(ns: f64) -> String {
    chart::sig(ns / 1e3, 3)
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or_else(|| "n/a".into(), f)
}

/// The run's settings, metadata, DUTs and notes.
pub(super) fn header(out: &mut String, r: &BenchResults) {
    let Some(first) = r.runs.first() else {
        out.push_str("<p class=\"note\">This file holds no run.</p>\n");
        return;
    };
    let m = &first.meta;
    let s = &first.settings;
    let list = |v: Vec<String>| v.join(", ");
    let secs = |v: Option<f64>| v.map_or("preset".into(), |v| format!("{v} s"));
    let rows: Vec<(&str, String)> = vec![
        ("date", m.started.clone()),
        ("host", m.host.clone()),
        ("kernel", m.kernel.clone()),
        (
            "tool",
            if m.provenance.tool_build.is_empty() {
                format!("{} {}", m.tool, m.tool_version)
            } else {
                format!("{} {}", m.tool, m.provenance.tool_build)
            },
        ),
        (
            "CPU",
            format!("{} × {}", m.provenance.cpus, m.provenance.cpu_model),
        ),
        ("kernel command line", m.provenance.kernel_cmdline.clone()),
        ("command line", m.provenance.command_line.join(" ")),
        ("tester ports", list(m.provenance.nic_drivers.clone())),
        (
            "DUTs",
            list(
                r.runs
                    .iter()
                    .map(|r| format!("{} {}", r.meta.dut.label(), r.meta.dut.version))
                    .collect(),
            ),
        ),
        (
            "tests",
            list(s.tests.iter().map(|t| t.to_string()).collect()),
        ),
        (
            "sizes",
            list(s.sizes.iter().map(|t| t.to_string()).collect()),
        ),
        (
            "traffic",
            format!(
                "IP version {}, {}, {} flow(s), {} queue(s), tester {}",
                s.ip, s.pattern, s.flows, s.queues, s.tester
            ),
        ),
        (
            "durations",
            format!(
                "preset {}; trials {}, pauses {}, drain {}, latency {}",
                s.preset,
                secs(s.trial_seconds),
                secs(s.pause_seconds),
                secs(s.drain_seconds),
                secs(s.latency_seconds),
            ),
        ),
        (
            "search goals (RFC 9971: final trial s f, duration sum s d, loss % l, exceed % e, \
             width % w)",
            s.search_goals()
                .iter()
                .map(|g| g.label())
                .collect::<Vec<_>>()
                .join("; "),
        ),
        ("maximum rate", m.max_rate_source.clone()),
        ("frames", m.frame_format.clone()),
        (
            "CPUs",
            format!(
                "pinned: {}, soakers: {}",
                if s.pin_cpus { "yes" } else { "no" },
                if s.soak { "yes" } else { "no" }
            ),
        ),
    ];
    out.push_str("<dl class=\"meta\">\n");
    for (k, v) in rows {
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(&v));
    }
    out.push_str("</dl>\n");
    let duts: Vec<Vec<Cell>> = r
        .runs
        .iter()
        .map(|r| {
            let d = &r.meta.dut;
            vec![
                Cell::text(d.label()),
                Cell::text(&d.kind),
                Cell::text(&d.version),
                Cell::text(&r.meta.started),
                Cell::wrap(serde_json::to_string(&r.settings.dut).unwrap_or_default()),
            ]
        })
        .collect();
    table(
        out,
        "devices under test",
        &["DUT", "kind", "version", "started", "options"],
        &duts,
    );
    // Notes every run carries (the tester's calibration, the CPU
    // placement) once, then each run's own.
    let common: Vec<&String> = first
        .meta
        .notes
        .iter()
        .filter(|n| r.runs.iter().all(|o| o.meta.notes.contains(n)))
        .collect();
    let mut lists: Vec<(String, Vec<&String>)> = Vec::new();
    if !common.is_empty() {
        let who = if r.runs.len() > 1 {
            "all runs"
        } else {
            "the run"
        };
        lists.push((format!("Notes of {who}:"), common.clone()));
    }
    for run in &r.runs {
        let own: Vec<&String> = run
            .meta
            .notes
            .iter()
            .filter(|n| !common.contains(n))
            .collect();
        if !own.is_empty() {
            lists.push((format!("Notes of {}:", run_label(run, &r.runs)), own));
        }
    }
    for (title, notes) in lists {
        let _ = writeln!(
            out,
            "<p class=\"note\">{}</p>\n<ul class=\"notes\">",
            esc(&title)
        );
        for n in notes {
            let _ = writeln!(out, "<li>{}</li>", esc(n));
        }
        out.push_str("</ul>\n");
    }
}

/// The run's DUT, with its round when the DUTs ran several rounds.
fn run_label(r: &RunResults, runs: &[RunResults]) -> String {
    if runs.iter().any(|o| o.meta.round() > 1) {
        format!("{} (round {})", r.meta.dut.label(), r.meta.round())
    } else {
        r.meta.dut.label().to_string()
    }
}

fn tests_of(r: &RunResults, kind: TestKind) -> impl Iterator<Item = &TestResult> {
    r.tests.iter().filter(move |t| t.test == kind)
}

/// A goal's rate; a lower bound as `>= x` in a marked cell, with why.
fn goal_cell(g: &GoalResult) -> Cell {
    match g.fps {
        None => Cell::num("-"),
        Some(f) if g.tester_limited => Cell::lower_bound(format!("≥ {} (tester-limited)", mpps(f))),
        Some(f) if g.lower_bound => Cell::lower_bound(format!("≥ {} (maximum passed)", mpps(f))),
        Some(f) => Cell::num(mpps(f)),
    }
}

/// Each goal's conditional throughput and bounds per DUT and size, with
/// the tester's maximum.
pub(super) fn throughput(out: &mut String, runs: &[RunResults]) {
    let mut rows = Vec::new();
    for r in runs {
        for t in tests_of(r, TestKind::Throughput) {
            let Some(s) = t.throughput_summary() else {
                continue;
            };
            for (i, g) in s.goals.iter().enumerate() {
                // The projection belongs to the first goal's bound.
                let p = s.projection.filter(|_| i == 0);
                rows.push(vec![
                    Cell::text(run_label(r, runs)),
                    Cell::text(t.label()),
                    Cell::text(g.goal.as_ref().map_or("?".into(), |g| g.label())),
                    goal_cell(g),
                    Cell::num(opt(g.lower_fps, mpps)),
                    Cell::num(opt(g.upper_fps, mpps)),
                    Cell::num(mpps(s.max_rate_fps)),
                    Cell::num(opt(g.pct_of_max, |p| format!("{p:.1}"))),
                    Cell::num(opt(p.map(|p| p.busy_pct), |b| format!("{b:.0}"))),
                    p.map_or(Cell::num("-"), |p| Cell::projected(mpps(p.projected_fps))),
                ]);
            }
        }
    }
    if rows.is_empty() {
        return;
    }
    out.push_str("<h3>Throughput</h3>\n");
    figure(
        out,
        &crate::plot::throughput_chart(runs),
        "each search goal's conditional throughput (RFC 9971) per frame size and DUT, Mpps \
         per port (a DUT run several rounds: the median, its whisker from the lowest to the \
         highest round); the dashed tick is the tester's maximum rate; ≥ marks a lower bound \
         (the tester, not the DUT, set the figure)",
    );
    table(
        out,
        "throughput, Mpps per port: conditional throughput at the relevant lower bound, \
         and the relevant bounds; when the first goal's rate is a lower bound, the DUT CPUs' \
         busy share at it and the capacity it PROJECTS to (rate / busy share: a projection, \
         not a measurement)",
        &[
            "DUT",
            "size",
            "goal",
            "Mpps",
            "lower bound",
            "upper bound",
            "tester max Mpps",
            "% of max",
            "DUT busy % (lower bound)",
            "projected capacity",
        ],
        &rows,
    );
}

/// Latency percentiles per DUT and size.
pub(super) fn latency(out: &mut String, runs: &[RunResults]) {
    let mut rows = Vec::new();
    for r in runs {
        for t in tests_of(r, TestKind::Latency) {
            let TestValue::Latency(l) = &t.result else {
                continue;
            };
            let m = &l.mean;
            let had = |v: f64| (m.count > 0).then_some(v);
            let rate = l
                .trials
                .first()
                .or(t.trials.first())
                .map(|tr| tr.spec.rate_fps);
            let mut note = Vec::new();
            if l.tester_limited > 0 {
                note.push(format!("{} tester-limited", l.tester_limited));
            }
            if l.with_loss > 0 {
                note.push(format!("{} with loss", l.with_loss));
            }
            rows.push(vec![
                Cell::text(r.meta.dut.label()),
                Cell::text(t.label()),
                Cell::num(opt(rate, mpps)),
                Cell::num(opt(had(m.min_ns as f64), us)),
                Cell::num(opt(had(m.mean_ns), us)),
                Cell::num(opt(had(m.median_ns as f64), us)),
                Cell::num(opt(had(m.p99_ns as f64), us)),
                Cell::num(opt(had(m.p999_ns as f64), us)),
                Cell::num(opt(had(m.max_ns as f64), us)),
                Cell::num(opt(m.ipdv_mean_abs_ns.filter(|_| m.count > 0), us)),
                Cell::num(l.repetitions.len().to_string()),
                Cell::text(note.join(", ")),
            ]);
        }
    }
    if rows.is_empty() {
        return;
    }
    out.push_str("<h3>Latency</h3>\n");
    if let Some(svg) = crate::plot::latency_chart(runs) {
        figure(
            out,
            &svg,
            "latency per frame size and DUT, µs: the box from the median (the thick \
             line) to p99, the whisker from the minimum to p99.9, the dot the maximum (a \
             DUT run several rounds: the median of each figure over the rounds, and a grey \
             whisker right of the box from the lowest to the highest round's median)",
        );
    }
    table(
        out,
        "latency, µs (mean of the repetitions)",
        &[
            "DUT", "size", "at Mpps", "min", "mean", "median", "p99", "p99.9", "max", "IPDV",
            "reps", "note",
        ],
        &rows,
    );
}

/// Loss against offered load, one chart per size, one line per DUT.
pub(super) fn loss(out: &mut String, runs: &[RunResults]) {
    let mut labels: Vec<String> = Vec::new();
    for r in runs {
        for t in tests_of(r, TestKind::Loss) {
            if !labels.contains(&t.label()) {
                labels.push(t.label());
            }
        }
    }
    if labels.is_empty() {
        return;
    }
    out.push_str("<h3>Loss against offered load</h3>\n");
    for label in &labels {
        let (legend, series): (Vec<Entry>, Vec<Line>) = runs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let t = tests_of(r, TestKind::Loss).find(|t| &t.label() == label)?;
                let TestValue::Loss(l) = &t.result else {
                    return None;
                };
                let (colour, marker) = chart::style(i);
                Some((
                    Entry {
                        name: run_label(r, runs),
                        colour,
                        marker: Some(marker),
                    },
                    Line {
                        points: l
                            .points
                            .iter()
                            .map(|p| (p.load_pct, p.loss_pct, p.tester_limited))
                            .collect(),
                    },
                ))
            })
            .unzip();
        figure(
            out,
            &chart::lines(
                &format!("{label}: offered load, % of the maximum rate"),
                "loss, %",
                legend,
                &series,
            ),
            &format!(
                "{label}: frame loss per offered load (RFC 2544 26.3); hollow points: \
                 tester-limited trials (the tester fell short of the offered rate or \
                 dropped frames in its own rings), whose loss is not the DUT's alone"
            ),
        );
    }
}

/// The figures behind the CPU and interrupt sections: per run and size,
/// the trial at the first goal's throughput (else the first latency
/// trial), with what it was: `NDR`, or `tester-limited` when the tester,
/// not the DUT, set that figure (never shown as an NDR, issue 19).
fn figure_trials(r: &RunResults) -> Vec<(String, &'static str, &TrialRecord)> {
    let mut v: Vec<(String, &'static str, &TrialRecord)> = Vec::new();
    for t in tests_of(r, TestKind::Throughput) {
        if let Some(tr) = trial_at_throughput(t) {
            let limited = t
                .throughput_summary()
                .and_then(|s| s.goals.first())
                .is_some_and(|g| g.tester_limited || g.lower_bound);
            v.push((t.label(), if limited { TESTER_LIMITED } else { "NDR" }, tr));
        }
    }
    for t in tests_of(r, TestKind::Latency) {
        if v.iter().any(|(l, _, _)| *l == t.label()) {
            continue;
        }
        if let Some(tr) = t.trials.first() {
            v.push((t.label(), "latency", tr));
        }
    }
    v
}

const TESTER_LIMITED: &str = "tester-limited";

/// The offered rate of a figure trial: a lower bound of the DUT's when
/// the tester limited it.
fn rate_cell(at: &str, tr: &TrialRecord) -> Cell {
    if at == TESTER_LIMITED {
        Cell::lower_bound(format!("≥ {}", mpps(tr.spec.rate_fps)))
    } else {
        Cell::num(mpps(tr.spec.rate_fps))
    }
}

/// Back-to-back (RFC 2544 26.4, RFC 9004 buffer time) and system
/// recovery (26.5) per DUT and size.
pub(super) fn bursts_and_recovery(out: &mut String, runs: &[RunResults]) {
    let mut b2b = Vec::new();
    let mut rec = Vec::new();
    for r in runs {
        for t in &r.tests {
            match &t.result {
                TestValue::BackToBack(b) => {
                    let mean = chart::sig(b.mean_burst, 3);
                    let mut note = Vec::new();
                    if b.hit_max_burst {
                        note.push("longest burst tried passed".to_string());
                    }
                    if b.tester_limited_trials > 0 {
                        note.push(format!("{} tester-limited", b.tester_limited_trials));
                    }
                    b2b.push(vec![
                        Cell::text(run_label(r, runs)),
                        Cell::text(t.label()),
                        if b.hit_max_burst || b.tester_limited_trials > 0 {
                            Cell::lower_bound(format!("≥ {mean}"))
                        } else {
                            Cell::num(mean)
                        },
                        Cell::num(chart::sig(b.stddev_burst, 2)),
                        Cell::num(b.bursts.len().to_string()),
                        Cell::num(us(b.implied_buffer_time_s * 1e9)),
                        Cell::num(opt(b.corrected_buffer_time_s, |v| us(v * 1e9))),
                        Cell::text(note.join(", ")),
                    ]);
                }
                TestValue::Recovery(v) => {
                    let mut note = Vec::new();
                    if v.capped {
                        note.push("overload capped at the maximum rate".to_string());
                    }
                    if v.no_overload_loss > 0 {
                        note.push(format!("{} not overloaded", v.no_overload_loss));
                    }
                    if v.tester_limited_reps > 0 {
                        note.push(format!("{} tester-limited", v.tester_limited_reps));
                    }
                    rec.push(vec![
                        Cell::text(run_label(r, runs)),
                        Cell::text(t.label()),
                        Cell::num(mpps(v.overload_rate_fps)),
                        Cell::num(chart::sig(v.mean_recovery_s * 1e3, 3)),
                        Cell::wrap(
                            v.recovery_s
                                .iter()
                                .map(|x| chart::sig(x * 1e3, 3))
                                .collect::<Vec<_>>()
                                .join(", "),
                        ),
                        Cell::text(note.join(", ")),
                    ]);
                }
                _ => {}
            }
        }
    }
    if !b2b.is_empty() {
        out.push_str("<h3>Back-to-back</h3>\n");
        table(
            out,
            "longest loss-free burst at the maximum rate, frames (RFC 2544 26.4), and the \
             buffer time it implies (RFC 9004), µs; ≥: a lower bound",
            &[
                "DUT",
                "size",
                "mean burst",
                "std dev",
                "reps",
                "implied buffer µs",
                "corrected buffer µs",
                "note",
            ],
            &b2b,
        );
    }
    if !rec.is_empty() {
        out.push_str("<h3>System recovery</h3>\n");
        table(
            out,
            "110 % of the throughput, then 50 %: time from the rate drop to the last lost \
             frame, ms (RFC 2544 26.5); tester-limited repetitions give upper bounds",
            &[
                "DUT",
                "size",
                "overload Mpps",
                "mean ms",
                "per repetition ms",
                "note",
            ],
            &rec,
        );
    }
}
