//! The search against the simulated DUT ([`crate::sim`]): capacities
//! found within the goal width, rare host stalls that no longer decide
//! the NDR, a DUT that really loses frames still failing, tester limits
//! flagged, measurement faults repeated.

use super::*;
use crate::search::{Trial, TrialOutcome, TrialSpec};
use crate::settings::{Preset, SearchGoal};
use crate::sim::{SimConfig, SimDut};
use anyhow::Result;

/// A goal from its code.
fn goal(code: &str, name: &str) -> SearchGoal {
    SearchGoal {
        name: name.into(),
        ..SearchGoal::from_code(code).unwrap()
    }
}

/// The quick preset's NDR and PDR (0.1 s trials, 2 s sums, 2 % width).
fn quick_goals() -> Vec<SearchGoal> {
    SearchGoal::defaults(Preset::Quick)
}

fn cfg(max: f64, goals: Vec<SearchGoal>) -> ThroughputConfig {
    ThroughputConfig {
        size: FrameSize::Fixed(64),
        max_rate_fps: max,
        goals,
        rate_tolerance_pct: 1.0,
        stream_seconds: STREAM_SECONDS,
    }
}

fn sim(c: SimConfig) -> SimDut {
    SimDut::new(c)
}

/// The invariants of every result: bounds ordered and, when regular,
/// within the width; the conditional throughput at most the lower bound;
/// the lower bound carried by marked full-length low-loss trials; the
/// relevant bounds classified as such.
fn check(r: &ThroughputResult, c: &ThroughputConfig) {
    assert_eq!(r.goals.len(), c.goals.len());
    for (g, goal) in r.goals.iter().zip(&c.goals) {
        assert_eq!(g.goal.as_ref(), Some(goal));
        if let (Some(lo), Some(hi)) = (g.lower_fps, g.upper_fps) {
            assert!(hi > lo, "{g:?}");
            if g.regular {
                assert!(hi - lo <= goal.width_pct / 100.0 * hi * 1.000_001, "{g:?}");
            }
        }
        if let (Some(f), Some(lo)) = (g.fps, g.lower_fps) {
            assert!(f <= lo * (1.0 + 1e-12), "{g:?}");
        }
        assert_eq!(g.fps.is_some(), g.lower_fps.is_some(), "{g:?}");
        let class = |fps: Option<f64>| {
            fps.map(|f| g.loads.iter().find(|l| l.fps == f).expect("a load").class)
        };
        assert!(matches!(class(g.lower_fps), None | Some(Class::LowerBound)));
        assert!(matches!(class(g.upper_fps), None | Some(Class::UpperBound)));
        let marked = r
            .trials
            .iter()
            .filter(|t| t.bound_for.contains(&goal.name))
            .count();
        assert_eq!(marked > 0, g.lower_fps.is_some(), "{}", goal.name);
    }
    for t in r.trials.iter().filter(|t| !t.discarded) {
        let name = t.purpose.split_whitespace().last().unwrap();
        let goal = c.goals.iter().find(|g| g.name == name).unwrap();
        let o = &t.outcome;
        // A stream of windows: low when its windows lean low.
        let windows = t.spec.timeline_interval.and_then(|w| {
            let n = (t.spec.duration.as_secs_f64() / w.as_secs_f64()).round();
            window::split(o, n as u32)
        });
        let low = match &windows {
            Some(w) => {
                let high = w
                    .iter()
                    .filter(|&&(s, l)| classify::high_loss(goal, l as f64 / s.max(1) as f64))
                    .count();
                high as f64 <= goal.exceed_pct / 100.0 * w.len() as f64
            }
            None => !classify::high_loss(goal, search::loss_ratio(o)),
        };
        // A limited trial passes only when the load was held and even its
        // whole loss (the tester's drops included) is low; windows the
        // tester may have spoiled do not count (`receive_drops_spoil_only_
        // their_window`).
        let limited = o.tester_limited || o.measurement_fault.is_some();
        if limited && windows.is_some() && o.load_held {
            continue;
        }
        assert_eq!(t.passed, low && (!limited || o.load_held), "{t:?}");
    }
}

