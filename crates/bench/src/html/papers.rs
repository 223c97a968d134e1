//! Published figures beside measured ones (issue 11, "reproduce the
//! papers").
//!
//! Why a place of its own before the experiments exist: the experiment
//! files that reproduce each paper come later; they carry `[[paper]]`
//! rows (`settings::PaperValue`) in their settings, or a `--papers` file
//! gives them, and this section puts each published value next to the
//! one measured here, with the ratio measured / published.

use super::{esc, table, Cell};
use crate::analyzer::LatencySummary;
use crate::chart::sig;
use crate::results::{
    dut_cycles_at_throughput, trial_at_throughput, BenchResults, RunResults, TestValue,
};
use crate::settings::{PaperValue, TestKind};
use schema::dut_sample::{DutStats, StageReport};

/// One row of the papers table.
#[derive(Debug, Clone, PartialEq)]
pub struct PaperRow {
    /// The published value, as given.
    pub value: PaperValue,
    /// What this bench measured (given, or looked up), in the paper's unit
    /// when the metric's name carries it.
    pub measured: Option<f64>,
    /// The measured value is a lower bound (tester-limited throughput).
    pub lower_bound: bool,
}

impl PaperRow {
    /// measured / published.
    pub fn ratio(&self) -> Option<f64> {
        self.measured
            .filter(|_| self.value.published != 0.0)
            .map(|m| m / self.value.published)
    }
}

/// The measured value of `p` in `r`: `p.measured` if given, else the
/// figure `p.metric` names for `p.dut`'s run (the first run if none) at
/// `p.size` and `p.ip`; and whether it is a lower bound.
pub fn measured(p: &PaperValue, r: &BenchResults) -> (Option<f64>, bool) {
    if let Some(m) = p.measured {
        return (Some(m), false);
    }
    if p.not_measurable.is_some() {
        return (None, false);
    }
    let run = match &p.dut {
        // A run renamed for its options (`linux napi_budget=300`) is
        // found by its name and any of its options (`linux
        // napi_budget=300`, or `linux` for the first such run).
        Some(d) => r.runs.iter().find(|r| r.meta.dut.label() == d).or_else(|| {
            let words = |s: &str| {
                s.split([' ', ','])
                    .filter(|w| !w.is_empty())
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            };
            let want = words(d);
            r.runs.iter().find(|r| {
                let have = words(r.meta.dut.label());
                have.first() == want.first() && want.iter().all(|w| have.contains(w))
            })
        }),
        None => r.runs.first(),
    };
    run.map_or((None, false), |run| lookup(p, run))
}

/// The metrics a `[[paper]]` row can name without `measured`, and where
/// each is taken from (the report's legend and the settings' doc).
pub const METRICS: &[(&str, &str)] = &[
    (
        "ndr_mpps, pdr_mpps",
        "throughput test: the NDR / PDR rate, Mpps per port",
    ),
    (
        "cycles_per_packet",
        "throughput test, NDR trial: the DUT CPUs' busy cycles per forwarded packet",
    ),
    (
        "cycles_rx, cycles_tx, cycles_memory, cycles_skb, cycles_processing",
        "the same, by stage: the kernel DUTs' sampled profile (`profile_stages`), \
         softrouter's own rx / process / tx counters (it has no per-packet memory \
         management and no skb: 0)",
    ),
    (
        "latency_{min,mean,median,p99,max}_us",
        "latency test (at the throughput rate), one way through the DUT",
    ),
    (
        "overload_latency_{min,mean,median,p99,max}_us",
        "loss test, its highest offered rate: latency of the frames that got through",
    ),
    (
        "overload_cpu_available_pct",
        "loss test, highest rate: the DUT CPUs' idle share (by the soakers)",
    ),
    (
        "overload_irq_per_s",
        "loss test, highest rate: interrupts per second, all CPUs",
    ),
    (
        "b2b_burst_frames",
        "back-to-back test: the mean longest loss-free burst",
    ),
    (
        "b2b_latency_{min,mean,max}_us",
        "back-to-back test: latency over its loss-free bursts",
    ),
];

