//! SVG charts of a run: throughput per frame size (grouped bars, one colour
//! per DUT: the NDR solid, the PDR outlined next to it; the tester's
//! maximum as a tick) and, when measured, median and p99 latency. A DUT
//! run several times (`--repeat N`) is one bar per goal, its median, with
//! a whisker from the lowest to the highest round.
//!
//! Why hand-written SVG: a chart this simple needs no plotting library,
//! and the usual ones pull in font rendering with system dependencies.
//! The SVG is plain text a browser shows and a diff can read.

use std::fmt::Write as _;

use crate::repeat::spread;
use crate::results::{RunResults, TestValue};
use crate::settings::TestKind;

const W: f64 = 760.0;
const PANEL_H: f64 = 260.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
pub(crate) const COLOURS: [&str; 6] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
];

/// One bar: value, and whether it is a lower bound (tester-limited).
type Bar = Option<(f64, bool)>;

/// One series of bars, one per size label.
struct Series {
    /// Shown in each bar's tooltip.
    name: String,
    colour: &'static str,
    /// Drawn as an outline (the PDR) instead of filled (the NDR).
    outline: bool,
    bars: Vec<Bar>,
    /// Per bar, the (min, max) of a repeated DUT's rounds: a whisker.
    ranges: Vec<Option<(f64, f64)>>,
}

/// The runs of each DUT (its rounds), by label, in the order first run.
fn by_dut(runs: &[RunResults]) -> Vec<Vec<&RunResults>> {
    let mut out: Vec<Vec<&RunResults>> = Vec::new();
    for r in runs {
        match out
            .iter_mut()
            .find(|g| g[0].meta.dut.label() == r.meta.dut.label())
        {
            Some(g) => g.push(r),
            None => out.push(vec![r]),
        }
    }
    out
}

/// One DUT's bar for `goal` at `label` over its rounds: the median (a
/// lower bound when any round's figure is), and the range with several
/// rounds.
fn throughput_over(rounds: &[&RunResults], label: &str, goal: &str) -> (Bar, Option<(f64, f64)>) {
    let figures: Vec<(f64, bool)> = rounds
        .iter()
        .filter_map(|r| throughput(r, label, goal))
        .collect();
    let Some(s) = spread(figures.iter().map(|f| f.0)) else {
        return (None, None);
    };
    let lower = figures.iter().any(|f| f.1);
    let range = (s.n > 1).then_some((s.min, s.max));
    (Some((s.median, lower)), range)
}

/// The chart for one or more runs (e.g. softrouter and linux side by side):
/// throughput and, when measured, latency.
pub fn svg(runs: &[RunResults]) -> String {
    render(runs, true, true)
}

/// The throughput panel alone (the HTML report's throughput section).
pub fn throughput_svg(runs: &[RunResults]) -> String {
    render(runs, true, false)
}

/// The latency panel alone, `None` when no run measured latency.
pub fn latency_svg(runs: &[RunResults]) -> Option<String> {
    let labels = size_labels(runs);
    runs.iter()
        .any(|r| labels.iter().any(|l| latency(r, l).is_some()))
        .then(|| render(runs, false, true))
}