#[test]
fn finds_the_capacity_within_the_goal_width() {
    for &(cap, max) in &[
        (20_000.0, 40_000.0),
        (7_000.0, 30_000.0),
        (18_000.0, 20_000.0),
    ] {
        let c = cfg(max, quick_goals());
        let r = throughput(
            &mut sim(SimConfig {
                capacity_fps: cap,
                buffer: 8,
                ..SimConfig::default()
            }),
            &c,
        )
        .unwrap();
        check(&r, &c);
        for g in &r.goals {
            let (lo, hi) = (g.lower_fps.unwrap(), g.upper_fps.unwrap());
            // The windows of a 1 s stream cannot see an excess that
            // takes half of it to fill the 8 frames the queue absorbs; a
            // goal that tolerates loss may pass a load that much above
            // the capacity.
            let loss = g.goal.as_ref().unwrap().loss_pct / 100.0;
            assert!(
                lo <= (cap + 16.0) / (1.0 - loss) && hi > cap,
                "cap {cap}: {g:?}"
            );
            assert!(g.regular && !g.lower_bound && !g.tester_limited, "{g:?}");
            if loss == 0.0 {
                assert_eq!(g.fps, g.lower_fps, "no loss at the lower bound");
            } else {
                assert!(g.fps <= g.lower_fps && g.fps.unwrap() > cap * 0.98, "{g:?}");
            }
        }
        // A load takes one or two 1 s streams: a few dozen at most.
        assert!(r.trials.len() <= 40, "cap {cap}: {} trials", r.trials.len());
    }
}

/// RFC 9971's point: host stalls that overflow the DUT's ring now and
/// then no longer decide the zero-loss rate. A DUT of 20 kfps whose host
/// stalls it for 5 ms (its 64-frame ring holds 3.2 ms at 20 kfps): the
/// default NDR is the capacity within the goal width at rare stall rates
/// (0.05 and 0.1 a second) and at this VM's (0.7 and 1.4 a second: a
/// 1 s trial meets one 50 % and 75 % of the time, a 0.1 s window 7 % and
/// 13 %), for every seed.
#[test]
fn doubling_rare_stalls_moves_the_ndr_less_than_the_goal_width() {
    let cap = 20_000.0;
    let ndr = |stalls_per_s: f64, seed: u64, goals: Vec<SearchGoal>| {
        let c = cfg(40_000.0, goals);
        let r = throughput(
            &mut sim(SimConfig {
                capacity_fps: cap,
                buffer: 64,
                stalls_per_s,
                stall_ns: 5_000_000,
                seed,
                ..SimConfig::default()
            }),
            &c,
        )
        .unwrap();
        check(&r, &c);
        r.goals[0].lower_fps.unwrap_or(0.0)
    };
    let width = 0.02 * cap;
    for rate in [0.05, 0.7] {
        for seed in 1..=5 {
            let (once, twice) = (
                ndr(rate, seed, quick_goals()),
                ndr(2.0 * rate, seed, quick_goals()),
            );
            assert!(
                (once - twice).abs() < width && (cap - once) < width && (cap - twice) < width,
                "seed {seed}: NDR {once} at {rate} stalls/s, {twice} at twice that"
            );
        }
    }
}

/// A DUT that loses 0.2 % at every load fails a 0.1 % goal at every load
/// where a trial holds enough frames to tell (the exceed ratio forgives
/// noise, not loss).
#[test]
fn a_dut_that_always_loses_fails_a_lower_loss_goal() {
    let c = cfg(
        40_000.0,
        vec![
            goal("1f3d0.1l50e2w", "pdr-0.1"),
            goal("1f3d0.5l50e2w", "pdr-0.5"),
        ],
    );
    let r = throughput(
        &mut sim(SimConfig {
            capacity_fps: 20_000.0,
            buffer: 64,
            loss_prob: 0.002,
            seed: 3,
            ..SimConfig::default()
        }),
        &c,
    )
    .unwrap();
    check(&r, &c);
    let strict = &r.goals[0];
    assert!(
        strict.lower_fps.is_none_or(|f| f < 5_000.0),
        "0.2 % loss passed a 0.1 % goal at {:?}",
        strict.lower_fps
    );
    for l in strict.loads.iter().filter(|l| l.fps >= 5_000.0) {
        assert_ne!(l.class, Class::LowerBound, "{l:?}");
    }
    // A 0.5 % goal finds the capacity.
    let lax = r.goals[1].lower_fps.unwrap();
    assert!(lax > 19_000.0 && lax <= 20_100.0, "{lax}");
}

#[test]
fn the_maximum_passing_is_an_irregular_lower_bound() {
    let c = cfg(20_000.0, quick_goals());
    let r = throughput(
        &mut sim(SimConfig {
            capacity_fps: 50_000.0,
            ..SimConfig::default()
        }),
        &c,
    )
    .unwrap();
    check(&r, &c);
    // One stream: ten low-loss windows of 0.1 s are half the 2 s sum,
    // which decides the load whatever the other half would say.
    assert_eq!(r.trials.len(), 1, "{:?}", r.trials);
    for g in &r.goals {
        assert_eq!(
            (g.fps, g.lower_fps, g.upper_fps),
            (Some(20_000.0), Some(20_000.0), None)
        );
        assert!(g.lower_bound && !g.regular && !g.tester_limited, "{g:?}");
    }
}

