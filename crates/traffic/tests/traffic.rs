//! The traffic engine on real namespaces (root only; skipped otherwise):
//! loopback calibration, exact counts over a tester-to-tester wire, the
//! Linux kernel as a DUT (IPv4, IPv6, with static neighbors and through
//! the tester's ARP/ND answers), and tester-limit detection.
//!
//! Every namespace and veth is created here and removed on drop, also when
//! an assertion fails.

mod common;

use std::time::{Duration, Instant};

use bench::plan::{TesterBackend, TrafficPlan};
use bench::search::{Trial, TrialSpec};
use bench::sizes::{FrameSize, Mix};
use bench::throughput;
use common::{assert_telemetry, kernel_dut_plan, phases_with_timeline_lose_nothing, quick, wire};
use testbed::link::{format_mac, read_mac};
use testbed::Star;
use traffic::{calibrate, NetTrial, TrafficOptions};

/// star(2) with the Linux kernel forwarding in the DUT namespace, and the
/// plan for port 0 -> port 1.
fn kernel_dut(ipv6: bool, static_neighbors: bool, flows: u32) -> (Star, TrafficPlan) {
    let star = testbed::star(2).unwrap();
    let (t, d) = (star.tester(), star.dut());
    if static_neighbors {
        for p in &star.ports {
            let tmac = read_mac(Some(t.name()), &p.tester_if).unwrap();
            for a in [&p.tester_v4, &p.tester_v6] {
                d.ip(&[
                    "neigh",
                    "replace",
                    a,
                    "lladdr",
                    &format_mac(&tmac),
                    "nud",
                    "permanent",
                    "dev",
                    &p.dut_if,
                ])
                .unwrap();
            }
        }
    }
    let plan = kernel_dut_plan(&star, ipv6, flows, TesterBackend::AfXdp);
    (star, plan)
}

#[test]
fn loopback_calibration_gives_a_positive_rate() {
    if !testbed::require_root("loopback_calibration_gives_a_positive_rate") {
        return;
    }
    let c = calibrate(TesterBackend::AfXdp, &[FrameSize::Fixed(64)], false).unwrap();
    eprintln!("{}", serde_json::to_string(&c).unwrap());
    let s = &c.sizes[0];
    assert!(s.max_rate_fps > 0.0);
    assert!(s.generator_max_fps >= s.max_rate_fps);
    assert!(s.latency_floor.count > 0);
    assert!(s.latency_floor.min_ns > 0);
}

#[test]
fn loopback_wire_counts_exactly() {
    if !testbed::require_root("loopback_wire_counts_exactly") {
        return;
    }
    for backend in [TesterBackend::AfXdp, TesterBackend::AfPacket] {
        let w = wire("tw", backend, false, 4);
        let mut t = NetTrial::new(w.plan.clone(), None, quick()).unwrap();
        // Fixed size and IMIX at a modest rate: nothing may be lost.
        for size in [FrameSize::Fixed(64), FrameSize::Mix(Mix::cisco())] {
            let spec = TrialSpec::constant(20_000.0, Duration::from_millis(500), size.clone());
            let o = t.run(&spec).unwrap();
            eprintln!("{backend:?} {size}: {o:?}");
            assert_eq!(o.sent, 10_000, "{backend:?} {size}");
            assert_eq!(o.lost, 0, "{backend:?} {size}");
            assert_eq!(o.received, o.sent);
            assert_eq!((o.duplicates, o.reordered), (0, 0));
            assert!(!o.tester_limited, "{:?}", o.tester_limit_reason);
            assert!((o.achieved_tx_rate_fps - 20_000.0).abs() < 400.0, "{o:?}");
            assert_eq!(o.latency.count, o.sent);
            assert!(o.latency.min_ns > 0 && o.latency.median_ns < 5_000_000);
        }
        assert!(t.learning().unwrap().complete);
        // A burst: exactly that many frames.
        let mut b = TrialSpec::constant(1e9, Duration::ZERO, FrameSize::Fixed(128));
        b.burst = Some(2000);
        let o = t.run(&b).unwrap();
        assert_eq!((o.sent, o.lost), (2000, 0), "{o:?}");
        // Phases with a loss timeline (the recovery test's trial).
        phases_with_timeline_lose_nothing(&mut t);
    }
}

#[test]
fn absurd_rate_is_tester_limited() {
    if !testbed::require_root("absurd_rate_is_tester_limited") {
        return;
    }
    let w = wire("tw", TesterBackend::AfXdp, false, 1);
    let mut t = NetTrial::new(w.plan.clone(), None, quick()).unwrap();
    let spec = TrialSpec::constant(100e6, Duration::from_millis(200), FrameSize::Fixed(64));
    let o = t.run(&spec).unwrap();
    eprintln!("{o:?}");
    assert!(o.tester_limited);
    let why = o.tester_limit_reason.unwrap();
    assert!(why.contains("achieved") || why.contains("behind"), "{why}");
    assert!(o.sent < 20_000_000);
}

#[test]
fn kernel_dut_forwards_v4_and_v6_without_loss() {
    if !testbed::require_root("kernel_dut_forwards_v4_and_v6_without_loss") {
        return;
    }
    for ipv6 in [false, true] {
        let (star, plan) = kernel_dut(ipv6, true, 8);
        let mut t = NetTrial::new(plan, None, quick()).unwrap();
        let spec = TrialSpec::constant(10_000.0, Duration::from_millis(500), FrameSize::Fixed(128));
        let o = t.run(&spec).unwrap();
        eprintln!("ipv6={ipv6}: {o:?}");
        assert_eq!(o.sent, 5000);
        assert_eq!(o.lost, 0, "ipv6={ipv6}");
        assert!(!o.tester_limited, "{:?}", o.tester_limit_reason);
        assert!(o.latency.count == o.sent && o.latency.median_ns < 5_000_000);
        // The DUT ends have no NAPI of their own here (no GRO, no XDP):
        // nothing to measure a receive gap on.
        assert_telemetry(&o, false);
        assert_eq!(o.measurement_fault, None);
        drop(t);
        drop(star);
    }
}

