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

/// CPU time and cycles per packet, softrouter's by stage.
pub(super) fn cpu(out: &mut String, runs: &[RunResults]) {
    let mut cycles = Vec::new();
    let mut time = Vec::new();
    let mut rows = Vec::new();
    for r in runs {
        let dut = r.meta.dut.label();
        for (label, at, tr) in figure_trials(r) {
            let Some(d) = tr.outcome.dut_stats.as_ref() else {
                continue;
            };
            let c = d.cpu.as_ref();
            let sr = d.softrouter.as_ref();
            // The workers' cycles cover only the packets they handled,
            // not those the XDP tier forwarded: say how many, and leave
            // out a handful (a few punted frames) that would stand for
            // the whole trial's cost.
            let n = sr.map_or(0, |s| s.cycles.packets);
            if let Some(s) = sr.filter(|s| n > 0 && n.saturating_mul(100) >= s.forwarded) {
                let per = &s.cycles_per_packet;
                cycles.push(StackRow {
                    label: format!("{dut} {label}: workers, {n} pkts"),
                    segments: [("rx", per.rx), ("process", per.process), ("tx", per.tx)]
                        .map(|(k, v)| (k.to_string(), v))
                        .into(),
                });
            }
            // The kernel DUTs' split by perf (`dut::stages`, paper 001's
            // Table II), its processing drawn as softrouter's process.
            let ks = d
                .stages
                .as_ref()
                .and_then(StageReport::split)
                .map(|s| s.cycles_per_packet);
            if let Some(ks) = ks {
                let kernel = [
                    ("rx", ks.rx),
                    ("process", ks.processing),
                    ("tx", ks.tx),
                    ("memory", ks.memory),
                    ("skb", ks.skb),
                    ("other", ks.other),
                ];
                if kernel.iter().all(|(_, v)| v.is_some()) {
                    cycles.push(StackRow {
                        label: format!("{dut} {label}: by stage (perf)"),
                        segments: kernel
                            .map(|(name, v)| (name.to_string(), v.unwrap_or(0.0)))
                            .into(),
                    });
                }
            }
            if let Some(w) = d.cycles_per_packet() {
                cycles.push(StackRow {
                    label: format!("{dut} {label}: DUT CPUs"),
                    segments: vec![("DUT CPUs".to_string(), w)],
                });
            }
            if let Some((c, i)) = c.map(|c| (c, c.interval_s)).filter(|&(_, i)| i > 0.0) {
                time.push(StackRow {
                    label: format!("{dut} {label}"),
                    segments: ["user", "system", "irq", "softirq"]
                        .iter()
                        .map(|k| {
                            let s = c.machine_s(k).unwrap_or(0.0);
                            (k.to_string(), s / i * 100.0)
                        })
                        .collect(),
                });
            }
            let cyc = |f: fn(&CpuFigures) -> Option<f64>| opt(c.and_then(f), |v| format!("{v:.0}"));
            let soak_busy = c.and_then(|c| c.soak.as_ref()).map(|v| {
                v.iter()
                    .map(|x| format!("{}: {:.0} %", x.cpu, x.busy_pct))
                    .collect::<Vec<_>>()
                    .join(", ")
            });
            let xdp = match sr {
                Some(s) if s.forwarded > 0 => {
                    format!(
                        "{:.1}",
                        s.fast_path_forwarded as f64 / s.forwarded as f64 * 100.0
                    )
                }
                _ => "n/a".into(),
            };
            rows.push(vec![
                Cell::text(dut),
                Cell::text(&label),
                Cell::text(at),
                rate_cell(at, tr),
                Cell::num(opt(c.map(|c| c.dut_cpu_s), |v| format!("{v:.3}"))),
                Cell::num(xdp),
                Cell::num(cyc(|c| c.soak_cycles_per_packet)),
                Cell::num(cyc(|c| c.dut_cycles_per_packet)),
                Cell::num(format!(
                    "{} {}",
                    cyc(|c| c.direct_cycles_per_packet),
                    c.map_or("-", |c| c.direct_source.as_str())
                )),
                Cell::num(match sr {
                    Some(s) => format!("{:.0} ({n} pkts)", s.cycles_per_packet.total),
                    None => "n/a".into(),
                }),
                Cell::text(soak_busy.unwrap_or_else(|| "n/a".into())),
            ]);
        }
    }
    if rows.is_empty() {
        return;
    }
    out.push_str("<h3>CPU and cycles per packet</h3>\n");
    if !cycles.is_empty() {
        figure(
            out,
            &chart::stacked(
                "cycles per forwarded packet at the NDR",
                &cycles,
                &["rx", "process", "tx", "memory", "skb", "other", "DUT CPUs"],
            ),
            "softrouter's workers count their cycles per stage (rx, process, tx) over the \
             packets they handled, not those its XDP tier forwarded; \"DUT CPUs\" is every \
             DUT CPU's busy time per forwarded packet as the soakers (else /proc/stat) \
             measure it, for any DUT; \"by stage (perf)\" splits that time of a kernel DUT \
             by perf's cpu-clock samples of its CPUs (profile_stages; paper 001's rx, tx, \
             memory, skb and processing, drawn as process)",
        );
    }
    if !time.is_empty() {
        figure(
            out,
            &chart::stacked(
                "CPU time of the whole machine by kind, % of one CPU",
                &time,
                &["user", "system", "irq", "softirq"],
            ),
            "/proc/stat over the trial, all CPUs (tester included: on veth the tester's \
             and the DUT's kernel work share CPUs)",
        );
    }
    table(
        out,
        "CPU figures of the trial at the NDR (dut::probe): cycles per forwarded packet \
         from the soakers, /proc/stat and the DUT's own time (process or softirq); \
         XDP %: share forwarded by softrouter's XDP tier",
        &[
            "DUT",
            "size",
            "trial",
            "Mpps",
            "DUT CPU s",
            "XDP %",
            "soak cyc/pkt",
            "stat cyc/pkt",
            "direct cyc/pkt",
            "worker cyc/pkt",
            "DUT CPUs busy",
        ],
        &rows,
    );
}

