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

use std::net::{Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;
use testbed::link::read_mac;
use testbed::{Netns, VethPair};

use super::{NetTrial, TrafficOptions};
use bench::analyzer::LatencySummary;
use bench::plan::{TesterBackend, TesterPort, TrafficPlan};
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
}

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
}

const TRIAL: Duration = Duration::from_millis(300);
/// Length of the confirming trial at the calibrated maximum.
const CONFIRM: Duration = Duration::from_secs(1);
const ABSURD_FPS: f64 = 50_000_000.0;

/// Calibrate the tester for `sizes` on a fresh namespace with one veth
/// pair (both ends tester ports); removed again before returning.
pub fn calibrate(backend: TesterBackend, sizes: &[FrameSize], ipv6: bool) -> Result<Calibration> {
    let ns = Netns::new("cal").context("calibration namespace")?;
    let veth = VethPair::new(&ns, &ns, 1).context("calibration veth")?;
    // Both ends are the tester's: their receive work on its CPU, as in
    // the DUT testbeds (the xdp backend threads its ports' NAPI itself,
    // see `traffic::xdp`; the others use RPS, see `testbed::rps`).
    if let Some(cpu) = super::cpu::tester_cpu().filter(|_| !backend.counts_in_xdp()) {
        for end in [&veth.a, &veth.b] {
            testbed::steer_rps(&ns, end, &[cpu])?;
        }
    }
    let plan = wire_plan(&ns, &veth, backend, ipv6, 1)?;
    let opts = TrafficOptions {
        drain_max: Duration::from_millis(500),
        learning_timeout: Duration::from_secs(2),
        ..TrafficOptions::default()
    };
    let mut t = NetTrial::new(plan, None, opts).context("calibration tester")?;
    let mut out = Calibration {
        backend,
        ipv6,
        tx_path: t.tx_paths().join(", "),
        sizes: Vec::new(),
    };
    for size in sizes {
        super::supported_size(size, ipv6)?;
        out.sizes
            .push(calibrate_size(&mut t, size.effective(ipv6))?);
    }
    drop(t);
    drop(veth);
    drop(ns);
    Ok(out)
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

fn calibrate_size(t: &mut NetTrial, size: FrameSize) -> Result<SizeCalibration> {
    let mut trials = 0;
    let mut run = |rate: f64| -> Result<bench::search::TrialOutcome> {
        trials += 1;
        t.run(&TrialSpec::constant(rate, TRIAL, size.clone()))
    };
    let raw = run(ABSURD_FPS)?;
    let gen_max = raw.achieved_tx_rate_fps;
    let (mut lo, mut hi) = (0.0f64, gen_max);
    let mut rate = gen_max * 0.97;
    for _ in 0..8 {
        let o = run(rate)?;
        let pass = o.lost == 0 && !o.tester_limited && o.sent > 0;
        tracing::debug!(rate, pass, lost = o.lost, reason = ?o.tester_limit_reason, "calibration trial");
        if pass {
            lo = rate;
        } else {
            hi = rate;
        }
        if hi - lo <= hi * 0.03 {
            break;
        }
        rate = (lo + hi) / 2.0;
    }
    // Confirm at full length: the maximum must hold for a whole quick
    // trial, not only 300 ms, or trials at it come out tester-limited at
    // random and results scatter from run to run. Step down 3 % until a
    // 1 s trial passes.
    for _ in 0..4 {
        if lo <= 0.0 {
            break;
        }
        trials += 1;
        let o = t.run(&TrialSpec::constant(lo, CONFIRM, size.clone()))?;
        if o.lost == 0 && !o.tester_limited && o.sent > 0 {
            break;
        }
        lo *= 0.97;
    }
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
    })
}
