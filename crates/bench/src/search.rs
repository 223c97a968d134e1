//! The [`Trial`] trait and the RFC 2544 procedures over it (R7-R12).
//!
//! Why a trait: the procedures (binary search, loss series, back-to-back,
//! recovery, latency) are pure logic over trial outcomes. Keeping them
//! behind `&mut dyn Trial` lets them be tested against the simulated DUT in
//! [`crate::sim`] with known answers, and lets the traffic engine (AF_XDP
//! generator + receivers, written separately) plug in unchanged.
//!
//! Size: about 640 lines of code, over the bench's 600-line guide: the
//! trial contract (spec, outcome, record, the tester-limit check) and the
//! four procedures written against it (loss series, back-to-back,
//! recovery, latency), about 100 lines each. The throughput search, the
//! largest, lives in [`crate::throughput`].
//!
//! # What a `Trial` implementation must guarantee
//!
//! * R6: send learning frames and wait before the trial; after the last
//!   frame wait the drain time; read counters only then.
//! * Count `sent` as frames actually handed to the wire, per the analyzer
//!   rules (`lost = sent - unique received`).
//! * Report `achieved_tx_rate_fps` (frames sent / time actually spent
//!   sending) and set `tester_limited` with a reason when its own
//!   transmit path backed up, fell behind the schedule or dropped frames
//!   before the wire. The procedures here additionally flag any trial whose
//!   achieved rate is below the target by more than the rate tolerance.
//! * For [`TrialSpec::phases`] (system recovery, R12) send the phases back
//!   to back and fill [`TrialOutcome::timeline`]: per-interval sent/lost
//!   counts and the transmit time offset of the last lost frame, all
//!   measured from the start of the first phase on the generator's clock
//!   (the generator knows each sequence number's send time; the analyzer
//!   gives the lost sequence numbers).
//!
//! # Tester limits are never DUT results
//!
//! A trial that is tester-limited says nothing about the DUT at the target
//! rate, only at the rate the tester achieved. The throughput search
//! ([`crate::throughput`]) uses that: loss-free at the achieved rate means
//! "at least X" (the search stops, `tester_limited` set, reports print a
//! lower bound); loss at the achieved rate is a real failure there, and
//! the search goes on below it, where the tester is fast enough.

use std::time::Duration;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use crate::analyzer::LatencySummary;
use crate::sizes::FrameSize;
use crate::sysstat::SysStats;

/// Serde helper: a `Duration` as floating-point seconds.
pub mod secs_f64 {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    /// Serialize as seconds.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    /// Deserialize from seconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }
}

/// One constant-rate phase of a multi-phase trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// Offered rate per port, frames/s.
    pub rate_fps: f64,
    /// How long.
    #[serde(with = "secs_f64")]
    pub duration: Duration,
}

/// What to send in one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialSpec {
    /// Offered rate per port, frames/s (for a burst: the rate inside the
    /// burst, normally the maximum rate, i.e. minimum gap).
    pub rate_fps: f64,
    /// Trial duration (ignored for bursts and phases).
    #[serde(with = "secs_f64")]
    pub duration: Duration,
    /// Frame size or mix.
    pub size: FrameSize,
    /// Send exactly this many frames back to back, once (R11).
    pub burst: Option<u64>,
    /// If not empty: send these phases back to back instead of
    /// `rate_fps`/`duration` (R12), and report a loss timeline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<Phase>,
    /// Bucket width of the loss timeline (phases only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline_interval: Option<Duration>,
}

impl TrialSpec {
    /// A constant-rate trial.
    pub fn constant(rate_fps: f64, duration: Duration, size: FrameSize) -> TrialSpec {
        TrialSpec {
            rate_fps,
            duration,
            size,
            burst: None,
            phases: Vec::new(),
            timeline_interval: None,
        }
    }

    /// Frames a perfect generator would send for this spec.
    pub fn planned_frames(&self) -> u64 {
        if let Some(b) = self.burst {
            return b;
        }
        if !self.phases.is_empty() {
            return self
                .phases
                .iter()
                .map(|p| (p.rate_fps * p.duration.as_secs_f64()).round() as u64)
                .sum();
        }
        (self.rate_fps * self.duration.as_secs_f64()).round() as u64
    }
}

/// Per-interval loss accounting of a multi-phase trial (R12).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LossTimeline {
    /// Bucket width, ns.
    pub interval_ns: u64,
    /// Frames sent per bucket (by transmit time from trial start).
    pub sent: Vec<u64>,
    /// Frames lost per bucket (by their transmit time).
    pub lost: Vec<u64>,
    /// Transmit time offset of the last lost frame, ns from trial start.
    pub last_lost_ns: Option<u64>,
}

impl LossTimeline {
    /// Build from every frame's transmit offset and whether it was lost.
    pub fn from_frames(
        interval_ns: u64,
        frames: impl Iterator<Item = (u64, bool)>,
    ) -> LossTimeline {
        let mut t = LossTimeline {
            interval_ns: interval_ns.max(1),
            ..LossTimeline::default()
        };
        for (off, lost) in frames {
            let b = (off / t.interval_ns) as usize;
            if b >= t.sent.len() {
                t.sent.resize(b + 1, 0);
                t.lost.resize(b + 1, 0);
            }
            t.sent[b] += 1;
            if lost {
                t.lost[b] += 1;
                t.last_lost_ns = Some(t.last_lost_ns.map_or(off, |l| l.max(off)));
            }
        }
        t
    }
}

