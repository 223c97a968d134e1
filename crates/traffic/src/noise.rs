//! Host noise with every trial (issue 18): steal per CPU and the DUT's
//! longest receive gap ([`tester::gap`]), and the note on a lossy trial
//! whose gap exceeded what the DUT's ring holds at the offered rate; and
//! how far apart the host placed the tester's and the DUT's CPUs
//! ([`testbed::placement`]), before and after the trial.
//!
//! The placement is the one figure that acts before a trial: the meter
//! waits (at most [`PLACEMENT_WAIT_TRIAL`] a trial, [`PLACEMENT_WAIT_RUN`]
//! in all, `SOFTROUTER_PLACEMENT_WAIT` seconds if set) for the near placement before the traffic starts, and a trial
//! during which the host moved the CPUs apart is a measurement fault
//! ([`NoiseMeter::moved_apart`]), run again: the rule is fixed before the
//! trial, never looks at its loss, is capped, and both the waits and the
//! repeats are reported.
//!
//! Why here, for every backend and DUT kind: both figures are the host's,
//! not a DUT's (steal is /proc/stat's; the gap is read on the DUT's veth
//! ends, which the plan names), and the trial's outcome is made here.
//! They are reported beside the loss, never used to discard a trial.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use testbed::placement::{self, Placement};

use bench::plan::TrafficPlan;
use bench::search::Noise;
use bench::sysstat::{parse_stat, steal_pct, CpuTimes};
use tester::gap::{GapArm, GapMeter, Receiver};

/// Frames a veth end's receive ring holds (the kernel's `VETH_RING_SIZE`):
/// what the DUT's ring absorbs while its receive work does not run.
pub(crate) const VETH_RING_FRAMES: u64 = 256;

/// Slack after a trial's schedule in which receive gaps still count
/// (frames still in the DUT's rings are polled then); later polls are
/// ignored, so a stray frame long after the traffic ends no gap.
const WINDOW_SLACK: Duration = Duration::from_millis(20);

/// Said once per process when the gap cannot be measured.
static WARNED: AtomicBool = AtomicBool::new(false);

/// The longest wait for the near placement before one trial.
pub(crate) const PLACEMENT_WAIT_TRIAL: Duration = Duration::from_secs(10);
/// The longest wait for it in all, over one DUT's run (a meter's life):
/// a host that keeps the CPUs apart for minutes slows a run by at most
/// this, and the trials after it run where they are, reported. Why this
/// short: far stretches last from seconds to minutes here, and three runs
/// with 60 s took 5-6 min each instead of 2 and still ran one DUT all
/// far; the quick suite must stay within a few minutes.
/// `SOFTROUTER_PLACEMENT_WAIT=<seconds>` sets it (0: never wait; the test
/// suite does, since it checks behaviour, not figures).
pub(crate) const PLACEMENT_WAIT_RUN: Duration = Duration::from_secs(30);

