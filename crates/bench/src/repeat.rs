//! Repeated runs (`--repeat N`): the median and range of each DUT's
//! throughput over its rounds, and the ratio between DUTs from the
//! medians with the range of the per-round ratios.
//!
//! Why: one run of a benchmark on a shared host ranks nothing when the
//! host's stalls move a result by several times (issue 18). Running the
//! DUTs in turn, A B A B ..., spreads slow phases of the host over all of
//! them, and the median of N rounds is what a reader compares, with the
//! range saying how far one round can be from it. The ratio is taken from
//! the medians (the typical DUT against the typical baseline), not as the
//! median of the per-round ratios, so that it agrees with the medians the
//! tables print beside it; its range is the per-round ratios' (round i's
//! DUT against round i's baseline, from `comparison[]`), which is what a
//! single run could have reported.
//!
//! The multiples of the floor DUT (`x_floor`) are the other way round:
//! the median of the per-round ratios. Each round's ratio sets a DUT
//! beside the floor at the same load minutes apart, while the host moves
//! the floor's own cost by up to 2x from round to round; the ratio within
//! a round is the like-for-like figure, and its median over the rounds is
//! the one that repeats.
//!
//! Pure, no packet I/O: built from each round's figures as
//! `results::compare` gives them per size ([`Round`]), so that this
//! module does not depend on the results schema that holds its rows.

use serde::{Deserialize, Serialize};

use crate::sizes::FrameSize;

/// One run (one DUT in one round) at one size, as `comparison[]` has it.
#[derive(Debug, Clone, PartialEq)]
pub struct Round<'a> {
    /// The DUT's label (what groups its rounds).
    pub dut: &'a str,
    /// Per goal; empty when the run has no result at this size.
    pub goals: Vec<GoalFigure<'a>>,
    /// The DUT's busy cycles per forwarded packet at its throughput
    /// (`comparison[].duts[].cycles_per_packet`), when measured.
    pub cycles_per_packet: Option<f64>,
    /// The run against the floor DUT of its round
    /// (`comparison[].duts[].x_floor`), when the results have a floor.
    pub x_floor: Option<FloorFigures>,
}

/// A [`Round`]'s multiples of the floor's figures: the fields of
/// `results::FloorRatios` this module reads, copied in by the caller as
/// the goals are (the module's doc says why it does not use the schema's
/// types).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FloorFigures {
    /// Cycles a packet at the highest load offered / the floor's.
    pub cycles_per_packet: Option<f64>,
    /// Capacity / the floor's.
    pub capacity: Option<f64>,
    /// `capacity` rests on a projection.
    pub projected: bool,
}

/// One goal's figure in a [`Round`].
#[derive(Debug, Clone, PartialEq)]
pub struct GoalFigure<'a> {
    /// The goal's name.
    pub goal: &'a str,
    /// Conditional throughput, frames/s per port.
    pub fps: Option<f64>,
    /// `fps` is a lower bound.
    pub lower_bound: bool,
    /// `fps` / the baseline's in the same round.
    pub ratio: Option<f64>,
}

/// The median and range of some figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// The middle figure; with an even count, the mean of the two middle ones.
    pub median: f64,
    /// The smallest figure.
    pub min: f64,
    /// The largest figure.
    pub max: f64,
    /// How many figures.
    pub n: u32,
}

/// The spread of `values` (NaNs left out), `None` when there is none.
pub fn spread(values: impl IntoIterator<Item = f64>) -> Option<Spread> {
    let mut v: Vec<f64> = values.into_iter().filter(|v| !v.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some(Spread {
        median,
        min: v[0],
        max: v[n - 1],
        n: n as u32,
    })
}

/// One size and IP version of [`crate::results::BenchResults::repeats`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatRow {
    /// Frame size.
    pub size: FrameSize,
    /// 4 or 6.
    pub ip: u8,
    /// The DUT the ratios divide by (as in `comparison[]`).
    pub baseline: String,
    /// One entry per DUT, in the order of its first run.
    pub duts: Vec<RepeatedDut>,
}

impl RepeatRow {
    /// The goals' names, in their order, from the first DUT with a
    /// figure for any goal (a DUT that never passed has none to name).
    pub fn goal_names(&self) -> Vec<String> {
        self.duts
            .iter()
            .find(|d| d.goals.iter().any(|g| g.n > 0))
            .map(|d| d.goals.iter().map(|g| g.goal.clone()).collect())
            .unwrap_or_default()
    }
}