#[test]
fn a_tester_limit_is_flagged_never_the_dut_throughput() {
    // The DUT could do 30 kfps, the tester sends 20 kfps at most.
    for hide in [false, true] {
        let c = cfg(40_000.0, quick_goals());
        let r = throughput(
            &mut sim(SimConfig {
                capacity_fps: 30_000.0,
                tester_max_fps: 20_000.0,
                hide_tester_limit: hide,
                ..SimConfig::default()
            }),
            &c,
        )
        .unwrap();
        check(&r, &c);
        for g in &r.goals {
            assert!(g.tester_limited && g.lower_bound, "hide={hide}: {g:?}");
            assert!(g.tester_limit_reason.is_some());
            let lo = g.lower_fps.unwrap();
            // Hidden, a limit within the rate tolerance (1 %) passes.
            assert!(lo <= 20_200.0 && lo > 19_000.0, "hide={hide}: {lo}");
        }
    }
    // A tester limit above the DUT's capacity does not matter: the DUT's
    // own upper bound ends the search.
    let c = cfg(40_000.0, quick_goals());
    let r = throughput(
        &mut sim(SimConfig {
            capacity_fps: 15_000.0,
            tester_max_fps: 30_000.0,
            ..SimConfig::default()
        }),
        &c,
    )
    .unwrap();
    check(&r, &c);
    let g = &r.goals[0];
    assert!(!g.tester_limited && g.regular, "{g:?}");
    assert!(r.trials[0].outcome.tester_limited);
    // The search went from there to what came back per second (15 kfps),
    // not down in steps from the maximum, and not to the load times the
    // share received (20 kfps: the tester sent 30 kfps of the 40 asked).
    let second = r.trials[1].spec.rate_fps;
    assert!(
        (second - 15_000.0).abs() < 750.0,
        "second trial at {second}"
    );
}

/// A tester that spoils every second stream: with its receive ring
/// dropping 5 frames in the last window (`beyond` false), or with its
/// generator paused for a while (`beyond` true: the load was not
/// offered as asked, and no window tells where).
struct Faulty {
    dut: SimDut,
    runs: u32,
    beyond: bool,
}

impl Trial for Faulty {
    fn run(&mut self, spec: &TrialSpec) -> Result<TrialOutcome> {
        let mut o = self.dut.run(spec)?;
        self.runs += 1;
        if self.runs.is_multiple_of(2) && self.beyond {
            o.measurement_fault = Some("the host kept the generator off its CPU".into());
            o.load_held = false;
            o.fault_beyond_receive = true;
        } else if self.runs.is_multiple_of(2) {
            o.measurement_fault = Some("the tester's ring dropped 5 frames".into());
            o.tester_dropped = 5;
            o.lost += 5;
            if let Some(l) = o.timeline.as_mut().and_then(|t| t.lost.last_mut()) {
                *l += 5;
            }
        }
        Ok(o)
    }
}

fn faulty(beyond: bool) -> Faulty {
    Faulty {
        dut: sim(SimConfig {
            capacity_fps: 20_000.0,
            buffer: 8,
            ..SimConfig::default()
        }),
        runs: 0,
        beyond,
    }
}

/// The search with a [`faulty`] tester, checked, after asserting that
/// it found the bounds a tester without faults finds.
fn against_a_clean_tester(beyond: bool) -> ThroughputResult {
    let c = cfg(40_000.0, quick_goals());
    let clean = throughput(&mut faulty(false).dut, &c).unwrap();
    let r = throughput(&mut faulty(beyond), &c).unwrap();
    check(&r, &c);
    for (a, b) in r.goals.iter().zip(&clean.goals) {
        assert_eq!((a.lower_fps, a.upper_fps), (b.lower_fps, b.upper_fps));
    }
    r
}

/// Streams the tester spoiled in more than half their windows are run
/// again and counted; the result is the one a tester without faults
/// gives.
#[test]
fn measurement_faults_are_repeated_and_counted() {
    let r = against_a_clean_tester(true);
    assert!(r.measurement_repeats > 0);
    let discarded = r.trials.iter().filter(|t| t.discarded).count();
    assert_eq!(discarded as u32, r.measurement_repeats);
}

/// Receive drops in one window of a stream spoil that window only: it
/// does not count for a goal its drops could decide, the stream's other
/// windows do, nothing is run again, and the result is the clean one.
#[test]
fn receive_drops_spoil_only_their_window() {
    let r = against_a_clean_tester(false);
    assert_eq!(r.measurement_repeats, 0);
    let ndr = &r.goals[0];
    assert!(ndr.loads.iter().any(|l| l.spoiled_windows > 0), "{ndr:?}");
    // One window of a stream's ten at most.
    let one_a_stream = |l: &LoadResult| 10 * l.spoiled_windows <= l.trials + l.spoiled_windows;
    assert!(ndr.loads.iter().all(one_a_stream), "{ndr:?}");
}