/// What one trial measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialOutcome {
    /// The rate the trial was asked for, frames/s per port.
    pub offered_rate_fps: f64,
    /// Frames sent (handed to the wire).
    pub sent: u64,
    /// Test frames received (duplicates included).
    pub received: u64,
    /// `sent - unique received`.
    pub lost: u64,
    /// Reordered frames.
    pub reordered: u64,
    /// Duplicated frames.
    pub duplicates: u64,
    /// Non-test frames seen (ignored).
    pub non_test: u64,
    /// Achieved transmit rate, frames/s per port.
    pub achieved_tx_rate_fps: f64,
    /// The tester, not the DUT, limited this trial.
    pub tester_limited: bool,
    /// Why it was tester-limited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tester_limit_reason: Option<String>,
    /// Latency of the received test frames.
    pub latency: LatencySummary,
    /// Loss timeline (phased trials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<LossTimeline>,
    /// DUT CPU / interrupt / softirq rates during the trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sys: Option<SysStats>,
    /// The DUT's own statistics (e.g. softrouter's per-stage cycles and
    /// drop reasons), as reported by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dut_stats: Option<serde_json::Value>,
}

impl TrialOutcome {
    /// Frame loss rate in percent: `(sent - received) * 100 / sent` (R10),
    /// with `received` counted as unique frames (`lost`).
    pub fn loss_pct(&self) -> f64 {
        if self.sent == 0 {
            0.0
        } else {
            self.lost as f64 * 100.0 / self.sent as f64
        }
    }

    /// Whether the loss is within `tolerance_pct` (0 = not a single frame).
    pub fn within_tolerance(&self, tolerance_pct: f64) -> bool {
        if tolerance_pct <= 0.0 {
            self.lost == 0
        } else {
            self.loss_pct() <= tolerance_pct
        }
    }
}

/// A device under test plus the tester that drives it.
pub trait Trial {
    /// Run one trial (learning, trial, drain, counters) and report it.
    fn run(&mut self, spec: &TrialSpec) -> Result<TrialOutcome>;
}

/// One trial as run by a procedure, for the results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// Which step of which procedure (e.g. "search", "confirm", "b2b 3/50").
    pub purpose: String,
    /// What was asked.
    pub spec: TrialSpec,
    /// What was measured.
    pub outcome: TrialOutcome,
    /// Whether it passed the procedure's criterion (tester-limited trials
    /// never pass; throughput: the criterion of the goal in `purpose`).
    pub passed: bool,
    /// Throughput: the goals (`ndr`, `pdr`) whose reported rate is this
    /// trial's; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bound_for: Vec<String>,
}

impl TrialRecord {
    /// A record of a trial that is no goal's bound.
    pub fn new(
        purpose: String,
        spec: TrialSpec,
        outcome: TrialOutcome,
        passed: bool,
    ) -> TrialRecord {
        TrialRecord {
            purpose,
            spec,
            outcome,
            passed,
            bound_for: Vec::new(),
        }
    }
}

/// Run a trial and apply the tester-limit check: a trial whose achieved
/// rate falls short of the target by more than `rate_tolerance_pct` is
/// marked tester-limited even if the engine did not say so.
pub fn run_checked(
    trial: &mut dyn Trial,
    spec: &TrialSpec,
    rate_tolerance_pct: f64,
) -> Result<TrialOutcome> {
    let mut o = trial.run(spec)?;
    o.offered_rate_fps = spec.rate_fps;
    let target = spec.rate_fps;
    if spec.burst.is_none()
        && spec.phases.is_empty()
        && o.achieved_tx_rate_fps < target * (1.0 - rate_tolerance_pct / 100.0)
        && !o.tester_limited
    {
        o.tester_limited = true;
        o.tester_limit_reason = Some(format!(
            "achieved {:.0} fps of {:.0} fps target (tolerance {}%)",
            o.achieved_tx_rate_fps, target, rate_tolerance_pct
        ));
    }
    if o.tester_limited && o.tester_limit_reason.is_none() {
        o.tester_limit_reason = Some("tester reported a limit".into());
    }
    Ok(o)
}

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

/// Back-to-back settings (R11).
#[derive(Debug, Clone, PartialEq)]
pub struct BackToBackConfig {
    /// Frame size or mix.
    pub size: FrameSize,
    /// Rate inside the burst: the maximum (minimum inter-frame gap).
    pub max_rate_fps: f64,
    /// Longest burst tried (e.g. 2 s at the maximum rate).
    pub max_burst: u64,
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
    if cfg.max_burst == 0 || cfg.repetitions == 0 {
        bail!("back-to-back needs max_burst > 0 and repetitions > 0");
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
            };
            let o = run_checked(trial, &spec, 0.0)?;
            // A burst the tester did not carry in full cannot pass: the
            // search goes on below it and the result is flagged.
            if o.tester_limited {
                res.tester_limited_trials += 1;
            }
            let ok = o.lost == 0 && o.sent == len && !o.tester_limited;
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
    Ok(res)
}
