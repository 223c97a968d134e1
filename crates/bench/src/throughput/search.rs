//! The search: which load to measure next, for how long, and when a goal
//! is done (RFC 9971 leaves all three to the implementation; only the
//! classification in [`super::classify`] is specified).
//!
//! * **Goals in order, one set of trials.** Every trial counts for every
//!   goal; the search serves the first goal not yet done, so later goals
//!   start from the loads the earlier ones measured.
//! * **Short trials are windows of one stream.** A trial shorter than
//!   [`ThroughputConfig::stream_seconds`] is measured with the others of
//!   its stream at the same load ([`super::window`]); below, "a trial"
//!   is then the whole stream. A window whose verdict the tester's
//!   receive drops could decide does not count (spoiled) instead of
//!   making the whole stream the tester's.
//! * **One trial per new load, the duration sum where it decides.** A
//!   load is explored with one trial; the goal's provisional bounds are
//!   the lowest load whose trials lean high-loss (more than the exceed
//!   ratio of their time) and the highest one below it. Once those lie
//!   within the goal width they are measured again, the smaller first
//!   (RFC 9971 section 1.1: measure smaller candidates first), at the
//!   final trial duration, until the goal classifies them; one that then
//!   leans the other way moves the bounds and the exploration goes on.
//! * **New loads.** First the maximum load; with only an upper bound, the
//!   forwarding rate measured there (RFC 2285's FRMOL, as MLRsearch
//!   starts), then steps down that double from twice the goal width (at most
//!   halving the load, never below [`MIN_RATE_FPS`]); with both bounds,
//!   steps away from the bound decided last, doubling, until the interval
//!   is within twice the step, then bisection. New loads use the goal's
//!   initial trial duration while the interval is wider than four goal
//!   widths, the final one after.
//! * **Done** when the bounds lie within the goal width, when the
//!   maximum load is a lower bound, or when the minimum load is an upper
//!   bound; [`MAX_TRIALS`] ends a search whose DUT answers at random.

use anyhow::{bail, Result};

use super::classify::{conditional_throughput, full_length, high_loss, TrialLoss};
use super::*;
use crate::search::{run_checked, Trial, TrialOutcome, TrialSpec};
use crate::sizes::{l2_bps, wire_bps};

/// A counted trial as the search sees it (a whole stream, or one of its
/// windows).
#[derive(Debug, Clone)]
struct Measured {
    /// The intended load.
    load: f64,
    duration_s: f64,
    sent: u64,
    lost: u64,
    /// Of `lost`, what the tester's receive side dropped.
    tester_dropped: u64,
    /// The rate the tester achieved (per port, as `load`).
    achieved: f64,
    /// The tester could not hold the load (after the repeats).
    limited: bool,
    /// The load was offered as asked (`TrialOutcome::load_held`): a limit
    /// then only blurs the count by `tester_dropped` frames.
    held: bool,
    /// Its index in the records (shared by the windows of a stream).
    record: usize,
    /// One window of a stream: when its verdict hinges on the tester it
    /// does not count (it is spoiled) instead of making its load the
    /// tester's.
    window: bool,
}

impl Measured {
    fn ratio(&self, lost: u64) -> f64 {
        if self.sent == 0 {
            1.0
        } else {
            lost as f64 / self.sent as f64
        }
    }

    /// The trial as `goal` counts it, and whether it marks its load as
    /// the tester's: a tester-limited trial counts as high-loss (loss
    /// ratio 1) unless the DUT's own loss already made it high-loss, or
    /// the load was held and even every frame the tester dropped counted
    /// against the DUT leaves it low-loss.
    fn for_goal(&self, goal: &SearchGoal) -> (TrialLoss, bool) {
        let tester = self.limited && hinges_on_tester(goal, self);
        let loss_ratio = if tester { 1.0 } else { self.ratio(self.lost) };
        (
            TrialLoss {
                duration_s: self.duration_s,
                effective_s: self.duration_s,
                loss_ratio,
            },
            tester,
        )
    }
}

/// One load as a goal sees it now.
#[derive(Debug, Clone)]
struct Load {
    fps: f64,
    class: Class,
    sums: LoadSums,
    trials: u32,
    /// Windows that did not count: the tester's drops could decide them.
    spoiled: u32,
    tester: bool,
}

