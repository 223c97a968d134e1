//! `softrouter bench` end to end (issues 4 and 8): every test type against
//! the `linux` and `softrouter` DUTs on the namespace testbed, with short
//! trials, through the real command line; the JSON results are checked for
//! what each RFC 2544 procedure must produce, and several DUTs go into one
//! JSON and one CSV file. Needs root; skipped otherwise.

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

mod common;

static SERIAL: Mutex<()> = Mutex::new(());

const EXPERIMENT: &str = r#"
tests = ["throughput", "latency", "loss", "back-to-back", "recovery"]
sizes = ["64"]
trial_seconds = 0.3
pause_seconds = 0.1
drain_seconds = 0.5
latency_seconds = 0.3
goals = [{ name = "ndr", final_trial_seconds = 0.3, duration_sum_seconds = 0.3, width_pct = 5.0 }, { name = "pdr", final_trial_seconds = 0.3, duration_sum_seconds = 0.3, width_pct = 5.0 }]
loss_step_pct = 10.0
b2b_max_burst_seconds = 0.05
recovery_overload_seconds = 0.3
recovery_seconds = 0.3
flows = 4
"#;

/// Runs `softrouter bench` on `dut` (one kind or a comma-separated list)
/// with the experiment and `extra` flags; returns the JSON document and
/// stdout after checking the CSV and that nothing was left behind.
fn bench(dir: &Path, dut: &str, extra: &[&str]) -> (serde_json::Value, String) {
    let exp = dir.join("exp.toml");
    std::fs::write(&exp, EXPERIMENT).unwrap();
    let json = dir.join("results.json");
    let csv = dir.join("results.csv");
    let (exp, json_s, csv_s) = (
        exp.to_str().unwrap(),
        json.to_str().unwrap(),
        csv.to_str().unwrap(),
    );
    let mut args = vec![
        "-e", exp, "--dut", dut, "--quiet", "--json", json_s, "--csv", csv_s,
    ];
    args.extend_from_slice(extra);
    let out = common::run_bench(&args);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    // `--quiet` means quiet also off a terminal: no line per test or
    // trial (issue 19).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains(" offered, ") && !stderr.contains("] throughput IPv4"),
        "--quiet printed progress:\n{stderr}"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["schema_version"], 3);
    let runs = r["runs"].as_array().unwrap();
    let kinds: Vec<&str> = runs
        .iter()
        .map(|r| r["meta"]["dut"]["kind"].as_str().unwrap())
        .collect();
    // `--repeat N`: the DUTs in turn, N times (A B A B ...).
    let duts: Vec<&str> = dut.split(',').collect();
    let rounds = runs.len() / duts.len();
    assert_eq!(
        kinds,
        duts.repeat(rounds),
        "runs in run order, the DUTs in turn"
    );
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert!(csv_text.starts_with("dut,round,test,"), "{csv_text}");
    let mut rows = 1;
    for run in runs {
        let kind = run["meta"]["dut"]["kind"].as_str().unwrap();
        let trials: usize = run["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["trials"].as_array().unwrap().len())
            .sum();
        // The CSV's `dut` column is the run's name (softrouter-xc, ...),
        // `round` its round.
        let name = run["meta"]["dut"]["name"].as_str().unwrap_or(kind);
        let round = &run["meta"]["round"];
        let of_kind = csv_text
            .lines()
            .filter(|l| l.starts_with(&format!("{name},{round},")))
            .count();
        assert_eq!(of_kind, trials, "one CSV row per trial of {kind}");
        rows += trials;
        if kind == "softrouter" {
            // The statistics softrouter wrote at exit, after every trial:
            // each frame it received is in one bucket of its port.
            let fin = &run["meta"]["dut"]["config"]["final_stats"]["stats"];
            assert!(fin["ports"].is_array(), "final statistics recorded: {fin}");
            dataplane::assert_accounting(fin);
        }
    }
    assert_eq!(csv_text.lines().count(), rows, "a header and the rows");
    // Exactly the files asked for: no per-DUT files next to them.
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    files.sort();
    assert_eq!(files, ["exp.toml", "results.csv", "results.json"]);
    (r, stdout)
}

