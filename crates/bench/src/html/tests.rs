//! The generator on results built in code: every section, lower bounds
//! marked, untrusted text escaped, nothing fetched from elsewhere.

use std::time::Duration;

use super::*;
use crate::results::{DutInfo, RunMeta, RunResults, TestResult};
use crate::search::TrialSpec;
use crate::search::{LatencyResult, LossPoint, LossSeriesResult, TrialOutcome, TrialRecord};
use crate::settings::Settings;
use crate::sizes::FrameSize;
use crate::sysstat::{CpuAvailability, IrqRate, SoftirqRate, SysStats};
use crate::throughput::{GoalResult, ThroughputResult};
use schema::dut_sample::{
    AnswerTimes, ControlLatency, CpuBusy, CpuFigures, DutStats, SoftrouterTrial, StageFigures,
    StageReport, StageSplit,
};
use schema::report::Cycles;
use schema::stats::StageCycles;

/// A kernel DUT's stage split by perf with these cycles per packet.
fn perf_split(cycles_per_packet: StageFigures) -> StageReport {
    StageReport::Split(Box::new(StageSplit {
        source: "perf cpu-clock 2999 Hz".into(),
        samples: 1000,
        cycles_per_packet,
        ..StageSplit::default()
    }))
}

fn trial(rate: f64, softrouter: bool) -> TrialRecord {
    let mut stats = DutStats {
        cpu: Some(CpuFigures {
            interval_s: 2.0,
            machine_user_s: 1.0,
            machine_system_s: 0.2,
            machine_irq_s: 0.0,
            machine_softirq_s: 0.6,
            dut_cpu_s: 1.5,
            dut_cycles_per_packet: Some(900.0),
            soak_cycles_per_packet: Some(800.0),
            direct_cycles_per_packet: Some(700.0),
            direct_source: "process".into(),
            // The soakers' own share is over the probe's interval; the
            // busy share the report shows is over the trial's 2 s.
            soak: Some(vec![CpuBusy {
                cpu: 0,
                busy_pct: 50.0,
            }]),
            soak_dut_cpu_s: Some(1.94),
            ..CpuFigures::default()
        }),
        ..DutStats::default()
    };
    if softrouter {
        stats.softrouter = Some(SoftrouterTrial {
            cycles: StageCycles {
                packets: 1000,
                ..StageCycles::default()
            },
            cycles_per_packet: Cycles {
                rx: 100.0,
                process: 200.0,
                tx: 150.0,
                total: 450.0,
            },
            forwarded: 1000,
            fast_path_forwarded: 250,
            drops: [("no_route".to_string(), 3)].into(),
            ..SoftrouterTrial::default()
        });
    } else {
        stats.stages = Some(perf_split(StageFigures {
            rx: Some(200.0),
            tx: Some(150.0),
            memory: Some(50.0),
            skb: Some(60.0),
            processing: Some(300.0),
            other: Some(40.0),
        }));
    }
    TrialRecord {
        purpose: "search".into(),
        spec: TrialSpec {
            rate_fps: rate,
            duration: Duration::from_secs(2),
            size: FrameSize::Fixed(64),
            burst: None,
            phases: Vec::new(),
            timeline_interval: None,
            sample_control: false,
        },
        outcome: TrialOutcome {
            offered_rate_fps: rate,
            sent: 1000,
            received: 1000,
            sys: Some(SysStats {
                interval_s: 2.0,
                cpus: vec![CpuAvailability {
                    cpu: 0,
                    available_pct: 3.0,
                }],
                irq_total_per_s: 4321.0,
                irqs: vec![IrqRate {
                    irq: "LOC".into(),
                    name: "Local timer interrupts".into(),
                    per_s: 4000.0,
                }],
                softirqs: vec![SoftirqRate {
                    cpu: 0,
                    net_rx_per_s: 777.0,
                    net_tx_per_s: 55.0,
                }],
            }),
            dut_stats: Some(stats),
            ..TrialOutcome::default()
        },
        passed: true,
        bound_for: vec!["ndr".into(), "pdr".into()],
        discarded: false,
    }
}

