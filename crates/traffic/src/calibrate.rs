//! Tester calibration: what the tester can generate *and* count with zero
//! loss, tester to tester over one veth pair (no DUT), and the latency of
//! that wire at a low rate.
//!
//! Why (R2): a veth has no line rate. The tester's own zero-loss maximum
//! takes its place as the top of every search, and the latency floor is
//! what the tester adds to every latency it reports (send path, veth, XDP,
//! receiver wake-up): a DUT's latency is only meaningful above it.
//!
//! Procedure per size, a few seconds in all: one trial far above anything
//! reachable tells how fast the generator can go; a bisection between 0
//! and that (3 % resolution, 0.3 s trials) finds the highest rate with no
//! loss and no tester limit; one trial at a low rate measures the floor.
//!
//! Loopback is not the only return path the tester must hold: frames a DUT
//! sends back from another CPU cost the tester's receive about three times
//! what its own frames cost in loopback (cache lines the DUT wrote, one
//! wake-up per DUT flush: `bench/floor/keepup.sh`, ~380-400 vs ~110-140 ns
//! a frame), so a loopback maximum the tester cannot hold against a fast
//! DUT made every trial near it a tester fault (issue 21). The bench
//! therefore also calibrates through the floor DUT ([`calibrate_through`],
//! the plan of a running DUT) and takes the lower maximum per size
//! ([`Calibration::lower`]), saying which ([`SizeCalibration::path`],
//! [`Calibration::max_rate_source`]).

use std::net::{Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;
use testbed::link::read_mac;
use testbed::{Netns, VethPair};

use super::{NetTrial, TrafficOptions};
use bench::analyzer::LatencySummary;
use bench::plan::{DutProbe, TesterBackend, TesterPort, TrafficPlan};
use bench::search::{Trial, TrialSpec};
use bench::sizes::FrameSize;

/// Calibration of one frame size.
#[derive(Debug, Clone, Serialize)]
pub struct SizeCalibration {
    /// The size as sent (IPv6 sizes below 78 are raised to 78).
    pub size: FrameSize,
    /// Highest rate (frames/s, one port) sent and counted with zero loss
    /// and no tester limit.
    pub max_rate_fps: f64,
    /// What the generator achieved when asked for far more (loss allowed).
    pub generator_max_fps: f64,
    /// Latency tester to tester at a low rate.
    pub latency_floor: LatencySummary,
    /// Trials run.
    pub trials: u32,
    /// The return path whose maximum this is ([`LOOPBACK`], or the DUT a
    /// plan went through, e.g. [`FLOOR`]).
    pub path: String,
    /// The other paths calibrated for this size, with their maxima (the
    /// higher ones, frames/s).
    pub other_paths: Vec<(String, f64)>,
}

/// [`SizeCalibration::path`] of the tester-to-tester wire.
pub const LOOPBACK: &str = "loopback";
/// [`SizeCalibration::path`] through the floor DUT (`--dut floor`).
pub const FLOOR: &str = "floor DUT";

/// Result of [`calibrate`].
#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub backend: TesterBackend,
    pub ipv6: bool,
    /// The generator's transmit path (e.g. AF_PACKET sendmmsg).
    pub tx_path: String,
    pub sizes: Vec<SizeCalibration>,
}

impl Calibration {
    /// The calibrated maximum for `size`, if it was calibrated.
    pub fn max_rate(&self, size: &FrameSize) -> Option<f64> {
        let eff = size.effective(self.ipv6);
        self.sizes
            .iter()
            .find(|s| s.size == eff)
            .map(|s| s.max_rate_fps)
    }

    /// Per size, the lower maximum of `self` and `other` (calibrations of
    /// the same sizes through two return paths): the rate the tester
    /// holds on both. Sizes `other` lacks keep `self`'s, and so do sizes
    /// it passed nothing at (a path that does not work is no maximum; it
    /// is listed with 0). The latency floor
    /// stays `self`'s (calibrate loopback first: it is the wire's floor,
    /// without a DUT's own latency).
    pub fn lower(mut self, other: &Calibration) -> Calibration {
        for s in &mut self.sizes {
            let Some(o) = other.sizes.iter().find(|o| o.size == s.size) else {
                continue;
            };
            s.trials += o.trials;
            if o.max_rate_fps > 0.0 && o.max_rate_fps < s.max_rate_fps {
                s.other_paths.push((s.path.clone(), s.max_rate_fps));
                s.max_rate_fps = o.max_rate_fps;
                s.generator_max_fps = o.generator_max_fps;
                s.path = o.path.clone();
            } else {
                s.other_paths.push((o.path.clone(), o.max_rate_fps));
            }
        }
        self
    }

