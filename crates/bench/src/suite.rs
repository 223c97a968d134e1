//! Runs the tests of a [`Settings`] against one [`Trial`] (one DUT on one
//! testbed): every repetition, IP version and frame size, in the order the
//! settings give, and collects [`TestResult`]s.
//!
//! Why separate from the CLI: the same sequencing drives the real testbed
//! and the simulated DUT, so the order of tests, the throughput rate that
//! latency, back-to-back and recovery start from, and the pauses between
//! trials are tested without a network.

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::results::TestResult;
use crate::search::{
    self, BackToBackConfig, LatencyConfig, LossSeriesConfig, RecoveryConfig, Trial, TrialOutcome,
    TrialSpec,
};
use crate::settings::{Settings, TestKind};
use crate::sizes::FrameSize;
use crate::throughput::{self, ThroughputConfig, ThroughputResult};

/// Told about every trial, for progress bars and logs.
pub trait Observer {
    /// A test starts (`ip` 4 or 6).
    fn test(&mut self, _test: TestKind, _size: &FrameSize, _ip: u8) {}
    /// A trial is about to run.
    fn trial_start(&mut self, _spec: &TrialSpec) {}
    /// A trial finished.
    fn trial_done(&mut self, _spec: &TrialSpec, _outcome: &TrialOutcome) {}
    /// What the finished trial was for and said (`search ndr: low loss`),
    /// when its procedure tells.
    fn trial_verdict(&mut self, _text: &str) {}
    /// Something the report should say (skipped tests, deviations).
    fn note(&mut self, _text: &str) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

/// Wraps the DUT's trial: pauses between trials (RFC 2544 section 23: the
/// DUT settles between trials), and tells the observer.
struct Paced<'a> {
    inner: &'a mut dyn Trial,
    observer: &'a mut dyn Observer,
    pause: Duration,
    first: bool,
}

impl Trial for Paced<'_> {
    fn run(&mut self, spec: &TrialSpec) -> Result<TrialOutcome> {
        if !self.first && !self.pause.is_zero() {
            std::thread::sleep(self.pause);
        }
        self.first = false;
        self.observer.trial_start(spec);
        let o = self.inner.run(spec)?;
        self.observer.trial_done(spec, &o);
        Ok(o)
    }
    fn verdict(&mut self, text: &str) {
        self.observer.trial_verdict(text);
    }
    fn times_control_plane(&self) -> bool {
        self.inner.times_control_plane()
    }
}

/// The maximum offered rate for a size: the line rate when the settings
/// give one, else what the caller knows (the tester's calibrated maximum).
pub type MaxRate<'a> = &'a dyn Fn(&FrameSize, bool) -> f64;