/// Interrupt and softirq rates, and CPU availability.
pub(super) fn interrupts(out: &mut String, runs: &[RunResults]) {
    let mut rows = Vec::new();
    // Charts: interrupts by line (the busiest lines of all trials, the
    // rest as "other"), network softirqs by kind; both add up to totals.
    let mut lines: Vec<String> = Vec::new();
    for r in runs {
        for (_, _, tr) in figure_trials(r) {
            for i in tr.outcome.sys.iter().flat_map(|s| &s.irqs).take(3) {
                if lines.len() < 5 && !lines.contains(&i.irq) && i.irq != "ERR" && i.irq != "MIS" {
                    lines.push(i.irq.clone());
                }
            }
        }
    }
    let mut irq_rows = Vec::new();
    let mut softirq_rows = Vec::new();
    for r in runs {
        for (label, at, tr) in figure_trials(r) {
            let Some(s) = tr.outcome.sys.as_ref() else {
                continue;
            };
            let name = format!("{} {label}", r.meta.dut.label());
            let mut segments: Vec<(String, f64)> = lines
                .iter()
                .map(|l| {
                    let v = s.irqs.iter().find(|i| &i.irq == l).map_or(0.0, |i| i.per_s);
                    (l.clone(), v)
                })
                .collect();
            let known: f64 = segments.iter().map(|x| x.1).sum();
            segments.push(("other".into(), (s.irq_total_per_s - known).max(0.0)));
            irq_rows.push(StackRow {
                label: name.clone(),
                segments,
            });
            softirq_rows.push(StackRow {
                label: name,
                segments: vec![
                    (
                        "NET_RX".into(),
                        s.softirqs.iter().map(|c| c.net_rx_per_s).sum(),
                    ),
                    (
                        "NET_TX".into(),
                        s.softirqs.iter().map(|c| c.net_tx_per_s).sum(),
                    ),
                ],
            });
            let top = s
                .irqs
                .iter()
                .filter(|i| i.irq != "ERR" && i.irq != "MIS")
                .take(3)
                .map(|i| format!("{} {}: {:.0}/s", i.irq, i.name, i.per_s))
                .collect::<Vec<_>>()
                .join("; ");
            let rx: f64 = s.softirqs.iter().map(|c| c.net_rx_per_s).sum();
            let tx: f64 = s.softirqs.iter().map(|c| c.net_tx_per_s).sum();
            let per_cpu = s
                .cpus
                .iter()
                .map(|c| format!("{}: {:.0}", c.cpu, c.available_pct))
                .collect::<Vec<_>>()
                .join(", ");
            rows.push(vec![
                Cell::text(r.meta.dut.label()),
                Cell::text(&label),
                Cell::text(at),
                rate_cell(at, tr),
                Cell::num(format!("{:.0}", s.irq_total_per_s)),
                Cell::num(format!("{rx:.0}")),
                Cell::num(format!("{tx:.0}")),
                Cell::wrap(top),
                Cell::wrap(per_cpu),
            ]);
        }
    }
    if rows.is_empty() {
        return;
    }
    out.push_str("<h3>Interrupts and softirqs</h3>\n");
    let mut kinds: Vec<&str> = lines.iter().map(String::as_str).collect();
    kinds.push("other");
    figure(
        out,
        &chart::stacked("interrupts per second, by line", &irq_rows, &kinds),
        "host-wide, over the trial at the NDR; the busiest lines by their \
         /proc/interrupts id (RES: rescheduling, LOC: local timer, CAL: function call)",
    );
    figure(
        out,
        &chart::stacked(
            "network softirqs per second, all CPUs",
            &softirq_rows,
            &["NET_RX", "NET_TX"],
        ),
        "/proc/softirqs over the trial at the NDR",
    );
    table(
        out,
        "host-wide rates over the trial at the NDR (/proc/interrupts, /proc/softirqs, /proc/stat)",
        &[
            "DUT",
            "size",
            "trial",
            "rate Mpps",
            "IRQ/s",
            "NET_RX/s",
            "NET_TX/s",
            "busiest lines",
            "CPU available %",
        ],
        &rows,
    );
}

