//! RFC 2544 back-to-back (R11) with RFC 9004's buffer time: the longest
//! loss-free burst at the maximum rate, by binary search on the burst
//! length, averaged over repetitions.

use std::time::Duration;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::{run_checked, Trial, TrialRecord, TrialSpec};
use crate::sizes::FrameSize;

/// Back-to-back settings (R11).
#[derive(Debug, Clone, PartialEq)]
pub struct BackToBackConfig {
    /// Frame size or mix.
    pub size: FrameSize,
    /// Rate inside the burst: the maximum (minimum inter-frame gap).
    pub max_rate_fps: f64,
    /// Longest burst tried (e.g. 2 s at the maximum rate), per sending
    /// port.
    pub max_burst: u64,
    /// Ports that send: each sends the burst, so a burst of `len` is
    /// `len * senders` frames on the wire.
    pub senders: u32,
    /// Repetitions to average (RFC 2544: at least 50).
    pub repetitions: u32,
    /// Measured throughput, for the RFC 9004 buffer time.
    pub throughput_fps: Option<f64>,
}

/// Result of the back-to-back test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BackToBackResult {
    /// Longest loss-free burst of each repetition, frames.
    pub bursts: Vec<u64>,
    /// Mean of `bursts`.
    pub mean_burst: f64,
    /// Sample standard deviation of `bursts`.
    pub stddev_burst: f64,
    /// Some repetition passed even `max_burst`: the value is a lower bound.
    pub hit_max_burst: bool,
    /// Bursts the tester could not send or count in full (e.g. its
    /// receive backlog overflowed). They count as failed, so the mean is a
    /// lower bound of the DUT's when this is non-zero.
    #[serde(default)]
    pub tester_limited_trials: u64,
    /// RFC 9004 implied DUT buffer time: mean burst / maximum rate, s.
    pub implied_buffer_time_s: f64,
    /// RFC 9004 corrected DUT buffer time, s, when the throughput is known:
    /// `(mean burst - throughput * implied time) / maximum rate`, i.e. the
    /// frames still buffered when the burst ends (the DUT forwards at its
    /// throughput rate meanwhile) expressed as time at the maximum rate.
    pub corrected_buffer_time_s: Option<f64>,
    /// Every trial (moved to `TestResult::trials` in results files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trials: Vec<TrialRecord>,
}

/// RFC 2544 back-to-back with RFC 9004's buffer time: for each repetition,
/// binary search on the burst length for the longest burst at the maximum
/// rate with no loss; then average.
pub fn back_to_back(trial: &mut dyn Trial, cfg: &BackToBackConfig) -> Result<BackToBackResult> {
    if cfg.max_burst == 0 || cfg.repetitions == 0 || cfg.senders == 0 {
        bail!("back-to-back needs max_burst, repetitions and senders > 0");
    }
    let mut res = BackToBackResult::default();
    for rep in 0..cfg.repetitions {
        let tag = format!("b2b {}/{}", rep + 1, cfg.repetitions);
        let mut run = |len: u64, res: &mut BackToBackResult| -> Result<bool> {
            let spec = TrialSpec {
                rate_fps: cfg.max_rate_fps,
                duration: Duration::ZERO,
                size: cfg.size.clone(),
                burst: Some(len),
                phases: Vec::new(),
                timeline_interval: None,
                sample_control: false,
            };
            let o = run_checked(trial, &spec, 0.0)?;
            // A burst the tester did not carry in full cannot pass: the
            // search goes on below it and the result is flagged.
            if o.tester_limited {
                res.tester_limited_trials += 1;
            }
            let ok = o.lost == 0 && o.sent == len * u64::from(cfg.senders) && !o.tester_limited;
            res.trials.push(TrialRecord::new(tag.clone(), spec, o, ok));
            Ok(ok)
        };
        // Invariant: `good` passed (0 trivially), `bad` failed (or is above max).
        let (mut good, mut bad) = (0u64, cfg.max_burst + 1);
        if run(cfg.max_burst, &mut res)? {
            good = cfg.max_burst;
            res.hit_max_burst = true;
        } else {
            bad = cfg.max_burst;
        }
        while bad - good > 1 {
            let mid = good + (bad - good) / 2;
            if run(mid, &mut res)? {
                good = mid;
            } else {
                bad = mid;
            }
        }
        res.bursts.push(good);
    }
    let n = res.bursts.len() as f64;
    res.mean_burst = res.bursts.iter().sum::<u64>() as f64 / n;
    res.stddev_burst = if res.bursts.len() > 1 {
        (res.bursts
            .iter()
            .map(|&b| (b as f64 - res.mean_burst).powi(2))
            .sum::<f64>()
            / (n - 1.0))
            .sqrt()
    } else {
        0.0
    };
    res.implied_buffer_time_s = res.mean_burst / cfg.max_rate_fps;
    res.corrected_buffer_time_s = cfg
        .throughput_fps
        .map(|t| (res.mean_burst - t * res.implied_buffer_time_s).max(0.0) / cfg.max_rate_fps);
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::TrialOutcome;

    /// A DUT behind `senders` sending ports that loses nothing up to
    /// `buffer` frames per port: every port sends the whole burst, so a
    /// loss-free burst carries `len * senders` frames (the mesh:4 run that
    /// found 0 frames because it compared the wire total with one port's).
    struct Ports {
        senders: u64,
        buffer: u64,
    }

    impl Trial for Ports {
        fn run(&mut self, spec: &TrialSpec) -> Result<TrialOutcome> {
            let len = spec.burst.expect("a burst");
            let sent = len * self.senders;
            let lost = len.saturating_sub(self.buffer) * self.senders;
            Ok(TrialOutcome {
                sent,
                received: sent - lost,
                lost,
                ..TrialOutcome::default()
            })
        }
    }

    #[test]
    fn a_burst_from_every_sending_port_counts_them_all() {
        for senders in [1u32, 2, 4] {
            let r = back_to_back(
                &mut Ports {
                    senders: senders.into(),
                    buffer: 300,
                },
                &BackToBackConfig {
                    size: FrameSize::Fixed(64),
                    max_rate_fps: 1e6,
                    max_burst: 1000,
                    senders,
                    repetitions: 1,
                    throughput_fps: None,
                },
            )
            .unwrap();
            assert_eq!(r.bursts, [300], "{senders} sending ports");
        }
    }
}