/// One DUT's rounds in a [`RepeatRow`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatedDut {
    /// The DUT's label (the same in every round).
    pub dut: String,
    /// How many rounds ran it.
    pub rounds: u32,
    /// Per goal, in the goals' order.
    pub goals: Vec<RepeatedGoal>,
    /// The median, lowest and highest of its rounds' busy cycles per
    /// forwarded packet at their throughput. Why beside the rates: a DUT
    /// that forwards until its CPU is spent has a rate of its CPU's
    /// cycles over these, so when its rounds' rates differ this says
    /// whether its cost a packet moved with them (the host charging more
    /// for the same work) or the search landed apart at the same cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_cycles_per_packet: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_cycles_per_packet: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cycles_per_packet: Option<f64>,
    /// Its multiples of the floor over the rounds that have them (none
    /// without a floor DUT in the results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_floor: Option<RepeatedFloor>,
}

/// A DUT's multiples of the floor over its rounds: the median and range
/// of the per-round ratios (the module's doc says why not the ratio of
/// the medians).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RepeatedFloor {
    /// Cycles a packet at the highest load offered x the floor's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_packet: Option<Spread>,
    /// Capacity x the floor's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Spread>,
    /// Some round's capacity ratio rests on a projection.
    pub capacity_projected: bool,
}

impl RepeatedFloor {
    /// Over `rounds`' figures; `None` when no round has any.
    fn over(rounds: &[&Round]) -> Option<RepeatedFloor> {
        let f: Vec<&FloorFigures> = rounds.iter().filter_map(|d| d.x_floor.as_ref()).collect();
        let cycles = spread(f.iter().filter_map(|f| f.cycles_per_packet));
        let capacity = spread(f.iter().filter_map(|f| f.capacity));
        (cycles.is_some() || capacity.is_some()).then(|| RepeatedFloor {
            cycles_per_packet: cycles,
            capacity,
            capacity_projected: f.iter().any(|f| f.projected && f.capacity.is_some()),
        })
    }
}

/// One goal of one DUT over its rounds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RepeatedGoal {
    /// The goal's name.
    pub goal: String,
    /// Rounds with a figure (fewer than `rounds` when a round has no
    /// result at this size or no load was a lower bound).
    pub n: u32,
    /// Median conditional throughput over the rounds, frames/s per port.
    pub median_fps: Option<f64>,
    /// The lowest round's figure.
    pub min_fps: Option<f64>,
    /// The highest round's figure.
    pub max_fps: Option<f64>,
    /// Some round's figure is a lower bound (tester-limited or the
    /// maximum passed): the median may be one too.
    pub lower_bound: bool,
    /// How many rounds' figures are lower bounds.
    pub lower_bound_rounds: u32,
    /// `median_fps` / the baseline's `median_fps` (null when either is).
    pub ratio: Option<f64>,
    /// The lowest per-round ratio (round i against the baseline's round i).
    pub min_ratio: Option<f64>,
    /// The highest per-round ratio.
    pub max_ratio: Option<f64>,
}

/// The rounds of every DUT at one size aggregated per goal: runs are
/// grouped by their DUT label, the ratios of the medians divide by
/// `baseline`'s medians.
pub fn aggregate(size: &FrameSize, ip: u8, baseline: &str, runs: &[Round]) -> RepeatRow {
    let mut goals: Vec<&str> = Vec::new();
    let mut labels: Vec<&str> = Vec::new();
    for d in runs {
        if !labels.contains(&d.dut) {
            labels.push(d.dut);
        }
        for g in &d.goals {
            if !goals.contains(&g.goal) {
                goals.push(g.goal);
            }
        }
    }
    let mut duts: Vec<RepeatedDut> = labels
        .iter()
        .map(|label| {
            let rounds: Vec<&Round> = runs.iter().filter(|d| d.dut == *label).collect();
            let cycles = spread(rounds.iter().filter_map(|d| d.cycles_per_packet));
            RepeatedDut {
                dut: label.to_string(),
                rounds: rounds.len() as u32,
                goals: goals.iter().map(|g| over_rounds(g, &rounds)).collect(),
                median_cycles_per_packet: cycles.map(|s| s.median),
                min_cycles_per_packet: cycles.map(|s| s.min),
                max_cycles_per_packet: cycles.map(|s| s.max),
                x_floor: RepeatedFloor::over(&rounds),
            }
        })
        .collect();
    // The ratio of the medians needs the baseline's medians first.
    let base: Vec<Option<f64>> = duts
        .iter()
        .find(|d| d.dut == baseline)
        .map(|d| d.goals.iter().map(|g| g.median_fps).collect())
        .unwrap_or_else(|| vec![None; goals.len()]);
    for d in &mut duts {
        for (g, b) in d.goals.iter_mut().zip(&base) {
            g.ratio = match (g.median_fps, b) {
                (Some(a), Some(b)) if *b > 0.0 => Some(a / b),
                _ => None,
            };
        }
    }
    RepeatRow {
        size: size.clone(),
        ip,
        baseline: baseline.to_string(),
        duts,
    }
}

