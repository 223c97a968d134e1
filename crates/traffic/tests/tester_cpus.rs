//! The `xdp` tester on several CPUs (`--tester-cpus`): one generator and
//! one receive queue per CPU, in loopback (root only; skipped otherwise,
//! and on a single CPU).
//!
//! The ignored `scaling` prints the calibrated maximum on one tester CPU
//! and on two (`bench/floor/tcpus.sh`).

use std::time::Duration;

use bench::plan::{TesterBackend, TrafficPlan};
use bench::search::{Trial, TrialSpec};
use bench::sizes::FrameSize;
use testbed::{Netns, VethPair};
use traffic::NetTrial;

/// Both tests change the process-wide tester CPUs: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The last two CPUs this process may use, if it has two.
fn two_cpus() -> Option<Vec<usize>> {
    let all = traffic::cpu::allowed_cpus();
    (all.len() >= 2).then(|| all[all.len() - 2..].to_vec())
}

/// A tester-to-tester wire with `queues` queues and `flows` flows.
fn wire(ns: &Netns, queues: u32, flows: u32) -> (VethPair, TrafficPlan) {
    let veth = VethPair::new(ns, ns, queues).unwrap();
    let mut plan = traffic::wire_plan(ns, &veth, TesterBackend::Xdp, false, flows).unwrap();
    plan.queues = queues as u16;
    (veth, plan)
}

#[test]
fn two_tester_cpus_send_and_count_every_frame() {
    if !testbed::require_root("two_tester_cpus_send_and_count_every_frame") {
        return;
    }
    let Some(cpus) = two_cpus() else {
        eprintln!("SKIP two_tester_cpus_send_and_count_every_frame: one CPU");
        return;
    };
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    traffic::cpu::set_tester_cpus(&cpus);
    let ns = Netns::new("tc2").unwrap();
    let (veth, plan) = wire(&ns, 2, 4);
    let mut t = NetTrial::new(plan, None, traffic::TrafficOptions::default()).unwrap();
    let paths = t.tx_paths().join("; ");
    eprintln!("{paths}");
    // Each end's two receive queues, each on the CPU that feeds it.
    let on = format!("2 NAPI thread(s) on CPU(s) {:?}", {
        let mut c = cpus.clone();
        c.sort_by_key(|c| c % 2);
        c
    });
    assert!(paths.contains(&format!("{}: {on}", veth.b)), "{paths}");
    // The helpers' first test run pays their first set-up (it paused the
    // offered load for 40-150 ms and once lost frames in a veth ring
    // here): not counted.
    let warm = TrialSpec::constant(20_000.0, Duration::from_millis(100), FrameSize::Fixed(64));
    t.run(&warm).unwrap();
    for (rate, secs) in [(50_000.0, 0.4), (20_000.0, 0.25)] {
        let spec = TrialSpec::constant(rate, Duration::from_secs_f64(secs), FrameSize::Fixed(64));
        let o = t.run(&spec).unwrap();
        eprintln!("{o:?}");
        // Each generator plans half the frames: all sent means both sent.
        let planned = (rate * secs) as u64;
        assert_eq!(o.sent, planned, "both generators sent their share");
        assert_eq!((o.received, o.lost, o.duplicates), (planned, 0, 0));
        assert_eq!(o.latency.count, o.sent);
        // Not a timing test: whether the rate held (the second
        // generator's call may start late, see bench/floor/HISTORY.md) is
        // this shared machine's to say, not this test's.
    }
    // An odd burst splits 201 + 200. Each share fits its receive queue's
    // 256-frame veth ring whole: a burst of 2001 (1001 a queue, sent as
    // fast as the generator can) once lost 491 frames there when a
    // NAPI thread ran late, which is the host's doing, not the tester's.
    let mut b = TrialSpec::constant(1e9, Duration::ZERO, FrameSize::Fixed(128));
    b.burst = Some(401);
    let o = t.run(&b).unwrap();
    assert_eq!((o.sent, o.received, o.lost), (401, 401, 0), "{o:?}");
    drop(t);
    drop(veth);
    traffic::cpu::set_tester_cpu(None);
}

/// A plan whose flows do not divide over the CPUs is refused, not sent
/// lopsided.
#[test]
fn flows_must_divide_over_the_tester_cpus() {
    if !testbed::require_root("flows_must_divide_over_the_tester_cpus") {
        return;
    }
    let Some(cpus) = two_cpus() else {
        return;
    };
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    traffic::cpu::set_tester_cpus(&cpus);
    let ns = Netns::new("tc3").unwrap();
    let (veth, plan) = wire(&ns, 2, 3);
    let mut t = NetTrial::new(plan, None, traffic::TrafficOptions::default()).unwrap();
    let spec = TrialSpec::constant(10_000.0, Duration::from_millis(100), FrameSize::Fixed(64));
    let e = format!("{:#}", t.run(&spec).unwrap_err());
    assert!(e.contains("multiple of 2 flows"), "{e}");
    drop(t);
    drop(veth);
    traffic::cpu::set_tester_cpu(None);
}

/// The calibrated maximum in loopback on one tester CPU and on two (the
/// last ones), 64 B: indicative on a shared machine.
#[test]
#[ignore]
fn scaling() {
    if !testbed::require_root("scaling") {
        return;
    }
    let Some(cpus) = two_cpus() else {
        return;
    };
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let mut max = Vec::new();
    for n in [1, 2] {
        traffic::cpu::set_tester_cpus(&cpus[2 - n..]);
        let c = traffic::calibrate(TesterBackend::Xdp, &[FrameSize::Fixed(64)], false).unwrap();
        let s = &c.sizes[0];
        println!(
            "tcpus n={n} cpus={:?} max_fps={:.0} generator_max_fps={:.0}",
            &cpus[2 - n..],
            s.max_rate_fps,
            s.generator_max_fps
        );
        max.push(s.max_rate_fps);
    }
    println!("tcpus ratio={:.2}", max[1] / max[0]);
    traffic::cpu::set_tester_cpu(None);
}

/// Trials at a ladder of rates (`SR_TCPUS_RATES`, frames/s) in loopback on
/// the last two CPUs, 64 B, 0.3 s: what limits two tester CPUs (prints).
#[test]
#[ignore]
fn ladder() {
    if !testbed::require_root("ladder") {
        return;
    }
    let Some(cpus) = two_cpus() else {
        return;
    };
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    traffic::cpu::set_tester_cpus(&cpus);
    let ns = Netns::new("tc4").unwrap();
    let (veth, plan) = wire(&ns, 2, 2);
    let mut t = NetTrial::new(plan, None, traffic::TrafficOptions::default()).unwrap();
    let rates =
        std::env::var("SR_TCPUS_RATES").unwrap_or_else(|_| "1000000,3000000,6000000".into());
    for r in rates.split(',') {
        let rate: f64 = r.parse().unwrap();
        let spec = TrialSpec::constant(rate, Duration::from_millis(300), FrameSize::Fixed(64));
        let o = t.run(&spec).unwrap();
        println!(
            "tcpus_ladder offered={rate:.0} achieved={:.0} sent={} received={} lost={} limited={:?} fault={:?}",
            o.achieved_tx_rate_fps, o.sent, o.received, o.lost, o.tester_limit_reason, o.measurement_fault
        );
    }
    drop(t);
    drop(veth);
    traffic::cpu::set_tester_cpu(None);
}
