//! RFC 2544 system recovery (R12): an overload at 110 % of the
//! throughput, then 50 %; the recovery time is read from the trial's loss
//! timeline (the last lost frame's transmit time after the rate drop).

use std::time::Duration;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::{run_checked, Phase, Trial, TrialRecord, TrialSpec};
use crate::sizes::FrameSize;

/// System recovery settings (R12).
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveryConfig {
    /// Frame size or mix.
    pub size: FrameSize,
    /// Measured throughput, frames/s per port.
    pub throughput_fps: f64,
    /// The maximum rate (110 % of throughput is capped to it).
    pub max_rate_fps: f64,
    /// Overload phase (RFC 2544: at least 60 s).
    pub overload: Duration,
    /// Phase at 50 % after the overload.
    pub recovery: Duration,
    /// Loss timeline resolution.
    pub interval: Duration,
    /// Repetitions (reported individually and averaged).
    pub repetitions: u32,
}

/// Result of the system recovery test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecoveryResult {
    /// Overload rate used, frames/s.
    pub overload_rate_fps: f64,
    /// Whether 110 % had to be capped at the maximum rate.
    pub capped: bool,
    /// Recovery time per repetition, s: from the rate drop to the last
    /// lost frame (by transmit time); 0 if nothing was lost after the drop.
    pub recovery_s: Vec<f64>,
    /// Mean recovery time, s.
    pub mean_recovery_s: f64,
    /// Repetitions in which the overload caused no loss at all (the DUT
    /// was not overloaded: the result says nothing about recovery).
    pub no_overload_loss: u32,
    /// Repetitions the tester limited (it fell behind, or could not
    /// receive everything the DUT forwarded): their losses may be the
    /// tester's, so their recovery times are upper bounds.
    #[serde(default)]
    pub tester_limited_reps: u32,
    /// Every trial (moved to `TestResult::trials` in results files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trials: Vec<TrialRecord>,
}

/// RFC 2544 system recovery: 110 % of the throughput for `overload`, then
/// 50 % for `recovery`; recovery time = last lost frame's transmit time -
/// time of the rate drop (clamped at 0), from the trial's loss timeline.
pub fn recovery(trial: &mut dyn Trial, cfg: &RecoveryConfig) -> Result<RecoveryResult> {
    let want = cfg.throughput_fps * 1.1;
    let over = want.min(cfg.max_rate_fps);
    let mut res = RecoveryResult {
        overload_rate_fps: over,
        capped: want > cfg.max_rate_fps,
        ..RecoveryResult::default()
    };
    for rep in 0..cfg.repetitions.max(1) {
        let spec = TrialSpec {
            rate_fps: over,
            duration: cfg.overload + cfg.recovery,
            size: cfg.size.clone(),
            burst: None,
            phases: vec![
                Phase {
                    rate_fps: over,
                    duration: cfg.overload,
                },
                Phase {
                    rate_fps: cfg.throughput_fps * 0.5,
                    duration: cfg.recovery,
                },
            ],
            timeline_interval: Some(cfg.interval),
            sample_control: false,
        };
        let o = run_checked(trial, &spec, 0.0)?;
        if o.tester_limited {
            res.tester_limited_reps += 1;
        }
        let Some(tl) = &o.timeline else {
            bail!("the Trial did not report a loss timeline for a phased trial");
        };
        let drop_ns = cfg.overload.as_nanos() as u64;
        if o.lost == 0 {
            res.no_overload_loss += 1;
        }
        let rec = tl
            .last_lost_ns
            .map_or(0.0, |l| l.saturating_sub(drop_ns) as f64 / 1e9);
        res.recovery_s.push(rec);
        let passed = !o.tester_limited;
        res.trials.push(TrialRecord::new(
            format!("recovery {}/{}", rep + 1, cfg.repetitions.max(1)),
            spec,
            o,
            passed,
        ));
    }
    res.mean_recovery_s = res.recovery_s.iter().sum::<f64>() / res.recovery_s.len() as f64;
    Ok(res)
}
