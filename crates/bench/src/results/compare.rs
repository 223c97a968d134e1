//! The comparison of the runs of one file: each DUT's throughput per
//! size and goal beside the baseline's, its cycles a packet and its figures
//! against the floor DUT ([`super::BenchResults::comparison`]).

use serde::{Deserialize, Serialize};

use super::{dut_busy_pct, projected, Projection, RunResults, TestResult};
use crate::repeat::{self, RepeatRow};
use crate::search::TrialRecord;
use crate::settings::TestKind;
use crate::sizes::FrameSize;

/// One size and IP version of [`super::BenchResults::comparison`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRow {
    /// Frame size.
    pub size: FrameSize,
    /// 4 or 6.
    pub ip: u8,
    /// The DUT the ratios divide by (its label): the last run's unless
    /// a baseline was named. Each run divides by the baseline's run of the
    /// same round.
    pub baseline: String,
    /// One entry per run, in run order.
    pub duts: Vec<ComparedDut>,
}

impl ComparisonRow {
    /// The goals' names, in their order, from the first run with any
    /// goal (the terminal table and the report head their columns so).
    pub fn goal_names(&self) -> Vec<String> {
        self.duts
            .iter()
            .find(|d| !d.goals.is_empty())
            .map(|d| d.goals.iter().map(|g| g.goal.clone()).collect())
            .unwrap_or_default()
    }

    /// Each DUT's median and range over its rounds at this size.
    pub fn repeats(&self) -> RepeatRow {
        let rounds: Vec<repeat::Round> = self
            .duts
            .iter()
            .map(|d| repeat::Round {
                dut: &d.dut,
                goals: d
                    .goals
                    .iter()
                    .map(|g| repeat::GoalFigure {
                        goal: &g.goal,
                        fps: g.fps,
                        lower_bound: g.lower_bound,
                        ratio: g.ratio,
                    })
                    .collect(),
                cycles_per_packet: d.cycles_per_packet,
                x_floor: d.x_floor.map(|f| repeat::FloorFigures {
                    cycles_per_packet: f.cycles_per_packet,
                    capacity: f.capacity,
                    projected: f.projected,
                }),
            })
            .collect();
        repeat::aggregate(&self.size, self.ip, &self.baseline, &rounds)
    }
}

/// One run's throughput in a [`ComparisonRow`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparedDut {
    /// `meta.dut.label()` of the run.
    pub dut: String,
    /// `meta.round()` of the run.
    #[serde(default)]
    pub round: u32,
    /// Per goal, in the goals' order.
    pub goals: Vec<ComparedGoal>,
    /// Busy cycles of the DUT's CPUs per forwarded packet in the trial
    /// carrying the first goal's lower bound
    /// ([`dut_cycles_at_throughput`]).
    pub cycles_per_packet: Option<f64>,
    /// Busy cycles of the DUT's CPUs per forwarded packet at the highest
    /// load the search offered ([`dut_cycles_at_top`]): the same load for
    /// every DUT of a run, which the floor ratio needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_at_top: Option<f64>,
    /// Projected capacity at that load ([`capacity_at_top`]), frames/s
    /// per port: what the floor ratio's capacity compares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_at_top: Option<f64>,
    /// The run's [`Projection`], when its first goal is a lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projection: Option<Projection>,
    /// This run against the floor DUT's run of the same round (`--dut
    /// floor`), when the results have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_floor: Option<FloorRatios>,
}

/// A run's figures as multiples of the floor's (`--dut floor`: the XDP
/// redirect that does nothing else, the wire's own cost), same size, IP
/// version and round. Each is `None` when either figure is missing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct FloorRatios {
    /// First goal's conditional throughput / the floor's.
    pub fps: Option<f64>,
    /// Cycles per packet at the highest load offered / the floor's at
    /// the same load ([`ComparedDut::cycles_at_top`]). Why not at each
    /// one's throughput: a floor that lost a frame in a host stall at the
    /// top ends its search lower, and cycles a packet at a lower load
    /// are higher (fewer frames a wake-up), so the ratio compared unlike
    /// loads (1.23x the floor in one round, 1.00-1.04x in the two beside).
    pub cycles_per_packet: Option<f64>,
    /// Capacity / the floor's: both projected at the highest load
    /// offered ([`ComparedDut::capacity_at_top`]) when both have the
    /// soakers' busy share there; else each the projected one when there
    /// is a projection, else the measured rate. A projection when either
    /// is. Why the same load for both: a tier projected from the top
    /// against a floor whose measured rate a host stall had cut set a
    /// projection beside a measurement (1.80-3.18x the floor with the
    /// tier's cycles 0.98-1.22x the floor's).
    pub capacity: Option<f64>,
    /// `capacity` rests on at least one projection.
    pub projected: bool,
}

