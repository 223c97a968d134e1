use super::csv::csv_field;
use super::*;
use crate::search::*;
use crate::sim::{SimConfig, SimDut};
use crate::tables::{comparison_table, render_tables, Table};
use crate::throughput::{throughput, ThroughputConfig};
use schema::dut_sample::{CpuBusy, CpuFigures, DutStats};
use std::time::Duration;

/// An NDR and a 0.1 % PDR of 0.1 s trials, decided by three of them.
pub(crate) fn test_goals() -> Vec<crate::settings::SearchGoal> {
    ["ndr", "pdr"]
        .iter()
        .zip(["0.1f0.3d0l50e1w", "0.1f0.3d0.1l50e1w"])
        .map(|(name, code)| crate::settings::SearchGoal {
            name: name.to_string(),
            ..crate::settings::SearchGoal::from_code(code).unwrap()
        })
        .collect()
}

/// A run against the simulated DUT: throughput and latency at 64 B and
/// IMIX, back-to-back at 64 B. `ipdv`: whether latency has IPDV (the
/// analyzer's) or not (as the xdp counter reports it).
pub(crate) fn run(cap: f64, kind: &str, ipdv: bool) -> RunResults {
    let mut dut = SimDut::new(SimConfig {
        capacity_fps: cap,
        buffer: 8,
        loss_prob: 0.0002,
        ..SimConfig::default()
    });
    let mut tests = Vec::new();
    for size in [FrameSize::Fixed(64), "imix".parse().unwrap()] {
        let r = throughput(
            &mut dut,
            &ThroughputConfig {
                size: size.clone(),
                max_rate_fps: 100_000.0,
                goals: test_goals(),
                rate_tolerance_pct: 1.0,
                stream_seconds: crate::throughput::STREAM_SECONDS,
            },
        )
        .unwrap();
        tests.push(TestResult::throughput(size.clone(), 4, r));
        let mut l = latency(
            &mut dut,
            &LatencyConfig {
                size: size.clone(),
                rate_fps: cap / 2.0,
                duration: Duration::from_millis(50),
                repetitions: 2,
                rate_tolerance_pct: 1.0,
            },
        )
        .unwrap();
        if !ipdv {
            let trials = l.trials.iter_mut().map(|t| &mut t.outcome.latency);
            for s in l.repetitions.iter_mut().chain([&mut l.mean]).chain(trials) {
                (s.ipdv_mean_abs_ns, s.ipdv_max_abs_ns) = (None, None);
            }
        }
        tests.push(TestResult::latency(size.clone(), 4, l));
    }
    let b = back_to_back(
        &mut dut,
        &BackToBackConfig {
            size: FrameSize::Fixed(64),
            max_rate_fps: 100_000.0,
            max_burst: 1000,
            senders: 1,
            repetitions: 2,
            throughput_fps: Some(cap),
        },
    )
    .unwrap();
    tests.push(TestResult::back_to_back(FrameSize::Fixed(64), 4, b));
    let mut meta = RunMeta::now();
    meta.dut.kind = kind.into();
    meta.dut.version = "test".into();
    RunResults {
        meta,
        settings: Settings::default().resolved(),
        tests,
    }
}