/// Runs every test of `settings` (resolved by the caller or not) on `trial`.
pub fn run(
    settings: &Settings,
    trial: &mut dyn Trial,
    max_rate: MaxRate<'_>,
    observer: &mut dyn Observer,
) -> Result<Vec<TestResult>> {
    let s = settings.resolved();
    let secs = |v: Option<f64>| Duration::from_secs_f64(v.unwrap_or(0.0));
    let pause = secs(s.pause_seconds);
    let tp_first = s.tests.iter().any(|t| {
        matches!(
            t,
            TestKind::Throughput | TestKind::Latency | TestKind::BackToBack | TestKind::Recovery
        )
    });
    let mut out = Vec::new();
    for _rep in 0..s.repetitions.unwrap_or(1) {
        for v6 in s.ip.versions() {
            let ip = if v6 { 6 } else { 4 };
            for size in &s.sizes {
                let size = size.effective(v6);
                let max = max_rate(&size, v6);
                let mut paced = Paced {
                    inner: &mut *trial,
                    observer: &mut *observer,
                    pause,
                    first: out.is_empty(),
                };
                let tp_cfg = ThroughputConfig {
                    size: size.clone(),
                    max_rate_fps: max,
                    goals: s.search_goals(),
                    rate_tolerance_pct: s.rate_tolerance_pct,
                    stream_seconds: throughput::STREAM_SECONDS,
                };
                // Throughput first whenever it is asked for, or needed by
                // latency, back-to-back or recovery, which start from it:
                // from the first goal's relevant lower bound (a load the
                // DUT held, as RFC 2544's throughput is a rate it held).
                let mut throughput: Option<f64> = None;
                if tp_first {
                    let started = Instant::now();
                    paced.observer.test(TestKind::Throughput, &size, ip);
                    let r = bound_by_max(&s, throughput::throughput(&mut paced, &tp_cfg)?);
                    throughput = r.first().and_then(|g| g.lower_fps);
                    out.push(TestResult::throughput(size.clone(), ip, r));
                    timed(&mut out, started);
                }
                let tp_passed = throughput.filter(|&t| t > 0.0);
                for &test in &s.tests {
                    if test == TestKind::Throughput {
                        continue; // done above
                    }
                    let started = Instant::now();
                    let before = out.len();
                    paced.observer.test(test, &size, ip);
                    match test {
                        TestKind::Throughput => unreachable!("run first"),
                        TestKind::Latency => match tp_passed {
                            Some(tp) => {
                                let r = search::latency(
                                    &mut paced,
                                    &LatencyConfig {
                                        size: size.clone(),
                                        rate_fps: tp,
                                        duration: secs(s.latency_seconds),
                                        repetitions: s.latency_repetitions.unwrap_or(1),
                                        rate_tolerance_pct: s.rate_tolerance_pct,
                                    },
                                )?;
                                out.push(TestResult::latency(size.clone(), ip, r));
                            }
                            None => paced.observer.note(&format!(
                                "latency IPv{ip} {size}: skipped, no throughput rate passed"
                            )),
                        },
                        TestKind::Loss => {
                            let r = search::loss_series(
                                &mut paced,
                                &LossSeriesConfig {
                                    size: size.clone(),
                                    max_rate_fps: max,
                                    step_pct: s.loss_step_pct,
                                    trial_duration: s.trial(),
                                    rate_tolerance_pct: s.rate_tolerance_pct,
                                },
                            )?;
                            out.push(TestResult::loss(size.clone(), ip, r));
                        }
                        TestKind::BackToBack => {
                            let r = search::back_to_back(
                                &mut paced,
                                &BackToBackConfig {
                                    size: size.clone(),
                                    max_rate_fps: max,
                                    max_burst: ((s.b2b_max_burst_seconds * max) as u64).max(1),
                                    senders: s.pattern.senders(),
                                    repetitions: s.b2b_trials.unwrap_or(1),
                                    throughput_fps: throughput,
                                },
                            )?;
                            out.push(TestResult::back_to_back(size.clone(), ip, r));
                        }
                        TestKind::Recovery => match tp_passed {
                            Some(tp) => {
                                let r = search::recovery(
                                    &mut paced,
                                    &RecoveryConfig {
                                        size: size.clone(),
                                        throughput_fps: tp,
                                        max_rate_fps: max,
                                        overload: secs(s.recovery_overload_seconds),
                                        recovery: secs(s.recovery_seconds),
                                        interval: Duration::from_millis(10),
                                        repetitions: s.repetitions.unwrap_or(1),
                                    },
                                )?;
                                out.push(TestResult::recovery(size.clone(), ip, r));
                            }
                            None => paced.observer.note(&format!(
                                "recovery IPv{ip} {size}: skipped, no throughput rate passed"
                            )),
                        },
                    }
                    if out.len() > before {
                        timed(&mut out, started);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The last result's wall time, from `started`.
fn timed(out: &mut [TestResult], started: Instant) {
    if let Some(t) = out.last_mut() {
        t.elapsed_s = started.elapsed().as_secs_f64();
    }
}

/// What passing at the maximum rate means depends on where the maximum
/// came from: at a line rate (`link_bps`) it is the DUT's full throughput,
/// not a lower bound; at the tester's calibrated maximum the tester, not
/// the DUT, set the result (flagged tester-limited); at a maximum the user
/// set it stays a lower bound. Applied to every goal.
fn bound_by_max(s: &Settings, mut r: ThroughputResult) -> ThroughputResult {
    let calibrated = s.max_rate_fps.is_none() && s.link_bps.is_none();
    let max = r.max_rate_fps;
    for g in &mut r.goals {
        let width = g.goal.as_ref().map_or(0.0, |g| g.width_pct);
        let at_max = g
            .lower_fps
            .is_some_and(|t| t >= max * (1.0 - width / 100.0));
        if !at_max || g.tester_limited {
            continue;
        }
        if s.link_bps.is_some() && s.max_rate_fps.is_none() && g.upper_fps.is_none() {
            g.lower_bound = false;
        } else if calibrated {
            g.tester_limited = true;
            g.lower_bound = true;
            g.tester_limit_reason = Some(
                "the DUT forwarded the tester's calibrated maximum within the goal's loss: a lower bound"
                    .into(),
            );
        }
    }
    r
}

/// A rough duration of [`run`], for the progress bar's ETA: trials are
/// counted from the procedures' shapes (per goal, a few loads to reach
/// its width, each decided by about half its duration sum; a loss series
/// to its first two zero-loss steps, ...).
pub fn estimate(settings: &Settings) -> Duration {
    let s = settings.resolved();
    let trial = s.trial_seconds.unwrap_or(1.0);
    let gap = s.pause_seconds.unwrap_or(0.0) + 0.3; // pause + drain
    let search: f64 = s
        .search_goals()
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let loads = (100.0 / g.width_pct).log2().ceil() / 2.0 + 3.0;
            let per_load = (g.duration_sum_seconds * (1.0 - g.exceed_pct / 100.0)
                / g.final_trial_seconds)
                .ceil()
                .max(1.0)
                * (g.final_trial_seconds + gap);
            // Later goals reuse most of the earlier goals' loads.
            loads * per_load / if i == 0 { 1.0 } else { 2.0 }
        })
        .sum();
    let mut per_size = 0.0;
    let needs_tp = s.tests.iter().any(|t| {
        matches!(
            t,
            TestKind::Latency | TestKind::BackToBack | TestKind::Recovery
        )
    });
    if needs_tp || s.tests.contains(&TestKind::Throughput) {
        per_size += search;
    }
    for t in &s.tests {
        per_size += match t {
            TestKind::Throughput => 0.0,
            TestKind::Latency => {
                s.latency_repetitions.unwrap_or(1) as f64 * (s.latency_seconds.unwrap_or(1.0) + gap)
            }
            TestKind::Loss => (100.0 / s.loss_step_pct / 2.0).ceil() * (trial + gap),
            TestKind::BackToBack => s.b2b_trials.unwrap_or(1) as f64 * 12.0 * (0.5 + gap),
            TestKind::Recovery => {
                s.repetitions.unwrap_or(1) as f64
                    * (s.recovery_overload_seconds.unwrap_or(1.0)
                        + s.recovery_seconds.unwrap_or(1.0)
                        + gap)
            }
        };
    }
    let runs =
        s.repetitions.unwrap_or(1) as f64 * s.ip.versions().len() as f64 * s.sizes.len() as f64;
    Duration::from_secs_f64(per_size * runs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::TestValue;
    use crate::sim::{SimConfig, SimDut};

    fn sim(capacity_fps: f64) -> SimDut {
        SimDut::new(SimConfig {
            capacity_fps,
            ..SimConfig::default()
        })
    }

    fn quick(tests: Vec<TestKind>) -> Settings {
        Settings {
            tests,
            sizes: vec![FrameSize::Fixed(64), FrameSize::Fixed(1518)],
            trial_seconds: Some(1.0),
            pause_seconds: Some(0.0),
            ..Settings::default()
        }
    }

    struct Count(usize, Vec<TestKind>);
    impl Observer for Count {
        fn test(&mut self, t: TestKind, _: &FrameSize, _: u8) {
            self.1.push(t);
        }
        fn trial_done(&mut self, _: &TrialSpec, _: &TrialOutcome) {
            self.0 += 1;
        }
    }

    #[test]
    fn latency_alone_measures_throughput_first_and_uses_it() {
        let mut dut = sim(50_000.0);
        let mut obs = Count(0, vec![]);
        let r = run(
            &quick(vec![TestKind::Latency]),
            &mut dut,
            &|_, _| 100_000.0,
            &mut obs,
        )
        .unwrap();
        assert_eq!(
            obs.1,
            [
                TestKind::Throughput,
                TestKind::Latency,
                TestKind::Throughput,
                TestKind::Latency
            ]
        );
        assert_eq!(r.len(), 4);
        let TestValue::Throughput(t) = &r[0].result else {
            panic!()
        };
        let tp = t.goals[0].lower_fps.unwrap();
        assert!((tp - 50_000.0).abs() <= 1_000.0, "{tp}");
        // The latency trial ran at the throughput rate.
        assert_eq!(r[1].trials[0].spec.rate_fps, tp);
        assert_eq!(
            obs.0,
            r.iter().map(|t| t.trials.len()).sum::<usize>(),
            "observer saw every trial"
        );
    }

    #[test]
    fn tests_run_in_the_given_order_for_every_size_and_version() {
        let mut s = quick(vec![
            TestKind::Throughput,
            TestKind::Loss,
            TestKind::BackToBack,
        ]);
        s.ip = crate::settings::IpVersion::Both;
        let mut dut = sim(80_000.0);
        let mut obs = Count(0, vec![]);
        let r = run(&s, &mut dut, &|_, _| 100_000.0, &mut obs).unwrap();
        let kinds: Vec<(TestKind, u8, String)> = r
            .iter()
            .map(|t| (t.test, t.ip, t.size.to_string()))
            .collect();
        assert_eq!(kinds.len(), 12);
        assert_eq!(kinds[0], (TestKind::Throughput, 4, "64".into()));
        assert_eq!(kinds[1].0, TestKind::Loss);
        assert_eq!(kinds[2].0, TestKind::BackToBack);
        assert_eq!(kinds[3], (TestKind::Throughput, 4, "1518".into()));
        // IPv6 frames are raised to the IPv6 minimum size.
        assert_eq!(kinds[6], (TestKind::Throughput, 6, "78".into()));
    }

    #[test]
    fn latency_skipped_with_a_note_when_nothing_passes() {
        let mut dut = sim(100.0); // below the resolution: nothing passes
        struct Notes(Vec<String>);
        impl Observer for Notes {
            fn note(&mut self, t: &str) {
                self.0.push(t.to_string());
            }
        }
        let mut obs = Notes(vec![]);
        let mut s = quick(vec![TestKind::Throughput, TestKind::Latency]);
        s.sizes = vec![FrameSize::Fixed(64)];
        let r = run(&s, &mut dut, &|_, _| 100_000.0, &mut obs).unwrap();
        assert_eq!(r.len(), 1);
        assert!(obs.0[0].contains("skipped"), "{:?}", obs.0);
    }

    #[test]
    fn a_dut_as_fast_as_the_calibrated_tester_is_a_lower_bound() {
        let mut s = quick(vec![TestKind::Throughput]);
        s.sizes = vec![FrameSize::Fixed(64)];
        let r = run(&s, &mut sim(200_000.0), &|_, _| 100_000.0, &mut Quiet).unwrap();
        let TestValue::Throughput(t) = &r[0].result else {
            panic!()
        };
        for g in &t.goals {
            assert!(g.tester_limited && g.lower_bound, "{t:?}");
            assert!(
                g.tester_limit_reason
                    .as_deref()
                    .is_some_and(|m| m.contains("lower bound")),
                "{t:?}"
            );
        }
        // With a line rate the same result is the DUT's full throughput.
        s.link_bps = Some(1e9);
        let r = run(&s, &mut sim(2_000_000.0), &|_, _| 100_000.0, &mut Quiet).unwrap();
        let TestValue::Throughput(t) = &r[0].result else {
            panic!()
        };
        assert!(
            !t.goals[0].tester_limited && !t.goals[0].lower_bound,
            "{t:?}"
        );
        // A maximum the user set: passing it is a lower bound, not the
        // tester's doing.
        s.link_bps = None;
        s.max_rate_fps = Some(100_000.0);
        let r = run(&s, &mut sim(2_000_000.0), &|_, _| 100_000.0, &mut Quiet).unwrap();
        let TestValue::Throughput(t) = &r[0].result else {
            panic!()
        };
        assert!(
            !t.goals[0].tester_limited && t.goals[0].lower_bound,
            "{t:?}"
        );
    }

    #[test]
    fn estimate_grows_with_the_work() {
        let a = estimate(&quick(vec![TestKind::Throughput]));
        let b = estimate(&quick(vec![TestKind::Throughput, TestKind::Latency]));
        assert!(a > Duration::from_secs(10) && b > a, "{a:?} {b:?}");
    }
}