/// `repeats[]`: a row per size and DUT, each goal's median over the
/// rounds with its range, and the ratio of the medians with the range of
/// the per-round ratios.
fn repeats(out: &mut String, r: &BenchResults) {
    let Some(first) = r.repeats.first() else {
        return;
    };
    let base = first.baseline.clone();
    let goals: Vec<String> = first
        .duts
        .iter()
        .find(|d| d.goals.iter().any(|g| g.n > 0))
        .map(|d| d.goals.iter().map(|g| g.goal.clone()).collect())
        .unwrap_or_default();
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for row in &r.repeats {
        for d in &row.duts {
            let goal = |name: &str| d.goals.iter().find(|g| g.goal == name);
            let mut cells = vec![
                Cell::text(format!("{} v{}", row.size, row.ip)),
                Cell::text(&d.dut),
                Cell::num(d.rounds.to_string()),
            ];
            for g in &goals {
                cells.push(match goal(g) {
                    Some(g) if g.lower_bound => {
                        Cell::lower_bound(format!("≥ {}", crate::tables::median_cell(g)))
                    }
                    Some(g) => Cell::num(crate::tables::median_cell(g)),
                    None => Cell::num("-"),
                });
            }
            for g in &goals {
                cells.push(match goal(g) {
                    Some(g) if d.dut != row.baseline => Cell::num(crate::tables::ratio_cell(g)),
                    _ => Cell::num("-"),
                });
            }
            rows.push(cells);
        }
    }
    out.push_str("<h3>Repeated runs</h3>\n");
    let mut headers: Vec<String> = vec!["size".into(), "DUT".into(), "rounds".into()];
    headers.extend(
        goals
            .iter()
            .map(|g| format!("{} median (min-max)", g.to_uppercase())),
    );
    headers.extend(
        goals
            .iter()
            .map(|g| format!("{} / {base}", g.to_uppercase())),
    );
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    table(
        out,
        &format!(
            "each DUT over {} rounds run in turn: the median conditional throughput, Mpps per \
             port, with the lowest and highest round; ratio: the medians' against {base}, with \
             the lowest and highest per-round ratio (round i against {base}'s round i); ≥: some \
             round's figure is a lower bound",
            r.rounds()
        ),
        &headers,
        &rows,
    );
}