/// One run: throughput (tester-limited when `limited`), latency, loss.
fn run(name: &str, ndr: f64, limited: bool) -> RunResults {
    let goal = |name: &str, fps: f64| GoalResult {
        goal: crate::settings::SearchGoal::builtin(name, crate::settings::Preset::Quick),
        fps: Some(fps),
        lower_fps: Some(fps),
        lower_bound: limited,
        tester_limited: limited,
        pct_of_max: Some(fps / 2e3),
        ..GoalResult::default()
    };
    let softrouter = name.starts_with("softrouter") || name.contains("script");
    let tp = ThroughputResult {
        max_rate_fps: 200_000.0,
        goals: vec![goal("ndr", ndr), goal("pdr", ndr * 1.1)],
        measurement_repeats: 0,
        trials: vec![trial(ndr, softrouter)],
    };
    let mut lat = LatencyResult::default();
    lat.mean.count = 10;
    lat.mean.median_ns = 12_000;
    lat.mean.p99_ns = 40_000;
    lat.mean.max_ns = 90_000;
    lat.repetitions = vec![lat.mean];
    if softrouter {
        // The latency test's own trial that times the control plane.
        let mut ctl = trial(ndr, true);
        ctl.purpose = crate::search::CONTROL_PURPOSE.into();
        ctl.bound_for.clear();
        ctl.outcome.dut_stats = Some(DutStats {
            kind: "softrouter".into(),
            control_latency: Some(ControlLatency {
                stats: Some(AnswerTimes {
                    count: 40,
                    errors: 0,
                    p50_ms: Some(0.5),
                    p99_ms: Some(2.25),
                    max_ms: Some(3.0),
                }),
                ..ControlLatency::default()
            }),
            ..DutStats::default()
        });
        lat.trials.push(ctl);
    }
    let loss = LossSeriesResult {
        points: (1..=10)
            .map(|i| LossPoint {
                load_pct: f64::from(i) * 10.0,
                rate_fps: f64::from(i) * 20_000.0,
                loss_pct: if i > 8 { f64::from(i - 8) * 5.0 } else { 0.0 },
                tester_limited: i == 10,
            })
            .collect(),
        trials: Vec::new(),
    };
    let size = FrameSize::Fixed(64);
    RunResults {
        meta: RunMeta {
            started: "2026-11-25T17:00:00Z".into(),
            host: "bench-host".into(),
            kernel: "6.1.0-test".into(),
            dut: DutInfo {
                kind: "softrouter".into(),
                name: name.into(),
                version: "0.1.0 <b>bold</b>".into(),
                config: None,
            },
            notes: vec!["note with <i>markup</i> & ampersand".into()],
            ..RunMeta::default()
        },
        settings: Settings::default().resolved(),
        tests: vec![
            TestResult::throughput(size.clone(), 4, tp),
            TestResult::latency(size.clone(), 4, lat),
            TestResult::loss(size, 4, loss),
        ],
    }
}

fn sample(first: &str) -> BenchResults {
    let mut a = run(first, 180_000.0, true);
    a.settings.paper.push(PaperValue {
        paper: "000".into(),
        figure: "Fig. 4".into(),
        metric: "ndr_mpps".into(),
        size: "64".into(),
        ip: None,
        dut: Some("linux".into()),
        published: 0.24,
        unit: "Mpps".into(),
        measured: None,
        not_measurable: None,
    });
    BenchResults::new(vec![a, run("linux", 120_000.0, false)])
}

fn experiment(first: &str) -> Vec<Experiment> {
    vec![Experiment {
        name: "r.json".into(),
        results: sample(first),
    }]
}

