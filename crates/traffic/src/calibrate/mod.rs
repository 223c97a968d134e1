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
use bench::sizes::FrameSize;

mod procedure;
#[cfg(test)]
mod tests;
mod verdict;

use procedure::{calibrate_size, Precision};
pub use verdict::tester_held;

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
    /// The sending ports that each get `max_rate_fps` at once: a path's
    /// plan's (one in loopback, the pattern's through a DUT), or the
    /// pattern's after [`Calibration::shared_by`].
    pub senders: u32,
}

impl SizeCalibration {
    /// Whose maximum it is: "in loopback", "through the floor DUT", with
    /// "a port of N " before when N senders share it.
    pub fn whence(&self) -> String {
        let per_port = if self.senders > 1 {
            format!("a port of {} ", self.senders)
        } else {
            String::new()
        };
        format!("{per_port}{}", via(&self.path))
    }
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
                s.senders = o.senders;
            } else {
                s.other_paths.push((o.path.clone(), o.max_rate_fps));
            }
        }
        self
    }

    /// The maxima shared by `senders` sending ports, each port's share
    /// (what a pattern with that many senders may offer per port): one
    /// tester CPU generates and counts for all of them, so a maximum
    /// calibrated with fewer senders is divided among them. Without it a
    /// bidirectional run offered twice the tester's maximum at its top
    /// load.
    pub fn shared_by(mut self, senders: u32) -> Calibration {
        for s in &mut self.sizes {
            if senders > s.senders {
                let share = f64::from(s.senders) / f64::from(senders);
                s.max_rate_fps *= share;
                s.generator_max_fps *= share;
                s.senders = senders;
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
                    s.whence()
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
    let senders = t.senders();
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
        s.senders = senders;
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
