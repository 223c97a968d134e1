//! Set-up shared by the traffic engine's namespace tests (`traffic.rs`,
//! `traffic_xdp.rs`): a tester-to-tester wire, the Linux kernel as a DUT on
//! `testbed::star`, and short trial options.
#![allow(dead_code)] // each test file uses part of these helpers

use std::time::Duration;

use bench::plan::{TesterBackend, TesterPort, TrafficPlan};
use bench::search::{Phase, Trial, TrialOutcome, TrialSpec};
use bench::sizes::FrameSize;
use testbed::link::read_mac;
use testbed::{Netns, Star, VethPair};
use traffic::{wire_plan, NetTrial, TrafficOptions};

/// Trial options with a short drain.
pub fn quick() -> TrafficOptions {
    TrafficOptions {
        drain_max: Duration::from_secs(1),
        // Short trials on a shared 2-CPU machine: a few ms of scheduling
        // delay at the end of a 0.5 s trial is 1 %; these tests check
        // counts, not the tester's pacing.
        rate_tolerance_pct: 5.0,
        ..TrafficOptions::default()
    }
}

/// One namespace with one veth whose ends are both tester ports.
pub struct Wire {
    pub plan: TrafficPlan,
    _veth: VethPair,
    _ns: Netns,
}

/// A [`Wire`] in a new namespace named after `prefix`.
pub fn wire(prefix: &str, backend: TesterBackend, ipv6: bool, flows: u32) -> Wire {
    let ns = Netns::new(prefix).unwrap();
    let veth = VethPair::new(&ns, &ns, 1).unwrap();
    let plan = wire_plan(&ns, &veth, backend, ipv6, flows).unwrap();
    Wire {
        plan,
        _veth: veth,
        _ns: ns,
    }
}

/// The plan for port 0 -> port 1 of `star` with the Linux kernel
/// forwarding in its DUT namespace: every star port is a tester port
/// cabled to the DUT.
pub fn kernel_dut_plan(star: &Star, ipv6: bool, flows: u32, backend: TesterBackend) -> TrafficPlan {
    let (t, d) = (star.tester(), star.dut());
    let net = |s: &str| s.split('/').next().unwrap().to_string();
    let ports = star
        .ports
        .iter()
        .map(|p| TesterPort {
            netns: Some(t.name().to_string()),
            iface: p.tester_if.clone(),
            mac: read_mac(Some(t.name()), &p.tester_if).unwrap(),
            v4: p.tester_v4.parse().unwrap(),
            v6: p.tester_v6.parse().unwrap(),
            peer_mac: read_mac(Some(d.name()), &p.dut_if).unwrap(),
            peer_v4: p.dut_v4.parse().unwrap(),
            peer_v6: p.dut_v6.parse().unwrap(),
            dest_v4: net(&p.dest_v4_net).parse().unwrap(),
            dest_v6: net(&p.dest_v6_net).parse().unwrap(),
            dut_iface: Some(p.dut_if.clone()),
        })
        .collect();
    TrafficPlan {
        ports,
        pairs: vec![(0, 1)],
        flows_per_pair: flows,
        ipv6,
        backend,
        queues: 1,
        l2: false,
    }
}

/// Two phases (10k then 5k frames/s, 200 ms each) with a 100 ms loss
/// timeline on a lossless path: every frame arrives and the timeline
/// accounts for all of them (the recovery test's trial).
pub fn phases_with_timeline_lose_nothing(t: &mut NetTrial) {
    let mut p = TrialSpec::constant(10_000.0, Duration::ZERO, FrameSize::Fixed(64));
    p.phases = vec![
        Phase {
            rate_fps: 10_000.0,
            duration: Duration::from_millis(200),
        },
        Phase {
            rate_fps: 5_000.0,
            duration: Duration::from_millis(200),
        },
    ];
    p.timeline_interval = Some(Duration::from_millis(100));
    let o = t.run(&p).unwrap();
    assert_eq!((o.sent, o.lost), (3000, 0), "{o:?}");
    let tl = o.timeline.unwrap();
    assert_eq!(tl.sent.iter().sum::<u64>(), 3000);
    assert!(tl.sent.len() >= 4, "{tl:?}");
    assert_eq!(tl.last_lost_ns, None);
}

/// The telemetry every trial through a DUT of our own testbed carries:
/// a loss split that sums to `lost`, steal for every CPU, the DUT ring's
/// time at the offered rate, and (with `gap`) the longest receive gap.
pub fn assert_telemetry(o: &TrialOutcome, gap: bool) {
    let s = o.loss_split.as_ref().expect("loss_split");
    assert_eq!(
        s.dut_ring + s.dut_drops + s.tester_ring + s.elsewhere,
        o.lost,
        "{s:?}"
    );
    let n = o.noise.as_ref().expect("noise");
    let cpus = std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("cpu") && !l.starts_with("cpu "))
        .count();
    assert_eq!(n.steal_pct.len(), cpus, "{n:?}");
    assert!(
        n.steal_pct.iter().all(|p| (0.0..=100.0).contains(p)),
        "{n:?}"
    );
    let holds = 256.0 * 1e6 / o.offered_rate_fps;
    assert!((n.ring_holds_us.unwrap() - holds).abs() < 1e-6, "{n:?}");
    if gap {
        // The DUT's ends polled while the traffic flowed.
        assert!(n.longest_rx_gap_us.is_some_and(|g| g > 0.0), "{n:?}");
    }
}