impl Load {
    /// Decided loads by their class; an undecided one by its trials: more
    /// than the exceed ratio of its time high-loss.
    fn leans_high(&self, goal: &SearchGoal) -> bool {
        match self.class {
            Class::UpperBound => true,
            Class::LowerBound => false,
            Class::Undecided => {
                let s = &self.sums;
                let high = s.full_high_s + s.short_high_s;
                let all = high + s.full_low_s + s.short_low_s;
                high > goal.exceed_pct / 100.0 * all + 1e-9
            }
        }
    }
}

/// A goal's loads (by rate) and its relevant bounds (indices).
#[derive(Debug)]
struct View {
    loads: Vec<Load>,
    upper: Option<usize>,
    lower: Option<usize>,
}

impl View {
    fn fps(&self, i: Option<usize>) -> Option<f64> {
        i.map(|i| self.loads[i].fps)
    }
}

/// Whether a stream passed for `goal` and what it said, in words: a whole
/// stream by its loss; a stream of windows when at most the exceed ratio
/// of its counted windows were high-loss (as a load leans,
/// [`Load::leans_high`]), spoiled ones not counted.
fn verdict(goal: &SearchGoal, trials: &[Measured]) -> (bool, String) {
    let (mut high, mut high_s, mut all_s, mut spoiled) = (0, 0.0, 0.0, 0);
    for m in trials {
        let (t, tester) = m.for_goal(goal);
        if tester {
            if !m.window {
                return (false, "tester-limited".into());
            }
            spoiled += 1;
            continue;
        }
        all_s += t.duration_s;
        if high_loss(goal, t.loss_ratio) {
            high += 1;
            high_s += t.duration_s;
        }
    }
    let passed = all_s > 0.0
        && if trials.len() == 1 {
            high == 0
        } else {
            high_s <= goal.exceed_pct / 100.0 * all_s + 1e-9
        };
    let what = match trials.len() {
        1 if passed => "low loss".to_string(),
        1 => "high loss".to_string(),
        n if spoiled > 0 => {
            format!("{high} of {n} windows high loss, {spoiled} spoiled by the tester")
        }
        n => format!("{high} of {n} windows high loss"),
    };
    (passed, what)
}

/// Whether the tester's failure in a trial could change `goal`'s verdict
/// on it: not when the DUT's own loss (`lost - tester_dropped`) is already
/// high, nor when the load was held and the whole loss is still low (the
/// DUT's lies between the two). Why: a kernel DUT that catches up after a
/// stall bursts its backlog into the tester's ring, and the few frames
/// that overflow there made every such trial the tester's, ending PDR
/// searches at 0.48-0.5 Mpps as "tester-limited" though the trials' whole
/// loss was a tenth of the goal's.
fn hinges_on_tester(goal: &SearchGoal, m: &Measured) -> bool {
    let dut_alone = m.ratio(m.lost.saturating_sub(m.tester_dropped));
    !high_loss(goal, dut_alone) && (!m.held || high_loss(goal, m.ratio(m.lost)))
}

fn same_load(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(1.0)
}

struct Search<'a> {
    cfg: &'a ThroughputConfig,
    trial: &'a mut dyn Trial,
    min: f64,
    measured: Vec<Measured>,
    records: Vec<TrialRecord>,
    /// Streams measured and kept (one trial, or its windows).
    streams: usize,
    repeats: u32,
    /// Per goal: the current external step, relative to the load.
    step: Vec<f64>,
}