/// `comparison[]` as the results give it: a row per size and run, each
/// goal's rate and its ratio to the baseline run's (of the same round);
/// with repeated runs, [`repeats`] first.
pub(super) fn comparison(out: &mut String, r: &BenchResults) {
    repeats(out, r);
    let Some(first) = r.comparison.first() else {
        return;
    };
    let rounds = r.rounds() > 1;
    let base = first.baseline.clone();
    let goals: Vec<String> = first
        .duts
        .iter()
        .find(|d| !d.goals.is_empty())
        .map(|d| d.goals.iter().map(|g| g.goal.clone()).collect())
        .unwrap_or_default();
    let floor = r
        .comparison
        .iter()
        .flat_map(|c| &c.duts)
        .any(|d| d.x_floor.is_some());
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for c in &r.comparison {
        let base_goal = |name: &str| {
            c.duts
                .iter()
                .find(|d| d.dut == c.baseline)
                .and_then(|d| d.goals.iter().find(|g| g.goal == name))
        };
        for d in &c.duts {
            let dut = if rounds {
                format!("{} (round {})", d.dut, d.round.max(1))
            } else {
                d.dut.clone()
            };
            let mut cells = vec![Cell::text(format!("{} v{}", c.size, c.ip)), Cell::text(dut)];
            let goal = |name: &str| d.goals.iter().find(|g| g.goal == name);
            for g in &goals {
                cells.push(
                    match goal(g).and_then(|g| g.fps.map(|f| (f, g.lower_bound))) {
                        None => Cell::num("-"),
                        Some((f, true)) => Cell::lower_bound(format!("≥ {}", mpps(f))),
                        Some((f, false)) => Cell::num(mpps(f)),
                    },
                );
            }
            for g in &goals {
                // A ratio with a lower bound on either side is not exact.
                let bound = goal(g).is_some_and(|g| g.lower_bound)
                    || base_goal(g).is_some_and(|g| g.lower_bound);
                cells.push(match goal(g).and_then(|g| g.ratio) {
                    Some(x) if d.dut != c.baseline => {
                        if bound {
                            Cell::lower_bound(format!("{x:.2} (bound)"))
                        } else {
                            Cell::num(format!("{x:.2}"))
                        }
                    }
                    _ => Cell::num("-"),
                });
            }
            cells.push(Cell::num(opt(d.cycles_per_packet, |v| format!("{v:.0}"))));
            cells.push(d.projection.map_or(Cell::num("-"), |p| {
                Cell::projected(format!(
                    "{} ({:.0} % busy)",
                    mpps(p.projected_fps),
                    p.busy_pct
                ))
            }));
            if floor {
                let f = d.x_floor.unwrap_or_default();
                let x = |v: Option<f64>| opt(v, |v| format!("x{v:.2}"));
                cells.push(Cell::num(x(f.fps)));
                cells.push(Cell::num(x(f.cycles_per_packet)));
                cells.push(if f.projected && f.capacity.is_some() {
                    Cell::projected(x(f.capacity))
                } else {
                    Cell::num(x(f.capacity))
                });
            }
            rows.push(cells);
        }
    }
    out.push_str("<h3>Comparison</h3>\n");
    let mut headers: Vec<String> = vec!["size".into(), "DUT".into()];
    headers.extend(goals.iter().map(|g| g.to_uppercase()));
    headers.extend(
        goals
            .iter()
            .map(|g| format!("{} / {base}", g.to_uppercase())),
    );
    headers.push("cyc/pkt".into());
    headers.push("projected capacity".into());
    if floor {
        headers.extend(["rate x floor", "cyc/pkt x floor", "capacity x floor"].map(String::from));
    }
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    table(
        out,
        &format!(
            "throughput side by side, Mpps per port (conditional throughput); ratio: each run / \
             {base} (\"bound\": a lower bound is involved, the ratio is not exact); projected \
             capacity: a tester-limited run's rate / its DUT CPUs' busy share (a projection, \
             not a measurement); x floor: against the floor DUT (an XDP redirect with the MAC \
             rewrite and nothing else) of the same round"
        ),
        &headers,
        &rows,
    );
}

/// softrouter's own figures: drop reasons and the control plane's
/// answer times while the trial ran.
pub(super) fn dut_own(out: &mut String, runs: &[RunResults]) {
    let mut drops = Vec::new();
    let mut control = Vec::new();
    for r in runs {
        for (label, at, tr) in figure_trials(r) {
            let Some(d) = tr.outcome.dut_stats.as_ref() else {
                continue;
            };
            if let Some(m) = d.softrouter.as_ref().map(|s| &s.drops) {
                let list = m
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                drops.push(vec![
                    Cell::text(r.meta.dut.label()),
                    Cell::text(&label),
                    Cell::text(at),
                    Cell::wrap(if list.is_empty() { "none".into() } else { list }),
                ]);
            }
        }
        // The latency test's trial of its own at the same rate (results
        // before it carried the figures in every trial: the NDR's then).
        let timed = r.tests.iter().flat_map(|t| {
            t.trials
                .iter()
                .filter(|tr| tr.purpose == crate::search::CONTROL_PURPOSE)
                .map(move |tr| (t.label(), tr))
        });
        let old = figure_trials(r).into_iter().map(|(l, _, tr)| (l, tr));
        let mut shown = Vec::new();
        for (label, tr) in timed.chain(old) {
            let Some(m) = tr
                .outcome
                .dut_stats
                .as_ref()
                .and_then(|d| d.control_latency.as_ref())
            else {
                continue;
            };
            if shown.contains(&label) {
                continue;
            }
            shown.push(label.clone());
            for (kind, v) in m.kinds() {
                let ms = |x: Option<f64>| opt(x, |x| format!("{x:.2}"));
                control.push(vec![
                    Cell::text(r.meta.dut.label()),
                    Cell::text(&label),
                    Cell::text(kind),
                    Cell::num(v.count.to_string()),
                    Cell::num(v.errors.to_string()),
                    Cell::num(ms(v.p50_ms)),
                    Cell::num(ms(v.p99_ms)),
                    Cell::num(ms(v.max_ms)),
                ]);
            }
        }
    }
    if drops.is_empty() && control.is_empty() {
        return;
    }
    out.push_str("<h3>The DUT's own statistics</h3>\n");
    table(
        out,
        "drops by reason in the trial at the NDR",
        &["DUT", "size", "trial", "drops"],
        &drops,
    );
    table(
        out,
        "control plane answer times at the NDR's rate (requests 20 times a second, in a trial of their own)",
        &[
            "DUT", "size", "request", "count", "errors", "p50 ms", "p99 ms", "max ms",
        ],
        &control,
    );
}