    /// Where the 100 % rate comes from, per size (`meta.max_rate_source`):
    /// "tester calibrated maximum: 64 B 2.10 Mfps through the floor DUT
    /// (loopback 4.70)".
    pub fn max_rate_source(&self) -> String {
        let sizes: Vec<String> = self
            .sizes
            .iter()
            .map(|s| {
                let others: Vec<String> = s
                    .other_paths
                    .iter()
                    .map(|(p, r)| format!("{p} {:.2}", r / 1e6))
                    .collect();
                let others = if others.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", others.join(", "))
                };
                let size = match &s.size {
                    FrameSize::Fixed(b) => format!("{b} B"),
                    mix => mix.to_string(),
                };
                format!(
                    "{size} {:.2} Mfps {}{others}",
                    s.max_rate_fps / 1e6,
                    via(&s.path)
                )
            })
            .collect();
        format!(
            "tester calibrated maximum, IPv{}: {}",
            if self.ipv6 { 6 } else { 4 },
            sizes.join("; ")
        )
    }
}

/// "in loopback" or "through the floor DUT".
fn via(path: &str) -> String {
    if path == LOOPBACK {
        "in loopback".into()
    } else {
        format!("through the {path}")
    }
}

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
struct Precision {
    /// The bisection stops when its bounds are this close (share of the
    /// upper one).
    width: f64,
    /// Trials at one rate before it counts as beyond the tester ([`holds`]).
    tries: u32,
    /// Steps of 3 % down until a rate holds for full-length trials
    /// ([`confirm`]).
    confirm_steps: u32,
    /// Wait before calibrating through a DUT ([`calibrate_through`]).
    settle: Duration,
    /// Whole calibrations of a size through a DUT, the highest maximum
    /// kept: the host's slow spells last seconds to minutes (the tester's
    /// maximum through the floor came out 1.11 Mfps at 64 B and 1.38 at
    /// IMIX, calibrated seconds later, where other runs found 1.77-1.93
    /// and 1.63-1.64), and a rate one pass confirmed the tester holds.
    passes: u32,
}