#[test]
fn every_section_is_there() {
    let p = page("report", &experiment("softrouter"), &[]);
    assert!(p.starts_with("<!DOCTYPE html>") && p.trim_end().ends_with("</html>"));
    for h in [
        ">Throughput</h3>",
        ">Latency</h3>",
        ">Loss against offered load</h3>",
        ">CPU and cycles per packet</h3>",
        ">Interrupts and softirqs</h3>",
        ">Comparison</h3>",
        ">Published figures</h3>",
    ] {
        assert!(p.contains(h), "{h} missing");
    }
    // The table of contents links every section.
    // The first screen first, then the throughput.
    assert!(p.contains("<a href=\"#exp0s0\">In short</a>"), "{p}");
    assert!(p.contains("<a href=\"#exp0s1\">Throughput</a>"), "{p}");
    assert!(p.contains("<h3 id=\"exp0s1\">Throughput</h3>"), "{p}");
    // The header: date, host, kernel, DUT names and versions, notes.
    for s in [
        "2026-11-25T17:00:00Z",
        "bench-host",
        "6.1.0-test",
        "linux",
        "Notes of",
    ] {
        assert!(p.contains(s), "{s} missing");
    }
    // Charts: throughput and latency bars, a loss line, stacked stages,
    // CPU time, interrupts and softirqs.
    assert_eq!(
        p.matches("<svg").count(),
        7,
        "tp, latency, loss, cycles, cpu time, irqs, softirqs"
    );
    assert!(p.contains("interrupts per second, by line") && p.contains(" LOC</li>"));
    assert!(p.contains("<polyline"));
    assert!(p.contains("softrouter 64 v4: workers, 1000 pkts"));
    assert!(p.contains(">The DUT's own statistics</h3>"));
    assert!(p.contains("no_route: 3") && p.contains("<td class=\"n\">2.25</td>"));
    assert!(p.contains("<td class=\"n\">25.0</td>"), "a quarter via XDP");
    assert!(p.contains("linux 64 v4: DUT CPUs"));
    assert!(
        p.contains("linux 64 v4: by stage (perf)"),
        "the kernel DUT's split by perf"
    );
    assert!(
        p.contains("4321") && p.contains("777"),
        "IRQ and NET_RX rates"
    );
    // Percentiles.
    assert!(p.contains("<td class=\"n\">12.0</td><td class=\"n\">40.0</td>"));
    // The comparison's ratios (each run / the last), here a bound.
    assert!(p.contains("ratio: each run / linux"));
    assert!(p.contains("1.50 (bound)"), "{p}");
}

#[test]
fn lower_bounds_are_marked() {
    let p = page("report", &experiment("softrouter"), &[]);
    assert!(p.contains("<td class=\"n lb\">≥ 0.180 (tester-limited)</td>"));
    assert!(p.contains("<td class=\"n lb\">≥ 0.198 (tester-limited)</td>"));
    assert!(
        p.contains("<td class=\"n\">0.120</td>"),
        "linux's NDR is exact"
    );
    // In the chart, in plain sight and in the tooltip.
    // In the chart, in plain sight: ≥ above each bound's bar.
    assert_eq!(p.matches(">\n≥\n</text>").count(), 2, "{p}");
    // Tester-limited loss points hollow (a white marker).
    assert!(p.contains("r=\"4\" opacity=\"1\" fill=\"#FFFFFF\""), "{p}");
}