impl FloorRatios {
    /// `x` against `floor` (both of the same size, IP version and round).
    pub fn of(x: &ComparedDut, floor: &ComparedDut) -> FloorRatios {
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        let fps = |d: &ComparedDut| d.goals.first().and_then(|g| g.fps);
        let capacity = |d: &ComparedDut| d.projection.map(|p| p.projected_fps).or(fps(d));
        let (capacity, projected) = match (x.capacity_at_top, floor.capacity_at_top) {
            (Some(a), Some(b)) => (ratio(Some(a), Some(b)), true),
            _ => (
                ratio(capacity(x), capacity(floor)),
                x.projection.is_some() || floor.projection.is_some(),
            ),
        };
        FloorRatios {
            fps: ratio(fps(x), fps(floor)),
            cycles_per_packet: ratio(x.cycles_at_top, floor.cycles_at_top),
            capacity,
            projected,
        }
    }
}

/// One goal of one run in a [`ComparedDut`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparedGoal {
    /// The goal's name.
    pub goal: String,
    /// Its conditional throughput, frames/s per port.
    pub fps: Option<f64>,
    /// The rate is a lower bound.
    pub lower_bound: bool,
    /// `fps` / the `fps` of the baseline's run in the same round, for
    /// the same goal (null when either is missing).
    pub ratio: Option<f64>,
}

