//! The procedure for one size: a bisection of short trials between 0 and
//! the generator's own rate, confirmed at full length, each rate judged
//! by [`tester_held`]; why each step is there is in the parent module's
//! doc (`mod.rs`) and at each item below.

use std::time::Duration;

use anyhow::Result;

use super::verdict::WINDOW;
use super::{tester_held, SizeCalibration, LOOPBACK};
use crate::NetTrial;
use bench::search::{Trial, TrialSpec};
use bench::sizes::FrameSize;

const TRIAL: Duration = Duration::from_millis(300);
/// How long a calibration through a DUT waits before its first trial.
///
/// Why: it follows the removal of namespaces (the loopback calibration's,
/// an earlier run's DUT), which leaves kernel work (the namespace's
/// cleanup, rhashtable and vmap frees, free page reporting) to per-CPU
/// kworkers on the tester's CPU, where the shield puts the host's work.
/// They run ahead of the tester's real-time NAPI threads (the fair server)
/// for up to milliseconds (`perf` of workqueue events during a run:
/// rht_deferred_worker, page_reporting_process, drain_vmap_area_work), and
/// the tester's ring overflows at rates it otherwise holds. Calibrating
/// through the floor at once ended at 0.66-1.57 Mfps (median 1.13, 13
/// runs), 5 s later at 1.38-1.66 (six runs), same machine, same hour. A
/// CPU busy share does not see these bursts (0.5 s windows read quiet at
/// once), so the wait is a time.
const SETTLE: Duration = Duration::from_secs(5);
/// Length of the confirming trial at the calibrated maximum.
const CONFIRM: Duration = Duration::from_secs(1);
const ABSURD_FPS: f64 = 50_000_000.0;

/// How closely calibration pins the maximum down.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Precision {
    /// The bisection stops when its bounds are this close (share of the
    /// upper one).
    pub(super) width: f64,
    /// Trials at one rate before it counts as beyond the tester ([`holds`]).
    pub(super) tries: u32,
    /// Steps of 3 % down until a rate holds for full-length trials
    /// ([`confirm`]).
    pub(super) confirm_steps: u32,
    /// Wait before calibrating through a DUT ([`calibrate_through`]).
    pub(super) settle: Duration,
    /// Whole calibrations of a size through a DUT, the highest maximum
    /// kept: the host's slow spells last seconds to minutes (the tester's
    /// maximum through the floor came out 1.11 Mfps at 64 B and 1.38 at
    /// IMIX, calibrated seconds later, where other runs found 1.77-1.93
    /// and 1.63-1.64), and a rate one pass confirmed the tester holds.
    pub(super) passes: u32,
}

impl Precision {
    /// The figures' calibration: 3 %, three trials a rate, confirmed at
    /// full length, after [`SETTLE`] through a DUT.
    pub(super) const FULL: Precision = Precision {
        width: 0.03,
        tries: 3,
        confirm_steps: 4,
        settle: SETTLE,
        passes: 2,
    };
    /// `SOFTROUTER_CALIBRATION=coarse`: 10 %, one trial a rate, no
    /// confirmation, no settling, about a third of the time. For runs
    /// that check behaviour, not figures (the test suite: the floor
    /// calibration was 12 of a test run's 30 s); the maximum is lower and
    /// less repeatable.
    pub(super) const COARSE: Precision = Precision {
        width: 0.10,
        tries: 1,
        confirm_steps: 0,
        settle: Duration::ZERO,
        passes: 1,
    };

    /// From `SOFTROUTER_CALIBRATION` (unset or `full`: [`Self::FULL`]).
    pub(super) fn from_env() -> Result<Precision> {
        Self::parse(std::env::var("SOFTROUTER_CALIBRATION").ok().as_deref())
    }

    pub(super) fn parse(v: Option<&str>) -> Result<Precision> {
        match v.map(str::trim) {
            None | Some("") | Some("full") => Ok(Self::FULL),
            Some("coarse") => Ok(Self::COARSE),
            Some(other) => {
                anyhow::bail!("SOFTROUTER_CALIBRATION={other:?}: expected \"full\" or \"coarse\"")
            }
        }
    }
}

/// A calibration trial at `rate` for `d`, counted in [`WINDOW`]s.
fn windowed(rate: f64, d: Duration, size: &FrameSize) -> TrialSpec {
    TrialSpec {
        timeline_interval: Some(WINDOW),
        ..TrialSpec::constant(rate, d, size.clone())
    }
}