/// Goal `name` over one DUT's rounds (the ratio of medians is left to
/// the caller).
fn over_rounds(name: &str, rounds: &[&Round]) -> RepeatedGoal {
    let of_round: Vec<_> = rounds
        .iter()
        .filter_map(|d| d.goals.iter().find(|g| g.goal == name))
        .collect();
    let fps = spread(of_round.iter().filter_map(|g| g.fps));
    let ratios = spread(of_round.iter().filter_map(|g| g.ratio));
    let bounds = of_round
        .iter()
        .filter(|g| g.fps.is_some() && g.lower_bound)
        .count() as u32;
    RepeatedGoal {
        goal: name.to_string(),
        n: fps.map_or(0, |s| s.n),
        median_fps: fps.map(|s| s.median),
        min_fps: fps.map(|s| s.min),
        max_fps: fps.map(|s| s.max),
        lower_bound: bounds > 0,
        lower_bound_rounds: bounds,
        ratio: None,
        min_ratio: ratios.map(|s| s.min),
        max_ratio: ratios.map(|s| s.max),
    }
}

#[cfg(test)]
mod tests {
    //! The aggregation of repeated runs, on hand-built results.

    use super::*;
    use crate::results::{BenchResults, RunMeta, RunResults, TestResult};
    use crate::settings::{Preset, SearchGoal, Settings};
    use crate::throughput::{GoalResult, ThroughputResult};

    /// A throughput result with an NDR and a PDR figure (`None`: no lower
    /// bound); `bound`: the NDR is a lower bound.
    fn tp(ndr: Option<f64>, pdr: Option<f64>, bound: bool) -> ThroughputResult {
        let goal = |name: &str, fps: Option<f64>, bound: bool| GoalResult {
            goal: SearchGoal::builtin(name, Preset::Quick),
            fps,
            lower_bound: bound,
            tester_limited: bound,
            ..GoalResult::default()
        };
        ThroughputResult {
            max_rate_fps: 1e6,
            goals: vec![goal("ndr", ndr, bound), goal("pdr", pdr, false)],
            ..ThroughputResult::default()
        }
    }

    /// One DUT's run of `round`: 64 B with these figures, IMIX with
    /// `imix` as both goals' figure when given.
    fn run(
        dut: &str,
        round: u32,
        ndr: f64,
        pdr: f64,
        bound: bool,
        imix: Option<f64>,
    ) -> RunResults {
        let mut tests = vec![TestResult::throughput(
            FrameSize::Fixed(64),
            4,
            tp(Some(ndr), Some(pdr), bound),
        )];
        if let Some(f) = imix {
            tests.push(TestResult::throughput(
                "imix".parse().unwrap(),
                4,
                tp(Some(f), Some(f), false),
            ));
        }
        let mut meta = RunMeta {
            round,
            ..RunMeta::default()
        };
        meta.dut.kind = dut.into();
        meta.dut.name = dut.into();
        RunResults {
            meta,
            settings: Settings::default(),
            tests,
        }
    }

    /// Three rounds of `a` and `b`, interleaved as the bench runs them. At
    /// 64 B, a's NDR is 100, 300, 200 (round 2 a lower bound) and b's 50,
    /// 150, 40: medians 200 and 50, so the ratio of the medians is 4, while
    /// the per-round ratios are 2, 2 and 5 (their median, 2, is not what is
    /// reported). IMIX: a has no result in round 3.
    fn three_rounds() -> Vec<RunResults> {
        vec![
            run("a", 1, 100.0, 110.0, false, Some(10.0)),
            run("b", 1, 50.0, 55.0, false, Some(5.0)),
            run("a", 2, 300.0, 330.0, true, Some(30.0)),
            run("b", 2, 150.0, 165.0, false, Some(10.0)),
            run("a", 3, 200.0, 220.0, false, None),
            run("b", 3, 40.0, 44.0, false, Some(8.0)),
        ]
    }