#[test]
fn text_from_the_results_is_escaped() {
    let evil = "<script>alert(1)</script>\"'";
    let mut e = experiment(evil);
    e[0].name = "<img src=x onerror=alert(2)>.json".into();
    let p = page("<title>", &e, &[]);
    assert!(!p.contains("<script"), "a DUT name became markup");
    assert!(!p.contains("<img"));
    assert!(!p.contains("<b>bold") && !p.contains("<i>markup"));
    assert!(p.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;"));
    assert!(p.contains("&lt;img src=x onerror=alert(2)&gt;.json"));
    assert!(p.contains("note with &lt;i&gt;markup&lt;/i&gt; &amp; ampersand"));
    assert_eq!(esc("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
}

#[test]
fn self_contained() {
    let p = page("report", &experiment("softrouter"), &[]);
    for bad in [
        "http://", "https://", "<script", "<link", "<img", "@import", "url(",
    ] {
        assert!(!p.contains(bad), "{bad} in the page");
    }
    assert!(p.contains("default-src 'none'"));
}

#[test]
fn papers_beside_measured_values() {
    let extra = [
        PaperValue {
            paper: "004".into(),
            figure: "Table 2".into(),
            metric: "latency_median_us".into(),
            size: "64".into(),
            ip: Some(4),
            dut: None,
            published: 24.0,
            unit: "µs".into(),
            measured: None,
            not_measurable: None,
        },
        PaperValue {
            paper: "001".into(),
            figure: String::new(),
            metric: "energy_j".into(),
            size: "64".into(),
            ip: None,
            dut: None,
            published: 2.0,
            unit: "J".into(),
            measured: Some(3.0),
            not_measurable: None,
        },
        PaperValue {
            paper: "002".into(),
            figure: String::new(),
            metric: "ndr_mpps".into(),
            size: "64".into(),
            ip: None,
            dut: None,
            published: 0.9,
            unit: "Mpps".into(),
            measured: None,
            not_measurable: None,
        },
    ];
    let r = sample("softrouter");
    let rows = papers::rows(&r, &extra);
    assert_eq!(rows.len(), 4, "the settings' row, then the extra ones");
    // linux's NDR 0.12 Mpps against 0.24 published.
    assert_eq!(rows[0].measured, Some(0.12));
    assert!((rows[0].ratio().unwrap() - 0.5).abs() < 1e-9);
    assert_eq!(rows[1].measured, Some(12.0), "median 12 us");
    assert_eq!(rows[2].ratio(), Some(1.5), "given measured value");
    assert!(rows[3].lower_bound, "softrouter's NDR is tester-limited");
    let p = page("report", &experiment("softrouter"), &extra);
    assert!(p.contains("<td>Fig. 4</td>") && p.contains("<td class=\"n\">0.50</td>"));
    assert!(p.contains("<td class=\"n lb\">≥ 0.20</td>"));
    // No rows: the section says where they come from.
    let mut none = sample("softrouter");
    none.runs[0].settings.paper.clear();
    let p = page(
        "r",
        &[Experiment {
            name: "x".into(),
            results: none,
        }],
        &[],
    );
    assert!(p.contains("No published figures given"));
}

#[test]
fn papers_file_parses_and_is_checked() {
    let f = crate::settings::PapersFile::from_toml_str(
        "[[paper]]\npaper = \"000\"\nmetric = \"ndr_mpps\"\nsize = \"64\"\npublished = 1.5\nunit = \"Mpps\"\n",
        "p.toml",
    )
    .unwrap();
    assert_eq!(f.paper.len(), 1);
    let e = crate::settings::PapersFile::from_toml_str("[[paper]]\npaper = \"x\"\n", "p.toml")
        .unwrap_err();
    assert!(e.starts_with("p.toml") && e.contains("metric"), "{e}");
    let e = crate::settings::PapersFile::from_toml_str(
        "[[paper]]\npaper = \"x\"\nmetric = \"m\"\npublished = 1\nip = 5\n",
        "p.toml",
    )
    .unwrap_err();
    assert!(e.contains("ip must be 4 or 6"), "{e}");
    // In an experiment file.
    let s = Settings::from_toml_str(
        "[[paper]]\npaper = \"000\"\nmetric = \"ndr_mpps\"\nsize = \"64\"\npublished = 1.5\n",
        "e.toml",
    )
    .unwrap();
    assert_eq!(s.paper[0].published, 1.5);
    let again = Settings::from_toml_str(&s.to_toml(), "again.toml").unwrap();
    assert_eq!(again.paper, s.paper);
}

#[test]
fn an_empty_file_still_renders() {
    let p = page(
        "r",
        &[Experiment {
            name: "empty.json".into(),
            results: BenchResults::new(Vec::new()),
        }],
        &[],
    );
    assert!(p.contains("This file holds no run."));
}

/// A paper row finds a run renamed for its options (`linux
/// napi_budget=2`) by its name and the options that set it apart, or by
/// its plain name as the first of its kind.
#[test]
fn paper_rows_pick_a_run_by_its_options() {
    let mut a = run("linux", 100_000.0, false);
    a.meta.dut.name = "linux napi_budget=300".into();
    let mut b = run("linux", 200_000.0, false);
    b.meta.dut.name = "linux napi_budget=2".into();
    let r = BenchResults::new(vec![a, b]);
    let row = |dut: &str| PaperValue {
        paper: "000".into(),
        figure: String::new(),
        metric: "ndr_mpps".into(),
        size: "64".into(),
        ip: None,
        dut: Some(dut.into()),
        published: 1.0,
        unit: String::new(),
        measured: None,
        not_measurable: None,
    };
    let got = |dut: &str| papers::measured(&row(dut), &r).0;
    assert_eq!(got("linux napi_budget=2"), Some(0.2));
    assert_eq!(got("linux"), Some(0.1), "the first run of the kind");
    assert_eq!(got("linux napi_budget=300"), Some(0.1));
    assert_eq!(got("linux napi_budget=7"), None);
}

/// The metrics beyond throughput and latency: stage cycles (a kernel
/// profile and softrouter's own counters), the loss test's highest rate,
/// the back-to-back bursts; and rows this testbed cannot measure, listed
/// with their reason instead of a value.
#[test]
fn paper_rows_for_stages_overload_and_bursts() {
    let mut k = run("linux", 100_000.0, false);
    k.tests[0].trials[0]
        .outcome
        .dut_stats
        .as_mut()
        .unwrap()
        .stages = Some(perf_split(StageFigures {
        rx: Some(453.0),
        tx: Some(463.0),
        memory: Some(101.0),
        skb: Some(292.0),
        processing: Some(757.0),
        other: Some(0.0),
    }));
    // The loss test: its first trial is the highest rate.
    let mut hot = trial(200_000.0, false);
    hot.outcome.latency.count = 5;
    hot.outcome.latency.median_ns = 2_500_000;
    hot.outcome.tester_limited = false;
    let mut cool = trial(20_000.0, false);
    cool.outcome.latency.count = 5;
    cool.outcome.latency.median_ns = 9_000;
    k.tests[2].trials = vec![hot, cool];
    // Back-to-back: two passed bursts, one failed one.
    let burst = |passed: bool, min: u64, mean: f64, max: u64, count: u64| {
        let mut t = trial(200_000.0, false);
        t.passed = passed;
        t.outcome.latency.count = count;
        (t.outcome.latency.min_ns, t.outcome.latency.mean_ns) = (min, mean);
        t.outcome.latency.max_ns = max;
        t
    };
    let b2b = crate::search::BackToBackResult {
        bursts: vec![900, 1100],
        mean_burst: 1000.0,
        ..Default::default()
    };
    let mut b = TestResult::back_to_back(FrameSize::Fixed(64), 4, b2b);
    b.trials = vec![
        burst(true, 15_000, 900_000.0, 1_400_000, 1),
        burst(true, 20_000, 300_000.0, 1_500_000, 3),
        burst(false, 1_000, 5e6, 9_000_000, 10),
    ];
    k.tests.push(b);
    let s = run("softrouter", 100_000.0, false);
    let r = BenchResults::new(vec![k, s]);
    let row = |metric: &str, dut: &str| PaperValue {
        paper: "p".into(),
        figure: String::new(),
        metric: metric.into(),
        size: "64".into(),
        ip: None,
        dut: Some(dut.into()),
        published: 1.0,
        unit: String::new(),
        measured: None,
        not_measurable: None,
    };
    let got = |m: &str, dut: &str| papers::measured(&row(m, dut), &r).0;
    assert_eq!(got("cycles_processing", "linux"), Some(757.0));
    assert_eq!(got("cycles_skb", "linux"), Some(292.0));
    assert_eq!(got("cycles_rx", "softrouter"), Some(100.0));
    assert_eq!(got("cycles_processing", "softrouter"), Some(200.0));
    assert_eq!(got("cycles_memory", "softrouter"), Some(0.0));
    assert_eq!(got("cycles_bogus", "softrouter"), None);
    assert_eq!(got("overload_latency_median_us", "linux"), Some(2500.0));
    assert_eq!(got("overload_cpu_available_pct", "linux"), Some(3.0));
    assert_eq!(got("overload_irq_per_s", "linux"), Some(4321.0));
    assert_eq!(got("b2b_burst_frames", "linux"), Some(1000.0));
    assert_eq!(got("b2b_latency_min_us", "linux"), Some(15.0));
    assert_eq!(got("b2b_latency_max_us", "linux"), Some(1500.0));
    assert_eq!(
        got("b2b_latency_mean_us", "linux"),
        Some(450.0),
        "sample-weighted"
    );
    assert_eq!(
        got("b2b_latency_mean_us", "softrouter"),
        None,
        "no b2b test"
    );
    // A row that cannot be measured here: no value, listed with the reason.
    let mut nm = row("ndr_mpps", "linux");
    nm.not_measurable = Some("needs <4> CPUs".into());
    assert_eq!(papers::measured(&nm, &r).0, None);
    let p = page(
        "r",
        &[Experiment {
            name: "x".into(),
            results: r.clone(),
        }],
        &[row("cycles_rx", "linux"), nm],
    );
    assert!(p.contains("<h4>Not measurable on this testbed</h4>"));
    assert!(p.contains("needs &lt;4&gt; CPUs"), "the reason, escaped");
    assert!(
        p.contains("<code>cycles_rx, cycles_tx"),
        "the legend names the metric"
    );
}

#[test]
fn a_paper_row_is_measured_or_not_measurable() {
    let e = crate::settings::PapersFile::from_toml_str(
        "[[paper]]\npaper = \"x\"\nmetric = \"m\"\npublished = 1\nmeasured = 2\nnot_measurable = \"why\"\n",
        "p.toml",
    )
    .unwrap_err();
    assert!(e.contains("not both"), "{e}");
    let e = crate::settings::PapersFile::from_toml_str(
        "[[paper]]\npaper = \"x\"\nmetric = \"m\"\npublished = 1\nnot_measurable = \" \"\n",
        "p.toml",
    )
    .unwrap_err();
    assert!(e.contains("needs a reason"), "{e}");
}

/// Two rounds of two DUTs: the report's comparison has the repeats
/// table (medians with their range, ratios of the medians with the
/// per-round range), the per-run rows name their round, and the chart
/// draws the rounds' range as whiskers.
#[test]
fn repeated_runs_show_medians_and_ranges() {
    let mut runs = Vec::new();
    for (round, sr, linux) in [(1, 150_000.0, 100_000.0), (2, 170_000.0, 80_000.0)] {
        for (name, ndr) in [("softrouter", sr), ("linux", linux)] {
            // softrouter's round 2 is a lower bound (tester-limited).
            let mut r = run(name, ndr, name == "softrouter" && round == 2);
            r.meta.round = round;
            runs.push(r);
        }
    }
    let results = BenchResults::new(runs);
    let p = page(
        "report",
        &[Experiment {
            name: "r.json".into(),
            results: results.clone(),
        }],
        &[],
    );
    assert!(p.contains(">Repeated runs</h3>"), "{p}");
    assert!(
        !p.contains("cycles x floor"),
        "no floor DUT, no column: {p}"
    );
    assert!(p.contains("each DUT over 2 rounds"), "{p}");
    // softrouter: NDR median 0.16 (0.15-0.17); against linux's median
    // 0.09: 1.78x, per round 1.50 and 2.12.
    // Marked once as a lower bound (≥ and its class), not also with +.
    assert!(
        p.contains("<td class=\"n lb\">≥ 0.1600 (0.150-0.170)</td>"),
        "{p}"
    );
    assert!(!p.contains("0.1600+"), "{p}");
    assert!(p.contains("<td class=\"n\">1.78x (1.50-2.12)</td>"), "{p}");
    assert!(p.contains("softrouter (round 2)"), "{p}");
    // Whiskers of three segments: the throughput bars' (2 DUTs x 2 goals)
    // and the latency boxes' round medians (2 DUTs).
    assert_eq!(p.matches("stroke=\"#333333\"").count(), (4 + 2) * 3, "{p}");
    // With a floor in the results, each DUT's multiples of it over the
    // rounds: median and range, ~ when some round is projected.
    let mut with_floor = results;
    let spread = |median, min, max| crate::repeat::Spread {
        median,
        min,
        max,
        n: 2,
    };
    with_floor.repeats[0].duts[0].x_floor = Some(crate::repeat::RepeatedFloor {
        cycles_per_packet: Some(spread(1.1, 1.0, 1.2)),
        capacity: Some(spread(0.9, 0.8, 1.0)),
        capacity_projected: true,
    });
    let p = page(
        "report",
        &[Experiment {
            name: "r.json".into(),
            results: with_floor,
        }],
        &[],
    );
    assert!(p.contains("cycles x floor"), "{p}");
    assert!(
        p.contains("<td class=\"n\">x1.10 (1.00-1.20)</td><td class=\"n\">~x0.90 (0.80-1.00)</td>"),
        "{p}"
    );
}

/// The first screen: per size and goal the fastest DUT, by how much, and
/// what limits the trust, above every chart.
#[test]
fn the_first_screen_says_who_is_faster_by_how_much_and_how_sure() {
    let p = page("report", &experiment("softrouter"), &[]);
    let short = p.find(">In short</h3>").expect("the summary section");
    assert!(
        short < p.find("<svg").expect("a chart"),
        "summary after a chart"
    );
    // softrouter 0.18 Mpps (a lower bound), linux 0.12: 1.5x.
    assert!(
        p.contains("<td class=\"n lb\">≥ 0.180</td><td>1.50x linux</td>"),
        "{p}"
    );
    assert!(p.contains("the fastest figure is a lower bound"), "{p}");
    assert!(p.contains("one run: `--repeat 3` shows the spread"), "{p}");
    assert!(
        p.contains("Of 3 trials, 0 were spoiled by the tester"),
        "{p}"
    );

    let mut runs = Vec::new();
    for (round, sr, linux) in [(1, 150_000.0, 100_000.0), (2, 170_000.0, 80_000.0)] {
        for (name, ndr) in [("softrouter", sr), ("linux", linux)] {
            let mut r = run(name, ndr, false);
            r.meta.round = round;
            runs.push(r);
        }
    }
    let exp = [Experiment {
        name: "r.json".into(),
        results: BenchResults::new(runs),
    }];
    let p = page("report", &exp, &[]);
    // Medians 0.16 and 0.09: 1.78x; linux's rounds are 11 % from its median.
    assert!(
        p.contains("<td class=\"n\">0.160</td><td>1.78x linux</td>"),
        "{p}"
    );
    assert!(p.contains("2 rounds agree within ±11 %"), "{p}");
}

/// Notes every run carries (the tester's calibration) are shown once,
/// each run's own under its name; a tester-limited first goal's trial is
/// never labelled NDR.
#[test]
fn common_notes_once_and_no_tester_limited_ndr() {
    let mut e = experiment("softrouter");
    for (i, r) in e[0].results.runs.iter_mut().enumerate() {
        r.meta.notes = vec!["tester calibration: 64 B max 3.94 Mpps".into()];
        if i == 0 {
            r.meta.notes.push("softrouter's own note".into());
        }
    }
    let p = page("report", &e, &[]);
    assert_eq!(
        p.matches("tester calibration: 64 B max 3.94 Mpps").count(),
        1,
        "{p}"
    );
    assert!(p.contains("Notes of all runs:"), "{p}");
    assert!(
        p.contains(
            "Notes of softrouter:</p>\n<ul class=\"notes\">\n<li>softrouter&#39;s own note</li>"
        ),
        "{p}"
    );
    // The softrouter run's NDR is tester-limited: its CPU rows say so.
    assert!(
        p.contains("<td>tester-limited</td><td class=\"n lb\">≥ "),
        "{p}"
    );
}

/// Back-to-back and system recovery results get their sections (they
/// were only on the terminal and in the JSON).
#[test]
fn back_to_back_and_recovery_sections() {
    use crate::search::{BackToBackResult, RecoveryResult};
    let mut e = experiment("softrouter");
    let tests = &mut e[0].results.runs[0].tests;
    tests.push(TestResult::back_to_back(
        FrameSize::Fixed(64),
        4,
        BackToBackResult {
            bursts: vec![1200, 1300],
            mean_burst: 1250.0,
            stddev_burst: 70.7,
            implied_buffer_time_s: 0.000_312,
            ..BackToBackResult::default()
        },
    ));
    tests.push(TestResult::recovery(
        FrameSize::Fixed(64),
        4,
        RecoveryResult {
            overload_rate_fps: 220_000.0,
            recovery_s: vec![0.0021, 0.0034],
            mean_recovery_s: 0.00275,
            ..RecoveryResult::default()
        },
    ));
    let p = page("report", &e, &[]);
    assert!(
        p.contains(">Back-to-back</h3>") && p.contains(">System recovery</h3>"),
        "{p}"
    );
    assert!(
        p.contains("<td class=\"n\">1250</td>") && p.contains("<td class=\"n\">312</td>"),
        "{p}"
    );
    assert!(
        p.contains(
            "<td class=\"n\">0.220</td><td class=\"n\">2.75</td><td class=\"w\">2.10, 3.40</td>"
        ),
        "{p}"
    );
}

/// Provenance: the tool's build (git describe, else the version), the
/// CPU, the kernel command line and the command line, in `meta` and on
/// the page.
#[test]
fn provenance_in_meta_and_on_the_page() {
    let here = crate::results::Provenance::here();
    assert!(
        here.tool_build.starts_with(env!("CARGO_PKG_VERSION")),
        "{here:?}"
    );
    assert!(here.cpus > 0 && !here.command_line.is_empty(), "{here:?}");
    let mut e = experiment("softrouter");
    for r in &mut e[0].results.runs {
        r.meta.provenance = here.clone();
        r.meta.provenance.nic_drivers = vec!["tst0: veth".into()];
    }
    let json = serde_json::to_value(&e[0].results).unwrap();
    assert_eq!(json["runs"][0]["meta"]["provenance"]["cpus"], here.cpus);
    let p = page("report", &e, &[]);
    assert!(
        p.contains("<dt>command line</dt>") && p.contains("<dt>kernel command line</dt>"),
        "{p}"
    );
    assert!(p.contains(&esc(&here.tool_build)), "{p}");
    assert!(p.contains("<dd>tst0: veth</dd>"), "{p}");
}