impl Precision {
    /// The figures' calibration: 3 %, three trials a rate, confirmed at
    /// full length, after [`SETTLE`] through a DUT.
    const FULL: Precision = Precision {
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
    const COARSE: Precision = Precision {
        width: 0.10,
        tries: 1,
        confirm_steps: 0,
        settle: Duration::ZERO,
        passes: 1,
    };

    /// From `SOFTROUTER_CALIBRATION` (unset or `full`: [`Self::FULL`]).
    fn from_env() -> Result<Precision> {
        Self::parse(std::env::var("SOFTROUTER_CALIBRATION").ok().as_deref())
    }

    fn parse(v: Option<&str>) -> Result<Precision> {
        match v.map(str::trim) {
            None | Some("") | Some("full") => Ok(Self::FULL),
            Some("coarse") => Ok(Self::COARSE),
            Some(other) => {
                anyhow::bail!("SOFTROUTER_CALIBRATION={other:?}: expected \"full\" or \"coarse\"")
            }
        }
    }
}

/// Calibrate the tester for `sizes` on a fresh namespace with one veth
/// pair (both ends tester ports); removed again before returning.
pub fn calibrate(backend: TesterBackend, sizes: &[FrameSize], ipv6: bool) -> Result<Calibration> {
    let ns = Netns::new("cal").context("calibration namespace")?;
    // One queue and one flow per tester CPU (`traffic::xdp`'s spread).
    let n = super::cpu::tester_cpus().len().max(1);
    let veth = VethPair::new(&ns, &ns, n as u32).context("calibration veth")?;
    // Both ends are the tester's: their receive work on its CPU, as in
    // the DUT testbeds (the xdp backend threads its ports' NAPI itself,
    // see `traffic::xdp`; the others use RPS, see `testbed::rps`).
    if let Some(cpu) = super::cpu::tester_cpu().filter(|_| !backend.counts_in_xdp()) {
        for end in [&veth.a, &veth.b] {
            testbed::steer_rps(&ns, end, &[cpu])?;
        }
    }
    let mut plan = wire_plan(&ns, &veth, backend, ipv6, n as u32)?;
    plan.queues = n as u16;
    let out = calibrate_through(plan, None, sizes, LOOPBACK);
    drop(veth);
    drop(ns);
    out
}

/// Calibrate the tester for `sizes` on `plan` (a running DUT's, with its
/// probe: [`FLOOR`] for the floor DUT), its results labelled `path`.
pub fn calibrate_through(
    plan: TrafficPlan,
    probe: Option<Box<dyn DutProbe>>,
    sizes: &[FrameSize],
    path: &str,
) -> Result<Calibration> {
    let (backend, ipv6) = (plan.backend, plan.ipv6);
    let opts = TrafficOptions {
        drain_max: Duration::from_millis(500),
        learning_timeout: Duration::from_secs(2),
        ..TrafficOptions::default()
    };
    let precision = Precision::from_env()?;
    let through_dut = path != LOOPBACK;
    if through_dut {
        std::thread::sleep(precision.settle);
    }
    let mut t = NetTrial::new(plan, probe, opts).context("calibration tester")?;
    let mut out = Calibration {
        backend,
        ipv6,
        tx_path: t.tx_paths().join(", "),
        sizes: Vec::new(),
    };
    let passes = if through_dut { precision.passes } else { 1 };
    for size in sizes {
        super::supported_size(size, ipv6)?;
        let mut best: Option<SizeCalibration> = None;
        for _ in 0..passes {
            let s = calibrate_size(&mut t, size.effective(ipv6), through_dut, precision)
                .with_context(|| format!("calibrating {size} {}", via(path)))?;
            best = Some(match best {
                Some(b) => higher(b, s),
                None => s,
            });
        }
        let mut s = best.expect("at least one pass");
        s.path = path.to_string();
        out.sizes.push(s);
    }
    Ok(out)
}

/// Of two calibrations of a size, the one with the higher maximum (the
/// earlier on a tie), with the trials of both.
fn higher(a: SizeCalibration, b: SizeCalibration) -> SizeCalibration {
    let trials = a.trials + b.trials;
    let best = if b.max_rate_fps > a.max_rate_fps {
        b
    } else {
        a
    };
    SizeCalibration { trials, ..best }
}

/// The plan for one veth pair inside `ns` whose two ends are both tester
/// ports (port 0 -> port 1), as calibration uses it: a tester-to-tester
/// wire with the usual benchmark addresses.
pub fn wire_plan(
    ns: &Netns,
    veth: &VethPair,
    backend: TesterBackend,
    ipv6: bool,
    flows_per_pair: u32,
) -> Result<TrafficPlan> {
    let mac_a = read_mac(Some(ns.name()), &veth.a)?;
    let mac_b = read_mac(Some(ns.name()), &veth.b)?;
    let port = |iface: &str, i: u8, mac, peer_mac| TesterPort {
        netns: Some(ns.name().to_string()),
        iface: iface.to_string(),
        mac,
        v4: Ipv4Addr::new(198, 18, i, 2),
        v6: Ipv6Addr::new(0x2001, 2, 0, u16::from(i), 0, 0, 0, 2),
        peer_mac,
        peer_v4: Ipv4Addr::new(198, 18, i, 1),
        peer_v6: Ipv6Addr::new(0x2001, 2, 0, u16::from(i), 0, 0, 0, 1),
        dest_v4: Ipv4Addr::new(198, 19, i, 0),
        dest_v6: Ipv6Addr::new(0x2001, 2, 0, 0x100 + u16::from(i), 0, 0, 0, 0),
        // The other end is the tester's own port: no DUT to watch.
        dut_iface: None,
    };
    Ok(TrafficPlan {
        ports: vec![
            port(&veth.a, 0, mac_a, mac_b),
            port(&veth.b, 1, mac_b, mac_a),
        ],
        pairs: vec![(0, 1)],
        flows_per_pair,
        ipv6,
        backend,
        l2: false,
        queues: 1,
    })
}

/// Whether a calibration trial passed: the tester sent, was not limited,
/// and lost nothing itself. Through a DUT (`through_dut`) the frames the
/// DUT's own ring refused or it dropped are the DUT's: a stall on the
/// floor DUT's CPU says nothing of what the tester holds, and counting
/// them made the floor calibration land anywhere from 0.47 to 1.41 Mfps
/// at 64 B in three quiet runs.
///
/// With a loss timeline of [`WINDOW`]s (every calibration trial has one),
/// a trial in which the tester lost frames itself still holds when the
/// load was offered as asked and those losses fit in at most half of the
/// windows ([`fewest_windows_holding`]): a stall of the tester's CPU
/// overflows its ring in the window it falls in, a rate beyond the
/// tester in every window. Why: a few dozen drops a second at rates the
/// tester otherwise holds (the generator and the receive side share its
/// CPU) failed every 1 s confirmation from 1.98 down to 1.81 Mfps in one
/// run, and the maximum came out 1.30, 1.36 and 1.64 Mfps in three.
pub fn tester_held(o: &bench::search::TrialOutcome, through_dut: bool) -> bool {
    let dut_loss = if through_dut {
        o.loss_split
            .as_ref()
            .map_or(0, |s| s.dut_ring + s.dut_drops)
    } else {
        0
    };
    if o.sent == 0 {
        return false;
    }
    if !o.tester_limited && o.lost.saturating_sub(dut_loss) == 0 {
        return true;
    }
    let windows = o.timeline.as_ref().and_then(|t| {
        // A last bucket of a few frames due right at the end is no window.
        let short_tail = t.sent.len() > 1 && 2 * t.sent[t.sent.len() - 1] < t.sent[0];
        let n = t.sent.len() - usize::from(short_tail);
        bench::throughput::window::split(o, n as u32)
    });
    let receive_only = o.load_held && !o.fault_beyond_receive;
    let own = o.lost.saturating_sub(dut_loss);
    windows.is_some_and(|w| receive_only && 2 * fewest_windows_holding(own, &w) <= w.len())
}

/// The fewest of `windows` (`(sent, lost)`) whose losses can hold `own`
/// lost frames: where the tester's own losses lie is unknown, only that
/// they are among the windows' losses; through a DUT, a stall of the
/// DUT's CPU adds losses of its own to other windows.
fn fewest_windows_holding(own: u64, windows: &[(u64, u64)]) -> usize {
    let mut losses: Vec<u64> = windows.iter().map(|w| w.1).filter(|&l| l > 0).collect();
    losses.sort_unstable_by(|a, b| b.cmp(a));
    let mut left = own;
    let mut n = 0;
    for l in losses {
        if left == 0 {
            break;
        }
        left = left.saturating_sub(l);
        n += 1;
    }
    n
}

/// The windows calibration trials are judged by ([`tester_held`]).
const WINDOW: Duration = Duration::from_millis(100);

/// A calibration trial at `rate` for `d`, counted in [`WINDOW`]s.
fn windowed(rate: f64, d: Duration, size: &FrameSize) -> TrialSpec {
    TrialSpec {
        timeline_interval: Some(WINDOW),
        ..TrialSpec::constant(rate, d, size.clone())
    }
}

fn calibrate_size(
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
fn confirm(
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
fn host_fault(o: &bench::search::TrialOutcome) -> Option<&str> {
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
fn holds(tries: u32, mut trial: impl FnMut() -> Result<bool>) -> Result<bool> {
    for _ in 0..tries {
        if trial()? {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn through_a_dut_only_the_testers_own_loss_fails_a_rate() {
        let o = |lost, dut_ring, tester_ring| bench::search::TrialOutcome {
            sent: 1000,
            lost,
            loss_split: Some(bench::search::LossSplit {
                dut_ring,
                dut_drops: 0,
                tester_ring,
                elsewhere: lost - dut_ring - tester_ring,
            }),
            ..Default::default()
        };
        assert!(tester_held(&o(0, 0, 0), false) && tester_held(&o(0, 0, 0), true));
        // The floor's ring overflowed in a stall: the tester held.
        assert!(tester_held(&o(30, 30, 0), true));
        // In loopback there is no DUT: every loss is the tester's.
        assert!(!tester_held(&o(30, 30, 0), false));
        // The tester's own ring, or loss nobody claims: not held.
        assert!(!tester_held(&o(5, 0, 5), true));
        assert!(!tester_held(&o(5, 0, 0), true));
    }

    /// The tester's receive drops in at most half the windows of a load
    /// it offered as asked: a stall, not its limit.
    #[test]
    fn receive_drops_in_few_windows_do_not_fail_a_rate() {
        let o = |lossy: usize, held: bool, beyond: bool| {
            let lost: Vec<u64> = (0..10).map(|i| u64::from(i < lossy) * 7).collect();
            bench::search::TrialOutcome {
                sent: 1000,
                lost: lost.iter().sum(),
                tester_limited: true,
                tester_dropped: lost.iter().sum(),
                load_held: held,
                fault_beyond_receive: beyond,
                measurement_fault: Some("the tester's receive ring dropped frames".into()),
                timeline: Some(bench::search::LossTimeline {
                    interval_ns: 100_000_000,
                    sent: vec![100; 10],
                    lost,
                    last_lost_ns: None,
                }),
                ..Default::default()
            }
        };
        for through in [false, true] {
            assert!(tester_held(&o(1, true, false), through));
            assert!(tester_held(&o(5, true, false), through));
            assert!(!tester_held(&o(6, true, false), through));
            // The generator did not offer the load, or something else
            // spoiled the trial: the windows tell nothing.
            assert!(!tester_held(&o(1, false, false), through));
            assert!(!tester_held(&o(1, true, true), through));
        }
        // Through a DUT, its own losses in other windows do not count.
        let mut floor = o(1, true, false);
        floor.lost += 6 * 3;
        let tl = floor.timeline.as_mut().unwrap();
        for l in &mut tl.lost[4..] {
            *l += 3;
        }
        floor.loss_split = Some(bench::search::LossSplit {
            dut_ring: 18,
            dut_drops: 0,
            tester_ring: 7,
            elsewhere: 0,
        });
        assert!(tester_held(&floor, true));
        assert!(
            !tester_held(&floor, false),
            "in loopback every loss is the tester's"
        );
        assert_eq!(
            fewest_windows_holding(10, &[(9, 4), (9, 0), (9, 7), (9, 5)]),
            2
        );
        assert_eq!(fewest_windows_holding(0, &[(9, 4)]), 0);
        // Without a timeline, any drop of the tester's fails the rate.
        let mut untimed = o(1, true, false);
        untimed.timeline = None;
        assert!(!tester_held(&untimed, false));
    }

    #[test]
    fn of_two_passes_the_higher_maximum_is_kept_with_every_trial() {
        let pass = |max, trials| SizeCalibration {
            size: FrameSize::Fixed(64),
            max_rate_fps: max,
            generator_max_fps: 2e6,
            latency_floor: LatencySummary::default(),
            trials,
            path: LOOPBACK.into(),
            other_paths: Vec::new(),
        };
        let h = higher(pass(1.11e6, 20), pass(1.77e6, 25));
        assert_eq!((h.max_rate_fps, h.trials), (1.77e6, 45));
        let h = higher(pass(1.9e6, 20), pass(1.5e6, 25));
        assert_eq!((h.max_rate_fps, h.trials), (1.9e6, 45));
    }

    #[test]
    fn only_the_hosts_faults_are_run_again() {
        let o = |fault: Option<&str>, limited| bench::search::TrialOutcome {
            measurement_fault: fault.map(String::from),
            tester_limited: limited,
            ..Default::default()
        };
        assert_eq!(host_fault(&o(None, false)), None);
        assert_eq!(host_fault(&o(Some("paused"), false)), Some("paused"));
        // The tester fell behind or dropped frames: a limit, the answer.
        assert_eq!(host_fault(&o(Some("fell behind"), true)), None);
    }

    #[test]
    fn a_rate_holds_when_one_of_three_trials_passes() {
        let seq = |answers: &[bool]| {
            let mut it = answers.iter().copied();
            let mut n = 0;
            let r = holds(Precision::FULL.tries, || {
                n += 1;
                Ok(it.next().unwrap())
            })
            .unwrap();
            (r, n)
        };
        assert_eq!(seq(&[true]), (true, 1));
        assert_eq!(seq(&[false, true]), (true, 2), "a stall once");
        assert_eq!(seq(&[false, false, true]), (true, 3), "a stall twice");
        assert_eq!(seq(&[false, false, false]), (false, 3), "beyond the tester");
    }

    /// The confirmation keeps a rate one of three trials holds at, steps
    /// 3 % down from one that none holds at, and stops after its steps.
    #[test]
    fn the_maximum_is_confirmed_by_one_of_three_full_trials() {
        // A pause fails the first two trials at every rate: kept.
        let mut n = 0;
        let kept = confirm(1e6, Precision::FULL, |_| {
            n += 1;
            Ok(n % 3 == 0)
        })
        .unwrap();
        assert_eq!((kept, n), (1e6, 3));
        // Beyond the tester above 0.95 Mfps: two steps down.
        let mut rates = Vec::new();
        let lo = confirm(1e6, Precision::FULL, |r| {
            rates.push(r);
            Ok(r <= 0.95e6)
        })
        .unwrap();
        assert!((lo - 1e6 * 0.97 * 0.97).abs() < 1e-3, "{lo}");
        assert_eq!(rates.len(), 3 + 3 + 1, "{rates:?}");
        // Never holds: four steps, then it stops.
        let lo = confirm(1e6, Precision::FULL, |_| Ok(false)).unwrap();
        assert!((lo - 1e6 * 0.97f64.powi(4)).abs() < 1e-3, "{lo}");
        // Coarse: no confirmation.
        assert_eq!(confirm(1e6, Precision::COARSE, |_| Ok(false)).unwrap(), 1e6);
    }

    #[test]
    fn coarse_calibration_is_asked_for_by_name_only() {
        assert_eq!(Precision::parse(None).unwrap(), Precision::FULL);
        assert_eq!(Precision::parse(Some("full")).unwrap(), Precision::FULL);
        let c = Precision::parse(Some(" coarse ")).unwrap();
        assert_eq!(c, Precision::COARSE);
        assert!(c.width > Precision::FULL.width && c.tries == 1 && c.confirm_steps == 0);
        assert!(c.passes == 1 && Precision::FULL.passes == 2);
        assert_eq!(c.settle, Duration::ZERO, "the test suite does not wait");
        let e = Precision::parse(Some("fast")).unwrap_err().to_string();
        assert!(
            e.contains("SOFTROUTER_CALIBRATION") && e.contains("\"fast\""),
            "{e}"
        );
        // One trial a rate: a single failure is the answer.
        let mut n = 0;
        assert!(!holds(Precision::COARSE.tries, || {
            n += 1;
            Ok(false)
        })
        .unwrap());
        assert_eq!(n, 1);
    }

    fn cal(path: &str, sizes: &[(usize, f64)]) -> Calibration {
        Calibration {
            backend: TesterBackend::Xdp,
            ipv6: false,
            tx_path: String::new(),
            sizes: sizes
                .iter()
                .map(|&(b, r)| SizeCalibration {
                    size: FrameSize::Fixed(b),
                    max_rate_fps: r,
                    generator_max_fps: r * 1.1,
                    latency_floor: LatencySummary {
                        min_ns: 1000,
                        ..LatencySummary::default()
                    },
                    trials: 10,
                    path: path.to_string(),
                    other_paths: Vec::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn the_lower_maximum_wins_per_size_and_says_which() {
        let lo = cal(LOOPBACK, &[(64, 4.7e6), (1518, 0.8e6), (512, 2e6)]);
        let mut fl = cal(FLOOR, &[(64, 2.1e6), (1518, 0.9e6)]);
        fl.sizes[0].latency_floor.min_ns = 9000;
        let c = lo.lower(&fl);
        let s64 = &c.sizes[0];
        assert_eq!((s64.max_rate_fps, s64.path.as_str()), (2.1e6, FLOOR));
        assert_eq!(s64.generator_max_fps, 2.1e6 * 1.1);
        assert_eq!(s64.other_paths, vec![(LOOPBACK.to_string(), 4.7e6)]);
        assert_eq!(s64.latency_floor.min_ns, 1000, "the wire's floor stays");
        assert_eq!(s64.trials, 20);
        let s1518 = &c.sizes[1];
        assert_eq!((s1518.max_rate_fps, s1518.path.as_str()), (0.8e6, LOOPBACK));
        assert_eq!(s1518.other_paths, vec![(FLOOR.to_string(), 0.9e6)]);
        // A path that passed nothing is no maximum.
        let broken = cal(LOOPBACK, &[(64, 4.7e6)]).lower(&cal(FLOOR, &[(64, 0.0)]));
        assert_eq!(broken.sizes[0].max_rate_fps, 4.7e6);
        assert_eq!(broken.sizes[0].other_paths, vec![(FLOOR.to_string(), 0.0)]);
        // A size the other path did not calibrate keeps its own.
        assert_eq!(
            (c.sizes[2].max_rate_fps, c.sizes[2].other_paths.len()),
            (2e6, 0)
        );
        let src = c.max_rate_source();
        assert!(src.contains("calibrated"), "{src}");
        assert!(
            src.contains("64 B 2.10 Mfps through the floor DUT (loopback 4.70)"),
            "{src}"
        );
        assert!(
            src.contains("1518 B 0.80 Mfps in loopback (floor DUT 0.90)"),
            "{src}"
        );
        assert!(
            src.contains("512 B 2.00 Mfps in loopback;")
                || src.ends_with("512 B 2.00 Mfps in loopback"),
            "{src}"
        );
    }
}
