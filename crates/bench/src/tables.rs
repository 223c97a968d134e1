//! Terminal tables of a run's results and the comparison of several runs.
//!
//! Why plain text: the tables go to a terminal and into logs; aligned
//! columns are enough, and a figure that was not measured prints `n/a`,
//! never a made-up 0. Lower bounds (the tester, not the DUT, set the
//! figure, or the maximum rate passed) carry a `+`.

use std::fmt::Write as _;

use crate::analyzer::LatencySummary;
use crate::repeat::{RepeatedDut, RepeatedGoal, Spread};
use crate::results::{BenchResults, Projection, RunResults, TestResult, TestValue};
use crate::search::TrialRecord;
use crate::settings::TestKind;
use crate::throughput::GoalResult;

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
fn goal_note(g: &GoalResult) -> String {
    if g.tester_limited {
        "tester-limited (lower bound)".into()
    } else if g.lower_bound {
        "maximum rate passed (lower bound)".into()
    } else if g.fps.is_none() {
        "no load was a lower bound".into()
    } else if !g.regular {
        "bounds wider than the goal (irregular)".into()
    } else {
        String::new()
    }
}

/// What a projection says, marked as one.
fn projection_note(p: &Projection) -> String {
    format!(
        "PROJECTED capacity {} Mpps (DUT CPUs {:.0} % busy at this rate; not measured)",
        mpps(p.projected_fps),
        p.busy_pct
    )
}

/// A projected rate cell: `~` marks it as a projection.
fn projected_cell(p: Option<Projection>) -> String {
    p.map_or("-".into(), |p| {
        format!("~{} ({:.0} % busy)", mpps(p.projected_fps), p.busy_pct)
    })
}

/// A ratio to the floor: `x1.23`, `~` when it rests on a projection.
fn floor_cell(v: Option<f64>, projected: bool) -> String {
    v.map_or("-".into(), |v| {
        format!("{}x{v:.2}", if projected { "~" } else { "" })
    })
}

