//! RFC 9971's load classification and conditional throughput, for one
//! load and one search goal.
//!
//! Why a module of its own: these two computations are the whole of what
//! the RFC specifies about a load (its appendices A and B); the search
//! around them is free to choose loads and durations. Kept pure, they are
//! tested against the RFC's own worked example (appendix C).

use serde::{Deserialize, Serialize};

use crate::settings::SearchGoal;

/// Durations are compared with this slack, s (a 1 s trial is a 1 s
/// trial whatever the float arithmetic did to it).
const EPS_S: f64 = 1e-9;

/// How a load stands against a goal, from the trials there so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Certain to uphold the goal whatever the rest of the duration sum
    /// brings.
    LowerBound,
    /// Certain to fail it.
    UpperBound,
    /// Neither yet.
    Undecided,
}

/// One trial at a load, as the classification sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrialLoss {
    /// Trial duration, s (decides full-length or short).
    pub duration_s: f64,
    /// Trial effective duration, s (what the sums add up; here equal to
    /// the duration).
    pub effective_s: f64,
    /// Trial loss ratio, 0..1.
    pub loss_ratio: f64,
}

/// The four duration sums of a load for a goal (RFC 9971 appendix A's
/// inputs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadSums {
    /// Full-length low-loss trials, s.
    pub full_low_s: f64,
    /// Full-length high-loss trials, s.
    pub full_high_s: f64,
    /// Short low-loss trials, s.
    pub short_low_s: f64,
    /// Short high-loss trials, s.
    pub short_high_s: f64,
}

/// Whether a trial is high-loss for the goal: its loss ratio above the
/// goal loss ratio.
pub fn high_loss(goal: &SearchGoal, loss_ratio: f64) -> bool {
    loss_ratio > goal.loss_pct / 100.0
}

/// Whether a trial is full-length for the goal: at least the goal final
/// trial duration.
pub fn full_length(goal: &SearchGoal, duration_s: f64) -> bool {
    duration_s + EPS_S >= goal.final_trial_seconds
}

impl LoadSums {
    /// The sums of `trials` for `goal`.
    pub fn of(goal: &SearchGoal, trials: impl IntoIterator<Item = TrialLoss>) -> LoadSums {
        let mut s = LoadSums::default();
        for t in trials {
            let sum = match (
                full_length(goal, t.duration_s),
                high_loss(goal, t.loss_ratio),
            ) {
                (true, false) => &mut s.full_low_s,
                (true, true) => &mut s.full_high_s,
                (false, false) => &mut s.short_low_s,
                (false, true) => &mut s.short_high_s,
            };
            *sum += t.effective_s;
        }
        s
    }

    /// RFC 9971 appendix A: short low-loss trials balance short high-loss
    /// ones by the exceed coefficient, what remains counts as full-length
    /// high-loss; the load is a lower bound when even the pessimistic
    /// reading (every missing second of the duration sum high-loss) keeps
    /// the high-loss share within the exceed ratio, an upper bound when
    /// even the optimistic one (every missing second low-loss) does not.
    pub fn classify(&self, goal: &SearchGoal) -> Class {
        let exceed = goal.exceed_pct / 100.0;
        let coefficient = exceed / (1.0 - exceed);
        let balancing = self.short_low_s * coefficient;
        let positive_excess = (self.short_high_s - balancing).max(0.0);
        let effect_high = self.full_high_s + positive_excess;
        let effect_full = self.full_low_s + effect_high;
        let effect_whole = effect_full.max(goal.duration_sum_seconds);
        let quantile = effect_whole * exceed;
        let pessimistic_high = effect_whole - self.full_low_s;
        let pessimistic_is_lower = pessimistic_high <= quantile + EPS_S;
        let optimistic_is_lower = effect_high <= quantile + EPS_S;
        match (optimistic_is_lower, pessimistic_is_lower) {
            (true, true) => Class::LowerBound,
            (false, false) => Class::UpperBound,
            _ => Class::Undecided,
        }
    }
}