/// [`bench`] in a fresh folder, one run at a time, as root: `None` (and
/// the test says it skipped `what`) without root.
fn bench_as_root(what: &str, dut: &str, extra: &[&str]) -> Option<(serde_json::Value, String)> {
    if !testbed::require_root(what) {
        return None;
    }
    let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    Some(bench(dir.path(), dut, extra))
}

/// Every test type in the tables and the JSON of one DUT's run, whose
/// maximum rate came from `max_from` ("calibrated", "set by the user").
fn check(r: &serde_json::Value, stdout: &str, dut: &str, max_from: &str) {
    for title in ["throughput", "latency", "loss", "back-to-back", "recovery"] {
        assert!(stdout.contains(title), "table {title} printed:\n{stdout}");
    }
    assert!(
        stdout.contains("RFC 9971 goals: ndr (")
            && stdout.contains(" NDR ")
            && stdout.contains(" PDR "),
        "{stdout}"
    );
    let r = &r["runs"][0];
    assert_eq!(r["meta"]["dut"]["kind"], dut);
    assert!(!r["meta"]["dut"]["version"].as_str().unwrap().is_empty());
    let source = r["meta"]["max_rate_source"].as_str().unwrap();
    assert!(source.contains(max_from), "{source}");
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
    // Both default goals, always, each with its RFC 9971 result: the PDR
    // passes somewhere; the NDR's lower bound is at most the PDR's.
    for (i, goal) in ["ndr", "pdr"].iter().enumerate() {
        let g = &tp["goals"][i];
        assert_eq!(g["goal"]["name"], *goal, "{dut}: {tp}");
        for field in ["lower_bound", "tester_limited", "regular"] {
            assert!(g[field].is_boolean(), "{dut} {goal}.{field}: {g}");
        }
        assert!(
            g["fps"].is_null() || g["loss_at_bound_pct"].is_number(),
            "{g}"
        );
        assert!(g["loads"].as_array().is_some_and(|l| !l.is_empty()), "{g}");
    }
    let fps = tp["goals"][1]["fps"]
        .as_f64()
        .expect("a PDR (or its tester-limited lower bound)");
    assert!(fps > 1000.0, "{dut}: PDR {fps} fps");
    if let Some(ndr) = tp["goals"][0]["lower_fps"].as_f64() {
        let pdr = tp["goals"][1]["lower_fps"].as_f64().unwrap();
        assert!(ndr <= pdr, "{dut}: NDR {ndr} above PDR {pdr}");
    }
    let lat = &tests[1]["result"]["mean"];
    assert!(
        lat["count"].as_u64().unwrap() > 0 && lat["min_ns"].as_u64().unwrap() > 0,
        "{dut}: {lat}"
    );
    assert!(lat["p99_ns"].as_u64().unwrap() >= lat["median_ns"].as_u64().unwrap());
    // IPDV is measured (a number) or marked absent (null, `n/a` in the
    // table), never a made-up 0 from a tester that does not compute it.
    let ipdv = &lat["ipdv_mean_abs_ns"];
    let row = stdout
        .lines()
        .skip_while(|l| !l.starts_with("latency"))
        .find(|l| l.starts_with("64 v4"))
        .unwrap();
    assert_eq!(ipdv.is_null(), row.contains("n/a"), "{ipdv} vs {row}");
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
    let fps = tp["goals"][0]["lower_fps"].as_f64().unwrap_or(0.0);
    let rec = &tests[4]["result"];
    // 110 % of the throughput (the NDR's lower bound), capped at the maximum rate (flagged).
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
    // A given maximum, not a calibration (see
    // `several_duts_repeated_write_one_file_with_medians`).
    let Some((r, stdout)) = bench_as_root("bench linux", "linux", &["--max-rate-fps", "1000000"])
    else {
        return;
    };
    check(&r, &stdout, "linux", "set by the user");
    let cfg = &r["runs"][0]["meta"]["dut"]["config"];
    assert!(
        cfg.to_string().contains("forwarding"),
        "linux DUT configuration recorded: {cfg}"
    );
}

