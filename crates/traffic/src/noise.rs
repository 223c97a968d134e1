//! Host noise with every trial (issue 18): steal per CPU and the DUT's
//! longest receive gap ([`tester::gap`]), and the note on a lossy trial
//! whose gap exceeded what the DUT's ring holds at the offered rate.
//!
//! Why here, for every backend and DUT kind: both figures are the host's,
//! not a DUT's (steal is /proc/stat's; the gap is read on the DUT's veth
//! ends, which the plan names), and the trial's outcome is made here.
//! They are reported beside the loss, never used to discard a trial.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

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

/// Steal and receive gaps over one trial.
pub(crate) struct NoiseMeter {
    gap: Option<GapMeter>,
    /// The DUT's receive ring, frames, when the bench knows it (a veth).
    ring: Option<u64>,
    stat: Option<BTreeMap<u32, CpuTimes>>,
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
        NoiseMeter {
            gap,
            ring: (!devs.is_empty()).then_some(VETH_RING_FRAMES),
            stat: None,
        }
    }

    /// The handle that arms the gap meter as the traffic starts.
    pub(crate) fn arm_handle(&self) -> Option<GapArm> {
        self.gap.as_ref().map(GapMeter::arm_handle)
    }

    /// Before the trial.
    pub(crate) fn begin(&mut self) {
        self.stat = read_stat();
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
}
