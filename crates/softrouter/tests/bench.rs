//! `softrouter bench` end to end (issue 4): every test type against the
//! `linux` and `softrouter` DUTs on the namespace testbed, with short
//! trials, through the real command line; the JSON results are checked for
//! what each RFC 2544 procedure must produce. Needs root; skipped otherwise.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

const EXPERIMENT: &str = r#"
tests = ["throughput", "latency", "loss", "back-to-back", "recovery"]
sizes = ["64"]
trial_seconds = 0.3
pause_seconds = 0.1
drain_seconds = 0.5
latency_seconds = 0.3
resolution_pct = 5.0
loss_step_pct = 10.0
b2b_max_burst_seconds = 0.05
recovery_overload_seconds = 0.3
recovery_seconds = 0.3
flows = 4
"#;

fn bench(dir: &Path, dut: &str, extra: &[&str]) -> serde_json::Value {
    let exp = dir.join("exp.toml");
    std::fs::write(&exp, EXPERIMENT).unwrap();
    let json = dir.join(format!("{dut}.json"));
    let csv = dir.join(format!("{dut}.csv"));
    let child = Command::new(env!("CARGO_BIN_EXE_softrouter"))
        .args([
            "bench",
            "-e",
            exp.to_str().unwrap(),
            "--dut",
            dut,
            "--quiet",
        ])
        .args([
            "--json",
            json.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    // Everything the benchmark made is gone (names carry its pid).
    let left = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let left = String::from_utf8_lossy(&left.stdout);
    assert!(
        !left.contains(&format!("sr{}x", pid % 10000)),
        "namespaces left behind: {left}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench --dut {dut} failed:\n{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    for title in ["throughput", "latency", "loss", "back-to-back", "recovery"] {
        assert!(stdout.contains(title), "table {title} printed:\n{stdout}");
    }
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let trials: usize = r["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["trials"].as_array().unwrap().len())
        .sum();
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(
        csv_text.lines().count(),
        trials + 1,
        "a header and one CSV row per trial"
    );
    r
}

fn check(r: &serde_json::Value, dut: &str) {
    assert_eq!(r["meta"]["dut"]["kind"], dut);
    assert!(!r["meta"]["dut"]["version"].as_str().unwrap().is_empty());
    assert!(r["meta"]["max_rate_source"]
        .as_str()
        .unwrap()
        .contains("calibrated"));
    let tests = r["tests"].as_array().unwrap();
    let kinds: Vec<&str> = tests.iter().map(|t| t["test"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["throughput", "latency", "loss", "back-to-back", "recovery"],
        "{dut}"
    );
    for t in tests {
        let trials = t["trials"].as_array().unwrap();
        assert!(!trials.is_empty(), "{dut} {}: trials recorded", t["test"]);
        for tr in trials {
            let o = &tr["outcome"];
            // The identity the analyzer guarantees for every trial.
            assert_eq!(
                o["sent"].as_u64().unwrap() - o["lost"].as_u64().unwrap(),
                o["received"].as_u64().unwrap() - o["duplicates"].as_u64().unwrap(),
                "{dut}: sent - lost = unique received: {o}"
            );
            // CPU figures of the DUT with every trial.
            assert!(
                o["sys"]["cpus"].as_array().is_some_and(|c| !c.is_empty()),
                "{dut}: sys stats"
            );
            assert!(
                o["dut_stats"]["cpu"]["dut_cpu_s"].is_number(),
                "{dut}: dut cpu"
            );
        }
    }
    let tp = &tests[0]["result"];
    let fps = tp["fps"]
        .as_f64()
        .expect("a throughput (or its tester-limited lower bound)");
    assert!(fps > 1000.0, "{dut}: {fps} fps");
    let lat = &tests[1]["result"]["mean"];
    assert!(
        lat["count"].as_u64().unwrap() > 0 && lat["min_ns"].as_u64().unwrap() > 0,
        "{dut}: {lat}"
    );
    assert!(lat["p99_ns"].as_u64().unwrap() >= lat["median_ns"].as_u64().unwrap());
    let loss = tests[2]["result"]["points"].as_array().unwrap();
    assert_eq!(
        loss[0]["load_pct"].as_f64().unwrap(),
        100.0,
        "loss series starts at 100 %"
    );
    let b2b = &tests[3]["result"];
    assert!(
        b2b["bursts"].as_array().is_some_and(|b| !b.is_empty()),
        "{dut}: {b2b}"
    );
    let rec = &tests[4]["result"];
    // 110 % of the throughput, capped at the maximum rate (flagged).
    let over = rec["overload_rate_fps"].as_f64().unwrap();
    let max = tp["max_rate_fps"].as_f64().unwrap();
    if rec["capped"].as_bool().unwrap() {
        assert!(
            (over - max).abs() < 1.0,
            "{dut}: capped at the maximum: {rec}"
        );
    } else {
        assert!(over > fps * 1.05, "{dut}: overload above throughput: {rec}");
    }
}

#[test]
fn every_test_type_against_linux() {
    if !testbed::require_root("bench linux") {
        return;
    }
    let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let r = bench(dir.path(), "linux", &[]);
    check(&r, "linux");
    let cfg = &r["meta"]["dut"]["config"];
    assert!(
        cfg.to_string().contains("forwarding"),
        "linux DUT configuration recorded: {cfg}"
    );
}

#[test]
fn every_test_type_against_softrouter() {
    if !testbed::require_root("bench softrouter") {
        return;
    }
    let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let r = bench(dir.path(), "softrouter", &["--mode", "interrupt"]);
    check(&r, "softrouter");
    // softrouter's own figures with every trial: cycles per stage, drops.
    let tr = &r["tests"][0]["trials"][0]["outcome"]["dut_stats"];
    assert!(
        tr.to_string().contains("cycles"),
        "softrouter stage cycles per trial: {tr}"
    );
    assert!(r["meta"]["dut"]["config"]["config"]
        .as_str()
        .unwrap()
        .contains("afxdp"));
}

#[test]
fn bad_experiment_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("bad.toml");
    std::fs::write(&exp, "sizes = [\"64\"]\ntrial_seconds = \"long\"\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_softrouter"))
        .args(["bench", "-e", exp.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("bad.toml:2") && e.contains("trial_seconds"),
        "{e}"
    );
}