/// RFC 9971 appendix B: the forwarding rate at `load` that the goal's
/// exceed ratio guarantees: the full-length trials sorted by loss ratio,
/// the loss ratio of the trial where the non-exceeding share of the
/// duration sum runs out (1 if it never does), applied to the load.
/// Returns `(conditional throughput, that loss ratio)`; `None` without a
/// full-length trial.
pub fn conditional_throughput(
    goal: &SearchGoal,
    load: f64,
    trials: impl IntoIterator<Item = TrialLoss>,
) -> Option<(f64, f64)> {
    let mut full: Vec<TrialLoss> = trials
        .into_iter()
        .filter(|t| full_length(goal, t.duration_s))
        .collect();
    if full.is_empty() {
        return None;
    }
    full.sort_by(|a, b| a.loss_ratio.total_cmp(&b.loss_ratio));
    let full_s: f64 = full.iter().map(|t| t.effective_s).sum();
    let whole = full_s.max(goal.duration_sum_seconds);
    let mut remaining = whole * (1.0 - goal.exceed_pct / 100.0);
    let mut quantile: Option<f64> = None;
    for t in &full {
        if quantile.is_none() || remaining > EPS_S {
            quantile = Some(t.loss_ratio);
            remaining -= t.effective_s;
        } else {
            break;
        }
    }
    let q = if remaining > EPS_S {
        1.0
    } else {
        quantile.expect("at least one trial")
    };
    Some((load * (1.0 - q), q))
}

#[cfg(test)]
mod tests {
    //! RFC 9971 appendix C ("Example Search"): four goals, six points in
    //! time of trials at one load of 1 Mfps, and the classification and
    //! conditional throughput the RFC computes for each.
    use super::*;

    fn goal(code: &str) -> SearchGoal {
        SearchGoal::from_code(code).unwrap()
    }

    /// The RFC's goals: RFC2544, TST009, "1s final", "20% exceed".
    fn goals() -> [SearchGoal; 4] {
        [
            goal("60f60d0l0e"),
            goal("60f120d0l50e"),
            goal("1f120d0.5l50e"),
            goal("60f60d0.5l20e"),
        ]
    }

    /// `n` trials of `secs` s at `loss_pct` %.
    fn trials(n: usize, secs: f64, loss_pct: f64) -> Vec<TrialLoss> {
        vec![
            TrialLoss {
                duration_s: secs,
                effective_s: secs,
                loss_ratio: loss_pct / 100.0,
            };
            n
        ]
    }

    /// The RFC's six points in time, each with the classification of
    /// every goal (its tables' last rows).
    ///
    /// One deviation: for the "20% exceed" goal at points 5 and 6 the
    /// RFC's tables say "Lower Bound" while listing exceed ratios of
    /// 42.857 % and 27.273 %, both above the goal's 20 %; appendix A's
    /// code (normative, and what the tables' own sums give) makes that
    /// an upper bound, so this test follows the code there.
    #[test]
    fn the_rfcs_example_search() {
        use Class::{LowerBound as L, Undecided as U, UpperBound as H};
        let points: [(Vec<TrialLoss>, [Class; 4]); 6] = [
            (trials(59, 1.0, 0.0), [U, U, U, U]),
            (
                [trials(59, 1.0, 0.0), trials(1, 1.0, 1.0)].concat(),
                [H, U, U, U],
            ),
            (
                [trials(59, 1.0, 0.0), trials(60, 1.0, 1.0)].concat(),
                [H, U, U, H],
            ),
            (
                [trials(60, 1.0, 0.0), trials(60, 1.0, 1.0)].concat(),
                [H, U, L, H],
            ),
            (
                [
                    trials(60, 1.0, 0.0),
                    trials(60, 1.0, 1.0),
                    trials(1, 60.0, 0.1),
                ]
                .concat(),
                [H, U, L, H],
            ),
            (
                [
                    trials(60, 1.0, 0.0),
                    trials(60, 1.0, 1.0),
                    trials(1, 60.0, 0.1),
                    trials(1, 60.0, 0.0),
                ]
                .concat(),
                [H, L, L, H],
            ),
        ];
        for (i, (t, want)) in points.iter().enumerate() {
            for (g, want) in goals().iter().zip(want) {
                let got = LoadSums::of(g, t.iter().copied()).classify(g);
                assert_eq!(got, *want, "point {}, goal {}", i + 1, g.code());
            }
        }
    }

