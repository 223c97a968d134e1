//! The `xdp` tester with the floor DUT (`dut::floor`: an XDP redirect
//! with the MAC rewrite and nothing else) as its return path, in the
//! bench's placement (tester on the last CPU, DUT on the others, the
//! DUT's CPUs shielded, idle CPUs polling). Root only; skipped otherwise.
//!
//! The ignored `floor_ladder` prints what the tester sent, got back and
//! lost in its own ring at a ladder of rates (`SR_FLOOR_RATES`, frames/s,
//! comma-separated; `SR_FLOOR_SECONDS` per trial): the diagnosis of issue
//! 21 item 2, re-run by `bench/floor/keepup.sh`. `SR_FLOOR_DUT=linux`
//! puts the kernel DUT in the floor's place (what the DUT pays to wake
//! the tester, `bench/floor/HISTORY.md`, twentieth session);
//! `SR_FLOOR_DUT=softrouter` the router with its XDP tier (the binary in
//! `SR_SOFTROUTER_BIN`, else `target/release/softrouter`): the tier's
//! NAPI threads' time a frame at fixed loads, beside the floor's.

use std::time::Duration;

use bench::plan::TesterBackend;
use bench::search::{Trial, TrialOutcome, TrialSpec};
use bench::settings::{DutSettings, Pattern};
use bench::sizes::FrameSize;
use traffic::{NetTrial, TrafficOptions};

/// The floor DUT on its testbed with the bench's CPU split; `None` on a
/// single CPU.
struct FloorBed {
    _awake: Option<testbed::cpu_latency::Held>,
    _shield: Option<testbed::shield::Shield>,
    dut: Option<Box<dyn dut::Dut>>,
}

impl FloorBed {
    fn new() -> Option<FloorBed> {
        let (tester, dut_cpus) = traffic::cpu::split()?;
        traffic::cpu::set_tester_cpu(Some(tester));
        let opts = dut::DutOptions {
            softrouter_bin: Some(softrouter_bin()),
            backend: TesterBackend::Xdp,
            dut_cpus: Some(dut_cpus.clone()),
            tester_cpu: Some(tester),
            ..dut::DutOptions::default()
        };
        let d = dut::start(&ladder_dut(), Pattern::OneToOne, &opts).unwrap();
        // SR_FLOOR_NO_SHIELD: leave the host's threads where they are (on
        // a shared machine the shield moves every compiler onto the
        // tester's CPU).
        let shield = std::env::var_os("SR_FLOOR_NO_SHIELD")
            .is_none()
            .then(|| testbed::shield::Shield::raise(&dut_cpus))
            .flatten();
        Some(FloorBed {
            _awake: testbed::cpu_latency::hold(),
            _shield: shield,
            dut: Some(d),
        })
    }

    fn dut(&self) -> &dyn dut::Dut {
        self.dut.as_deref().expect("running")
    }

    /// A tester on the floor's plan (IPv4, one flow).
    fn trial(&self) -> NetTrial {
        let topts = TrafficOptions {
            drain_max: Duration::from_secs(1),
            ..TrafficOptions::default()
        };
        NetTrial::new(self.dut().plan(false, 1), Some(self.dut().probe()), topts).unwrap()
    }

    fn tester_ifaces(&self) -> Vec<String> {
        self.dut()
            .plan(false, 1)
            .ports
            .into_iter()
            .map(|p| p.iface)
            .collect()
    }
}

impl Drop for FloorBed {
    fn drop(&mut self) {
        if let Some(d) = self.dut.take() {
            let _ = d.stop();
        }
        traffic::cpu::set_tester_cpu(None);
    }
}

/// The DUT of the ladders: the floor, the kernel with
/// `SR_FLOOR_DUT=linux` (its cost a packet against the arrivals' shape),
/// or softrouter with its defaults (the XDP tier) with
/// `SR_FLOOR_DUT=softrouter`.
fn ladder_dut() -> DutSettings {
    match std::env::var("SR_FLOOR_DUT").as_deref() {
        // The default DUT: softrouter as configured by default.
        Ok("softrouter") => DutSettings::default(),
        Ok("linux") => DutSettings::Linux {
            napi_budget: None,
            rps: None,
            napi: None,
            napi_defer_hard_irqs: None,
            gro_flush_timeout_us: None,
        },
        Ok("floor") | Err(_) => DutSettings::Floor {},
        Ok(other) => panic!("SR_FLOOR_DUT={other}: floor, linux or softrouter"),
    }
}