    fn goal<'a>(row: &'a RepeatRow, dut: &str, goal: &str) -> &'a RepeatedGoal {
        row.duts
            .iter()
            .find(|d| d.dut == dut)
            .and_then(|d| d.goals.iter().find(|g| g.goal == goal))
            .unwrap()
    }

    #[test]
    fn medians_and_ranges() {
        let m = |v: &[f64]| spread(v.iter().copied()).unwrap();
        assert_eq!(
            m(&[3.0, 1.0, 2.0]),
            Spread {
                median: 2.0,
                min: 1.0,
                max: 3.0,
                n: 3
            }
        );
        assert_eq!(m(&[4.0, 1.0, 2.0, 10.0]).median, 3.0);
        assert_eq!(m(&[7.0]).median, 7.0);
        assert_eq!(m(&[f64::NAN, 5.0]).n, 1);
        assert_eq!(spread([]), None);
    }

    #[test]
    fn each_dut_gets_its_median_range_and_ratio_from_medians() {
        let r = BenchResults::new(three_rounds());
        assert_eq!(r.rounds(), 3);
        // comparison[]: a row per run, each against the baseline's run of
        // the same round.
        let c = &r.comparison[0];
        assert_eq!(c.baseline, "b");
        let per_round: Vec<(&str, u32, Option<f64>)> = c
            .duts
            .iter()
            .map(|d| (d.dut.as_str(), d.round, d.goals[0].ratio))
            .collect();
        assert_eq!(
            per_round,
            [
                ("a", 1, Some(2.0)),
                ("b", 1, Some(1.0)),
                ("a", 2, Some(2.0)),
                ("b", 2, Some(1.0)),
                ("a", 3, Some(5.0)),
                ("b", 3, Some(1.0)),
            ]
        );
        assert_eq!(r.repeats.len(), 2, "64 and IMIX");
        let row = &r.repeats[0];
        assert_eq!((row.size.to_string(), row.ip), ("64".into(), 4));
        let duts: Vec<(&str, u32)> = row
            .duts
            .iter()
            .map(|d| (d.dut.as_str(), d.rounds))
            .collect();
        assert_eq!(duts, [("a", 3), ("b", 3)]);
        let a = goal(row, "a", "ndr");
        assert_eq!(
            (a.n, a.median_fps, a.min_fps, a.max_fps),
            (3, Some(200.0), Some(100.0), Some(300.0))
        );
        assert_eq!(a.ratio, Some(4.0), "median 200 / median 50");
        assert_eq!((a.min_ratio, a.max_ratio), (Some(2.0), Some(5.0)));
        // The lower bound of round 2 is carried.
        assert!(a.lower_bound);
        assert_eq!(a.lower_bound_rounds, 1);
        let b = goal(row, "b", "ndr");
        assert_eq!((b.median_fps, b.ratio), (Some(50.0), Some(1.0)));
        assert!(!b.lower_bound && b.lower_bound_rounds == 0);
        // The PDR has its own medians: 220 / 55.
        assert_eq!(goal(row, "a", "pdr").ratio, Some(4.0));
        assert!(!goal(row, "a", "pdr").lower_bound);
    }

    #[test]
    fn a_round_missing_a_size_counts_what_there_is() {
        let r = BenchResults::new(three_rounds());
        let imix = &r.repeats[1];
        assert_eq!(imix.size.to_string(), "imix");
        assert_eq!(imix.duts[0].rounds, 3, "a ran three times");
        let a = goal(imix, "a", "ndr");
        // Rounds 1 and 2 only: 10 and 30 (median of two: their mean); the
        // per-round ratios 10/5 and 30/10.
        assert_eq!((a.n, a.median_fps), (2, Some(20.0)));
        assert_eq!((a.min_fps, a.max_fps), (Some(10.0), Some(30.0)));
        assert_eq!((a.min_ratio, a.max_ratio), (Some(2.0), Some(3.0)));
        assert_eq!(a.ratio, Some(20.0 / 8.0), "b's median: 8");
        // A DUT with no result at a size at all: no figure, no ratio.
        let mut runs = three_rounds();
        for r in runs.iter_mut().filter(|r| r.meta.dut.name == "b") {
            r.tests.truncate(1);
        }
        let r = BenchResults::new(runs);
        let b = goal(&r.repeats[1], "b", "ndr");
        assert_eq!((b.n, b.median_fps, b.ratio), (0, None, None));
        let a = goal(&r.repeats[1], "a", "ndr");
        assert_eq!(
            (a.median_fps, a.ratio, a.max_ratio),
            (Some(20.0), None, None)
        );
    }

    #[test]
    fn a_named_baseline_and_single_rounds() {
        let r = BenchResults::with_baseline(three_rounds(), Some("a"));
        let row = &r.repeats[0];
        assert_eq!(row.baseline, "a");
        let b = goal(row, "b", "ndr");
        assert_eq!(b.ratio, Some(0.25));
        assert_eq!((b.min_ratio, b.max_ratio), (Some(0.2), Some(0.5)));
        // Every DUT once: no repeats, and none in the JSON.
        let once = BenchResults::new(three_rounds()[..2].to_vec());
        assert_eq!(once.rounds(), 1);
        assert!(once.repeats.is_empty());
        let j = serde_json::to_value(&once).unwrap();
        assert!(j.get("repeats").is_none(), "{j}");
        // Repeats round-trip through the JSON; the round is in each run.
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["runs"][2]["meta"]["round"], 2);
        let g = &j["repeats"][0]["duts"][1]["goals"][0];
        for f in [
            "median_fps",
            "min_fps",
            "max_fps",
            "n",
            "ratio",
            "min_ratio",
            "max_ratio",
        ] {
            assert!(g[f].is_number(), "{f}: {g}");
        }
        assert!(g["lower_bound"].is_boolean());
        let back: BenchResults = serde_json::from_value(j).unwrap();
        assert_eq!(back.repeats, r.repeats);
    }

    #[test]
    fn the_terminal_shows_medians_ranges_and_ratios() {
        let r = BenchResults::new(vec![
            run("a", 1, 400e3, 400e3, false, None),
            run("b", 1, 100e3, 100e3, false, None),
            run("a", 2, 430e3, 430e3, true, None),
            run("b", 2, 90e3, 90e3, false, None),
        ]);
        let t = crate::tables::comparison_table(&r);
        assert!(t.contains("median of 2 rounds"), "{t}");
        let row = |dut: &str| -> Vec<&str> {
            t.lines()
                .find(|l| l.starts_with("64 v4") && l.split_whitespace().nth(2) == Some(dut))
                .unwrap()
                .split_whitespace()
                .collect()
        };
        // size (2 words), DUT, rounds, NDR, PDR (each median and range), the
        // two ratios (each ratio and range).
        let a = row("a");
        assert_eq!(a[3], "2", "{t}");
        assert_eq!(a[4..6], ["0.4150+", "(0.400-0.430)"], "{t}");
        assert_eq!(a[8..10], ["4.37x", "(4.00-4.78)"], "{t}");
        let b = row("b");
        assert_eq!(b[4..6], ["0.0950", "(0.090-0.100)"], "{t}");
        assert_eq!(b[8..10], ["-", "-"], "the baseline: {t}");
        assert_eq!(b[10..], ["-"], "no cycles measured: {t}");
    }

    /// Each DUT's cycles a packet over its rounds: the median and range of
    /// the rounds that measured them, none when no round did; the
    /// terminal prints them as `median (min-max)`.
    #[test]
    fn cycles_a_packet_over_the_rounds() {
        let round = |dut, fps, cycles| Round {
            dut,
            goals: vec![GoalFigure {
                goal: "ndr",
                fps: Some(fps),
                lower_bound: false,
                ratio: None,
            }],
            cycles_per_packet: cycles,
            x_floor: None,
        };
        let rounds = [
            round("linux", 0.70e6, Some(3300.0)),
            round("tier", 2.1e6, None),
            round("linux", 0.64e6, Some(3600.0)),
            round("tier", 2.2e6, None),
            round("linux", 0.76e6, Some(3000.0)),
            round("tier", 2.0e6, None),
        ];
        let row = aggregate(&FrameSize::Fixed(64), 4, "linux", &rounds);
        let linux = &row.duts[0];
        assert_eq!(
            (
                linux.median_cycles_per_packet,
                linux.min_cycles_per_packet,
                linux.max_cycles_per_packet
            ),
            (Some(3300.0), Some(3000.0), Some(3600.0))
        );
        assert_eq!(crate::tables::cycles_cell(linux), "3300 (3000-3600)");
        let tier = &row.duts[1];
        assert_eq!(tier.median_cycles_per_packet, None);
        assert_eq!(crate::tables::cycles_cell(tier), "-");
        // Absent from the JSON when not measured, read back when present.
        let j = serde_json::to_value(&row).unwrap();
        assert!(
            j["duts"][1].get("median_cycles_per_packet").is_none(),
            "{j}"
        );
        let back: RepeatRow = serde_json::from_value(j).unwrap();
        assert_eq!(back, row);
    }

    /// Multiples of the floor over the rounds: the median and range of
    /// the per-round ratios (not the ratio of medians), the projection
    /// carried; none for a DUT whose rounds have none; the terminal adds
    /// the two columns only when some DUT has them.
    #[test]
    fn floor_ratios_over_the_rounds() {
        let round = |dut, x: Option<(f64, f64, bool)>| Round {
            dut,
            goals: vec![GoalFigure {
                goal: "ndr",
                fps: Some(1e6),
                lower_bound: true,
                ratio: None,
            }],
            cycles_per_packet: None,
            x_floor: x.map(|(c, k, p)| FloorFigures {
                cycles_per_packet: Some(c),
                capacity: Some(k),
                projected: p,
            }),
        };
        let rounds = [
            round("floor", Some((1.0, 1.0, false))),
            round("tier", Some((1.29, 0.71, true))),
            round("linux", None),
            round("floor", Some((1.0, 1.0, false))),
            round("tier", Some((1.06, 0.95, false))),
            round("linux", None),
            round("floor", Some((1.0, 1.0, false))),
            round("tier", Some((1.12, 0.87, false))),
            round("linux", None),
        ];
        let row = aggregate(&FrameSize::Fixed(64), 4, "linux", &rounds);
        let tier = row.duts[1].x_floor.expect("the tier has a floor");
        let c = tier.cycles_per_packet.unwrap();
        assert_eq!((c.median, c.min, c.max, c.n), (1.12, 1.06, 1.29, 3));
        let k = tier.capacity.unwrap();
        assert_eq!((k.median, k.min, k.max), (0.87, 0.71, 0.95));
        assert!(tier.capacity_projected, "round 1's capacity is projected");
        assert!(!row.duts[0].x_floor.unwrap().capacity_projected);
        assert_eq!(row.duts[2].x_floor, None, "linux: no floor figures");
        assert_eq!(
            crate::tables::floor_spread_cell(tier.capacity, true),
            "~x0.87 (0.71-0.95)"
        );
        assert_eq!(crate::tables::floor_spread_cell(None, false), "-");
        // In the JSON (absent where none) and back.
        let j = serde_json::to_value(&row).unwrap();
        assert_eq!(j["duts"][1]["x_floor"]["cycles_per_packet"]["median"], 1.12);
        assert!(j["duts"][2].get("x_floor").is_none(), "{j}");
        let back: RepeatRow = serde_json::from_value(j).unwrap();
        assert_eq!(back, row);
        // The terminal's repeated table: the columns with a floor only.
        let mut r = BenchResults::new(vec![
            run("tier", 1, 2e6, 2e6, true, None),
            run("linux", 1, 0.7e6, 0.7e6, false, None),
            run("tier", 2, 2e6, 2e6, true, None),
            run("linux", 2, 0.6e6, 0.6e6, false, None),
        ]);
        let without = crate::tables::comparison_table(&r);
        assert!(!without.contains("cyc x floor"), "{without}");
        r.repeats[0].duts[0].x_floor = Some(tier);
        let with = crate::tables::comparison_table(&r);
        let line = with
            .lines()
            .find(|l| l.starts_with("64 v4") && l.contains("tier") && l.contains("(0.71-0.95)"))
            .unwrap_or_else(|| panic!("{with}"));
        assert!(
            line.ends_with("x1.12 (1.06-1.29)  ~x0.87 (0.71-0.95)"),
            "{line}"
        );
        assert!(with.contains("cyc x floor"), "{with}");
    }
}