/// One pass over `size` on `t`: the generator's own rate, the bisection
/// below it, the confirmation at full length, and the latency floor.
pub(super) fn calibrate_size(
    t: &mut NetTrial,
    size: FrameSize,
    through_dut: bool,
    precision: Precision,
) -> Result<SizeCalibration> {
    // Far beyond the tester: the generator falls behind by design, so
    // this first trial is not run again for it.
    let mut trials = 1;
    let raw = t.run(&TrialSpec::constant(ABSURD_FPS, TRIAL, size.clone()))?;
    let gen_max = raw.achieved_tx_rate_fps;
    let mut run = |rate: f64| -> Result<bench::search::TrialOutcome> {
        run_unfaulted(t, &mut trials, &windowed(rate, TRIAL, &size))
    };
    let (mut lo, mut hi) = (0.0f64, gen_max);
    let mut rate = gen_max * 0.97;
    for _ in 0..8 {
        let pass = holds(precision.tries, || {
            let o = run(rate)?;
            let pass = tester_held(&o, through_dut);
            tracing::debug!(rate, pass, lost = o.lost, reason = ?o.tester_limit_reason, "calibration trial");
            Ok(pass)
        })?;
        if pass {
            lo = rate;
        } else {
            hi = rate;
        }
        if hi - lo <= hi * precision.width {
            break;
        }
        rate = (lo + hi) / 2.0;
    }
    // Confirm at full length: the maximum must hold for a whole quick
    // trial, not only 300 ms, or trials at it come out tester-limited at
    // random and results scatter from run to run.
    lo = confirm(lo, precision, |rate| {
        let o = run_unfaulted(t, &mut trials, &windowed(rate, CONFIRM, &size))?;
        let pass = tester_held(&o, through_dut);
        tracing::debug!(rate, pass, lost = o.lost, reason = ?o.tester_limit_reason, "calibration confirmation");
        Ok(pass)
    })?;
    let floor_rate = (lo / 20.0).clamp(100.0, 10_000.0);
    let mut run = |rate: f64| -> Result<bench::search::TrialOutcome> {
        trials += 1;
        t.run(&TrialSpec::constant(rate, TRIAL, size.clone()))
    };
    let f = run(floor_rate)?;
    Ok(SizeCalibration {
        size,
        max_rate_fps: lo,
        generator_max_fps: gen_max,
        latency_floor: f.latency,
        trials,
        path: LOOPBACK.to_string(),
        other_paths: Vec::new(),
        senders: 1,
    })
}

/// The highest of `lo` and up to `confirm_steps` steps of 3 % below it
/// that holds ([`holds`]) for a full-length `trial`; when none does, one
/// step below the last tried.
///
/// Why [`holds`], as in the bisection, and not one trial a step: a host
/// pause longer than a ring holds fails a 1 s trial at rates the tester
/// otherwise holds, one time in two or three here
/// (`docs/reading-results.md`), so one trial a step took the maximum
/// 3-12 % down at random.
pub(super) fn confirm(
    mut lo: f64,
    precision: Precision,
    mut trial: impl FnMut(f64) -> Result<bool>,
) -> Result<f64> {
    for _ in 0..precision.confirm_steps {
        if lo <= 0.0 || holds(precision.tries, || trial(lo))? {
            break;
        }
        lo *= 0.97;
    }
    Ok(lo)
}

/// A calibration trial, run again (at most twice more) while it is the
/// host's fault alone ([`host_fault`]); such a trial says nothing of what
/// the tester holds.
fn run_unfaulted(
    t: &mut NetTrial,
    trials: &mut u32,
    spec: &TrialSpec,
) -> Result<bench::search::TrialOutcome> {
    let mut o = t.run(spec)?;
    *trials += 1;
    for _ in 0..2 {
        let Some(f) = host_fault(&o) else { break };
        tracing::debug!(rate = spec.rate_fps, fault = %f, "calibration trial run again");
        o = t.run(spec)?;
        *trials += 1;
    }
    Ok(o)
}

/// The measurement fault of a trial the tester was not limited in: the
/// host paused the generator, or moved the tester's and the DUT's CPUs
/// apart meanwhile (`super::noise`). A fault that comes with a tester
/// limit (the generator fell behind, the tester's receive side dropped
/// frames) is what calibration looks for, not a reason to run the trial
/// again: run again, every rate beyond the tester cost three trials where
/// one answers, most of the floor calibration's 15-33 s a size.
pub(super) fn host_fault(o: &bench::search::TrialOutcome) -> Option<&str> {
    o.measurement_fault.as_deref().filter(|_| !o.tester_limited)
}

/// Whether the tester holds a rate: one of up to `tries` trials (three
/// for the figures, [`Precision::FULL`]) passes.
/// Why more than one: one host stall in a 300 ms trial fails it at any
/// rate (through the floor, a stall on the tester's CPU overflows its
/// receive ring, which is also how the tester fails beyond its maximum),
/// and a bisection step that believed it lowered the maximum for good
/// (through the floor DUT three runs gave 0.88, 1.16 and 1.55 Mfps; with
/// two trials and no repeats for faults, 0.40 Mfps at 512 B against 1.36
/// in the run before); a rate beyond the tester fails all three.
pub(super) fn holds(tries: u32, mut trial: impl FnMut() -> Result<bool>) -> Result<bool> {
    for _ in 0..tries {
        if trial()? {
            return Ok(true);
        }
    }
    Ok(false)
}