/// Every (size, IP version) with a throughput result in any run, in the
/// order first seen, with each run's figures per goal and their ratios
/// to those of the baseline's run in the same round.
pub(super) fn compare(runs: &[RunResults], baseline: Option<&str>) -> Vec<ComparisonRow> {
    let mut keys: Vec<(FrameSize, u8)> = Vec::new();
    for r in runs {
        for t in r.tests.iter().filter(|t| t.test == TestKind::Throughput) {
            if !keys.iter().any(|(s, ip)| *s == t.size && *ip == t.ip) {
                keys.push((t.size.clone(), t.ip));
            }
        }
    }
    let base = baseline
        .and_then(|b| runs.iter().rposition(|r| r.meta.dut.label() == b))
        .unwrap_or(runs.len() - 1);
    let base_label = runs[base].meta.dut.label();
    let base_of = |r: &RunResults| {
        runs.iter()
            .rfind(|b| b.meta.dut.label() == base_label && b.meta.round() == r.meta.round())
    };
    keys.into_iter()
        .map(|(size, ip)| {
            let test = |r: &'_ RunResults| -> Option<TestResult> {
                r.tests
                    .iter()
                    .find(|t| t.test == TestKind::Throughput && t.size == size && t.ip == ip)
                    .cloned()
            };
            let duts = runs
                .iter()
                .map(|r| {
                    let base_test = base_of(r).and_then(test);
                    let base_sum = base_test.as_ref().and_then(TestResult::throughput_summary);
                    let t = test(r);
                    let s = t.as_ref().and_then(TestResult::throughput_summary);
                    let goals = s
                        .map(|s| {
                            s.goals
                                .iter()
                                .map(|g| {
                                    let b =
                                        base_sum.and_then(|b| b.goal(g.name())).and_then(|b| b.fps);
                                    ComparedGoal {
                                        goal: g.name().to_string(),
                                        fps: g.fps,
                                        lower_bound: g.lower_bound,
                                        ratio: match (g.fps, b) {
                                            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                                            _ => None,
                                        },
                                    }
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    ComparedDut {
                        dut: r.meta.dut.label().to_string(),
                        round: r.meta.round(),
                        goals,
                        cycles_per_packet: t.as_ref().and_then(dut_cycles_at_throughput),
                        cycles_at_top: t.as_ref().and_then(dut_cycles_at_top),
                        capacity_at_top: t.as_ref().and_then(capacity_at_top),
                        projection: s.and_then(|s| s.projection),
                        x_floor: None,
                    }
                })
                .collect();
            let duts = against_floor(runs, duts);
            ComparisonRow {
                size,
                ip,
                baseline: base_label.to_string(),
                duts,
            }
        })
        .collect()
}

/// Each run's [`FloorRatios`] against the floor run (`kind` `floor`) of
/// its round, when there is one.
fn against_floor(runs: &[RunResults], mut duts: Vec<ComparedDut>) -> Vec<ComparedDut> {
    let floors: Vec<(u32, ComparedDut)> = runs
        .iter()
        .zip(&duts)
        .filter(|(r, _)| r.meta.dut.kind == FLOOR_KIND)
        .map(|(r, d)| (r.meta.round(), d.clone()))
        .collect();
    for d in &mut duts {
        if let Some((_, f)) = floors.iter().find(|(round, _)| *round == d.round) {
            d.x_floor = Some(FloorRatios::of(d, f));
        }
    }
    duts
}

/// The kind of the floor DUT (`--dut floor`).
pub const FLOOR_KIND: &str = "floor";

/// The trial that carries the first goal's lower bound (else the
/// highest-rate loss-free trial): where the DUT's figures at its
/// throughput (CPU, cycles, interrupts) come from.
pub fn trial_at_throughput(t: &TestResult) -> Option<&TrialRecord> {
    let first = t
        .throughput_summary()
        .and_then(|s| s.first())
        .map(|g| g.name().to_string());
    let carrier = first.and_then(|name| {
        t.trials
            .iter()
            .find(|tr| !tr.discarded && tr.bound_for.contains(&name))
    });
    carrier.or_else(|| {
        t.trials
            .iter()
            .filter(|tr| !tr.discarded && tr.outcome.lost == 0 && tr.outcome.sent > 0)
            .max_by(|a, b| a.spec.rate_fps.total_cmp(&b.spec.rate_fps))
    })
}

/// DUT cycles per forwarded packet (`dut_stats.cpu.soak_cycles_per_packet`,
/// else `dut_cycles_per_packet`, see `dut::probe`) in the trial of a
/// throughput test whose rate is the NDR (else the highest-rate loss-free
/// trial): the DUT's cost at its throughput.
pub fn dut_cycles_at_throughput(t: &TestResult) -> Option<f64> {
    trial_at_throughput(t)
        .and_then(|tr| tr.outcome.dut_stats.as_ref())
        .and_then(|d| d.cycles_per_packet())
}

/// The median of `figure` over the trials at the highest rate a
/// throughput test offered (the search's first trial and any it ran
/// again there; the upper one of two). Every DUT of a run starts its
/// search at the same maximum, so this is one load for all of them.
fn median_at_top(t: &TestResult, figure: impl Fn(&TrialRecord) -> Option<f64>) -> Option<f64> {
    let live = || t.trials.iter().filter(|tr| !tr.discarded);
    let top = live().map(|tr| tr.spec.rate_fps).reduce(f64::max)?;
    let mut v: Vec<f64> = live()
        .filter(|tr| tr.spec.rate_fps == top)
        .filter_map(figure)
        .collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// DUT cycles per forwarded packet at the highest rate a throughput test
/// offered ([`median_at_top`]).
pub fn dut_cycles_at_top(t: &TestResult) -> Option<f64> {
    median_at_top(t, |tr| tr.outcome.dut_stats.as_ref()?.cycles_per_packet())
}

/// The capacity projected from the trials at the highest rate a
/// throughput test offered ([`median_at_top`]): per trial, the rate
/// forwarded per port (offered x received / sent) over the DUT CPUs' busy
/// share while sending ([`dut_busy_pct`], soakers only), as
/// [`super::projection`] projects.
pub fn capacity_at_top(t: &TestResult) -> Option<f64> {
    median_at_top(t, |tr| {
        let o = &tr.outcome;
        let busy = dut_busy_pct(tr).filter(|_| o.sent > 0)?;
        projected(tr.spec.rate_fps * o.received as f64 / o.sent as f64, busy)
    })
}