fn softrouter_bin() -> std::path::PathBuf {
    std::env::var_os("SR_SOFTROUTER_BIN").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/softrouter"),
        Into::into,
    )
}

fn env_f64s(name: &str, default: &str) -> Vec<f64> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_string())
        .split(',')
        .map(|s| s.trim().parse().expect(name))
        .collect()
}

/// CPU time so far (ns) and times run of a thread
/// (`/proc/<pid>/schedstat`: on-CPU ns, wait ns, runs; each run a
/// wake-up for a NAPI thread, which sleeps between polls).
fn schedstat(pid: i32) -> Option<(u64, u64)> {
    let f: Vec<u64> = std::fs::read_to_string(format!("/proc/{pid}/schedstat"))
        .ok()?
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    (f.len() == 3).then(|| (f[0], f[2]))
}

type Schedstats = std::collections::HashMap<i32, (u64, u64)>;

/// [`schedstat`] of the tester ends' NAPI threads by pid: what the
/// tester's CPU spent receiving, whatever else ran beside it, and how
/// many wake-ups it took (frames per run says whether wake-ups or frames
/// are the cost). (Threads are recreated when the counter is reloaded:
/// only pids seen before and after a trial count.)
fn napi_schedstat(ifaces: &[String]) -> Schedstats {
    ifaces
        .iter()
        .flat_map(|i| testbed::napi::napi_threads(i).unwrap_or_default())
        .filter_map(|pid| Some((pid, schedstat(pid)?)))
        .collect()
}

/// [`schedstat`] of every NAPI thread that may run only on `cpus`: the
/// DUT ends' threads, whose CPU time is the DUT's receive-and-forward
/// work and whose runs are its wake-ups.
fn dut_schedstat(cpus: &[usize]) -> Schedstats {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Schedstats::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.starts_with("napi/"))
                && testbed::napi::affinity(*pid).ok().as_deref() == Some(cpus)
        })
        .filter_map(|pid| Some((pid, schedstat(pid)?)))
        .collect()
}

/// CPU ns and runs between two readings, over the pids seen in both.
fn since(after: &Schedstats, before: &Schedstats) -> (u64, u64) {
    after
        .iter()
        .filter_map(|(pid, (ns, runs))| {
            let (ns0, runs0) = before.get(pid)?;
            Some((ns.saturating_sub(*ns0), runs.saturating_sub(*runs0)))
        })
        .fold((0, 0), |(a, b), (c, d)| (a + c, b + d))
}

/// A trial, with the tester's receive and the DUT's NAPI CPU time per
/// frame received, and frames per wake-up of each. Run [`warm_up`] first.
fn measured(t: &mut NetTrial, ifaces: &[String], rate: f64, secs: f64) -> String {
    let spec = TrialSpec::constant(rate, Duration::from_secs_f64(secs), FrameSize::Fixed(64));
    let dut_cpus = traffic::cpu::split().map(|(_, d)| d).unwrap_or_default();
    let (before, dut_before) = (napi_schedstat(ifaces), dut_schedstat(&dut_cpus));
    let o = t.run(&spec).unwrap();
    let (napi, runs) = since(&napi_schedstat(ifaces), &before);
    let (dut_ns, dut_runs) = since(&dut_schedstat(&dut_cpus), &dut_before);
    let got = o.received.max(1) as f64;
    format!(
        "{} rx_ns_per_frame={:.0} rx_frames_per_run={:.1} dut_ns_per_frame={:.0} \
         dut_frames_per_run={:.1}",
        report(&o),
        napi as f64 / got,
        got / runs.max(1) as f64,
        dut_ns as f64 / got,
        got / dut_runs.max(1) as f64
    )
}

/// One trial at the ladder's top rate, unmeasured: it sizes the counter's
/// bitmap for every later trial (a reload recreates the NAPI threads).
fn warm_up(t: &mut NetTrial, rates: &[f64], secs: f64) {
    let top = rates.iter().copied().fold(0.0, f64::max);
    let spec = TrialSpec::constant(top, Duration::from_secs_f64(secs), FrameSize::Fixed(64));
    t.run(&spec).unwrap();
}