    /// Point 5's sums for the "20% exceed" goal, as the RFC's table lists
    /// them (full-length low 60 s, short high and low 60 s each), and the
    /// ratio the table gives: 45 s effective high-loss of 105 s.
    #[test]
    fn the_rfcs_sums_at_point_5() {
        let g = goal("60f60d0.5l20e");
        let t = [
            trials(60, 1.0, 0.0),
            trials(60, 1.0, 1.0),
            trials(1, 60.0, 0.1),
        ]
        .concat();
        let s = LoadSums::of(&g, t);
        assert_eq!(
            s,
            LoadSums {
                full_low_s: 60.0,
                full_high_s: 0.0,
                short_low_s: 60.0,
                short_high_s: 60.0
            }
        );
        // Balancing 60 x 0.25 = 15 s, positive excess 45 s, effective
        // whole 105 s: 45 / 105 = 42.857 % of it high-loss, above 20 %.
        assert_eq!(s.classify(&g), Class::UpperBound);
    }

    /// Appendix C's conditional throughput at point 6: TST009 and "1s
    /// final" 1 Mfps, "20% exceed" 999 kfps.
    #[test]
    fn the_rfcs_conditional_throughputs() {
        let t = [
            trials(60, 1.0, 0.0),
            trials(60, 1.0, 1.0),
            trials(1, 60.0, 0.1),
            trials(1, 60.0, 0.0),
        ]
        .concat();
        let [_, tst009, one_s, twenty] = goals();
        let ct = |g: &SearchGoal| conditional_throughput(g, 1e6, t.iter().copied()).unwrap();
        assert_eq!(ct(&tst009), (1e6, 0.0));
        assert_eq!(ct(&one_s), (1e6, 0.0));
        let (fps, q) = ct(&twenty);
        assert!(
            (fps - 999_000.0).abs() < 1e-6 && (q - 0.001).abs() < 1e-12,
            "{fps} {q}"
        );
        // No full-length trial: no conditional throughput.
        assert_eq!(
            conditional_throughput(&tst009, 1e6, trials(5, 1.0, 0.0)),
            None
        );
        // Too few full-length trials for the duration sum: the missing
        // time counts as total loss.
        let (fps, q) = conditional_throughput(&tst009, 1e6, trials(1, 60.0, 0.0)).unwrap();
        assert_eq!(
            (fps, q),
            (1e6, 0.0),
            "60 s of 120 s at 50 % exceed suffices"
        );
        let g = goal("1f21d0l50e");
        let (fps, q) = conditional_throughput(&g, 1e6, trials(3, 1.0, 0.0)).unwrap();
        assert_eq!((fps, q), (0.0, 1.0), "3 s of the 10.5 s needed");
    }

    /// With a zero exceed ratio one high-loss trial of any length makes
    /// an upper bound, and only the full sum of low-loss full-length
    /// trials a lower bound (RFC 2544's own throughput).
    #[test]
    fn zero_exceed_ratio_is_rfc2544() {
        let g = goal("60f60d0l0e");
        let c = |t: Vec<TrialLoss>| LoadSums::of(&g, t).classify(&g);
        assert_eq!(c(trials(1, 0.5, 0.001)), Class::UpperBound);
        assert_eq!(c(trials(30, 1.0, 0.0)), Class::Undecided);
        assert_eq!(c(trials(1, 60.0, 0.0)), Class::LowerBound);
    }
}
