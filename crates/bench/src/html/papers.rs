//! Published figures beside measured ones (issue 11, "reproduce the
//! papers").
//!
//! Why a place of its own before the experiments exist: the experiment
//! files that reproduce each paper come later; they carry `[[paper]]`
//! rows (`settings::PaperValue`) in their settings, or a `--papers` file
//! gives them, and this section puts each published value next to the
//! one measured here, with the ratio measured / published.

use super::{table, Cell};
use crate::results::{dut_cycles_at_throughput, BenchResults, RunResults, TestValue};
use crate::settings::{PaperValue, TestKind};

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

fn lookup(p: &PaperValue, run: &RunResults) -> (Option<f64>, bool) {
    let ip = p.ip.unwrap_or(4);
    let test = |kind: TestKind| {
        run.tests
            .iter()
            .find(|t| t.test == kind && t.ip == ip && t.size.to_string() == p.size)
    };
    match p.metric.as_str() {
        "ndr_mpps" | "pdr_mpps" => {
            let Some(s) = test(TestKind::Throughput).and_then(|t| t.throughput_summary()) else {
                return (None, false);
            };
            let g = if p.metric == "ndr_mpps" {
                &s.ndr
            } else {
                &s.pdr
            };
            (g.fps.map(|f| f / 1e6), g.lower_bound)
        }
        "cycles_per_packet" => (
            test(TestKind::Throughput).and_then(dut_cycles_at_throughput),
            false,
        ),
        m if m.starts_with("latency_") => {
            let Some(TestValue::Latency(l)) = test(TestKind::Latency).map(|t| &t.result) else {
                return (None, false);
            };
            let s = &l.mean;
            let ns = match m {
                "latency_min_us" => s.min_ns as f64,
                "latency_mean_us" => s.mean_ns,
                "latency_median_us" => s.median_ns as f64,
                "latency_p99_us" => s.p99_ns as f64,
                "latency_max_us" => s.max_ns as f64,
                _ => return (None, false),
            };
            ((s.count > 0).then_some(ns / 1e3), false)
        }
        _ => (None, false),
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
    let cells: Vec<Vec<Cell>> = rows
        .iter()
        .map(|row| {
            let p = &row.value;
            let m = match row.measured {
                None => Cell::num("n/a"),
                Some(v) if row.lower_bound => Cell::lower_bound(format!("≥ {v:.4}")),
                Some(v) => Cell::num(format!("{v:.4}")),
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
}