#[test]
fn tester_answers_the_kernels_arp_and_nd() {
    if !testbed::require_root("tester_answers_the_kernels_arp_and_nd") {
        return;
    }
    for ipv6 in [false, true] {
        let (star, plan) = kernel_dut(ipv6, false, 2);
        // No static neighbor: the DUT must resolve 198.18.1.2 /
        // 2001:2:0:1::2, and only our receiver can answer (AF_XDP).
        let mut t = NetTrial::new(plan, None, quick()).unwrap();
        let spec = TrialSpec::constant(5_000.0, Duration::from_millis(400), FrameSize::Fixed(128));
        let o = t.run(&spec).unwrap();
        eprintln!("ipv6={ipv6}: answers {} {o:?}", t.neighbor_answers());
        assert!(t.neighbor_answers() > 0, "ipv6={ipv6}");
        assert_eq!(o.lost, 0, "ipv6={ipv6}");
        assert_eq!(o.received, 2000);
        let neigh = star.dut().ip(&["neigh", "show"]).unwrap();
        assert!(
            neigh.contains(&format_mac(&t.plan().ports[1].mac)),
            "{neigh}"
        );
    }
}

#[test]
fn learning_reports_a_dut_that_forwards_nothing() {
    if !testbed::require_root("learning_reports_a_dut_that_forwards_nothing") {
        return;
    }
    let (star, plan) = kernel_dut(false, true, 1);
    star.dut().set_forwarding(false).unwrap();
    let opts = TrafficOptions {
        learning_timeout: Duration::from_millis(500),
        ..quick()
    };
    let mut t = NetTrial::new(plan, None, opts).unwrap();
    let start = Instant::now();
    let e = t
        .run(&TrialSpec::constant(
            1000.0,
            Duration::from_millis(100),
            FrameSize::Fixed(64),
        ))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no test frame came back"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(3));
}

/// Figures for the report (ignored: ~30 s):
/// `cargo test -p softrouter-traffic --release --test traffic -- --ignored --nocapture measure`
#[test]
#[ignore]
fn measure_tester_and_kernel() {
    if !testbed::require_root("measure_tester_and_kernel") {
        return;
    }
    let mut best = 0.0f64;
    for backend in [TesterBackend::AfXdp, TesterBackend::AfPacket] {
        let c = calibrate(backend, &[FrameSize::Fixed(64)], false).unwrap();
        let s = &c.sizes[0];
        eprintln!(
            "calibration {backend:?} ({}): 64 B max {:.0} fps zero-loss (generator {:.0} fps), \
             latency floor min {} ns median {} ns p99 {} ns",
            c.tx_path,
            s.max_rate_fps,
            s.generator_max_fps,
            s.latency_floor.min_ns,
            s.latency_floor.median_ns,
            s.latency_floor.p99_ns
        );
        if backend == TesterBackend::AfXdp {
            // The DUT trials below use AF_XDP: search from its maximum.
            best = s.max_rate_fps;
        }
    }
    let (star, plan) = kernel_dut(false, true, 16);
    // SR_RPS=<hex mask>: receive processing of the DUT's input port on
    // those CPUs (RPS) instead of the sending CPU, i.e. in the generator's
    // own sendmmsg call (veth has no interrupts).
    if let Ok(mask) = std::env::var("SR_RPS") {
        let dif = &star.ports[0].dut_if;
        star.dut()
            .run(&[
                "sh",
                "-c",
                &format!("echo {mask} > /sys/class/net/{dif}/queues/rx-0/rps_cpus"),
            ])
            .unwrap();
    }
    let mut t = NetTrial::new(plan, None, TrafficOptions::default()).unwrap();
    let max = best;
    let cfg = |max_rate_fps: f64| throughput::ThroughputConfig {
        size: FrameSize::Fixed(64),
        max_rate_fps,
        goals: vec![bench::settings::SearchGoal::from_code("1f1d0l0e2w").unwrap()],
        rate_tolerance_pct: 1.0,
        stream_seconds: 0.0,
    };
    let mut r = throughput::throughput(&mut t, &cfg(max)).unwrap();
    let mut top = max;
    // Stopped at once by a tester limit: the generator could not offer
    // the rate while the DUT's forwarding ran on its CPU. Search again
    // below what it did achieve.
    if r.goals[0].fps.is_none() && r.goals[0].tester_limited {
        top = r.trials[0].outcome.achieved_tx_rate_fps * 0.97;
        eprintln!(
            "first search tester-limited at {max:.0}: {:?}",
            r.goals[0].tester_limit_reason
        );
        r = throughput::throughput(&mut t, &cfg(top)).unwrap();
    }
    for tr in &r.trials {
        eprintln!(
            "  trial {:.0} fps: sent {} lost {} achieved {:.0} limited {:?}",
            tr.spec.rate_fps,
            tr.outcome.sent,
            tr.outcome.lost,
            tr.outcome.achieved_tx_rate_fps,
            tr.outcome.tester_limit_reason
        );
    }
    let k = r.goals[0].fps.unwrap_or(0.0);
    eprintln!(
        "linux kernel DUT star(2) 64 B throughput {k:.0} fps (searched up to {top:.0}, \
         tester-limited {:?}); tester calibrated max / kernel = {:.2}",
        r.goals[0].tester_limit_reason,
        best / k.max(1.0)
    );
}