/// The throughput panel and/or the latency panel (when measured).
fn render(runs: &[RunResults], with_throughput: bool, with_latency: bool) -> String {
    let labels = size_labels(runs);
    let max: Vec<Option<f64>> = labels
        .iter()
        .map(|l| runs.iter().find_map(|r| max_rate(r, l)))
        .collect();
    let duts = by_dut(runs);
    // Latency of a repeated DUT: the median of its rounds' medians, the
    // highest p99.
    let lat: Vec<Vec<Option<(f64, f64)>>> = duts
        .iter()
        .map(|rounds| {
            labels
                .iter()
                .map(|l| {
                    let v: Vec<(f64, f64)> = rounds.iter().filter_map(|r| latency(r, l)).collect();
                    let med = spread(v.iter().map(|x| x.0))?;
                    let p99 = spread(v.iter().map(|x| x.1))?;
                    Some((med.median, p99.max))
                })
                .collect()
        })
        .collect();
    let has_lat = with_latency && lat.iter().flatten().any(|v| v.is_some());
    let panels = f64::from(u8::from(has_lat) + u8::from(with_throughput));
    let h = TOP + panels * (PANEL_H + 60.0) + 30.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    // Legend: each entry as wide as its text (about 7 px a character at
    // 12 px), so long DUT names and versions do not run into each other.
    let mut x = LEFT;
    for (i, rounds) in duts.iter().enumerate() {
        let d = &rounds[0].meta.dut;
        // The version often starts with the name ("softrouter 0.1.0").
        let text = if d.version.starts_with(d.label()) || d.version.is_empty() {
            d.version.clone()
        } else {
            format!("{} {}", d.label(), d.version)
        };
        let text = if text.is_empty() {
            d.label().to_string()
        } else {
            text
        };
        let _ = writeln!(
            s,
            r#"<rect x="{x}" y="12" width="12" height="12" fill="{}"/><text x="{}" y="22">{}</text>"#,
            COLOURS[i % COLOURS.len()],
            x + 16.0,
            esc(&text)
        );
        x += 16.0 + 7.0 * text.chars().count() as f64 + 20.0;
    }
    let mut tp = Vec::new();
    for (i, rounds) in duts.iter().enumerate() {
        let r = rounds[0];
        for (gi, goal) in goal_names(r).iter().enumerate() {
            let (bars, ranges) = labels
                .iter()
                .map(|l| {
                    let (bar, range) = throughput_over(rounds, l, goal);
                    (
                        bar.map(|(v, lb)| (v / 1e6, lb)),
                        range.map(|(lo, hi)| (lo / 1e6, hi / 1e6)),
                    )
                })
                .unzip();
            tp.push(Series {
                name: format!("{} {}", r.meta.dut.label(), goal.to_uppercase()),
                colour: COLOURS[i % COLOURS.len()],
                outline: gi > 0,
                bars,
                ranges,
            });
        }
    }
    let ticks: Vec<Option<f64>> = max.iter().map(|m| m.map(|v| v / 1e6)).collect();
    if with_throughput {
        panel(
            &mut s,
            TOP,
            if duts.iter().any(|d| d.len() > 1) {
                "throughput, Mpps, median of the rounds (whisker: min-max; solid: first goal, outline: the others; pale/dashed, \u{2265}: lower bound; tick: tester maximum)"
            } else {
                "throughput, Mpps (solid: first goal, outline: the others; pale/dashed, \u{2265}: lower bound; tick: tester maximum)"
            },
            &labels,
            &tp,
            &ticks,
        );
    }
    if has_lat {
        let y0 = if with_throughput {
            TOP + PANEL_H + 60.0
        } else {
            TOP
        };
        let med: Vec<Series> = lat
            .iter()
            .zip(&duts)
            .enumerate()
            .map(|(i, (row, rounds))| Series {
                name: rounds[0].meta.dut.label().to_string(),
                colour: COLOURS[i % COLOURS.len()],
                outline: false,
                bars: row
                    .iter()
                    .map(|v| v.map(|(m, _)| (m / 1e3, false)))
                    .collect(),
                ranges: Vec::new(),
            })
            .collect();
        let p99: Vec<Option<f64>> = (0..labels.len())
            .map(|j| {
                lat.iter()
                    .filter_map(|row| row[j].map(|(_, p)| p / 1e3))
                    .reduce(f64::max)
            })
            .collect();
        panel(
            &mut s,
            y0,
            "median latency, us (tick: highest p99)",
            &labels,
            &med,
            &p99,
        );
    }
    s.push_str("</svg>\n");
    s
}

