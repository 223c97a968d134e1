//! RFC 2544 frame loss rate (R10): a series of trials from 100 % of the
//! maximum rate down, until two successive trials lose nothing.

use std::time::Duration;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::{run_checked, Trial, TrialRecord, TrialSpec};
use crate::sizes::FrameSize;

/// Frame loss rate series settings (R10).
#[derive(Debug, Clone, PartialEq)]
pub struct LossSeriesConfig {
    /// Frame size or mix.
    pub size: FrameSize,
    /// 100 % rate.
    pub max_rate_fps: f64,
    /// Step down, % of the maximum (RFC 2544: at most 10).
    pub step_pct: f64,
    /// Trial duration.
    pub trial_duration: Duration,
    /// Achieved-rate tolerance, %.
    pub rate_tolerance_pct: f64,
}

/// One point of the loss series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LossPoint {
    /// Offered load, % of the maximum rate.
    pub load_pct: f64,
    /// Offered rate, frames/s per port.
    pub rate_fps: f64,
    /// Frame loss rate, %.
    pub loss_pct: f64,
    /// Tester-limited (the loss is not the DUT's).
    pub tester_limited: bool,
}

/// Result of the loss series.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LossSeriesResult {
    /// Points from 100 % down.
    pub points: Vec<LossPoint>,
    /// Every trial (moved to `TestResult::trials` in results files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trials: Vec<TrialRecord>,
}

/// RFC 2544 frame loss rate: from 100 % down in steps of `step_pct` until
/// two successive (not tester-limited) trials lose nothing, or the load
/// reaches zero.
pub fn loss_series(trial: &mut dyn Trial, cfg: &LossSeriesConfig) -> Result<LossSeriesResult> {
    if !(cfg.step_pct > 0.0 && cfg.step_pct <= 100.0) {
        bail!("loss series step must be in (0, 100] %");
    }
    let mut res = LossSeriesResult::default();
    let mut zero_in_a_row = 0;
    let mut k = 0u32;
    loop {
        let load = 100.0 - cfg.step_pct * f64::from(k);
        if load <= 1e-9 {
            break;
        }
        let rate = cfg.max_rate_fps * load / 100.0;
        let spec = TrialSpec::constant(rate, cfg.trial_duration, cfg.size.clone());
        let o = run_checked(trial, &spec, cfg.rate_tolerance_pct)?;
        let zero = o.lost == 0 && !o.tester_limited;
        res.points.push(LossPoint {
            load_pct: load,
            rate_fps: rate,
            loss_pct: o.loss_pct(),
            tester_limited: o.tester_limited,
        });
        res.trials
            .push(TrialRecord::new(format!("loss {load:.1}%"), spec, o, zero));
        zero_in_a_row = if zero { zero_in_a_row + 1 } else { 0 };
        if zero_in_a_row >= 2 {
            break;
        }
        k += 1;
    }
    Ok(res)
}
