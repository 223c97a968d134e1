//! The `xdp` tester backend (XDP live frames out, XDP counting in) on
//! real namespaces (root only; skipped otherwise): exact counts over a
//! tester-to-tester veth, calibration, and the Linux kernel as a DUT
//! (IPv4, IPv6, dynamic ARP/ND answered by the tester namespace's kernel).
//! The ignored test prints the figures for the report (xdp vs afxdp in
//! loopback, kernel DUT throughput).
//!
//! The programs themselves are unit-tested on crafted frames in the
//! `softrouter-tester` crate (`src/count/tests.rs`, `src/gen/tests.rs`).

mod common;

use std::time::Duration;

use bench::plan::{TesterBackend, TrafficPlan};
use bench::search::{Trial, TrialSpec};
use bench::sizes::{FrameSize, Mix};
use common::{assert_telemetry, kernel_dut_plan, phases_with_timeline_lose_nothing, quick, wire};
use testbed::Star;
use traffic::{calibrate, NetTrial};

/// star(2), kernel forwarding, GRO on the DUT veths (NAPI, so they accept
/// the tester's XDP_TX frames); no static neighbors.
fn kernel_dut(ipv6: bool, flows: u32) -> (Star, TrafficPlan) {
    let star = testbed::star(2).unwrap();
    for p in &star.ports {
        star.dut()
            .run(&["ethtool", "-K", &p.dut_if, "gro", "on"])
            .unwrap();
    }
    let plan = kernel_dut_plan(&star, ipv6, flows, TesterBackend::Xdp);
    (star, plan)
}

/// `xdp` over a tester-to-tester wire: exact counts, latency, learning,
/// bursts, phases and timeline.
/// The tests of this file one at a time: each generator spins on a CPU
/// for its whole trial, and three at once on two CPUs starve each other
/// (a late start beyond the grace cuts a trial short).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn xdp_loopback_counts_exactly() {
    if !testbed::require_root("xdp_loopback_counts_exactly") {
        return;
    }
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    for ipv6 in [false, true] {
        let w = wire("xw", TesterBackend::Xdp, ipv6, 4);
        let mut t = NetTrial::new(w.plan.clone(), None, quick()).unwrap();
        for size in [FrameSize::Fixed(64), FrameSize::Mix(Mix::cisco())] {
            let spec = TrialSpec::constant(20_000.0, Duration::from_millis(500), size.clone());
            let o = t.run(&spec).unwrap();
            eprintln!("ipv6={ipv6} {size}: {o:?}");
            assert_eq!(o.sent, 10_000, "{size}");
            assert_eq!((o.received, o.lost), (10_000, 0), "{size}");
            assert_eq!((o.duplicates, o.reordered), (0, 0));
            assert!(!o.tester_limited, "{:?}", o.tester_limit_reason);
            assert!((o.achieved_tx_rate_fps - 20_000.0).abs() < 400.0, "{o:?}");
            assert_eq!(o.latency.count, o.sent);
            let l = &o.latency;
            assert!(l.min_ns > 0 && l.min_ns <= l.median_ns && l.median_ns <= l.p99_ns);
            assert!(l.p99_ns <= l.max_ns && l.median_ns < 5_000_000, "{l:?}");
        }
        assert!(t.learning().unwrap().complete);
        let mut b = TrialSpec::constant(1e9, Duration::ZERO, FrameSize::Fixed(128));
        b.burst = Some(2000);
        let o = t.run(&b).unwrap();
        assert_eq!((o.sent, o.received, o.lost), (2000, 2000, 0), "{o:?}");
        phases_with_timeline_lose_nothing(&mut t);
    }
}

#[test]
fn xdp_calibration_gives_a_positive_rate() {
    if !testbed::require_root("xdp_calibration_gives_a_positive_rate") {
        return;
    }
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let c = calibrate(TesterBackend::Xdp, &[FrameSize::Fixed(64)], false).unwrap();
    eprintln!("{}", serde_json::to_string(&c).unwrap());
    let s = &c.sizes[0];
    assert!(s.max_rate_fps > 0.0 && s.generator_max_fps >= s.max_rate_fps);
    assert!(s.latency_floor.count > 0 && s.latency_floor.min_ns > 0);
}

#[test]
fn xdp_kernel_dut_forwards_v4_and_v6_without_loss() {
    if !testbed::require_root("xdp_kernel_dut_forwards_v4_and_v6_without_loss") {
        return;
    }
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    for ipv6 in [false, true] {
        let (star, plan) = kernel_dut(ipv6, 8);
        let mut t = NetTrial::new(plan, None, quick()).unwrap();
        let spec = TrialSpec::constant(10_000.0, Duration::from_millis(500), FrameSize::Fixed(128));
        let o = t.run(&spec).unwrap();
        eprintln!("ipv6={ipv6}: {o:?}");
        assert_eq!((o.sent, o.received, o.lost), (5000, 5000, 0), "ipv6={ipv6}");
        assert!(!o.tester_limited, "{:?}", o.tester_limit_reason);
        assert!(o.latency.count == o.sent && o.latency.median_ns < 5_000_000);
        assert_telemetry(&o, true);
        assert_eq!(o.measurement_fault, None);
        drop(t);
        drop(star);
    }
}

/// The kernel DUT at 64 B through star(2) measured with the xdp tester:
/// a rate ladder (ignored; prints).
#[test]
#[ignore]
fn xdp_kernel_dut_ladder() {
    if !testbed::require_root("xdp_kernel_dut_ladder") {
        return;
    }
    let (star, plan) = kernel_dut(false, 1);
    let mut t = NetTrial::new(plan, None, quick()).unwrap();
    for r in [100e3, 200e3, 300e3, 400e3, 600e3, 800e3, 1.2e6, 2e6, 50e6] {
        let o = t
            .run(&TrialSpec::constant(
                r,
                Duration::from_secs(1),
                FrameSize::Fixed(64),
            ))
            .unwrap();
        eprintln!(
            "kernel DUT 64B offered {:.0} achieved {:.0} sent {} received {} lost {} ({:.2}%) limited {:?} lat median {} ns",
            r, o.achieved_tx_rate_fps, o.sent, o.received, o.lost,
            100.0 * o.lost as f64 / o.sent.max(1) as f64, o.tester_limit_reason, o.latency.median_ns
        );
    }
    drop(t);
    drop(star);
}

/// Figures for the report (ignored): loopback calibration at 64 B with
/// xdp and afxdp.
#[test]
#[ignore]
fn xdp_figures() {
    if !testbed::require_root("xdp_figures") {
        return;
    }
    for b in [TesterBackend::Xdp, TesterBackend::AfXdp] {
        let c = calibrate(b, &[FrameSize::Fixed(64)], false).unwrap();
        let s = &c.sizes[0];
        eprintln!(
            "{b:?}: zero-loss max {:.3} Mfps, generator alone {:.3} Mfps, floor median {} ns",
            s.max_rate_fps / 1e6,
            s.generator_max_fps / 1e6,
            s.latency_floor.median_ns
        );
    }
}