fn lookup(p: &PaperValue, run: &RunResults) -> (Option<f64>, bool) {
    let ip = p.ip.unwrap_or(4);
    let test = |kind: TestKind| {
        run.tests
            .iter()
            .find(|t| t.test == kind && t.ip == ip && t.size.to_string() == p.size)
    };
    let m = p.metric.as_str();
    match m {
        "ndr_mpps" | "pdr_mpps" => {
            let Some(s) = test(TestKind::Throughput).and_then(|t| t.throughput_summary()) else {
                return (None, false);
            };
            let Some(g) = s.goal(m.trim_end_matches("_mpps")) else {
                return (None, false);
            };
            (g.fps.map(|f| f / 1e6), g.lower_bound)
        }
        "cycles_per_packet" => (
            test(TestKind::Throughput).and_then(dut_cycles_at_throughput),
            false,
        ),
        _ if m.starts_with("cycles_") => (
            test(TestKind::Throughput)
                .and_then(trial_at_throughput)
                .and_then(|tr| tr.outcome.dut_stats.as_ref())
                .and_then(|d| stage_cycles(d, &m["cycles_".len()..])),
            false,
        ),
        _ if m.starts_with("latency_") => {
            let Some(TestValue::Latency(l)) = test(TestKind::Latency).map(|t| &t.result) else {
                return (None, false);
            };
            (latency_us(&l.mean, &m["latency_".len()..]), false)
        }
        _ if m.starts_with("overload_") => {
            // The loss test's first trial is its highest offered rate.
            let Some(tr) = test(TestKind::Loss).and_then(|t| t.trials.first()) else {
                return (None, false);
            };
            let o = &tr.outcome;
            let v = match &m["overload_".len()..] {
                "cpu_available_pct" => crate::results::dut_busy_pct(tr).map(|b| 100.0 - b),
                "irq_per_s" => o.sys.as_ref().map(|s| s.irq_total_per_s),
                k => k
                    .strip_prefix("latency_")
                    .and_then(|k| latency_us(&o.latency, k)),
            };
            (v, o.tester_limited)
        }
        "b2b_burst_frames" => match test(TestKind::BackToBack).map(|t| &t.result) {
            Some(TestValue::BackToBack(b)) => (Some(b.mean_burst), b.hit_max_burst),
            _ => (None, false),
        },
        _ if m.starts_with("b2b_latency_") => {
            let passed: Vec<&LatencySummary> = test(TestKind::BackToBack)
                .map(|t| {
                    t.trials
                        .iter()
                        .filter(|tr| tr.passed && tr.outcome.latency.count > 0)
                        .map(|tr| &tr.outcome.latency)
                        .collect()
                })
                .unwrap_or_default();
            if passed.is_empty() {
                return (None, false);
            }
            let n: u64 = passed.iter().map(|l| l.count).sum();
            let v = match &m["b2b_latency_".len()..] {
                "min_us" => passed
                    .iter()
                    .map(|l| l.min_ns as f64)
                    .min_by(f64::total_cmp),
                "max_us" => passed
                    .iter()
                    .map(|l| l.max_ns as f64)
                    .max_by(f64::total_cmp),
                "mean_us" => Some(
                    passed
                        .iter()
                        .map(|l| l.mean_ns * l.count as f64)
                        .sum::<f64>()
                        / n as f64,
                ),
                _ => None,
            };
            (v.map(|ns| ns / 1e3), false)
        }
        _ => (None, false),
    }
}

/// `min_us`, `mean_us`, `median_us`, `p99_us`, `max_us` of `s`, in us.
fn latency_us(s: &LatencySummary, which: &str) -> Option<f64> {
    let ns = match which {
        "min_us" => s.min_ns as f64,
        "mean_us" => s.mean_ns,
        "median_us" => s.median_ns as f64,
        "p99_us" => s.p99_ns as f64,
        "max_us" => s.max_ns as f64,
        _ => return None,
    };
    (s.count > 0).then_some(ns / 1e3)
}

/// Cycles per packet of one stage (paper 001's rx, tx, memory, skb,
/// processing) in a trial's DUT statistics: the kernel DUTs' profile
/// (`stages.cycles_per_packet`), else softrouter's own counters (rx,
/// process, tx; its buffers are recycled and it has no skb, so memory and
/// skb are 0 there).
fn stage_cycles(d: &DutStats, stage: &str) -> Option<f64> {
    let perf = d.stages.as_ref().and_then(StageReport::split);
    if let Some(v) = perf.and_then(|s| s.cycles_per_packet.get(stage)) {
        return Some(v);
    }
    let sr = &d.softrouter.as_ref()?.cycles_per_packet;
    match stage {
        "rx" => Some(sr.rx),
        "tx" => Some(sr.tx),
        "processing" => Some(sr.process),
        "memory" | "skb" => Some(0.0),
        _ => None,
    }
}