impl Search<'_> {
    fn view(&self, goal: &SearchGoal) -> View {
        let mut loads: Vec<Load> = Vec::new();
        /// One load's counted trials as they gather.
        struct Gathered {
            fps: f64,
            trials: Vec<TrialLoss>,
            tester: bool,
            spoiled: u32,
        }
        let mut by_load: Vec<Gathered> = Vec::new();
        for m in &self.measured {
            let (t, tester) = m.for_goal(goal);
            let i = match by_load.iter().position(|g| same_load(g.fps, m.load)) {
                Some(i) => i,
                None => {
                    by_load.push(Gathered {
                        fps: m.load,
                        trials: Vec::new(),
                        tester: false,
                        spoiled: 0,
                    });
                    by_load.len() - 1
                }
            };
            let g = &mut by_load[i];
            if m.window && tester {
                g.spoiled += 1;
                continue;
            }
            g.trials.push(t);
            g.tester |= tester;
        }
        for Gathered {
            fps,
            trials,
            tester,
            spoiled,
        } in by_load
        {
            let sums = LoadSums::of(goal, trials.iter().copied());
            // A load the tester could not hold (after the repeats) is
            // beyond this tester: an upper bound, flagged as the tester's.
            let class = if tester {
                Class::UpperBound
            } else {
                sums.classify(goal)
            };
            loads.push(Load {
                fps,
                class,
                sums,
                trials: trials.len() as u32,
                spoiled,
                tester,
            });
        }
        loads.sort_by(|a, b| a.fps.total_cmp(&b.fps));
        let upper = loads.iter().position(|l| l.class == Class::UpperBound);
        let below = upper.unwrap_or(loads.len());
        let lower = (0..below)
            .rev()
            .find(|&i| loads[i].class == Class::LowerBound);
        View {
            loads,
            upper,
            lower,
        }
    }

    /// Whether the goal needs no more trials.
    fn done(&self, goal: &SearchGoal, v: &View) -> bool {
        let max = self.cfg.max_rate_fps;
        match (v.fps(v.lower), v.fps(v.upper)) {
            (Some(lo), Some(hi)) => hi - lo <= goal.width_pct / 100.0 * hi * (1.0 + 1e-9),
            (Some(lo), None) => same_load(lo, max),
            (None, Some(hi)) => hi <= self.min * (1.0 + 1e-9),
            (None, None) => false,
        }
    }

    /// The next trial for goal `gi`: `(load, duration s, purpose)`.
    ///
    /// Loads are explored with one trial each, by where their trials
    /// lean (high-loss for more than the exceed ratio of their time, or
    /// not): the lowest load leaning high and the highest below it are the
    /// goal's provisional bounds. Once those lie within the goal width
    /// they are measured again, the smaller first, until the goal
    /// classifies them; a load that then leans the other way moves the
    /// provisional bounds and the exploration goes on. So a load far from
    /// the result costs one trial, and only the two that end up as the
    /// relevant bounds get the goal's duration sum.
    fn next(&mut self, gi: usize) -> Option<(f64, f64, &'static str)> {
        let cfg = self.cfg;
        let goal = &cfg.goals[gi];
        let max = cfg.max_rate_fps;
        if self.measured.is_empty() {
            return Some((max, goal.initial_trial_seconds, "search"));
        }
        let v = self.view(goal);
        if self.done(goal, &v) {
            return None;
        }
        let w = goal.width_pct / 100.0;
        let loads = &v.loads;
        let upper = loads.iter().position(|l| l.leans_high(goal));
        // Every load below the lowest one leaning high leans low.
        let lower = upper.unwrap_or(loads.len()).checked_sub(1);
        let confirm = |i: usize| {
            (loads[i].class == Class::Undecided).then_some((
                loads[i].fps,
                goal.final_trial_seconds,
                "classify",
            ))
        };
        let narrow = |lo: f64, hi: f64| hi - lo <= w * hi * (1.0 + 1e-9);
        match (lower, upper) {
            (Some(l), Some(u)) if narrow(loads[l].fps, loads[u].fps) => {
                return confirm(l).or_else(|| confirm(u));
            }
            (Some(l), None) if same_load(loads[l].fps, max) => return confirm(l),
            (None, Some(u)) if loads[u].fps <= self.min * (1.0 + 1e-9) => return confirm(u),
            _ => {}
        }
        let step = &mut self.step[gi];
        let load = match (lower, upper) {
            (None, Some(u)) => {
                let up = &loads[u];
                // Once, from the maximum load: the forwarding rate measured
                // there (RFC 2285's FRMOL), where MLRsearch starts. Also
                // when the tester limited that trial (at its maximum it
                // usually does): the rate it achieved times the share that
                // came back is still the most the DUT forwarded (the load
                // asked times that share would overstate it when the
                // generator fell behind). Only a starting point: the
                // goals' bounds come from the trials that follow.
                let fwd: f64 = self
                    .measured
                    .iter()
                    .filter(|m| same_load(m.load, up.fps))
                    .map(|m| {
                        // A tester that does not say what it achieved: the load.
                        let tx = if m.achieved > 0.0 {
                            m.achieved.min(up.fps)
                        } else {
                            up.fps
                        };
                        tx * (1.0 - m.ratio(m.lost))
                    })
                    .sum::<f64>()
                    / up.trials.max(1) as f64;
                let guess = fwd.max(self.min);
                if same_load(up.fps, max) && guess < up.fps * (1.0 - w) {
                    guess
                } else {
                    let c = (up.fps * (1.0 - *step)).max(up.fps / 2.0).max(self.min);
                    *step *= 2.0;
                    c
                }
            }
            (Some(l), None) => {
                let c = (loads[l].fps * (1.0 + *step)).min(max);
                *step *= 2.0;
                c
            }
            (Some(l), Some(u)) => {
                let (lo, hi) = (loads[l].fps, loads[u].fps);
                let width = (hi - lo) / hi;
                if width <= 2.0 * *step {
                    *step = (width / 2.0).max(w);
                    (lo + hi) / 2.0
                } else {
                    // Away from the bound the last trial landed on.
                    let last = self.measured.last().map_or(hi, |m| m.load);
                    let c = if same_load(last, lo) {
                        lo + *step * hi
                    } else {
                        hi * (1.0 - *step)
                    };
                    *step *= 2.0;
                    c
                }
            }
            (None, None) => max,
        };
        let wide = match (lower, upper) {
            (Some(l), Some(u)) => loads[u].fps - loads[l].fps > 4.0 * w * loads[u].fps,
            _ => true,
        };
        let d = if wide {
            goal.initial_trial_seconds
        } else {
            goal.final_trial_seconds
        };
        Some((load, d, "search"))
    }

    /// Run a trial (the windows of one stream when it is shorter than
    /// the stream length, [`super::window`]), again while the tester
    /// spoiled it in a way that could change some goal's verdict (at most
    /// [`MAX_REPEATS`] times).
    fn measure(&mut self, load: f64, duration_s: f64, purpose: String, gi: usize) -> Result<()> {
        let cfg = self.cfg;
        let goal = &cfg.goals[gi];
        // Never more trials in a stream than the goal's duration sum asks.
        let n = window::count(
            duration_s,
            cfg.stream_seconds.min(goal.duration_sum_seconds),
        );
        let mut spec = TrialSpec::constant(
            load,
            Duration::from_secs_f64(duration_s * f64::from(n)),
            cfg.size.clone(),
        );
        if n > 1 {
            spec.timeline_interval = Some(Duration::from_secs_f64(duration_s));
        }
        for attempt in 0..=MAX_REPEATS {
            let o = run_checked(self.trial, &spec, cfg.rate_tolerance_pct)?;
            let whole = Measured {
                load,
                duration_s: spec.duration.as_secs_f64(),
                sent: o.sent,
                lost: o.lost,
                tester_dropped: o.tester_dropped,
                achieved: o.achieved_tx_rate_fps,
                limited: o.tester_limited || o.measurement_fault.is_some(),
                held: o.load_held,
                record: self.records.len(),
                window: false,
            };
            let windows = self.windows(&o, n, &whole);
            // A stream whose windows keep the count needs no repeat.
            let decisive =
                windows.is_none() && cfg.goals.iter().any(|g| hinges_on_tester(g, &whole));
            if o.measurement_fault.is_some() && decisive && attempt < MAX_REPEATS {
                self.trial
                    .verdict(&format!("{purpose}: measurement fault, run again"));
                self.repeats += 1;
                let mut r = TrialRecord::new(purpose.clone(), spec.clone(), o, false);
                r.discarded = true;
                self.records.push(r);
                continue;
            }
            let trials = windows.unwrap_or_else(|| vec![whole]);
            let (passed, what) = verdict(goal, &trials);
            self.trial.verdict(&format!("{purpose}: {what}"));
            self.measured.extend(trials);
            self.streams += 1;
            self.records
                .push(TrialRecord::new(purpose, spec, o, passed));
            return Ok(());
        }
        unreachable!("the last attempt is always kept")
    }

    /// The stream's windows as trials ([`super::window`]), when they
    /// keep the count: the stream has a timeline that accounts for its
    /// frames, and for every goal at most half its windows have a verdict
    /// the tester could decide (they do not count: `Search::view`). A
    /// window's share of the tester's receive drops is unknown, so each
    /// may hold all of them; a load the tester did not offer as asked
    /// (its generator paused or fell behind) could decide every window
    /// without loss.
    fn windows(&self, o: &TrialOutcome, n: u32, whole: &Measured) -> Option<Vec<Measured>> {
        let w: Vec<Measured> = window::split(o, n)?
            .into_iter()
            .map(|(sent, lost)| Measured {
                duration_s: whole.duration_s / f64::from(n),
                sent,
                lost,
                tester_dropped: whole.tester_dropped.min(lost),
                window: true,
                ..whole.clone()
            })
            .collect();
        let few = |g: &SearchGoal| 2 * w.iter().filter(|m| m.for_goal(g).1).count() <= w.len();
        self.cfg.goals.iter().all(few).then_some(w)
    }

    /// The goal's result; marks the records that carry its lower bound.
    fn result(&mut self, gi: usize) -> GoalResult {
        let goal = self.cfg.goals[gi].clone();
        let v = self.view(&goal);
        let (lower, upper) = (v.fps(v.lower), v.fps(v.upper));
        let at = |load: f64| {
            self.measured
                .iter()
                .filter(move |m| same_load(m.load, load))
        };
        let ct = lower
            .and_then(|lo| conditional_throughput(&goal, lo, at(lo).map(|m| m.for_goal(&goal).0)));
        let fps = ct.map(|(f, _)| f);
        let tester_limited = v.upper.is_some_and(|u| v.loads[u].tester);
        let tester_limit_reason = tester_limited
            .then(|| {
                at(upper.expect("tester-limited upper bound"))
                    .find(|m| m.limited)
                    .and_then(|m| self.records[m.record].outcome.tester_limit_reason.clone())
                    .or_else(|| Some("the tester could not hold the load above".into()))
            })
            .flatten();
        if let Some(lo) = lower {
            let mut carriers: Vec<usize> = at(lo)
                .filter(|m| {
                    let (t, _) = m.for_goal(&goal);
                    full_length(&goal, t.duration_s) && !high_loss(&goal, t.loss_ratio)
                })
                .map(|m| m.record)
                .collect();
            carriers.dedup();
            for i in carriers {
                self.records[i].bound_for.push(goal.name.clone());
            }
        }
        let avg = self.cfg.size.average();
        GoalResult {
            fps,
            lower_fps: lower,
            upper_fps: upper,
            regular: match (lower, upper) {
                (Some(lo), Some(hi)) => hi - lo <= goal.width_pct / 100.0 * hi * (1.0 + 1e-9),
                _ => false,
            },
            l2_bps: fps.map(|f| l2_bps(f, avg)),
            wire_bps: fps.map(|f| wire_bps(f, avg)),
            pct_of_max: fps.map(|f| f * 100.0 / self.cfg.max_rate_fps),
            lower_bound: lower.is_some() && (upper.is_none() || tester_limited),
            tester_limited,
            tester_limit_reason,
            loss_at_bound_pct: ct.map(|(_, q)| q * 100.0),
            loads: v
                .loads
                .iter()
                .map(|l| LoadResult {
                    fps: l.fps,
                    class: l.class,
                    trials: l.trials,
                    spoiled_windows: l.spoiled,
                    sums: l.sums,
                    tester_limited: l.tester,
                })
                .collect(),
            goal: Some(goal),
        }
    }
}