#[test]
fn every_test_type_against_softrouter() {
    let Some((r, stdout)) =
        bench_as_root("bench softrouter", "softrouter", &["--mode", "interrupt"])
    else {
        return;
    };
    check(&r, &stdout, "softrouter", "calibrated");
    let r = &r["runs"][0];
    // softrouter's own figures with every trial: cycles per stage, drops.
    let tr = &r["tests"][0]["trials"][0]["outcome"]["dut_stats"];
    assert!(
        tr.to_string().contains("cycles"),
        "softrouter stage cycles per trial: {tr}"
    );
    // The control plane's answer times under load, in the latency test's
    // trial of their own (the search's trials run without the asking):
    // each kind asked several times, every answer whole.
    assert!(
        tr.get("control_latency").is_none(),
        "asked in a search trial: {tr}"
    );
    let ctl = r["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["test"] == "latency")
        .flat_map(|t| t["trials"].as_array().cloned().unwrap_or_default())
        .find(|t| t["purpose"] == "control plane under load")
        .expect("the latency test's control-plane trial");
    assert_eq!(ctl["spec"]["sample_control"], true);
    let tr = &ctl["outcome"]["dut_stats"];
    for kind in ["route_lookup", "stats", "metrics"] {
        let c = &tr["control_latency"][kind];
        assert!(
            c["count"].as_u64().unwrap_or(0) >= 3 && c["errors"] == 0 && c["p50_ms"].is_number(),
            "control latency {kind}: {c}"
        );
    }
    assert!(r["meta"]["dut"]["config"]["config"]
        .as_str()
        .unwrap()
        .contains("afxdp"));
}

/// `--repeat 2` with the tester's calibration: each round calibrates
/// afresh, so each round's runs carry their own (the calibration's note
/// names the testbed it ran on, new for every calibration), and a DUT the
/// tester limits is held against its round's maximum.
#[test]
fn each_round_calibrates_the_tester_afresh() {
    let Some((r, _)) = bench_as_root(
        "bench --repeat 2 calibrating",
        "floor",
        &["--test", "throughput", "--repeat", "2"],
    ) else {
        return;
    };
    let runs = r["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let calibration = |run: &serde_json::Value| -> String {
        run["meta"]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n.as_str())
            .filter(|n| n.starts_with("tester calibration"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let (one, two) = (calibration(&runs[0]), calibration(&runs[1]));
    assert!(!one.is_empty(), "{}", runs[0]["meta"]);
    assert!(!two.is_empty(), "{}", runs[1]["meta"]);
    assert_ne!(one, two, "round 2 ran on round 1's calibration");
    for run in runs {
        assert!(
            run["meta"]["max_rate_source"]
                .as_str()
                .unwrap()
                .starts_with("tester calibrated maximum"),
            "{}",
            run["meta"]
        );
    }
}

/// `--pattern bidirectional` with the tester's calibration: both ports
/// send from the tester's one CPU, so each port's 100 % rate is a share
/// of what the tester holds (the floor calibrated with both ports
/// sending, loopback's one-direction maximum halved), the source says
/// so, and the search's first trial offers that share per port. Before,
/// each port got the whole one-direction maximum: the top load was twice
/// what the tester holds.
#[test]
fn a_bidirectional_run_offers_each_port_a_share_of_the_tester() {
    let Some((r, _)) = bench_as_root(
        "bench --pattern bidirectional calibrating",
        "floor",
        &["--test", "throughput", "--pattern", "bidirectional"],
    ) else {
        return;
    };
    let run = &r["runs"][0];
    let source = run["meta"]["max_rate_source"].as_str().unwrap();
    // "... 64 B 0.95 Mfps a port of 2 through the floor DUT (loopback 1.90)"
    let share: f64 = source
        .split("64 B ")
        .nth(1)
        .and_then(|s| s.split(" Mfps a port of 2 ").next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no per-port share of two senders: {source}"));
    let first = &run["tests"][0]["trials"][0];
    let offered = first["spec"]["rate_fps"].as_f64().unwrap() / 1e6;
    assert!(
        (offered - share).abs() <= 0.01 * share.max(0.01) + 0.005,
        "the search starts at the share: {offered} Mfps a port against {source}"
    );
}

/// Two DUTs with `--repeat 2` and goals given by flag: one JSON file
/// with four runs, interleaved (linux softrouter linux softrouter), each
/// with its round and the same name in both rounds, and their comparison;
/// one CSV with a `dut` column (checked by `bench`); `repeats[]` with
/// each DUT's median and range over its two rounds, the ratio of the
/// medians with the per-round range; the comparison printed as median
/// (min-max), a column per goal; the progress names the round.
///
/// A given maximum rate (`--max-rate-fps`) instead of the tester's
/// calibration (9 s a run here), as a user with a known tester would run
/// it. The bench runs that calibrate are
/// `every_test_type_against_softrouter`'s and experiment 002's
/// (`tests/experiments.rs`).
#[test]
fn several_duts_repeated_write_one_file_with_medians() {
    let Some((r, stdout)) = bench_as_root(
        "bench --repeat 2",
        "linux,softrouter",
        &[
            "--test",
            "throughput",
            "--repeat",
            "2",
            "--max-rate-fps",
            "1000000",
            // Short goals (a built-in name would bring the preset's sums).
            "--goals",
            "0.3f0.3d0l50e5w,0.3f0.6d1l50e5w",
        ],
    ) else {
        return;
    };
    assert_eq!(
        r["runs"][0]["meta"]["max_rate_source"],
        "set by the user: 1000000 frames/s"
    );
    let runs = r["runs"].as_array().unwrap();
    let order: Vec<(String, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["meta"]["dut"]["name"].as_str().unwrap().to_string(),
                r["meta"]["round"].as_u64().unwrap(),
            )
        })
        .collect();
    let order: Vec<(&str, u64)> = order.iter().map(|(n, r)| (n.as_str(), *r)).collect();
    assert_eq!(
        order,
        [
            ("linux", 1),
            ("softrouter", 1),
            ("linux", 2),
            ("softrouter", 2)
        ]
    );
    assert!(runs.iter().all(|r| r["settings"]["repeat"] == 2));
    for run in runs {
        assert_eq!(run["settings"]["goals"][1]["name"], "0.3f0.6d1l50e5w");
        assert_eq!(
            run["tests"][0]["result"]["goals"][1]["goal"]["loss_pct"],
            1.0
        );
        assert_eq!(run["settings"]["tester"], "xdp");
    }
    // comparison[]: a row per run, each against softrouter's run of its round.
    let comparison = r["comparison"].as_array().unwrap();
    assert_eq!(comparison.len(), 1, "one size: {comparison:?}");
    let c = &comparison[0];
    assert_eq!(c["size"], "64");
    assert_eq!(c["baseline"], "softrouter");
    assert_eq!(c["duts"].as_array().unwrap().len(), 4);
    for d in c["duts"].as_array().unwrap() {
        if d["dut"] == "softrouter" && d["goals"][0]["fps"].is_number() {
            assert_eq!(d["goals"][0]["ratio"], 1.0, "{d}");
        }
    }
    let rep = r["repeats"].as_array().unwrap();
    assert_eq!(rep.len(), 1, "one size: {rep:?}");
    assert_eq!(rep[0]["size"], "64");
    assert_eq!(rep[0]["baseline"], "softrouter");
    let duts = rep[0]["duts"].as_array().unwrap();
    let names: Vec<&str> = duts.iter().map(|d| d["dut"].as_str().unwrap()).collect();
    assert_eq!(names, ["linux", "softrouter"]);
    for d in duts {
        assert_eq!(d["rounds"], 2, "{d}");
        let goals = d["goals"].as_array().unwrap();
        assert_eq!(goals.len(), 2, "ndr and pdr: {d}");
        for g in goals {
            let n = g["n"].as_u64().unwrap();
            assert!(n <= 2, "{g}");
            if n > 0 {
                let f = |k: &str| g[k].as_f64().unwrap();
                assert!(
                    f("min_fps") <= f("median_fps") && f("median_fps") <= f("max_fps"),
                    "{g}"
                );
            }
            assert!(g["lower_bound"].is_boolean(), "{g}");
        }
    }
    assert!(
        stdout.contains("median of 2 rounds")
            && stdout.contains("0.3F0.3D0L50E5W/softrouter")
            && stdout.contains("0.3F0.6D1L50E5W/softrouter"),
        "{stdout}"
    );
    let linux = stdout
        .lines()
        .find(|l| l.starts_with("64 v4") && l.contains(" linux "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        linux.contains('(') && linux.contains(')'),
        "median (min-max): {linux}"
    );
    assert!(stdout.contains("DUT 2 of 2, round 2 of 2:"), "{stdout}");
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

/// The linux DUT with software interrupt coalescing (issue 11): the
/// deferral and its timer are in force on every DUT veth end (read back
/// from sysfs into the run's DUT description) and the kernel still
/// forwards the tester's frames.
#[test]
fn linux_with_interrupt_coalescing_forwards() {
    let Some((r, _)) = bench_as_root(
        "bench linux coalescing",
        "linux",
        &[
            "--test",
            "throughput",
            "--sizes",
            "64",
            "--ip",
            "4",
            "--napi-defer-hard-irqs",
            "2",
            "--gro-flush-timeout-us",
            "50",
            "--max-rate-fps",
            "1000000",
        ],
    ) else {
        return;
    };
    let run = &r["runs"][0];
    let cfg = &run["meta"]["dut"]["config"];
    assert_eq!(cfg["veth_napi_gro"], true, "coalescing needs veth NAPI");
    let ends = cfg["napi_coalescing"].as_object().unwrap();
    assert_eq!(ends.len(), 2, "both DUT ends: {cfg}");
    for (end, v) in ends {
        assert_eq!(v["napi_defer_hard_irqs"], 2, "{end}: {v}");
        assert_eq!(v["gro_flush_timeout_ns"], 50_000, "{end}: {v}");
    }
    let s = &run["settings"]["dut"];
    assert_eq!(
        (&s["napi_defer_hard_irqs"], &s["gro_flush_timeout_us"]),
        (&serde_json::json!(2), &serde_json::json!(50)),
        "{s}"
    );
    let t = &run["tests"][0];
    let forwarded: u64 = t["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tr| {
            tr["outcome"]["dut_stats"]["kernel"]["forwarded"]
                .as_u64()
                .unwrap()
        })
        .sum();
    let received: u64 = t["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tr| tr["outcome"]["received"].as_u64().unwrap())
        .sum();
    assert!(
        forwarded > 1000 && received > 1000,
        "the kernel forwarded {forwarded}, the tester received {received}"
    );
    let pdr = t["result"]["goals"][1]["fps"].as_f64().unwrap();
    assert!(pdr > 1000.0, "PDR {pdr} fps");
    eprintln!("coalesced linux: PDR {pdr:.0} fps, {forwarded} frames forwarded in all trials");
}

/// A loss series at 64 B (IPv4) up to `max_rate_fps` through `dut` with
/// `extra` flags: the run, and the series' lowest-load trial after
/// checking that it sent frames and lost none.
fn low_rate_loss_series(
    dir: &Path,
    dut: &str,
    max_rate_fps: &str,
    extra: &[&str],
) -> (serde_json::Value, serde_json::Value) {
    let mut args = vec![
        "--test",
        "loss",
        "--sizes",
        "64",
        "--ip",
        "4",
        "--max-rate-fps",
        max_rate_fps,
    ];
    args.extend_from_slice(extra);
    let (r, _) = bench(dir, dut, &args);
    let run = r["runs"][0].clone();
    let low = run["tests"][0]["trials"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let o = &low["outcome"];
    assert_eq!(o["lost"], 0, "{low}");
    assert!(o["sent"].as_u64().unwrap() > 0, "{low}");
    (run, low)
}

/// The Linux bridge as a DUT: the tester addresses frames to the far
/// tester port, the bridge switches them (static entries: nothing
/// flooded), and a low rate crosses without loss, counted on the bridge's
/// ports.
#[test]
fn bridge_switches_the_testers_frames() {
    if !testbed::require_root("bench bridge") {
        return;
    }
    let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    // The lowest load of the series (10 % of 20,000 frames/s) loses nothing.
    let (run, low) = low_rate_loss_series(dir.path(), "bridge", "20000", &[]);
    assert_eq!(
        run["meta"]["dut"]["config"]["kind"], "bridge",
        "{}",
        run["meta"]
    );
    let o = &low["outcome"];
    assert!(
        o["dut_stats"]["forwarded"].as_u64().unwrap() >= o["sent"].as_u64().unwrap(),
        "the bridge's ports sent what crossed: {low}"
    );
}

/// The floor DUT (an XDP redirect with the MAC rewrite and nothing else)
/// beside the Linux bridge: the floor crosses a low rate without loss,
/// counted on its ports, and a throughput run of both sets the bridge
/// beside it ("x the floor") in the JSON and the printed comparison.
#[test]
fn floor_redirects_the_testers_frames_and_is_the_comparisons_yardstick() {
    if !testbed::require_root("bench floor") {
        return;
    }
    let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (run, low) = low_rate_loss_series(dir.path(), "floor", "20000", &[]);
    assert_eq!(
        run["meta"]["dut"]["config"]["kind"], "floor",
        "{}",
        run["meta"]
    );
    let o = &low["outcome"];
    assert!(
        o["dut_stats"]["forwarded"].as_u64().unwrap() >= o["sent"].as_u64().unwrap(),
        "the floor's ports sent what crossed: {low}"
    );
    let dir = tempfile::tempdir().unwrap();
    let (r, stdout) = bench(
        dir.path(),
        "bridge,floor",
        &["--test", "throughput", "--max-rate-fps", "20000"],
    );
    let duts = r["comparison"][0]["duts"].as_array().unwrap();
    let x = &duts[0]["x_floor"];
    assert!(x["fps"].as_f64().unwrap() > 0.0, "{x}");
    assert_eq!(duts[1]["x_floor"]["fps"], 1.0, "the floor against itself");
    assert!(stdout.contains("rate x floor"), "{stdout}");
}

/// Open vSwitch (user-space datapath) as a DUT: its daemons run in the
/// DUT namespace from a private folder, switch the tester's frames by
/// their flows, and are gone afterwards.
#[test]
fn ovs_switches_the_testers_frames() {
    if !testbed::require_root("bench ovs") {
        return;
    }
    if !std::path::Path::new("/usr/sbin/ovs-vswitchd").exists() {
        eprintln!("ovs_switches_the_testers_frames: skipped (openvswitch-switch not installed: scripts/setup.sh installs it)");
        return;
    }
    let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (run, low) = low_rate_loss_series(dir.path(), "ovs", "5000", &[]);
    assert!(
        run["meta"]["dut"]["config"]["datapath"]
            .as_str()
            .unwrap()
            .starts_with("netdev"),
        "{}",
        run["meta"]["dut"]
    );
    let o = &low["outcome"];
    assert!(o["dut_stats"]["forwarded"].as_u64().unwrap() >= o["sent"].as_u64().unwrap());
    let left = std::process::Command::new("pgrep")
        .args(["-f", "sr-ovs-"])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "OVS daemons left behind: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

/// softrouter as a cross-connect (`forwarding = "cross-connect"` in the
/// router configuration the bench adapts): an L2 DUT named
/// `softrouter-xc`, the tester's frames addressed to the far tester port
/// and counted there; the lowest load is lossless.
#[test]
fn softrouter_cross_connect_is_an_l2_dut() {
    if !testbed::require_root("bench softrouter cross-connect") {
        return;
    }
    let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = cfg_dir.path().join("xc.toml");
    std::fs::write(
        &cfg,
        r#"
[router]
workers = 1
mode = "interrupt"
forwarding = "cross-connect"

[[port]]
name = "p0"
driver = "afxdp"
iface = "{if0}"
addresses = ["198.18.0.1/24"]

[[port]]
name = "p1"
driver = "afxdp"
iface = "{if1}"
addresses = ["198.18.1.1/24"]
"#,
    )
    .unwrap();
    let (run, low) = low_rate_loss_series(
        dir.path(),
        "softrouter",
        "20000",
        &["--router-config", cfg.to_str().unwrap()],
    );
    assert_eq!(
        run["meta"]["dut"]["name"], "softrouter-xc",
        "{}",
        run["meta"]["dut"]
    );
    let o = &low["outcome"];
    let fwd = o["dut_stats"]["softrouter"]["forwarded"].as_u64().unwrap();
    assert!(
        fwd >= o["sent"].as_u64().unwrap(),
        "crossed by the workers: {low}"
    );
}