/// The rows of experiment `r`: those its runs' settings carry (once),
/// then `extra`.
pub(super) fn rows(r: &BenchResults, extra: &[PaperValue]) -> Vec<PaperRow> {
    let mut values: Vec<&PaperValue> = Vec::new();
    for p in r.runs.iter().flat_map(|r| &r.settings.paper).chain(extra) {
        if !values.contains(&p) {
            values.push(p);
        }
    }
    values
        .into_iter()
        .map(|p| {
            let (measured, lower_bound) = measured(p, r);
            PaperRow {
                value: p.clone(),
                measured,
                lower_bound,
            }
        })
        .collect()
}

/// The papers section; with no rows, a line saying where they would come
/// from.
pub(super) fn section(out: &mut String, r: &BenchResults, extra: &[PaperValue]) {
    out.push_str("<h3>Published figures</h3>\n");
    let rows = rows(r, extra);
    if rows.is_empty() {
        out.push_str(
            "<p class=\"note\">No published figures given: add <code>[[paper]]</code> rows \
             to the experiment file or pass <code>--papers FILE.toml</code>.</p>\n",
        );
        return;
    }
    let (rows, unmeasurable): (Vec<PaperRow>, Vec<PaperRow>) = rows
        .into_iter()
        .partition(|row| row.value.not_measurable.is_none());
    let cells: Vec<Vec<Cell>> = rows
        .iter()
        .map(|row| {
            let p = &row.value;
            let m = match row.measured {
                None => Cell::num("n/a"),
                Some(v) if row.lower_bound => Cell::lower_bound(format!("≥ {}", sig(v, 3))),
                Some(v) => Cell::num(sig(v, 3)),
            };
            let ratio = match row.ratio() {
                None => Cell::num("n/a"),
                Some(q) if row.lower_bound => Cell::lower_bound(format!("≥ {q:.2}")),
                Some(q) => Cell::num(format!("{q:.2}")),
            };
            vec![
                Cell::text(&p.paper),
                Cell::text(&p.figure),
                Cell::text(&p.metric),
                Cell::text(format!("{} v{}", p.size, p.ip.unwrap_or(4))),
                Cell::text(p.dut.clone().unwrap_or_else(|| "(first run)".into())),
                Cell::num(format!("{}", p.published)),
                Cell::text(&p.unit),
                m,
                ratio,
            ]
        })
        .collect();
    table(
        out,
        "published and measured, side by side (ratio: measured / published)",
        &[
            "paper",
            "figure",
            "metric",
            "size",
            "DUT",
            "published",
            "unit",
            "measured",
            "ratio",
        ],
        &cells,
    );
    metric_legend(out, &rows);
    if !unmeasurable.is_empty() {
        out.push_str("<h4>Not measurable on this testbed</h4>\n<ul class=\"unmeasurable\">\n");
        for row in &unmeasurable {
            let p = &row.value;
            out.push_str(&format!(
                "<li><b>{} {}</b> ({} {}, {}): {}</li>\n",
                esc(&p.paper),
                esc(&p.figure),
                p.published,
                esc(&p.unit),
                esc(p.dut.as_deref().unwrap_or("any DUT")),
                esc(p.not_measurable.as_deref().unwrap_or_default()),
            ));
        }
        out.push_str("</ul>\n");
    }
}

/// Where the metrics the rows use come from (those of [`METRICS`] that
/// appear in `rows`).
fn metric_legend(out: &mut String, rows: &[PaperRow]) {
    let used: Vec<&(&str, &str)> = METRICS
        .iter()
        .filter(|(names, _)| rows.iter().any(|r| metric_matches(names, &r.value.metric)))
        .collect();
    if used.is_empty() {
        return;
    }
    out.push_str("<p class=\"note\">Measured values:</p>\n<ul class=\"note\">\n");
    for (names, what) in used {
        out.push_str(&format!(
            "<li><code>{}</code>: {}</li>\n",
            esc(names),
            esc(what).replace("`", "")
        ));
    }
    out.push_str("</ul>\n");
}

/// Whether `metric` is one of `names` (`a, b`, with `{x,y}` alternatives).
fn metric_matches(names: &str, metric: &str) -> bool {
    names.split(", ").any(|n| match (n.find('{'), n.find('}')) {
        (Some(a), Some(b)) => n[a + 1..b]
            .split(',')
            .any(|alt| metric == format!("{}{alt}{}", &n[..a], &n[b + 1..])),
        _ => metric == n,
    })
}
