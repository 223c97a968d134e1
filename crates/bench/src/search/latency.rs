//! RFC 2544 latency (R9) with RFC 8219's percentiles and delay variation:
//! repeated trials at the throughput rate, each reported, and their mean.

use std::time::Duration;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{run_checked, Trial, TrialRecord, TrialSpec};
use crate::analyzer::LatencySummary;
use crate::sizes::FrameSize;

/// Latency test settings (R9).
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyConfig {
    /// Frame size or mix.
    pub size: FrameSize,
    /// The throughput rate to run at.
    pub rate_fps: f64,
    /// Trial duration (RFC 2544: at least 120 s).
    pub duration: Duration,
    /// Repetitions (RFC 2544: 20).
    pub repetitions: u32,
    /// Achieved-rate tolerance, %.
    pub rate_tolerance_pct: f64,
}

/// Result of the latency test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyResult {
    /// Per repetition.
    pub repetitions: Vec<LatencySummary>,
    /// Mean over the repetitions that were not tester-limited.
    pub mean: LatencySummary,
    /// Repetitions that were tester-limited (excluded from the mean).
    pub tester_limited: u32,
    /// Repetitions that lost frames (RFC 2544 runs at the throughput rate,
    /// so loss here means the throughput was not stable).
    pub with_loss: u32,
    /// Every trial (moved to `TestResult::trials` in results files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trials: Vec<TrialRecord>,
}

/// RFC 2544 latency (with RFC 8219's percentiles and delay variation): run
/// at the throughput rate `repetitions` times; report each and the mean.
/// Latency is store-and-forward here: timestamps are taken when the whole
/// frame is sent and when the whole frame is received.
pub fn latency(trial: &mut dyn Trial, cfg: &LatencyConfig) -> Result<LatencyResult> {
    let mut res = LatencyResult::default();
    let mut good = Vec::new();
    for rep in 0..cfg.repetitions.max(1) {
        let spec = TrialSpec::constant(cfg.rate_fps, cfg.duration, cfg.size.clone());
        let o = run_checked(trial, &spec, cfg.rate_tolerance_pct)?;
        if o.tester_limited {
            res.tester_limited += 1;
        } else {
            good.push(o.latency);
        }
        if o.lost > 0 {
            res.with_loss += 1;
        }
        res.repetitions.push(o.latency);
        let passed = !o.tester_limited;
        res.trials.push(TrialRecord::new(
            format!("latency {}/{}", rep + 1, cfg.repetitions.max(1)),
            spec,
            o,
            passed,
        ));
    }
    // Only tester-limited repetitions (the tester fell short of the
    // throughput rate by more than the tolerance): their latencies are
    // still measured at what was offered; keep them, flagged by
    // `tester_limited`, rather than report nothing.
    res.mean = if good.is_empty() {
        LatencySummary::mean_of(&res.repetitions)
    } else {
        LatencySummary::mean_of(&good)
    };
    // The control plane's answer times under the same load, in a trial of
    // their own: the asking is the bench's work, kept out of the latency
    // figures and of the throughput search (at most 10 s: 200 rounds).
    if trial.times_control_plane() {
        let mut spec = TrialSpec::constant(
            cfg.rate_fps,
            cfg.duration.min(CONTROL_TRIAL),
            cfg.size.clone(),
        );
        spec.sample_control = true;
        let o = run_checked(trial, &spec, cfg.rate_tolerance_pct)?;
        let passed = !o.tester_limited;
        res.trials
            .push(TrialRecord::new(CONTROL_PURPOSE.into(), spec, o, passed));
    }
    Ok(res)
}

/// The longest trial that times the control plane.
const CONTROL_TRIAL: Duration = Duration::from_secs(10);

/// The purpose of the trial that times the control plane.
pub const CONTROL_PURPOSE: &str = "control plane under load";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::TrialOutcome;

    /// A DUT with a control plane: the latency test's repetitions run
    /// without the asking, one trial of its own after them with it.
    #[test]
    fn the_control_plane_is_timed_in_a_trial_of_its_own() {
        struct Dut(Vec<bool>);
        impl Trial for Dut {
            fn run(&mut self, spec: &TrialSpec) -> Result<TrialOutcome> {
                self.0.push(spec.sample_control);
                Ok(TrialOutcome {
                    sent: 10,
                    received: 10,
                    achieved_tx_rate_fps: spec.rate_fps,
                    ..TrialOutcome::default()
                })
            }
            fn times_control_plane(&self) -> bool {
                true
            }
        }
        let cfg = LatencyConfig {
            rate_fps: 1000.0,
            duration: Duration::from_secs(30),
            size: FrameSize::Fixed(64),
            repetitions: 2,
            rate_tolerance_pct: 1.0,
        };
        let mut dut = Dut(Vec::new());
        let r = latency(&mut dut, &cfg).unwrap();
        assert_eq!(dut.0, [false, false, true]);
        assert_eq!(r.repetitions.len(), 2);
        let last = r.trials.last().unwrap();
        assert_eq!(last.purpose, CONTROL_PURPOSE);
        assert_eq!(last.spec.duration, CONTROL_TRIAL, "at most 10 s");
    }
}
