//! The charts of a run's throughput and latency ([`crate::chart`] draws
//! them): throughput per frame size (grouped bars, one colour per DUT: the
//! first goal solid, the others outlined next to it; the tester's maximum
//! as a tick) and, when measured, latency percentiles as boxes. A DUT run
//! several times (`--repeat N`) is one bar per goal, its median, with a
//! whisker from the lowest to the highest round.

use std::fmt::Write as _;

use crate::chart::{self, hex, style, BarSeries, Chart, Entry, Spread, W};
use crate::repeat::spread;
use crate::results::{RunResults, TestValue};
use crate::settings::TestKind;

/// One bar: value, and whether it is a lower bound (tester-limited).
type Bar = Option<(f64, bool)>;

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

/// The legend entry of a DUT: its name and version (the version often
/// starts with the name: "softrouter 0.1.0").
fn dut_entry(i: usize, r: &RunResults) -> Entry {
    let d = &r.meta.dut;
    let name = if d.version.is_empty() {
        d.label().to_string()
    } else if d.version.starts_with(d.label()) {
        d.version.clone()
    } else {
        format!("{} {}", d.label(), d.version)
    };
    Entry {
        name,
        colour: style(i).0,
        marker: None,
    }
}

/// The standalone chart of `bench --plot`: throughput and, when
/// measured, latency, one above the other, with the legend below them
/// one entry per line (so it always fits).
pub fn svg(runs: &[RunResults]) -> String {
    let mut charts = vec![throughput_chart(runs)];
    charts.extend(latency_chart(runs));
    let legend = &charts[0].legend;
    let heights: Vec<u32> = charts.iter().map(|c| svg_height(&c.svg)).collect();
    let body: u32 = heights.iter().sum();
    let h = body + 20 * legend.len() as u32 + 20;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{h}\" viewBox=\"0 0 {W} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    let mut y = 0;
    for (c, ch) in charts.iter().zip(&heights) {
        let inner = c.svg.replacen("<svg ", &format!("<svg y=\"{y}\" "), 1);
        let inner = inner.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1);
        s.push_str(&inner);
        y += ch;
    }
    for (i, e) in legend.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<text x="70" y="{}" fill="{}">{} {}</text>"#,
            y + 16 + 20 * i as u32,
            hex(e.colour),
            e.glyph(),
            esc(&e.name)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn svg_height(svg: &str) -> u32 {
    svg.split("height=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Throughput per frame size: a bar per DUT and goal (the first goal
/// filled, the others outlined; a lower bound pale and marked ≥; a
/// repeated DUT's median with a whisker over its rounds), the tester's
/// maximum as a dashed tick.
pub(crate) fn throughput_chart(runs: &[RunResults]) -> Chart {
    let labels = size_labels(runs);
    let duts = by_dut(runs);
    let legend: Vec<Entry> = duts
        .iter()
        .enumerate()
        .map(|(i, g)| dut_entry(i, g[0]))
        .collect();
    let mut series = Vec::new();
    for (i, rounds) in duts.iter().enumerate() {
        for (gi, goal) in goal_names(rounds[0]).iter().enumerate() {
            let bars = labels
                .iter()
                .map(|l| {
                    let (bar, range) = throughput_over(rounds, l, goal);
                    bar.map(|(v, lb)| chart::Bar {
                        value: v / 1e6,
                        lower_bound: lb,
                        range: range.map(|(lo, hi)| (lo / 1e6, hi / 1e6)),
                    })
                })
                .collect();
            series.push(BarSeries {
                entry: i,
                outline: gi > 0,
                bars,
            });
        }
    }
    let ticks: Vec<Option<f64>> = labels
        .iter()
        .map(|l| runs.iter().find_map(|r| max_rate(r, l)).map(|v| v / 1e6))
        .collect();
    chart::bars("throughput, Mpps", &labels, legend, &series, &ticks)
}

/// Latency per frame size, a box per DUT: median to p99, whiskers to the
/// minimum and p99.9, a dot at the maximum (a repeated DUT: the median of
/// its rounds' figures); `None` when no run measured latency.
pub(crate) fn latency_chart(runs: &[RunResults]) -> Option<Chart> {
    let labels = size_labels(runs);
    let duts = by_dut(runs);
    let series: Vec<Vec<Option<Spread>>> = duts
        .iter()
        .map(|rounds| {
            labels
                .iter()
                .map(|l| {
                    let v: Vec<Spread> = rounds.iter().filter_map(|r| latency(r, l)).collect();
                    let med =
                        |f: fn(&Spread) -> f64| spread(v.iter().map(f)).map(|s| s.median / 1e3);
                    let medians = spread(v.iter().map(|s| s.median))?;
                    Some(Spread {
                        min: med(|s| s.min)?,
                        median: med(|s| s.median)?,
                        p99: med(|s| s.p99)?,
                        p999: med(|s| s.p999)?,
                        max: med(|s| s.max)?,
                        median_range: (medians.n > 1)
                            .then_some((medians.min / 1e3, medians.max / 1e3)),
                    })
                })
                .collect()
        })
        .collect();
    if series.iter().flatten().all(Option::is_none) {
        return None;
    }
    let legend = duts
        .iter()
        .enumerate()
        .map(|(i, g)| dut_entry(i, g[0]))
        .collect();
    Some(chart::boxes("latency, µs", &labels, legend, &series))
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

/// The latency percentiles in ns.
fn latency(r: &RunResults, label: &str) -> Option<Spread> {
    match matching(r, label, TestKind::Latency)? {
        TestValue::Latency(l) if l.mean.count > 0 => Some(Spread {
            min: l.mean.min_ns as f64,
            median: l.mean.median_ns as f64,
            p99: l.mean.p99_ns as f64,
            p999: l.mean.p999_ns as f64,
            max: l.mean.max_ns as f64,
            median_range: None,
        }),
        _ => None,
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

    /// softrouter's NDR and PDR fill-colour bars, pale and marked ≥ as
    /// lower bounds; linux's not; both in the legend and in the latency
    /// boxes (a box and a median bar each).
    #[test]
    fn bars_legend_and_latency_panel() {
        let s = svg(&[
            run("softrouter", 180_000.0, 190_000.0, true),
            run("linux", 120_000.0, 150_000.0, false),
        ]);
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(
            s.contains("■ softrouter<") && s.contains("■ linux<"),
            "legend: {s}"
        );
        assert!(
            s.contains("throughput, Mpps") && s.contains("latency, µs"),
            "{s}"
        );
        let rects = |colour: &str| {
            s.lines()
                .filter(|l| l.starts_with("<rect") && l.contains(colour))
                .count()
        };
        // Two bars, a box and its median.
        assert_eq!(rects("#1F77B4"), 4, "{s}");
        assert_eq!(rects("#FF7F0E"), 4, "{s}");
        assert_eq!(s.matches(">\n≥\n<").count(), 2, "the two lower bounds: {s}");
        assert_eq!(s.matches("opacity=\"0.45\"").count(), 2, "{s}");
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
        assert_eq!(s.matches("■ softrouter<").count(), 1, "{s}");
        let whiskers = s.matches("stroke=\"#333333\"").count();
        // A whisker and two caps per bar (2 DUTs x 2 goals), and per
        // latency box (2 DUTs) over its rounds' medians.
        assert_eq!(
            whiskers,
            (4 + 2) * 3,
            "a whisker and two caps per bar and box: {s}"
        );
        let once = svg(&[run("linux", 120_000.0, 150_000.0, false)]);
        assert_eq!(once.matches("stroke=\"#333333\"").count(), 0, "{once}");
    }
}
