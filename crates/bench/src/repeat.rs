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
#[derive(Debug, Clone, Copy, PartialEq)]
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

/// One DUT's rounds in a [`RepeatRow`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatedDut {
    /// The DUT's label (the same in every round).
    pub dut: String,
    /// How many rounds ran it.
    pub rounds: u32,
    /// Per goal, in the goals' order.
    pub goals: Vec<RepeatedGoal>,
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
            RepeatedDut {
                dut: label.to_string(),
                rounds: rounds.len() as u32,
                goals: goals.iter().map(|g| over_rounds(g, &rounds)).collect(),
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
mod tests;