/// One bar panel at vertical offset `y0`.
fn panel(
    s: &mut String,
    y0: f64,
    title: &str,
    labels: &[String],
    series: &[Series],
    ticks: &[Option<f64>],
) {
    let top = series
        .iter()
        .flat_map(|s| &s.bars)
        .filter_map(|b| b.map(|(v, _)| v))
        .chain(series.iter().flat_map(|s| &s.ranges).flatten().map(|r| r.1))
        .chain(ticks.iter().flatten().copied())
        .fold(0.0f64, f64::max);
    let top = nice_ceiling(top);
    let plot_w = W - LEFT - RIGHT;
    let y_of = |v: f64| y0 + 20.0 + PANEL_H - v / top * PANEL_H;
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="{}" font-weight="bold">{}</text>"#,
        y0 + 10.0,
        esc(title)
    );
    for k in 0..=4 {
        let v = top * k as f64 / 4.0;
        let y = y_of(v);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            fmt_num(v)
        );
    }
    let groups = labels.len().max(1) as f64;
    let group_w = plot_w / groups;
    let n = series.len().max(1) as f64;
    let bar_w = (group_w * 0.7 / n).min(60.0);
    for (j, label) in labels.iter().enumerate() {
        let gx = LEFT + j as f64 * group_w + group_w * 0.15;
        for (i, ser) in series.iter().enumerate() {
            let Some((v, lower)) = ser.bars[j] else {
                continue;
            };
            let x = gx + i as f64 * bar_w;
            let y = y_of(v);
            let colour = ser.colour;
            let style = match (ser.outline, lower) {
                (false, false) => format!(r#"fill="{colour}""#),
                (false, true) => format!(r#"fill="{colour}" fill-opacity="0.45""#),
                (true, false) => format!(r#"fill="white" stroke="{colour}" stroke-width="2""#),
                (true, true) => format!(
                    r#"fill="white" stroke="{colour}" stroke-width="2" stroke-dasharray="4 2""#
                ),
            };
            let range = ser.ranges.get(j).copied().flatten();
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" {style}><title>{}</title></rect>"#,
                bar_w - 2.0,
                y_of(0.0) - y,
                esc(&format!(
                    "{label} {}: {}{}{}",
                    ser.name,
                    if lower { ">= " } else { "" },
                    fmt_num(v),
                    range.map_or(String::new(), |(lo, hi)| format!(
                        " (median; rounds {}-{})",
                        fmt_num(lo),
                        fmt_num(hi)
                    ))
                ))
            );
            // The rounds' range: a whisker with caps over the bar's middle.
            if let Some((lo, hi)) = range {
                let cx = x + (bar_w - 2.0) / 2.0;
                let cap = ((bar_w - 2.0) / 4.0).max(2.0);
                let (ylo, yhi) = (y_of(lo), y_of(hi));
                let _ = writeln!(
                    s,
                    r##"<path class="whisker" d="M{cx:.1} {ylo:.1}V{yhi:.1}M{:.1} {ylo:.1}H{:.1}M{:.1} {yhi:.1}H{:.1}" stroke="#000" stroke-width="1.5" fill="none"/>"##,
                    cx - cap,
                    cx + cap,
                    cx - cap,
                    cx + cap
                );
            }
            // A lower bound is also marked in plain sight, not only by
            // shade and in the tooltip.
            if lower {
                let _ = writeln!(
                    s,
                    r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11" font-weight="bold">≥{}</text>"#,
                    x + (bar_w - 2.0) / 2.0,
                    y - 3.0,
                    fmt_num(v)
                );
            }
        }
        if let Some(t) = ticks[j] {
            let y = y_of(t);
            let _ = writeln!(
                s,
                r##"<line x1="{gx:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#000" stroke-dasharray="4 2"/>"##,
                gx + n * bar_w
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            gx + n * bar_w / 2.0,
            y_of(0.0) + 16.0,
            esc(label)
        );
    }
}

fn size_labels(runs: &[RunResults]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in runs {
        for t in &r.tests {
            let l = format!("{} v{}", t.size, t.ip);
            if !out.contains(&l) {
                out.push(l);
            }
        }
    }
    out
}

fn matching<'a>(r: &'a RunResults, label: &str, kind: TestKind) -> Option<&'a TestValue> {
    r.tests
        .iter()
        .find(|t| t.test == kind && format!("{} v{}", t.size, t.ip) == label)
        .map(|t| &t.result)
}

fn throughput(r: &RunResults, label: &str, goal: &str) -> Bar {
    match matching(r, label, TestKind::Throughput)? {
        TestValue::Throughput(t) => {
            let g = t.goal(goal)?;
            g.fps.map(|f| (f, g.lower_bound))
        }
        _ => None,
    }
}

/// The goals of a run's throughput results, in order (the settings'
/// goals: every size has them all).
fn goal_names(r: &RunResults) -> Vec<String> {
    r.tests
        .iter()
        .find_map(|t| t.throughput_summary())
        .map(|s| s.goals.iter().map(|g| g.name().to_string()).collect())
        .unwrap_or_default()
}

fn max_rate(r: &RunResults, label: &str) -> Option<f64> {
    match matching(r, label, TestKind::Throughput)? {
        TestValue::Throughput(t) => Some(t.max_rate_fps),
        _ => None,
    }
}

/// (median, p99) in ns.
fn latency(r: &RunResults, label: &str) -> Option<(f64, f64)> {
    match matching(r, label, TestKind::Latency)? {
        TestValue::Latency(l) if l.mean.count > 0 => {
            Some((l.mean.median_ns as f64, l.mean.p99_ns as f64))
        }
        _ => None,
    }
}