/// One line per trial, `key=value` words (bench/floor/keepup.sh and
/// pair.sh parse them). `held=1`: the tester held the rate as calibration
/// asks (sent, not limited, nothing lost but what the DUT lost).
fn report(o: &TrialOutcome) -> String {
    let split = o.loss_split.as_ref();
    let (tester_ring, dut_ring, dut_drops) =
        split.map_or((0, 0, 0), |s| (s.tester_ring, s.dut_ring, s.dut_drops));
    let held = traffic::tester_held(o, true);
    format!(
        "offered={:.0} achieved={:.0} sent={} received={} lost={} tester_ring={tester_ring} \
         dut_ring={dut_ring} dut_drops={dut_drops} held={} limited={:?} fault={:?}",
        o.offered_rate_fps,
        o.achieved_tx_rate_fps,
        o.sent,
        o.received,
        o.lost,
        u8::from(held),
        o.tester_limit_reason,
        o.measurement_fault,
    )
}

#[test]
#[ignore]
fn floor_ladder() {
    if !testbed::require_root("floor_ladder") {
        return;
    }
    let Some(bed) = FloorBed::new() else {
        eprintln!("SKIP floor_ladder: one CPU");
        return;
    };
    let mut t = bed.trial();
    let ifaces = bed.tester_ifaces();
    let secs = env_f64s("SR_FLOOR_SECONDS", "1")[0];
    let rates = env_f64s("SR_FLOOR_RATES", "1000000,1500000,2000000,2500000,3000000");
    warm_up(&mut t, &rates, secs);
    for rate in rates {
        println!("floor_ladder {}", measured(&mut t, &ifaces, rate, secs));
    }
    drop(t);
}

/// The same ladder tester to tester over one veth (both ends' receive on
/// the tester CPU, as the calibration runs), for comparison.
#[test]
#[ignore]
fn loopback_ladder() {
    if !testbed::require_root("loopback_ladder") {
        return;
    }
    let Some((tester, _)) = traffic::cpu::split() else {
        eprintln!("SKIP loopback_ladder: one CPU");
        return;
    };
    traffic::cpu::set_tester_cpu(Some(tester));
    let ns = testbed::Netns::new("fll").unwrap();
    let veth = testbed::VethPair::new(&ns, &ns, 1).unwrap();
    let plan = traffic::wire_plan(&ns, &veth, TesterBackend::Xdp, false, 1).unwrap();
    let ifaces = vec![veth.a.clone(), veth.b.clone()];
    let topts = TrafficOptions {
        drain_max: Duration::from_secs(1),
        ..TrafficOptions::default()
    };
    let mut t = NetTrial::new(plan, None, topts).unwrap();
    let secs = env_f64s("SR_FLOOR_SECONDS", "1")[0];
    let rates = env_f64s("SR_FLOOR_RATES", "1000000,1500000,2000000,2500000,3000000");
    warm_up(&mut t, &rates, secs);
    for rate in rates {
        println!("loopback_ladder {}", measured(&mut t, &ifaces, rate, secs));
    }
    drop(t);
    traffic::cpu::set_tester_cpu(None);
}

/// Calibration through the floor DUT: a positive maximum the tester holds
/// (sent and counted with nothing lost) and labelled with its path, which
/// the bench sets beside loopback's (`Calibration::lower`).
#[test]
fn calibration_through_the_floor() {
    if !testbed::require_root("calibration_through_the_floor") {
        return;
    }
    let Some(bed) = FloorBed::new() else {
        eprintln!("SKIP calibration_through_the_floor: one CPU");
        return;
    };
    let d = bed.dut();
    let c = traffic::calibrate_through(
        d.plan(false, 1),
        Some(d.probe()),
        &[FrameSize::Fixed(64)],
        traffic::FLOOR,
    )
    .unwrap();
    eprintln!("{}", c.max_rate_source());
    let s = &c.sizes[0];
    assert_eq!(s.path, traffic::FLOOR);
    assert!(
        s.max_rate_fps > 0.0 && s.generator_max_fps >= s.max_rate_fps,
        "{s:?}"
    );
    assert!(c.max_rate_source().contains("through the floor DUT"));
}