/// A row per size and goal: the conditional throughput, the relevant
/// bounds and how many loads and trials decided them.
fn throughput_table(title: String, tests: &[&TestResult]) -> Table {
    let mut tb = Table::new(
        title,
        &[
            "size",
            "goal",
            "Mpps",
            "lower Mpps",
            "upper Mpps",
            "Mb/s",
            "% max",
            "trials",
            "note",
        ],
    );
    for t in tests {
        let Some(s) = t.throughput_summary() else {
            continue;
        };
        let trials = t.trials.iter().filter(|t| !t.discarded).count();
        for g in &s.goals {
            let mut note = goal_note(g);
            if let Some(p) = s.projection.filter(|_| std::ptr::eq(g, &s.goals[0])) {
                let r = projection_note(&p);
                note = if note.is_empty() {
                    r
                } else {
                    format!("{note}; {r}")
                };
            }
            if s.measurement_repeats > 0 && std::ptr::eq(g, &s.goals[0]) {
                let r = format!("{} trials re-run (tester fault)", s.measurement_repeats);
                note = if note.is_empty() {
                    r
                } else {
                    format!("{note}; {r}")
                };
            }
            tb.rows.push(vec![
                t.label(),
                g.name().to_uppercase(),
                rate_cell(g),
                or_na(g.lower_fps, mpps),
                g.upper_fps.map_or("-".into(), mpps),
                g.l2_bps.map_or("-".into(), |b| format!("{:.1}", b / 1e6)),
                g.pct_of_max.map_or("-".into(), |p| format!("{p:.1}")),
                trials.to_string(),
                note,
            ]);
        }
    }
    if let Some(s) = tests.iter().find_map(|t| t.throughput_summary()) {
        let goals: Vec<String> = s
            .goals
            .iter()
            .filter_map(|g| g.goal.as_ref().map(|g| g.label()))
            .collect();
        tb.title.push_str(&format!(
            " (RFC 9971 goals: {}; Mpps = conditional throughput)",
            goals.join(", ")
        ));
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

/// What a run spent its time on: per test kind, the wall time, the trials
/// and the trials' own traffic time (the rest is pauses, drains, learning
/// frames and the DUT's probes).
fn time_table(title: String, r: &RunResults) -> Table {
    let mut tb = Table::new(title, &["test", "s", "% of run", "trials", "traffic s"]);
    let total: f64 = r.tests.iter().map(|t| t.elapsed_s).sum();
    for kind in TestKind::ALL.iter().copied() {
        let tests: Vec<&TestResult> = r.tests.iter().filter(|t| t.test == kind).collect();
        if tests.is_empty() {
            continue;
        }
        let secs: f64 = tests.iter().map(|t| t.elapsed_s).sum();
        let trials: Vec<_> = tests.iter().flat_map(|t| &t.trials).collect();
        let traffic: f64 = trials
            .iter()
            .map(|t| match t.spec.burst {
                Some(b) => b as f64 / t.spec.rate_fps.max(1.0),
                None if !t.spec.phases.is_empty() => {
                    t.spec.phases.iter().map(|p| p.duration.as_secs_f64()).sum()
                }
                None => t.spec.duration.as_secs_f64(),
            })
            .sum();
        tb.rows.push(vec![
            kind.name().to_string(),
            format!("{secs:.0}"),
            format!("{:.0}", secs * 100.0 / total.max(1e-9)),
            trials.len().to_string(),
            format!("{traffic:.0}"),
        ]);
    }
    tb
}

/// One table per test kind that has results, and where the time went.
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
    if r.tests.iter().any(|t| t.elapsed_s > 0.0) {
        let title = format!("time spent - {}", dut.trim());
        out.push_str(&time_table(title, r).render());
        out.push('\n');
    }
    let trials: Vec<&TrialRecord> = r.tests.iter().flat_map(|t| &t.trials).collect();
    if let Some(line) = placement_line(&trials) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Where the host had put the tester's and the DUT's CPUs over the run's
/// trials (`noise.cpu_round_trip_ns`, `docs/reading-results.md`): how many
/// started near (as the tester judged, `noise.cpus_near`; in older files
/// within twice the run's fastest round trip) and far, the time spent
/// waiting for near, and the trials run again after a move.
fn placement_line(trials: &[&TrialRecord]) -> Option<String> {
    // (round trip, judged near) per trial that measured it; files
    // written before `cpus_near` existed judge by twice this run's fastest.
    let rts: Vec<(f64, Option<bool>)> = trials
        .iter()
        .filter_map(|t| {
            let n = t.outcome.noise.as_ref()?;
            Some((n.cpu_round_trip_ns?, n.cpus_near))
        })
        .collect();
    if rts.is_empty() {
        return None;
    }
    let fastest = rts.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
    let far: Vec<f64> = rts
        .iter()
        .filter(|&&(x, near)| !near.unwrap_or(x <= 2.0 * fastest))
        .map(|r| r.0)
        .collect();
    let waited: f64 = trials
        .iter()
        .filter_map(|t| t.outcome.noise.as_ref()?.placement_wait_ms)
        .sum::<f64>()
        / 1e3;
    let moved = trials
        .iter()
        .filter(|t| {
            t.outcome
                .measurement_fault
                .as_deref()
                .is_some_and(|f| f.contains("CPUs apart"))
        })
        .count();
    let far_text = if far.is_empty() {
        String::new()
    } else {
        let hi = far.iter().copied().fold(0.0, f64::max);
        let lo = far.iter().copied().fold(f64::INFINITY, f64::min);
        format!(", far ({lo:.0}-{hi:.0} ns) before {}", far.len())
    };
    Some(format!(
        "CPU placement: tester and DUT near (a cache line's round trip near the fastest seen, \
         {fastest:.0} ns in this run) before {} of {} trials{far_text}; {waited:.1} s waited for near; {moved} \
         trial(s) run again because the host moved them apart",
        rts.len() - far.len(),
        rts.len()
    ))
}

/// Throughput of every run side by side per size and IP version, a row
/// per run, each goal's conditional throughput and its ratio to the
/// baseline run (the last run unless `--baseline` named one), and the DUT
/// cycles per packet at the first goal's lower bound. Empty with one run.
/// With repeated runs, [`repeats_table`] instead.
pub fn comparison_table(r: &BenchResults) -> String {
    if !r.repeats.is_empty() {
        return repeats_table(r);
    }
    let Some(first) = r.comparison.first() else {
        return String::new();
    };
    let base = first.baseline.clone();
    let goals = first.goal_names();
    let mut headers = vec!["size".to_string(), "DUT".to_string()];
    for g in &goals {
        headers.push(format!("{} Mpps", g.to_uppercase()));
    }
    for g in &goals {
        headers.push(format!("{}/{base}", g.to_uppercase()));
    }
    headers.push("cyc/pkt".into());
    let projections = r
        .comparison
        .iter()
        .flat_map(|c| &c.duts)
        .any(|d| d.projection.is_some());
    let floor = r
        .comparison
        .iter()
        .flat_map(|c| &c.duts)
        .any(|d| d.x_floor.is_some());
    if projections {
        headers.push("projected Mpps".into());
    }
    if floor {
        headers.extend(["rate x floor", "cyc x floor", "capacity x floor"].map(String::from));
    }
    let mut tb = Table {
        title: format!("throughput, Mpps (conditional throughput), each run against {base}"),
        headers,
        rows: Vec::new(),
    };
    for row in &r.comparison {
        for x in &row.duts {
            let goal = |name: &str| x.goals.iter().find(|g| g.goal == name);
            let mut cells = vec![format!("{} v{}", row.size, row.ip), x.dut.clone()];
            for g in &goals {
                cells.push(goal(g).map_or("-".into(), |g| match g.fps {
                    Some(f) => format!("{}{}", mpps(f), if g.lower_bound { "+" } else { "" }),
                    None => "-".into(),
                }));
            }
            for g in &goals {
                let is_base = x.dut == row.baseline;
                cells.push(match goal(g).and_then(|g| g.ratio) {
                    Some(r) if !is_base => format!("{r:.2}"),
                    _ => "-".into(),
                });
            }
            cells.push(
                x.cycles_per_packet
                    .map_or("-".into(), |c| format!("{c:.0}")),
            );
            if projections {
                cells.push(projected_cell(x.projection));
            }
            if floor {
                let f = x.x_floor.unwrap_or_default();
                cells.push(floor_cell(f.fps, false));
                cells.push(floor_cell(f.cycles_per_packet, false));
                cells.push(floor_cell(f.capacity, f.projected));
            }
            tb.rows.push(cells);
        }
    }
    let mut s = tb.render();
    s.push_str(
        "(+ = lower bound: tester-limited or the maximum rate passed; cyc/pkt = busy cycles \
         of the DUT's CPUs per forwarded packet in a trial at the first goal's lower bound)\n",
    );
    if projections {
        s.push_str(
            "(~ = PROJECTED, not measured: the rate at the highest load the tester offered / \
             the DUT CPUs' busy share there)\n",
        );
    }
    if floor {
        s.push_str(
            "(x floor = against the floor DUT of the same round: an XDP redirect with the MAC \
             rewrite and nothing else; cyc x floor = cycles a packet at the highest load \
             offered, the same for both; capacity = projected when there is a projection)\n",
        );
    }
    s
}

/// `median (min-max)` in Mpps, `+` when a round's figure is a lower
/// bound, `-` without a figure.
pub fn median_cell(g: &RepeatedGoal) -> String {
    median_range(g, g.lower_bound)
}

/// [`median_cell`] with the `+` only when `mark`: the report marks a
/// lower bound its own way (`≥`, a class), not twice.
pub fn median_range(g: &RepeatedGoal, mark: bool) -> String {
    match (g.median_fps, g.min_fps, g.max_fps) {
        (Some(m), Some(lo), Some(hi)) => format!(
            "{}{} ({:.3}-{:.3})",
            mpps(m),
            if mark { "+" } else { "" },
            lo / 1e6,
            hi / 1e6
        ),
        _ => "-".into(),
    }
}

/// `4.60x (4.10-5.00)`: the ratio of the medians and the range of the
/// per-round ratios; `-` without one.
pub fn ratio_cell(g: &RepeatedGoal) -> String {
    match (g.ratio, g.min_ratio, g.max_ratio) {
        (Some(r), Some(lo), Some(hi)) => format!("{r:.2}x ({lo:.2}-{hi:.2})"),
        (Some(r), _, _) => format!("{r:.2}x"),
        _ => "-".into(),
    }
}

/// `3450 (3366-3536)`: the median of a DUT's rounds' cycles a packet
/// at their throughput and their range; `-` when none was measured.
pub fn cycles_cell(d: &RepeatedDut) -> String {
    match (
        d.median_cycles_per_packet,
        d.min_cycles_per_packet,
        d.max_cycles_per_packet,
    ) {
        (Some(m), Some(lo), Some(hi)) => format!("{m:.0} ({lo:.0}-{hi:.0})"),
        _ => "-".into(),
    }
}

/// `repeats[]`: a row per size and DUT, each goal's median over the
/// rounds with its range, the ratio of the medians to the baseline's
/// with the range of the per-round ratios, and the DUT's cycles a packet
/// at its throughput over the rounds (whether its cost moved with its
/// rate, `repeat::RepeatedDut`).
fn repeats_table(r: &BenchResults) -> String {
    let Some(first) = r.repeats.first() else {
        return String::new();
    };
    let base = first.baseline.clone();
    let goals = first.goal_names();
    let mut headers = vec!["size".to_string(), "DUT".to_string(), "rounds".to_string()];
    for g in &goals {
        headers.push(format!("{} Mpps", g.to_uppercase()));
    }
    for g in &goals {
        headers.push(format!("{}/{base}", g.to_uppercase()));
    }
    headers.push("cyc/pkt".to_string());
    let floor = repeats_have_floor(r);
    if floor {
        headers.extend(["cyc x floor", "capacity x floor"].map(String::from));
    }
    let mut tb = Table {
        title: format!(
            "throughput, Mpps (conditional throughput): median of {} rounds (min-max); \
             ratio of the medians against {base} (min-max of the per-round ratios); \
             DUT cycles a packet at its throughput, median (min-max)",
            r.rounds()
        ),
        headers,
        rows: Vec::new(),
    };
    for row in &r.repeats {
        for d in &row.duts {
            let goal = |name: &str| d.goals.iter().find(|g| g.goal == name);
            let mut cells = vec![
                format!("{} v{}", row.size, row.ip),
                d.dut.clone(),
                d.rounds.to_string(),
            ];
            for g in &goals {
                cells.push(goal(g).map_or("-".into(), median_cell));
            }
            for g in &goals {
                cells.push(match goal(g) {
                    Some(g) if d.dut != row.baseline => ratio_cell(g),
                    _ => "-".into(),
                });
            }
            cells.push(cycles_cell(d));
            if floor {
                cells.extend(floor_cells(d));
            }
            tb.rows.push(cells);
        }
    }
    let mut s = tb.render();
    s.push_str(
        "(+ = some round's figure is a lower bound: tester-limited or the maximum rate passed)\n",
    );
    if floor {
        s.push_str(
            "(x floor = median (min-max) of the rounds' ratios to the floor DUT of the same \
             round; ~ = some round's capacity is projected)\n",
        );
    }
    s
}

/// Some DUT of `repeats[]` has multiples of the floor (the repeated
/// tables then have a column for each).
pub fn repeats_have_floor(r: &BenchResults) -> bool {
    r.repeats
        .iter()
        .flat_map(|row| &row.duts)
        .any(|d| d.x_floor.is_some())
}

/// A DUT's cells of the repeated tables' floor columns: its cycles a
/// packet and its capacity x the floor's, each [`floor_spread_cell`].
pub fn floor_cells(d: &RepeatedDut) -> [String; 2] {
    let f = d.x_floor;
    [
        floor_spread_cell(f.and_then(|f| f.cycles_per_packet), false),
        floor_spread_cell(
            f.and_then(|f| f.capacity),
            f.is_some_and(|f| f.capacity_projected),
        ),
    ]
}

/// `x1.12 (0.88-1.29)`: the median and range of a DUT's per-round
/// multiples of the floor, `~` first when some round's rests on a
/// projection; `-` without one.
pub fn floor_spread_cell(s: Option<Spread>, projected: bool) -> String {
    s.map_or("-".into(), |s| {
        format!(
            "{}x{:.2} ({:.2}-{:.2})",
            if projected { "~" } else { "" },
            s.median,
            s.min,
            s.max
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{Noise, TrialOutcome, TrialSpec};

    fn trial(rt: Option<f64>, wait_ms: f64, fault: Option<&str>) -> TrialRecord {
        TrialRecord {
            purpose: "search ndr".into(),
            spec: TrialSpec::constant(
                1e6,
                std::time::Duration::from_secs(1),
                crate::sizes::FrameSize::Fixed(64),
            ),
            outcome: TrialOutcome {
                noise: Some(Noise {
                    cpu_round_trip_ns: rt,
                    placement_wait_ms: rt.map(|_| wait_ms),
                    ..Noise::default()
                }),
                measurement_fault: fault.map(str::to_string),
                ..TrialOutcome::default()
            },
            passed: true,
            bound_for: Vec::new(),
            discarded: fault.is_some(),
        }
    }

    #[test]
    fn the_placement_line_counts_near_far_waits_and_moves() {
        let t = [
            trial(Some(55.0), 0.0, None),
            trial(Some(60.0), 2500.0, None),
            trial(Some(110.0), 0.0, None),
            trial(Some(320.0), 500.0, None),
            trial(
                Some(58.0),
                0.0,
                Some("the host moved the tester's and the DUT's CPUs apart during the trial"),
            ),
            trial(None, 0.0, None),
        ];
        let refs: Vec<&TrialRecord> = t.iter().collect();
        let line = placement_line(&refs).expect("a line");
        assert!(
            line.contains("55 ns in this run) before 4 of 5 trials, far (320-320 ns) before 1;"),
            "{line}"
        );
        assert!(
            line.contains("3.0 s waited for near; 1 trial(s) run again"),
            "{line}"
        );
        // With the tester's own verdict recorded, the line counts that:
        // 66 ns beside a fastest of 25 was near.
        let judged: Vec<TrialRecord> = [(25.0, true), (66.0, true), (300.0, false)]
            .into_iter()
            .map(|(rt, near)| {
                let mut t = trial(Some(rt), 0.0, None);
                t.outcome.noise.as_mut().unwrap().cpus_near = Some(near);
                t
            })
            .collect();
        let judged_line = placement_line(&judged.iter().collect::<Vec<_>>()).expect("a line");
        assert!(
            judged_line
                .contains("25 ns in this run) before 2 of 3 trials, far (300-300 ns) before 1;"),
            "{judged_line}"
        );
        // No trial measured it: no line.
        assert_eq!(placement_line(&refs[5..]), None);
    }
}
