//! What one trial measured ([`TrialOutcome`], with its loss timeline for
//! phased trials), the record a procedure keeps of it ([`TrialRecord`]),
//! and [`run_checked`], through which every procedure runs its trials.
//!
//! Why `run_checked` is here and not in each procedure: the tester-limit
//! check (an achieved rate short of the target marks the trial
//! tester-limited even if the engine did not say so) must be the same for
//! all of them, so a tester limit is never reported as the DUT's.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{Trial, TrialSpec};
use crate::analyzer::LatencySummary;
use crate::sysstat::SysStats;

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
    /// Of `lost`, the frames the tester's own receive side dropped (the
    /// DUT had forwarded them): with more loss than that, the DUT failed
    /// whatever the tester did.
    #[serde(default)]
    pub tester_dropped: u64,
    /// The tester offered the load as asked (on schedule, at the rate,
    /// without a long pause), whatever its receive side dropped: the
    /// DUT's loss then lies between `lost - tester_dropped` and `lost`,
    /// and a tester-limited trial still decides every goal for which both
    /// give the same verdict.
    #[serde(default)]
    pub load_held: bool,
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
    pub dut_stats: Option<schema::dut_sample::DutStats>,
    /// Where the `lost` frames were lost, as far as the counters tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_split: Option<LossSplit>,
    /// Set when the tester itself spoiled the trial (frames lost in its own
    /// receive ring, frames its generator did not send): the trial says
    /// nothing about the system under test and is run again (see
    /// [`run_checked`]). The reason, for the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measurement_fault: Option<String>,
    /// Of the measurement faults, one besides the tester's receive drops
    /// (the generator failed or was paused, the host moved the CPUs
    /// apart): calibration judges the tester by its windows only without
    /// one (`traffic::calibrate::tester_held`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fault_beyond_receive: bool,
    /// What the host did during the trial (steal, the DUT's longest
    /// receive gap): reported beside the result, never used to discard a
    /// trial by its loss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Noise>,
}

/// Where a trial's lost frames were lost. RFC 9971 counts every loss but
/// the tester's own against the system under test; this says which part
/// of it, so a reader can tell a DUT that drops from a host that stalls.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LossSplit {
    /// Refused by the DUT's full receive ring (veth: the tester's
    /// `xdp_xmit_errors`; a NIC's `rx_missed`): the DUT did not poll in
    /// time.
    pub dut_ring: u64,
    /// Dropped by the DUT itself, by its own counters (softrouter's drop
    /// reasons, the kernel's interface drops).
    pub dut_drops: u64,
    /// Lost in the tester's own receive path (its ring, or the DUT's
    /// transmit into it refused): the tester's loss, a measurement fault.
    pub tester_ring: u64,
    /// The rest: no counter claims it.
    pub elsewhere: u64,
}

/// Host noise during one trial (issue: results that hold from run to
/// run). Reported with every trial so a lossy trial can be read against
/// it; never a reason to drop a trial's loss.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Noise {
    /// Steal time per CPU over the trial, % (index = CPU number; a VM's
    /// host ran something else on that CPU).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steal_pct: Vec<f64>,
    /// The longest time the DUT's receive work (its NAPI polls) was not
    /// run during the trial, µs; `None` when it could not be measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_rx_gap_us: Option<f64>,
    /// When that gap began, ms after the trial's traffic started: a gap
    /// at the same time in every trial points at the testbed (a cold
    /// start), one anywhere at the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_rx_gap_at_ms: Option<f64>,
    /// How long the DUT's receive ring holds the offered rate, µs (ring
    /// frames / rate): a lossy trial whose `longest_rx_gap_us` exceeds it
    /// was probably hit by a stall rather than by the DUT's capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_holds_us: Option<f64>,
    /// Said when the longest gap exceeded what the ring holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// How long the host kept the generator off its CPU beyond its
    /// catch-up (pauses of 1 ms or more), in all, µs: the offered load
    /// paused that long (the tester moved its schedule rather than send
    /// the backlog in one burst). `None` when the generator does not say
    /// (an external tester).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_paused_us: Option<f64>,
    /// How many such pauses, and the longest pause of any length, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_pauses: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_longest_pause_us: Option<f64>,
    /// The round trip of a cache line between the tester's and the DUT's
    /// CPUs just before the trial's traffic, ns (`testbed::placement`):
    /// how far apart the host had placed them (here 25-29 ns on one
    /// core's two threads, 49-70 on cores sharing a cache, 288-350 on
    /// cores sharing none). `None` when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_round_trip_ns: Option<f64>,
    /// Whether that round trip was near (`testbed::placement::is_near`:
    /// within its factor of the fastest seen since boot), as the tester
    /// judged it when it started the trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_near: Option<bool>,
    /// The same just after the traffic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_round_trip_after_ns: Option<f64>,
    /// How long the trial waited for the host to place those CPUs near
    /// before it started, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement_wait_ms: Option<f64>,
}

impl Noise {
    /// Record the generator's pauses (see [`Noise::generator_paused_us`]).
    pub fn with_generator_pauses(mut self, total_ns: u64, count: u64, longest_ns: u64) -> Noise {
        self.generator_paused_us = Some(total_ns as f64 / 1e3);
        self.generator_pauses = Some(count);
        self.generator_longest_pause_us = Some(longest_ns as f64 / 1e3);
        self
    }
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
    /// Throughput: the goals whose relevant lower bound this trial
    /// carries (a full-length low-loss trial at that load); empty
    /// otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bound_for: Vec<String>,
    /// The tester spoiled this trial (`outcome.measurement_fault`) and it
    /// was run again: kept for the record, counted for nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub discarded: bool,
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
            discarded: false,
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
        o.load_held = false;
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