/// The throughput search for every goal of `cfg` between
/// [`MIN_RATE_FPS`] and `cfg.max_rate_fps` (module docs).
pub fn throughput(trial: &mut dyn Trial, cfg: &ThroughputConfig) -> Result<ThroughputResult> {
    if !(cfg.max_rate_fps.is_finite() && cfg.max_rate_fps > 0.0) {
        bail!("throughput search needs a positive maximum rate");
    }
    if cfg.goals.is_empty() {
        bail!("throughput search needs at least one goal");
    }
    for g in &cfg.goals {
        if let Err((field, why)) = g.validate() {
            bail!("search goal {:?}: {field} {why}", g.name);
        }
    }
    let mut s = Search {
        cfg,
        trial,
        min: MIN_RATE_FPS.min(cfg.max_rate_fps),
        measured: Vec::new(),
        records: Vec::new(),
        streams: 0,
        repeats: 0,
        // External steps start at twice the width and double.
        step: cfg
            .goals
            .iter()
            .map(|g| 2.0 * g.width_pct / 100.0)
            .collect(),
    };
    'search: while s.streams < MAX_TRIALS {
        for gi in 0..cfg.goals.len() {
            if let Some((load, d, why)) = s.next(gi) {
                let purpose = format!("{why} {}", cfg.goals[gi].name);
                s.measure(load, d, purpose, gi)?;
                continue 'search;
            }
        }
        break;
    }
    if s.streams >= MAX_TRIALS {
        tracing::warn!(
            "throughput search of {} stopped after {MAX_TRIALS} streams",
            cfg.size
        );
    }
    let goals = (0..cfg.goals.len()).map(|gi| s.result(gi)).collect();
    Ok(ThroughputResult {
        max_rate_fps: cfg.max_rate_fps,
        goals,
        measurement_repeats: s.repeats,
        trials: s.records,
    })
}

/// For the tests: the outcome's loss ratio as the search reads it.
#[cfg(test)]
pub(super) fn loss_ratio(o: &crate::search::TrialOutcome) -> f64 {
    if o.sent == 0 {
        1.0
    } else {
        o.lost as f64 / o.sent as f64
    }
}