/// [`PLACEMENT_WAIT_RUN`], or what `SOFTROUTER_PLACEMENT_WAIT` says.
fn placement_wait_run() -> Duration {
    std::env::var("SOFTROUTER_PLACEMENT_WAIT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(PLACEMENT_WAIT_RUN, Duration::from_secs_f64)
}

/// Steal and receive gaps over one trial.
pub(crate) struct NoiseMeter {
    gap: Option<GapMeter>,
    /// The DUT's receive ring, frames, when the bench knows it (a veth).
    ring: Option<u64>,
    stat: Option<BTreeMap<u32, CpuTimes>>,
    /// The tester's and the DUT's CPUs, when both are pinned and there is
    /// a DUT between them.
    cpus: Option<(usize, usize)>,
    /// The placement before the trial, and after it.
    before: Option<Placement>,
    after: Option<Duration>,
    /// Waited for the near placement so far.
    waited: Duration,
}

impl NoiseMeter {
    /// A meter for `plan`: the gap on the DUT's ends the plan names (none
    /// for external DUTs or the loopback). If the program cannot be
    /// attached (no BTF, no permission) trials run without the figure.
    pub(crate) fn new(plan: &TrafficPlan) -> NoiseMeter {
        // The xdp tester's XDP transmits are seen: gaps start when frames
        // became pending, not at the previous poll (see `tester::gap`).
        let xdp = plan.backend.counts_in_xdp();
        let devs: Vec<Receiver> = plan
            .ports
            .iter()
            .filter_map(|p| {
                Some(Receiver {
                    name: p.dut_iface.clone()?,
                    sender: xdp.then(|| p.iface.clone()),
                })
            })
            .collect();
        let gap = if devs.is_empty() {
            None
        } else {
            match GapMeter::new(&devs) {
                Ok(g) => Some(g),
                Err(e) => {
                    if !WARNED.swap(true, Ordering::Relaxed) {
                        tracing::warn!(
                            "the DUT's receive gaps are not measured (longest_rx_gap_us stays \
                             empty): {e:#}"
                        );
                    }
                    None
                }
            }
        };
        let cpus = super::cpu::tester_cpu()
            .zip(super::cpu::dut_cpu())
            .filter(|_| !devs.is_empty());
        NoiseMeter {
            gap,
            ring: (!devs.is_empty()).then_some(VETH_RING_FRAMES),
            stat: None,
            cpus,
            before: None,
            after: None,
            waited: Duration::ZERO,
        }
    }

    /// The handle that arms the gap meter as the traffic starts.
    pub(crate) fn arm_handle(&self) -> Option<GapArm> {
        self.gap.as_ref().map(GapMeter::arm_handle)
    }

    /// Before the trial: wait (capped) for the near placement.
    pub(crate) fn begin(&mut self) {
        self.before =
            self.cpus.map(|(t, d)| {
                let cap =
                    PLACEMENT_WAIT_TRIAL.min(placement_wait_run().saturating_sub(self.waited));
                let p = placement::wait_until_near(t, d, cap);
                self.waited += p.waited;
                if p.waited >= Duration::from_secs(1) {
                    let rt = p
                        .round_trip
                        .map_or("?".into(), |r| format!("{} ns", r.as_nanos()));
                    eprintln!(
                    "softrouter bench: waited {:.1} s for the host to place CPUs {t} and {d} near \
                     (round trip now {rt}{})",
                    p.waited.as_secs_f64(),
                    if p.near { "" } else { ", still far: running the trial there" }
                );
                }
                p
            });
        self.after = None;
        self.stat = read_stat();
    }

    /// After the traffic: the host moved the tester's and the DUT's CPUs
    /// apart during the trial (near before, far after), as a measurement
    /// fault to run again. Call after [`NoiseMeter::end`].
    pub(crate) fn moved_apart(&self) -> Option<String> {
        let before = self.before?;
        let after = self.after?;
        (before.near && !placement::is_near(after)).then(|| {
            format!(
                "the host moved the tester's and the DUT's CPUs apart during the trial (a cache \
                 line's round trip {} ns before, {} ns after)",
                before.round_trip.map_or(0, |r| r.as_nanos()),
                after.as_nanos()
            )
        })
    }

    /// After the trial: steal since [`NoiseMeter::begin`], the longest gap
    /// of the window armed meanwhile, and (by [`Noise`]'s rule) the ring's
    /// time and the note for `lost` frames at `rate_fps` per port.
    pub(crate) fn end(&mut self, rate_fps: f64, lost: u64) -> Noise {
        let steal = match (self.stat.take(), read_stat()) {
            (Some(a), Some(b)) => steal_pct(&a, &b),
            _ => Vec::new(),
        };
        let gap = self.gap.as_ref().and_then(|g| match g.read() {
            // No poll in the window: no traffic reached the DUT's ends.
            Ok(r) => (r.polls > 0).then(|| {
                tracing::debug!(
                    longest_us = r.longest.as_micros() as u64,
                    began_mono_ns = r.armed_ns + r.longest_began.as_nanos() as u64,
                    "the DUT's longest receive gap"
                );
                (
                    r.longest.as_nanos() as f64 / 1e3,
                    r.longest_began.as_nanos() as f64 / 1e6,
                )
            }),
            Err(e) => {
                tracing::warn!("reading the receive gaps: {e:#}");
                None
            }
        });
        let mut n = noise(steal, gap.map(|g| g.0), self.ring, rate_fps, lost);
        n.longest_rx_gap_at_ms = gap.map(|g| g.1);
        self.after = self.cpus.and_then(|(t, d)| placement::round_trip(t, d));
        if let Some(b) = self.before {
            n.cpu_round_trip_ns = b.round_trip.map(|r| r.as_nanos() as f64);
            n.cpus_near = b.round_trip.is_some().then_some(b.near);
            n.placement_wait_ms = Some(b.waited.as_secs_f64() * 1e3);
        }
        n.cpu_round_trip_after_ns = self.after.map(|r| r.as_nanos() as f64);
        n
    }
}

/// Arm `arm` for a trial of `phases` (per port), from now: the window is
/// their schedule, plus 2 % and [`WINDOW_SLACK`] for lateness.
pub(crate) fn arm_for(arm: Option<&GapArm>, phases: &[super::gen::GenPhase]) {
    let Some(arm) = arm else { return };
    let secs: f64 = phases
        .iter()
        .filter(|p| p.rate_fps > 0.0)
        .map(|p| p.frames as f64 / p.rate_fps)
        .sum();
    arm.arm(Duration::from_secs_f64(secs * 1.02) + WINDOW_SLACK);
}

fn read_stat() -> Option<BTreeMap<u32, CpuTimes>> {
    std::fs::read_to_string("/proc/stat")
        .ok()
        .map(|s| parse_stat(&s))
}

/// The trial's [`Noise`]: `ring` frames at `rate_fps` per port hold
/// `ring / rate` (µs); a lossy trial whose longest gap exceeded that gets
/// the note (the stall alone could have overflowed the ring).
pub(crate) fn noise(
    steal_pct: Vec<f64>,
    gap_us: Option<f64>,
    ring: Option<u64>,
    rate_fps: f64,
    lost: u64,
) -> Noise {
    let holds = ring
        .filter(|_| rate_fps > 0.0)
        .map(|r| r as f64 * 1e6 / rate_fps);
    let note = match (gap_us, holds, ring) {
        (Some(g), Some(h), Some(r)) if lost > 0 && g > h => Some(format!(
            "a stall of {g:.0} µs exceeded the {h:.0} µs the DUT's {r}-frame ring holds at \
             {:.3} Mpps",
            rate_fps / 1e6
        )),
        _ => None,
    };
    Noise {
        steal_pct,
        longest_rx_gap_us: gap_us,
        longest_rx_gap_at_ms: None,
        ring_holds_us: holds,
        note,
        ..Noise::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lossy_trial_with_a_gap_longer_than_the_ring_gets_the_note() {
        // 256 frames at 1 Mpps: 256 µs.
        let n = noise(vec![0.0, 3.0], Some(1200.0), Some(256), 1e6, 5);
        assert_eq!(n.ring_holds_us, Some(256.0));
        assert_eq!(n.steal_pct, vec![0.0, 3.0]);
        assert_eq!(
            n.note.as_deref(),
            Some("a stall of 1200 µs exceeded the 256 µs the DUT's 256-frame ring holds at 1.000 Mpps")
        );
    }

    #[test]
    fn no_note_without_loss_a_long_gap_or_a_known_ring() {
        // No loss: the stall did no harm.
        assert_eq!(noise(vec![], Some(1200.0), Some(256), 1e6, 0).note, None);
        // The gap fits in the ring: the loss is not the stall's.
        assert_eq!(noise(vec![], Some(200.0), Some(256), 1e6, 5).note, None);
        // Gap not measured, or the ring unknown (an external DUT).
        assert_eq!(noise(vec![], None, Some(256), 1e6, 5).note, None);
        let n = noise(vec![], Some(1e6), None, 1e6, 5);
        assert_eq!((n.note, n.ring_holds_us), (None, None));
    }

    fn meter(before: Option<Placement>, after: Option<Duration>) -> NoiseMeter {
        NoiseMeter {
            gap: None,
            ring: None,
            stat: None,
            cpus: Some((1, 0)),
            before,
            after,
            waited: Duration::ZERO,
        }
    }

    /// Near before and far after is the one case that is a fault; the
    /// placement reference is a real probe of this machine's CPUs.
    #[test]
    fn a_trial_is_moved_apart_only_from_near_to_far() {
        let cpus = testbed::napi::affinity(0).unwrap_or_default();
        if cpus.len() < 2 {
            eprintln!("SKIP a_trial_is_moved_apart_only_from_near_to_far: needs two CPUs");
            return;
        }
        (0..5)
            .find_map(|_| placement::round_trip(cpus[0], cpus[1]))
            .expect("a round trip in five tries");
        // Near is the fastest seen since boot (this probe's, or one kept
        // from earlier): the host may have the CPUs apart right now.
        let rt = placement::fastest().expect("a probe ran");
        let near = Placement {
            round_trip: Some(rt),
            waited: Duration::ZERO,
            near: true,
        };
        let far_rt = rt * 100;
        let far = Placement {
            round_trip: Some(far_rt),
            near: false,
            ..near
        };
        let f = meter(Some(near), Some(far_rt))
            .moved_apart()
            .expect("a fault");
        assert!(
            f.contains("moved the tester's and the DUT's CPUs apart"),
            "{f}"
        );
        assert_eq!(meter(Some(near), Some(rt)).moved_apart(), None);
        // Far from the start (the wait was capped): reported, not a fault.
        assert_eq!(meter(Some(far), Some(far_rt)).moved_apart(), None);
        assert_eq!(meter(Some(far), Some(rt)).moved_apart(), None);
        // Not measured.
        assert_eq!(meter(None, Some(far_rt)).moved_apart(), None);
        assert_eq!(meter(Some(near), None).moved_apart(), None);
    }
}