/// 1, 2 or 5 times a power of ten at or above `v`.
pub(crate) fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|&c| c >= v)
        .unwrap_or(10.0 * p)
}

pub(crate) fn fmt_num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{DutInfo, RunMeta, TestResult};
    use crate::search::LatencyResult;
    use crate::sizes::FrameSize;
    use crate::throughput::{GoalResult, ThroughputResult};

    fn run(kind: &str, ndr: f64, pdr: f64, limited: bool) -> RunResults {
        let goal = |name: &str, fps: f64| GoalResult {
            goal: crate::settings::SearchGoal::builtin(name, crate::settings::Preset::Quick),
            fps: Some(fps),
            lower_bound: limited,
            tester_limited: limited,
            ..GoalResult::default()
        };
        let tp = ThroughputResult {
            max_rate_fps: 200_000.0,
            goals: vec![goal("ndr", ndr), goal("pdr", pdr)],
            ..ThroughputResult::default()
        };
        let mut lat = LatencyResult::default();
        lat.mean.count = 10;
        lat.mean.median_ns = 12_000;
        lat.mean.p99_ns = 40_000;
        RunResults {
            meta: RunMeta {
                dut: DutInfo {
                    kind: kind.into(),
                    ..DutInfo::default()
                },
                ..RunMeta::default()
            },
            settings: crate::settings::Settings::default(),
            tests: vec![
                TestResult::throughput(FrameSize::Fixed(64), 4, tp),
                TestResult::latency(FrameSize::Fixed(64), 4, lat),
            ],
        }
    }

    #[test]
    fn bars_legend_and_latency_panel() {
        let s = svg(&[
            run("softrouter", 180_000.0, 190_000.0, true),
            run("linux", 120_000.0, 150_000.0, false),
        ]);
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(
            s.contains(">softrouter<") && s.contains(">linux<"),
            "legend"
        );
        assert!(
            s.contains("64 v4 softrouter NDR: &gt;= 0.180"),
            "lower bound marked"
        );
        assert!(s.contains("64 v4 softrouter PDR: &gt;= 0.190"));
        assert!(s.contains("64 v4 linux NDR: 0.120"));
        assert!(s.contains("64 v4 linux PDR: 0.150"));
        assert!(s.contains("median latency"));
        assert_eq!(
            s.matches("<rect x=").count(),
            2 + 4 + 2,
            "legend, throughput (NDR and PDR per DUT) and latency bars"
        );
        assert_eq!(
            s.matches(r#"stroke-width="2" stroke-dasharray"#).count(),
            1,
            "the PDR lower bound dashed: {s}"
        );
    }

    /// Two rounds of two DUTs: one bar per DUT and goal at the median,
    /// with a whisker over the rounds' range; one legend entry per DUT.
    #[test]
    fn repeated_duts_get_median_bars_and_whiskers() {
        let s = svg(&[
            run("softrouter", 180_000.0, 190_000.0, false),
            run("linux", 120_000.0, 150_000.0, false),
            run("softrouter", 200_000.0, 210_000.0, true),
            run("linux", 100_000.0, 130_000.0, false),
        ]);
        assert_eq!(s.matches(">softrouter<").count(), 1, "{s}");
        assert_eq!(
            s.matches("<rect x=").count(),
            2 + 4 + 2,
            "legend, throughput and latency bars: {s}"
        );
        assert_eq!(s.matches(r#"class="whisker""#).count(), 4, "{s}");
        assert!(s.contains("median of the rounds"), "{s}");
        assert!(
            s.contains("64 v4 softrouter NDR: &gt;= 0.190 (median; rounds 0.180-0.200)"),
            "median, lower bound from round 2, range: {s}"
        );
        assert!(s.contains("64 v4 linux PDR: 0.140 (median; rounds 0.130-0.150)"));
        // One round each: no whisker.
        let once = svg(&[run("linux", 120_000.0, 150_000.0, false)]);
        assert!(
            !once.contains("whisker") && !once.contains("(median;"),
            "{once}"
        );
    }

    #[test]
    fn nice_ceilings() {
        assert_eq!(nice_ceiling(0.18), 0.2);
        assert_eq!(nice_ceiling(3.0), 5.0);
        assert_eq!(nice_ceiling(0.0), 1.0);
    }
}