#[test]
fn one_file_holds_every_run_in_order() {
    let r = BenchResults::new(vec![
        run(50_000.0, "softrouter", true),
        run(25_000.0, "linux", false),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.json");
    r.write_json(&p).unwrap();
    let back = BenchResults::read_json(&p).unwrap();
    // serde_json's default float parsing may differ in the last ulp,
    // so compare everything but floats exactly and floats closely.
    assert_eq!(back.runs.len(), 2);
    for (b, a) in back.runs.iter().zip(&r.runs) {
        assert_eq!(b.meta, a.meta);
        assert_eq!(b.settings, a.settings);
        assert_eq!(b.tests.len(), a.tests.len());
        for (x, y) in b.tests.iter().zip(&a.tests) {
            assert_eq!((x.test, &x.size, x.ip), (y.test, &y.size, y.ip));
            assert_eq!(x.trials.len(), y.trials.len());
            for (u, v) in x.trials.iter().zip(&y.trials) {
                assert_eq!(
                    (u.outcome.sent, u.outcome.lost),
                    (v.outcome.sent, v.outcome.lost)
                );
                assert_eq!(u.bound_for, v.bound_for);
                assert!((u.spec.rate_fps - v.spec.rate_fps).abs() < 1e-6);
            }
        }
    }
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    assert_eq!(j["schema_version"], 3);
    assert_eq!(j["runs"][0]["meta"]["schema_version"], 3);
    assert_eq!(j["runs"][0]["meta"]["dut"]["kind"], "softrouter");
    assert_eq!(j["runs"][1]["meta"]["dut"]["kind"], "linux");
    let tp = &j["runs"][0]["tests"][0]["result"];
    assert_eq!(tp["kind"], "throughput");
    for (i, goal) in ["ndr", "pdr"].iter().enumerate() {
        let g = &tp["goals"][i];
        assert_eq!(g["goal"]["name"], *goal);
        for f in ["fps", "lower_fps", "upper_fps", "loss_at_bound_pct"] {
            assert!(g[f].is_number(), "{goal} {f}: {g}");
        }
        assert!(g["lower_bound"].is_boolean() && g["tester_limited"].is_boolean());
        assert!(g["regular"].is_boolean(), "{g}");
        let loads = g["loads"].as_array().unwrap();
        assert!(loads
            .iter()
            .all(|l| l["class"].is_string() && l["trials"].is_number()));
    }
    assert_eq!(tp["goals"][0]["goal"]["loss_pct"], 0.0);
    assert_eq!(tp["goals"][1]["goal"]["loss_pct"], 0.1);
    // IPDV: a number where measured, null where not.
    let ipdv =
        |run: usize| j["runs"][run]["tests"][1]["result"]["mean"]["ipdv_mean_abs_ns"].clone();
    assert!(ipdv(0).is_number());
    assert!(ipdv(1).is_null());
    // The comparison: per size, both runs, ratios per goal against the
    // baseline (the last run).
    let c = &j["comparison"];
    assert_eq!(c.as_array().unwrap().len(), 2);
    assert_eq!(c[0]["size"], "64");
    assert_eq!(c[0]["baseline"], "linux");
    assert_eq!(c[0]["duts"][1]["dut"], "linux");
    assert_eq!(c[0]["duts"][1]["goals"][1]["ratio"], 1.0);
    let ratio = c[0]["duts"][0]["goals"][1]["ratio"].as_f64().unwrap();
    assert!((ratio - 2.0).abs() < 0.15, "{ratio}");
    // A named baseline.
    let b = BenchResults::with_baseline(r.runs.clone(), Some("softrouter"));
    assert_eq!(b.comparison[0].baseline, "softrouter");
    assert_eq!(b.comparison[0].duts[0].goals[1].ratio, Some(1.0));
    // One run: no comparison.
    assert!(BenchResults::new(vec![run(50_000.0, "softrouter", true)])
        .comparison
        .is_empty());
}

#[test]
fn one_csv_with_a_dut_column() {
    let r = BenchResults::new(vec![
        run(50_000.0, "softrouter", true),
        run(25_000.0, "linux", false),
    ]);
    let csv = r.to_csv();
    let rows: usize = r
        .runs
        .iter()
        .flat_map(|r| &r.tests)
        .map(|t| t.trials.len())
        .sum();
    assert_eq!(csv.lines().count(), rows + 1);
    assert!(csv.starts_with("dut,round,test,ip,size,"));
    assert!(csv
        .lines()
        .all(|l| l.split(',').count() >= CSV_HEADER.len()));
    let of = |dut: &str| {
        csv.lines()
            .filter(|l| l.starts_with(&format!("{dut},1,")))
            .count()
    };
    assert_eq!(of("softrouter") + of("linux"), rows);
    assert!(of("linux") > 0);
    // The rows that carry the NDR's lower bound are marked, for every
    // DUT and size.
    for dut in ["softrouter", "linux"] {
        let bound = csv
            .lines()
            .filter(|l| l.starts_with(dut) && (l.ends_with(",ndr") || l.ends_with(",ndr pdr")))
            .count();
        assert!(bound >= 2, "{dut}: {csv}");
    }
    // Unmeasured IPDV is an empty cell, measured a number.
    let latency_rows: Vec<Vec<&str>> = csv
        .lines()
        .filter(|l| l.contains(",latency,"))
        .map(|l| l.split(',').collect())
        .collect();
    let col = CSV_HEADER
        .iter()
        .position(|h| *h == "ipdv_mean_abs_ns")
        .unwrap();
    assert!(latency_rows
        .iter()
        .any(|r| r[0] == "softrouter" && !r[col].is_empty()));
    assert!(latency_rows
        .iter()
        .any(|r| r[0] == "linux" && r[col].is_empty()));
    // A trial without latency samples: empty cells, `n/a` in tables.
    let mut none = r.runs[0].clone();
    for t in &mut none.tests {
        for tr in &mut t.trials {
            tr.outcome.latency = crate::analyzer::LatencySummary::default();
        }
        if let TestValue::Latency(l) = &mut t.result {
            l.mean = crate::analyzer::LatencySummary::default();
        }
    }
    let lat_min = CSV_HEADER.iter().position(|h| *h == "lat_min_ns").unwrap();
    let empty = BenchResults::new(vec![none.clone()]).to_csv();
    assert!(empty
        .lines()
        .skip(1)
        .all(|l| l.split(',').nth(lat_min) == Some("")));
    let table = render_tables(&none);
    let row = table
        .lines()
        .skip_while(|l| !l.starts_with("latency"))
        .nth(3)
        .unwrap();
    assert_eq!(row.matches("n/a").count(), 7, "{row}");
    let dir = tempfile::tempdir().unwrap();
    let cp = dir.path().join("r.csv");
    r.write_csv(&cp).unwrap();
    assert_eq!(std::fs::read_to_string(cp).unwrap(), csv);
}

#[test]
fn csv_quotes_fields() {
    assert_eq!(csv_field("a,b"), "\"a,b\"");
    assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    assert_eq!(csv_field("plain"), "plain");
}

#[test]
fn tables_show_both_goals_and_absent_figures() {
    let r = run(50_000.0, "softrouter", false);
    let s = render_tables(&r);
    assert!(s.contains("throughput - softrouter test"), "{s}");
    assert!(s.contains("RFC 9971 goals: ndr (0.1f0.3d0l50e1w)"), "{s}");
    let goals: Vec<&str> = s
        .lines()
        .filter(|l| l.starts_with("64 v4") && !l.contains("n/a"))
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert!(goals.starts_with(&["NDR", "PDR"]), "{s}");
    let lat = s
        .lines()
        .skip_while(|l| !l.starts_with("latency"))
        .nth(3)
        .unwrap();
    assert!(lat.starts_with("64 v4") && lat.contains("n/a"), "{s}");
    assert!(s.contains("back-to-back"));
    let t = Table {
        title: String::new(),
        headers: vec!["a".into(), "bb".into()],
        rows: vec![
            vec!["xyz".into(), "1".into()],
            vec!["q".into(), "100".into()],
        ],
    };
    assert_eq!(t.render(), "a     bb\n--------\nxyz    1\nq    100\n");
    let both = BenchResults::new(vec![
        run(50_000.0, "softrouter", true),
        run(25_000.0, "linux", true),
    ]);
    let c = comparison_table(&both);
    assert!(c.contains("NDR/linux") && c.contains("PDR/linux"), "{c}");
    // A row per run: size, DUT, NDR, PDR, the two ratios to the last
    // run, cycles ("-": no CPU figures).
    let rows: Vec<Vec<&str>> = c
        .lines()
        .filter(|l| l.starts_with("64 v4"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2, "{c}");
    assert_eq!(rows[0].len(), 8, "{c}");
    assert_eq!((rows[0][2], rows[1][2]), ("softrouter", "linux"), "{c}");
    let pdr_ratio: f64 = rows[0][6].parse().unwrap();
    assert!((pdr_ratio - 2.0).abs() < 0.15, "{c}");
    assert_eq!((rows[1][5], rows[1][6], rows[1][7]), ("-", "-", "-"), "{c}");
    assert_eq!(
        comparison_table(&BenchResults::new(vec![both.runs[0].clone()])),
        ""
    );
}

#[test]
fn dates() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
}

/// Give every trial of `r`'s throughput tests the DUT CPU figures of
/// a probe with soakers (busy `busy_pct` while the traffic ran, in an
/// interval twice the trial's, as a drain as long as the trial makes
/// it), and project again.
fn with_busy(mut r: RunResults, busy_pct: f64, cycles: f64) -> RunResults {
    for t in r
        .tests
        .iter_mut()
        .filter(|t| t.test == TestKind::Throughput)
    {
        for tr in &mut t.trials {
            let sending_s = tr.spec.duration.as_secs_f64();
            tr.outcome.dut_stats = Some(DutStats {
                cpu: Some(CpuFigures {
                    interval_s: 2.0 * sending_s,
                    soak: Some(vec![CpuBusy {
                        cpu: 1,
                        busy_pct: busy_pct / 2.0,
                    }]),
                    soak_dut_cpu_s: Some(busy_pct / 100.0 * sending_s),
                    soak_cycles_per_packet: Some(cycles),
                    ..CpuFigures::default()
                }),
                ..DutStats::default()
            });
        }
        t.project();
    }
    r
}

/// A run of throughput tests (64 B and IMIX) against a loss-free
/// simulated DUT of `cap` frames/s, the maximum load 100 kfps.
fn throughput_run(cap: f64, kind: &str) -> RunResults {
    let mut dut = SimDut::new(SimConfig {
        capacity_fps: cap,
        buffer: 8,
        ..SimConfig::default()
    });
    let tests = [FrameSize::Fixed(64), "imix".parse().unwrap()]
        .into_iter()
        .map(|size| {
            let cfg = ThroughputConfig {
                size: size.clone(),
                max_rate_fps: 100_000.0,
                goals: test_goals(),
                rate_tolerance_pct: 1.0,
                stream_seconds: crate::throughput::STREAM_SECONDS,
            };
            TestResult::throughput(size, 4, throughput(&mut dut, &cfg).unwrap())
        })
        .collect();
    let mut meta = RunMeta::now();
    meta.dut.kind = kind.into();
    RunResults {
        meta,
        settings: Settings::default().resolved(),
        tests,
    }
}

#[test]
fn tester_limited_runs_are_projected_and_set_beside_the_floor() {
    // Both DUTs forward more than the tester's maximum (100 kfps): the
    // first goal's rate is a lower bound for each.
    let x = with_busy(throughput_run(400_000.0, "softrouter"), 25.0, 600.0);
    let floor = with_busy(throughput_run(400_000.0, "floor"), 50.0, 400.0);
    // The DUT ended the search: no projection.
    let limited = with_busy(throughput_run(50_000.0, "linux"), 90.0, 900.0);
    let b = BenchResults::new(vec![x, floor, limited]);
    let s = b.runs[0].tests[0].throughput_summary().unwrap();
    assert!(s.first().unwrap().lower_bound, "{s:?}");
    let p = s.projection.expect("a projection");
    // 25 % while sending, though the soakers saw 12.5 % of their
    // interval (drain included).
    assert!((p.busy_pct - 25.0).abs() < 1e-9, "{p:?}");
    assert!(
        (p.projected_fps - 4.0 * p.measured_fps).abs() < 1e-6,
        "{p:?}"
    );
    assert!(b.runs[2].tests[0]
        .throughput_summary()
        .unwrap()
        .projection
        .is_none());

    let row = &b.comparison[0];
    let (x, f, l) = (&row.duts[0], &row.duts[1], &row.duts[2]);
    assert!(x.projection.is_some() && l.projection.is_none());
    let r = x.x_floor.expect("against the floor");
    assert!((r.cycles_per_packet.unwrap() - 1.5).abs() < 1e-9, "{r:?}");
    // Projected capacities: 4x and 2x the same measured rate.
    assert!((r.capacity.unwrap() - 2.0).abs() < 0.05, "{r:?}");
    assert!(r.projected, "{r:?}");
    assert_eq!(f.x_floor.unwrap().cycles_per_packet, Some(1.0));
    assert!(l.x_floor.unwrap().fps.unwrap() < 1.0, "{:?}", l.x_floor);

    // Marked as projections wherever they appear.
    let json = serde_json::to_value(&b).unwrap();
    assert!(json["comparison"][0]["duts"][0]["projection"]["projected_fps"].is_f64());
    assert_eq!(
        json["comparison"][0]["duts"][0]["x_floor"]["projected"],
        true
    );
    let table = crate::tables::comparison_table(&b);
    assert!(
        table.contains("PROJECTED") && table.contains("capacity x floor"),
        "{table}"
    );
    assert!(table.contains("~x2.0"), "{table}");
    let runs = crate::tables::render_tables(&b.runs[0]);
    assert!(runs.contains("PROJECTED capacity"), "{runs}");
    let csv = b.to_csv();
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = head.iter().position(|h| *h == "projected_fps").unwrap();
    let projected: Vec<&str> = csv
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(col).filter(|c| !c.is_empty()))
        .collect();
    // One trial per projected test (softrouter's and the floor's, two
    // sizes each).
    assert_eq!(projected.len(), 4, "{csv}");
    let e = crate::html::Experiment {
        name: "floor".into(),
        results: b.clone(),
    };
    let html = crate::html::page("report", &[e], &[]);
    assert!(html.contains("(projected)") && html.contains("capacity x floor"));
}

#[test]
fn cycles_against_the_floor_are_taken_at_the_same_load() {
    // The tier is tester-limited (every trial at the top, 100 kfps);
    // the floor lost frames at the top and ended lower, where each
    // packet costs more (here 2x).
    let cost = |top: f64, below: f64| {
        move |tr: &mut TrialRecord| {
            let c = if tr.spec.rate_fps >= 100_000.0 {
                top
            } else {
                below
            };
            tr.outcome.dut_stats = Some(DutStats {
                cpu: Some(CpuFigures {
                    soak_cycles_per_packet: Some(c),
                    ..CpuFigures::default()
                }),
                ..DutStats::default()
            });
        }
    };
    let mut x = throughput_run(400_000.0, "softrouter");
    let mut floor = throughput_run(60_000.0, "floor");
    for (r, mut f) in [
        (&mut x, cost(500.0, 500.0)),
        (&mut floor, cost(400.0, 800.0)),
    ] {
        r.tests
            .iter_mut()
            .flat_map(|t| &mut t.trials)
            .for_each(&mut f);
    }
    let b = BenchResults::new(vec![x, floor]);
    let (x, f) = (&b.comparison[0].duts[0], &b.comparison[0].duts[1]);
    // At each one's throughput: 500 against 800, unlike loads.
    assert_eq!(
        (x.cycles_per_packet, f.cycles_per_packet),
        (Some(500.0), Some(800.0))
    );
    assert_eq!(
        (x.cycles_at_top, f.cycles_at_top),
        (Some(500.0), Some(400.0))
    );
    let r = x.x_floor.unwrap().cycles_per_packet.unwrap();
    assert!((r - 1.25).abs() < 1e-9, "{r}");
    // No soakers: no capacity at the top, the measured rates compare.
    assert_eq!(x.capacity_at_top, None);
}

#[test]
fn capacity_against_the_floor_is_projected_at_the_same_load_for_both() {
    // The tier tester-limited, 25 % busy at the top; the floor 50 %
    // busy there, but it lost a frame (a host stall) and ended lower,
    // so it has no projection of its own.
    let x = with_busy(throughput_run(400_000.0, "softrouter"), 25.0, 500.0);
    let floor = with_busy(throughput_run(60_000.0, "floor"), 50.0, 400.0);
    let b = BenchResults::new(vec![x, floor]);
    let (x, f) = (&b.comparison[0].duts[0], &b.comparison[0].duts[1]);
    assert!(x.projection.is_some() && f.projection.is_none());
    // At the top (100 kfps offered): 100 k / 0.25 and what the floor
    // forwarded there / 0.5.
    let fx = x.capacity_at_top.unwrap();
    assert!((fx - 400_000.0).abs() < 1.0, "{fx}");
    let ff = f.capacity_at_top.unwrap();
    assert!(ff > 100_000.0 && ff <= 200_000.0, "{ff}");
    let r = x.x_floor.unwrap();
    assert!((r.capacity.unwrap() - fx / ff).abs() < 1e-9, "{r:?}");
    assert!(r.projected);
}

/// With `--repeat`, `repeats[]` carries each DUT's per-round multiples of
/// the floor (`comparison[].duts[].x_floor`) as their median and range.
#[test]
fn repeated_rounds_carry_the_floor_ratios() {
    let mut runs = Vec::new();
    for (round, busy) in [(1, 25.0), (2, 50.0)] {
        for mut r in [
            with_busy(throughput_run(400_000.0, "softrouter"), busy, 500.0),
            with_busy(throughput_run(400_000.0, "floor"), 50.0, 400.0),
        ] {
            r.meta.round = round;
            runs.push(r);
        }
    }
    let b = BenchResults::new(runs);
    let per_round: Vec<f64> = b.comparison[0]
        .duts
        .iter()
        .filter(|d| d.dut == "softrouter")
        .map(|d| d.x_floor.unwrap().capacity.unwrap())
        .collect();
    assert_eq!(per_round.len(), 2);
    assert!(per_round[0] > per_round[1], "{per_round:?}");
    let x = b.repeats[0].duts[0]
        .x_floor
        .expect("the floor ratios over the rounds");
    let k = x.capacity.unwrap();
    assert_eq!((k.min, k.max, k.n), (per_round[1], per_round[0], 2));
    assert!(x.capacity_projected);
    let c = x.cycles_per_packet.unwrap();
    assert!((c.median - 1.25).abs() < 1e-9, "500 / 400: {c:?}");
}
