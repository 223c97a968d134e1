//! `softrouter bench --profile-stages` end to end: the kernel DUTs' cycles
//! per packet split by stage (paper 001's Table II, `dut::stages`) with a
//! real perf on the namespace testbed. Needs root and perf; skipped
//! otherwise.

use std::process::Command;

mod common;

const EXPERIMENT: &str = r#"
tests = ["throughput"]
sizes = ["64"]
ip = 4
trial_seconds = 0.5
pause_seconds = 0.1
drain_seconds = 0.3
goals = [{ name = "ndr", final_trial_seconds = 0.5, duration_sum_seconds = 0.5, width_pct = 5.0 }, { name = "pdr", final_trial_seconds = 0.5, duration_sum_seconds = 0.5, width_pct = 5.0 }]
flows = 4
profile_stages = true
# A given maximum, not the tester's calibration (9 s): this test is about
# the profile.
max_rate_fps = 1000000
"#;

const STAGES: [&str; 6] = ["rx", "tx", "memory", "skb", "processing", "other"];

/// The NDR trial, else the PDR's (a host stall can spoil every zero-loss
/// trial of a short search), else the fastest loss-free one, as the
/// report picks it, else the one that lost least.
fn trial_at_throughput(trials: &[serde_json::Value]) -> &serde_json::Value {
    let bound = |goal: &str| {
        trials.iter().find(|t| {
            t["bound_for"]
                .as_array()
                .is_some_and(|b| b.iter().any(|g| g == goal))
        })
    };
    bound("ndr")
        .or_else(|| bound("pdr"))
        .or_else(|| {
            trials
                .iter()
                .filter(|t| t["outcome"]["lost"] == 0 && t["outcome"]["sent"].as_u64() > Some(0))
                .max_by(|a, b| {
                    let r = |t: &serde_json::Value| t["spec"]["rate_fps"].as_f64().unwrap_or(0.0);
                    r(a).total_cmp(&r(b))
                })
        })
        .or_else(|| {
            // A short search on a noisy host may end without one: the
            // split is then read at the trial that lost least.
            trials
                .iter()
                .filter(|t| t["outcome"]["sent"].as_u64() > Some(0))
                .min_by_key(|t| t["outcome"]["lost"].as_u64().unwrap_or(u64::MAX))
        })
        .expect("a trial that sent frames")
}

/// The kernel's router and Open vSwitch (when installed) in one run,
/// each with its split at the NDR. (The bridge is the kernel's own path
/// too, profiled the same way: not run again here.)
#[test]
fn kernel_duts_cycles_per_packet_by_stage() {
    if !testbed::require_root("bench --profile-stages") {
        return;
    }
    if Command::new("perf").arg("--version").output().is_err() {
        eprintln!("kernel_duts_cycles_per_packet_by_stage: skipped (no perf)");
        return;
    }
    let mut duts = vec!["linux"];
    if std::path::Path::new("/usr/sbin/ovs-vswitchd").exists() {
        duts.push("ovs");
    }
    let list = duts.join(",");
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("exp.toml");
    std::fs::write(&exp, EXPERIMENT).unwrap();
    let json = dir.path().join("results.json");
    common::run_bench(&[
        "-e",
        exp.to_str().unwrap(),
        "--dut",
        &list,
        "--quiet",
        "--json",
        json.to_str().unwrap(),
    ]);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for (i, dut) in duts.iter().enumerate() {
        check(dut, &r["runs"][i]);
    }
}

fn check(dut: &str, run: &serde_json::Value) {
    assert_eq!(run["meta"]["dut"]["kind"], dut);
    assert_eq!(run["settings"]["profile_stages"], true);
    let trials = run["tests"][0]["trials"].as_array().unwrap();
    // Every trial was profiled.
    for t in trials {
        let s = &t["outcome"]["dut_stats"]["stages"];
        assert!(s.is_object() && s["error"].is_null(), "{t}");
    }
    let t = trial_at_throughput(trials);
    let d = &t["outcome"]["dut_stats"];
    let s = &d["stages"];
    eprintln!(
        "{dut} NDR trial at {} fps, {} fwd, {} cycles/pkt: stages {s:#}",
        t["spec"]["rate_fps"], t["outcome"]["sent"], d["cpu"]["soak_cycles_per_packet"]
    );
    assert!(
        s["source"].as_str().unwrap().starts_with("perf cpu-clock"),
        "{s}"
    );
    assert!(s["samples"].as_u64().unwrap() > 0, "{s}");
    let share = |k: &str| s["share_pct"][k].as_f64().unwrap();
    let sum: f64 = STAGES.iter().map(|k| share(k)).sum();
    assert!((sum - 100.0).abs() < 0.01, "shares sum to {sum}: {s}");
    assert!(share("rx") + share("tx") + share("processing") > 0.0, "{s}");
    let cpu = &d["cpu"];
    let whole = cpu["soak_cycles_per_packet"]
        .as_f64()
        .or(cpu["dut_cycles_per_packet"].as_f64())
        .expect("cycles per packet of the trial");
    let cyc: f64 = STAGES
        .iter()
        .map(|k| s["cycles_per_packet"][k].as_f64().unwrap())
        .sum();
    assert!(
        (cyc - whole).abs() <= 1e-6 * whole.max(1.0),
        "stages {cyc} vs trial {whole}: {s}"
    );
    let top = s["top"].as_array().unwrap();
    assert!(!top.is_empty() && top.len() <= 10, "{s}");
    assert!(top
        .iter()
        .all(|e| e["symbol"].is_string() && STAGES.contains(&e["stage"].as_str().unwrap())));
}