/// The strict RFC 2544 goal: one short lossy trial makes an upper bound,
/// only the full zero-loss final trial a lower bound.
#[test]
fn the_strict_rfc2544_goal() {
    let strict = goal("3f3d0l0e2w0.5i", "rfc2544-3s");
    let c = cfg(40_000.0, vec![strict]);
    let r = throughput(
        &mut sim(SimConfig {
            capacity_fps: 20_000.0,
            buffer: 8,
            ..SimConfig::default()
        }),
        &c,
    )
    .unwrap();
    check(&r, &c);
    let g = &r.goals[0];
    assert!(g.regular, "{g:?}");
    let carriers: Vec<_> = r
        .trials
        .iter()
        .filter(|t| !t.bound_for.is_empty())
        .collect();
    assert!(carriers
        .iter()
        .all(|t| t.spec.duration.as_secs_f64() >= 3.0));
    // The initial trials, 0.5 s windows of a 1 s stream.
    let trial_s = |t: &TrialRecord| t.spec.timeline_interval.unwrap_or(t.spec.duration);
    assert!(r.trials.iter().any(|t| trial_s(t).as_secs_f64() < 1.0));
}

#[test]
fn a_random_dut_does_not_keep_the_search_going() {
    struct Coin(SimDut, u64);
    impl Trial for Coin {
        fn run(&mut self, spec: &TrialSpec) -> Result<TrialOutcome> {
            let mut o = self.0.run(spec)?;
            self.1 = self.1.wrapping_mul(6364136223846793005).wrapping_add(1);
            o.lost = (self.1 >> 62) * o.sent / 1000;
            Ok(o)
        }
    }
    let c = cfg(5_000.0, quick_goals());
    let r = throughput(&mut Coin(sim(SimConfig::default()), 5), &c).unwrap();
    assert!(r.trials.len() <= MAX_TRIALS, "{}", r.trials.len());
    check(&r, &c);
}

#[test]
fn bad_configurations_are_refused() {
    let mut d = sim(SimConfig::default());
    assert!(throughput(&mut d, &cfg(0.0, quick_goals())).is_err());
    assert!(throughput(&mut d, &cfg(1e4, vec![])).is_err());
    let mut bad = quick_goals();
    bad[0].exceed_pct = 100.0;
    assert!(throughput(&mut d, &cfg(1e4, bad)).is_err());
}

/// A tester whose receive ring drops a few frames in every trial above
/// half the DUT's capacity, with the load offered as asked (a kernel DUT
/// bursting its backlog after a stall): the zero-loss goal cannot tell
/// and stops there, flagged as the tester's; the 0.5 % goal can (10
/// frames in 10,000 or more stay below its loss even if all were the
/// DUT's) and finds the capacity, and its verdicts cost no repeats.
#[test]
fn receive_drops_end_only_the_goals_they_could_fail() {
    struct Dropping(SimDut);
    impl Trial for Dropping {
        fn run(&mut self, spec: &TrialSpec) -> Result<TrialOutcome> {
            let mut o = self.0.run(spec)?;
            if spec.rate_fps > 10_000.0 {
                o.measurement_fault = Some("the tester's ring dropped 10 frames".into());
                o.tester_limited = true;
                o.tester_dropped = 10;
                o.lost += 10;
            }
            Ok(o)
        }
    }
    let c = cfg(40_000.0, quick_goals());
    let r = throughput(
        &mut Dropping(sim(SimConfig {
            capacity_fps: 20_000.0,
            buffer: 8,
            ..SimConfig::default()
        })),
        &c,
    )
    .unwrap();
    check(&r, &c);
    let (ndr, pdr) = (&r.goals[0], &r.goals[1]);
    assert!(ndr.tester_limited && ndr.lower_bound, "{ndr:?}");
    assert!(ndr.lower_fps.unwrap() <= 10_000.0, "{ndr:?}");
    assert!(!pdr.tester_limited && pdr.regular, "{pdr:?}");
    let lo = pdr.lower_fps.unwrap();
    assert!(lo > 19_000.0 && lo <= 20_200.0, "{pdr:?}");
    // Repeats only where the zero-loss goal's verdict hung on them.
    for t in r.trials.iter().filter(|t| t.discarded) {
        assert!(t.outcome.lost - t.outcome.tester_dropped == 0, "{t:?}");
    }
}
