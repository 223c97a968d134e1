use super::*;
use clap::Parser;

/// The flags as `softrouter bench` parses them.
#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: BenchArgs,
}

fn parse(flags: &[&str]) -> Result<BenchArgs, clap::Error> {
    Cli::try_parse_from(std::iter::once("bench").chain(flags.iter().copied())).map(|c| c.args)
}

/// `[[duts]]` in an experiment: one run per table, in order, the
/// flags merged into each; `--dut` replaces them.
#[test]
fn experiment_duts_are_run_in_turn() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("e.toml");
    std::fs::write(
        &p,
        "tests = [\"throughput\"]\nsizes = [\"64\"]\n\n[[duts]]\nkind = \"linux\"\nnapi_budget = 300\n\n[[duts]]\nkind = \"linux\"\nnapi_budget = 2\n\n[[duts]]\nkind = \"bridge\"\n",
    )
    .unwrap();
    let e = p.to_str().unwrap();
    let runs = build_settings(&parse(&["-e", e, "--rps", "per-port"]).unwrap()).unwrap();
    let got: Vec<String> = runs.iter().map(|s| format!("{:?}", s.dut)).collect();
    assert_eq!(runs.len(), 3, "{got:?}");
    assert!(
        matches!(
            runs[0].dut,
            DutSettings::Linux {
                napi_budget: Some(300),
                rps: Some(RpsMode::PerPort),
                ..
            }
        ),
        "{got:?}"
    );
    assert!(
        matches!(
            runs[1].dut,
            DutSettings::Linux {
                napi_budget: Some(2),
                ..
            }
        ),
        "{got:?}"
    );
    assert!(matches!(runs[2].dut, DutSettings::Bridge {}), "{got:?}");
    assert!(runs.iter().all(|s| s.duts.is_empty()));
    let runs = build_settings(&parse(&["-e", e, "--dut", "softrouter"]).unwrap()).unwrap();
    assert_eq!(runs.len(), 1);
    assert!(matches!(runs[0].dut, DutSettings::Softrouter { .. }));
    // A bad DUT table is named by its place.
    std::fs::write(&p, "[[duts]]\nkind = \"linux\"\nnapi_budget = \"many\"\n").unwrap();
    let err = format!(
        "{:#}",
        build_settings(&parse(&["-e", e]).unwrap()).unwrap_err()
    );
    assert!(
        err.contains("e.toml") && err.contains("napi_budget"),
        "{err}"
    );
}

/// The linux DUT's coalescing flags become its settings; a deferral
/// without its timer is refused, naming the field.
#[test]
fn coalescing_flags() {
    let runs = build_settings(
        &parse(&[
            "--dut",
            "linux",
            "--napi-defer-hard-irqs",
            "2",
            "--gro-flush-timeout-us",
            "50",
        ])
        .unwrap(),
    )
    .unwrap();
    assert!(
        matches!(
            runs[0].dut,
            DutSettings::Linux {
                napi_defer_hard_irqs: Some(2),
                gro_flush_timeout_us: Some(50),
                ..
            }
        ),
        "{:?}",
        runs[0].dut
    );
    let err = format!(
        "{:#}",
        build_settings(&parse(&["--dut", "linux", "--napi-defer-hard-irqs", "2"]).unwrap())
            .unwrap_err()
    );
    assert!(
        err.contains("field `dut.napi_defer_hard_irqs`") && err.contains("gro_flush_timeout_us"),
        "{err}"
    );
}

/// Every experiment file of `experiments/` (the papers') loads: its
/// settings and `[[paper]]` rows validate, each DUT table becomes a
/// run, router configurations it names exist, and each paper row
/// names a DUT the experiment runs.
#[test]
fn the_papers_experiment_files_load() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        n += 1;
        let args = parse(&["-e", p.to_str().unwrap()]).unwrap();
        let runs = build_settings(&args).unwrap_or_else(|e| panic!("{}: {e:#}", p.display()));
        assert!(
            runs.len() >= 2,
            "{}: compares at least two DUTs",
            p.display()
        );
        let mut names = Vec::new();
        for r in &runs {
            r.validate()
                .unwrap_or_else(|e| panic!("{}: {e:?}", p.display()));
            match &r.dut {
                DutSettings::Softrouter {
                    config: Some(c), ..
                } => {
                    assert!(c.is_file(), "{}: {} missing", p.display(), c.display());
                    let text = std::fs::read_to_string(c).unwrap();
                    names.push(if text.contains("cross-connect") {
                        "softrouter-xc"
                    } else {
                        "softrouter-noxdp"
                    });
                }
                DutSettings::Softrouter {
                    fast_path: Some(FastPathMode::Off),
                    ..
                } => names.push("softrouter-noxdp"),
                d => names.push(match d.kind() {
                    DutKind::Softrouter => "softrouter",
                    DutKind::Linux => "linux",
                    DutKind::Bridge => "bridge",
                    DutKind::Ovs => "ovs",
                    DutKind::Floor => "floor",
                    DutKind::Command => "command",
                    DutKind::External => "external",
                }),
            }
        }
        let papers = &runs[0].paper;
        assert!(
            !papers.is_empty(),
            "{}: names the paper's figures",
            p.display()
        );
        for row in papers {
            // The name, then options that pick one of its runs.
            let d = row.dut.as_deref().unwrap_or("");
            let d = d.split(' ').next().unwrap_or("");
            assert!(
                names.contains(&d),
                "{}: paper row for {d:?}, runs {names:?}",
                p.display()
            );
        }
    }
    assert_eq!(n, 5, "one experiment per paper, 004 with setup B apart");
}

/// `--fast-path xdp,off` runs softrouter once per tier, each with its
/// `fast_path`, and the other DUTs once.
#[test]
fn fast_path_list_runs_softrouter_per_tier() {
    let args = parse(&["--dut", "softrouter,linux", "--fast-path", "xdp,off"]).unwrap();
    let runs = build_settings(&args).unwrap();
    let got: Vec<(DutKind, Option<FastPathMode>)> = runs
        .iter()
        .map(|s| match &s.dut {
            DutSettings::Softrouter { fast_path, .. } => (DutKind::Softrouter, *fast_path),
            d => (d.kind(), None),
        })
        .collect();
    assert_eq!(
        got,
        [
            (DutKind::Softrouter, Some(FastPathMode::Xdp)),
            (DutKind::Softrouter, Some(FastPathMode::Off)),
            (DutKind::Linux, None),
        ]
    );
    assert!(parse(&["--fast-path", "dpdk"]).is_err());
}

/// `--quick`: the experiment's first size and short trials; a flag
/// given too still wins.
#[test]
fn quick_is_a_smoke_run_of_the_experiment() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.toml");
    std::fs::write(
        &p,
        "sizes = [\"256\", \"64\", \"1518\"]\ntrial_seconds = 5.0\npause_seconds = 2.0\n",
    )
    .unwrap();
    let e = p.to_str().unwrap();
    let runs = build_settings(&parse(&["-e", e, "--quick"]).unwrap()).unwrap();
    let s = &runs[0];
    assert_eq!(
        s.sizes.iter().map(|z| z.to_string()).collect::<Vec<_>>(),
        ["256"]
    );
    assert_eq!(
        (
            s.trial_seconds,
            s.pause_seconds,
            s.drain_seconds,
            s.latency_seconds
        ),
        (Some(0.5), Some(0.25), Some(0.25), Some(0.5))
    );
    for g in s.search_goals() {
        assert_eq!(
            (g.final_trial_seconds, g.duration_sum_seconds, g.width_pct),
            (0.1, 0.5, 5.0),
            "{g:?}"
        );
    }
    let runs =
        build_settings(&parse(&["-e", e, "--quick", "--trial-seconds", "1"]).unwrap()).unwrap();
    assert_eq!(runs[0].trial_seconds, Some(1.0), "the flag wins");
    let full = build_settings(&parse(&["-e", e]).unwrap()).unwrap();
    assert_eq!((full[0].sizes.len(), full[0].trial_seconds), (3, Some(5.0)));
}

#[test]
fn no_arguments_is_the_comparison_suite() {
    let runs = build_settings(&BenchArgs::default()).unwrap();
    let kinds: Vec<DutKind> = runs.iter().map(|s| s.dut.kind()).collect();
    assert_eq!(kinds, [DutKind::Softrouter, DutKind::Linux]);
    assert_eq!(runs[0].tests, [TestKind::Throughput, TestKind::Latency]);
    assert_eq!(runs[0].sizes.len(), 4);
    assert_eq!(runs[0].tester, TesterBackend::Xdp);
    let goals: Vec<String> = runs[0]
        .search_goals()
        .iter()
        .map(|g| g.name.clone())
        .collect();
    assert_eq!(goals, ["ndr", "pdr"]);
    assert_eq!(runs[0].search_goals()[1].loss_pct, 0.5);
    assert_eq!(runs[0].drain_seconds, Some(0.25));
    // The quick preset's pause: ~300 trials, each waits it.
    assert_eq!(runs[0].resolved().pause_seconds, Some(0.1));
}

#[test]
fn flags_override_the_experiment_and_keep_its_dut_options() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.toml");
    std::fs::write(&p, "tests = [\"loss\"]\nsizes = [\"128\"]\ntrial_seconds = 5.0\ntester = \"afxdp\"\n[dut]\nkind = \"linux\"\nnapi_budget = 300\n").unwrap();
    let args = parse(&[
        "-e",
        p.to_str().unwrap(),
        "--trial-seconds",
        "3",
        "--sizes",
        "64,imix",
    ])
    .unwrap();
    let runs = build_settings(&args).unwrap();
    assert_eq!(runs.len(), 1);
    let s = &runs[0];
    assert_eq!(s.trial_seconds, Some(3.0));
    assert_eq!(s.tests, [TestKind::Loss]);
    assert_eq!(s.sizes.len(), 2);
    assert_eq!(s.tester, TesterBackend::AfXdp, "the file's tester is kept");
    assert!(matches!(
        s.dut,
        DutSettings::Linux {
            napi_budget: Some(300),
            ..
        }
    ));
}

#[test]
fn bad_values_are_named() {
    let e = parse(&["--test", "speed"]).unwrap_err().to_string();
    assert!(e.contains("speed") && e.contains("back-to-back"), "{e}");
    let e = parse(&["--dut", "toaster"]).unwrap_err().to_string();
    assert!(e.contains("toaster") && e.contains("softrouter"), "{e}");
    let e = parse(&["--tester", "dpdk"]).unwrap_err().to_string();
    assert!(e.contains("afpacket"), "{e}");
    let e = parse(&["--rps", "most"]).unwrap_err().to_string();
    assert!(e.contains("per-port"), "{e}");
    let args = parse(&["--dut", "linux", "--goals", "ndr,fast"]).unwrap();
    let e = format!("{:#}", build_settings(&args).unwrap_err());
    assert!(e.contains("goals.1") && e.contains("\"fast\""), "{e}");
    let args = parse(&["--goals", "1f21d0l100e"]).unwrap();
    let e = format!("{:#}", build_settings(&args).unwrap_err());
    assert!(e.contains("exceed_pct"), "{e}");
}

/// Every flag that is a setting, set away from its default, saved with
/// `--save-experiment`'s writer and loaded again: equal, and each flag
/// is found in the settings.
/// `--repeat N` sets every DUT's rounds (default 1), the file's
/// `repeat` too, and 0 is refused naming the field.
#[test]
fn repeat_flag_and_file_key() {
    let s =
        build_settings(&parse(&["--dut", "softrouter,linux", "--repeat", "2"]).unwrap()).unwrap();
    assert_eq!(s.iter().map(|s| s.repeat).collect::<Vec<_>>(), [2, 2]);
    let one = build_settings(&parse(&["--dut", "linux"]).unwrap()).unwrap();
    assert_eq!(one[0].repeat, 1);
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("e.toml");
    std::fs::write(&exp, "repeat = 4\n").unwrap();
    let e = exp.to_str().unwrap();
    assert_eq!(
        build_settings(&parse(&["-e", e]).unwrap()).unwrap()[0].repeat,
        4
    );
    let flag = build_settings(&parse(&["-e", e, "--repeat", "2"]).unwrap()).unwrap();
    assert_eq!(flag[0].repeat, 2, "the flag wins");
    let err = build_settings(&parse(&["--repeat", "0"]).unwrap()).unwrap_err();
    assert!(format!("{err:#}").contains("repeat"), "{err:#}");
    assert!(parse(&["--repeat", "x"]).is_err());
}

/// `--tester-cpus N` sets the tester's CPUs (default 1), the file's
/// `tester_cpus` too; 0, or several with a tester other than xdp or
/// without pinning, is refused naming the field.
#[test]
fn tester_cpus_flag_and_file_key() {
    let s =
        build_settings(&parse(&["--dut", "floor,linux", "--tester-cpus", "2"]).unwrap()).unwrap();
    assert_eq!(s.iter().map(|s| s.tester_cpus).collect::<Vec<_>>(), [2, 2]);
    let one = build_settings(&parse(&["--dut", "linux"]).unwrap()).unwrap();
    assert_eq!(one[0].tester_cpus, 1);
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("e.toml");
    std::fs::write(&exp, "tester_cpus = 3\n").unwrap();
    let e = exp.to_str().unwrap();
    let file = build_settings(&parse(&["-e", e]).unwrap()).unwrap();
    assert_eq!(file[0].tester_cpus, 3);
    for bad in [
        &["--tester-cpus", "0"][..],
        &["--tester-cpus", "2", "--tester", "afxdp"],
        &["--tester-cpus", "2", "--no-pin"],
    ] {
        let err = build_settings(&parse(bad).unwrap()).unwrap_err();
        assert!(
            format!("{err:#}").contains("tester_cpus"),
            "{bad:?}: {err:#}"
        );
    }
    assert!(parse(&["--tester-cpus", "x"]).is_err());
}

#[test]
fn every_flag_round_trips_through_the_saved_experiment() {
    let dir = tempfile::tempdir().unwrap();
    let common = [
        "--test",
        "throughput,loss,back-to-back",
        "--sizes",
        "128,imix",
        "--ip",
        "both",
        "--pattern",
        "bidirectional",
        "--flows",
        "8",
        "--queues",
        "2",
        "--repeat",
        "3",
        "--preset",
        "rfc",
        "--trial-seconds",
        "3",
        "--pause-seconds",
        "0.25",
        "--drain-seconds",
        "0.75",
        "--latency-seconds",
        "4",
        "--goals",
        "ndr,rfc2544,2f10d0.001l25e1w",
        "--max-rate-fps",
        "250000",
        "--json",
        "r.json",
        "--csv",
        "r.csv",
        "--plot",
        "r.svg",
        "--report",
        "r.html",
        "--tester",
        "afpacket",
        "--no-pin",
        "--quiet",
        "--softrouter-bin",
        "/bin/true",
    ];
    let per_dut: [&[&str]; 4] = [
        &[
            "--dut",
            "softrouter",
            "--workers",
            "2",
            "--mode",
            "adaptive",
            "--driver",
            "afpacket",
            "--router-config",
            "router.toml",
        ],
        &["--dut", "linux", "--napi-budget", "64", "--rps", "per-port"],
        &["--dut", "command", "--command", "sleep 9"],
        &["--dut", "external", "--interfaces", "a,b"],
    ];
    for dut in per_dut {
        let flags: Vec<&str> = common.iter().chain(dut).copied().collect();
        let args = parse(&flags).unwrap();
        let s = build_settings(&args).unwrap().remove(0);
        let saved = dir.path().join("saved.toml");
        std::fs::write(&saved, s.to_toml()).unwrap();
        let back = Settings::load(&saved).unwrap();
        assert_eq!(back, s.resolved(), "{flags:?}");
        // Loading the saved file through the command line again.
        let again = build_settings(&parse(&["-e", saved.to_str().unwrap()]).unwrap())
            .unwrap()
            .remove(0);
        assert_eq!(again.resolved(), s.resolved());
        // Each flag landed.
        assert_eq!(s.tests.len(), 3);
        assert_eq!(s.ip, IpVersion::Both);
        assert_eq!(s.pattern, Pattern::Bidirectional);
        assert_eq!((s.flows, s.queues, s.preset), (8, 2, Preset::Rfc));
        assert_eq!(s.repeat, 3);
        assert_eq!(
            (
                s.trial_seconds,
                s.pause_seconds,
                s.drain_seconds,
                s.latency_seconds,
            ),
            (Some(3.0), Some(0.25), Some(0.75), Some(4.0))
        );
        let goals: Vec<String> = s.search_goals().iter().map(|g| g.code()).collect();
        assert_eq!(
            goals,
            ["1f21d0l50e0.5w", "60f60d0l0e0.5w1i", "2f10d0.001l25e1w"]
        );
        assert_eq!(s.max_rate_fps, Some(250_000.0));
        assert_eq!(s.json.as_deref(), Some(Path::new("r.json")));
        assert_eq!(s.csv.as_deref(), Some(Path::new("r.csv")));
        assert_eq!(s.plot.as_deref(), Some(Path::new("r.svg")));
        assert_eq!(s.report.as_deref(), Some(Path::new("r.html")));
        assert_eq!(s.tester, TesterBackend::AfPacket);
        assert!(!s.pin_cpus && !s.soak);
        match &s.dut {
            DutSettings::Softrouter {
                config,
                workers,
                mode,
                driver,
                budget: _,
                fast_path: _,
            } => {
                assert_eq!(config.as_deref(), Some(Path::new("router.toml")));
                assert_eq!(*workers, Some(2));
                assert_eq!(*mode, Some(SoftrouterMode::Adaptive));
                assert_eq!(*driver, Some(PortDriver::AfPacket));
            }
            DutSettings::Linux {
                napi_budget, rps, ..
            } => {
                assert_eq!(*napi_budget, Some(64));
                assert_eq!(*rps, Some(RpsMode::PerPort));
            }
            DutSettings::Bridge {} | DutSettings::Ovs {} | DutSettings::Floor {} => {}
            DutSettings::Command { command, .. } => assert_eq!(command, "sleep 9"),
            DutSettings::External { interfaces, .. } => assert_eq!(interfaces, &["a", "b"]),
        }
    }
}

/// A flag that makes the experiment invalid is reported against the
/// experiment as written: at the line that sets the field if the file
/// sets it, else with no line (here the file, under three comment
/// lines, only names the DUT), never at a line of a re-serialized text
/// the user has not seen.
#[test]
fn a_flags_error_is_located_in_the_experiment_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.toml");
    std::fs::write(&p, "# one\n# two\n# three\n[dut]\nkind = \"linux\"\n").unwrap();
    let e = p.to_str().unwrap();
    let args = parse(&["-e", e, "--napi-defer-hard-irqs", "2"]).unwrap();
    let err = format!("{:#}", build_settings(&args).unwrap_err());
    assert!(
        err.starts_with(&format!("{e}: field `dut.napi_defer_hard_irqs`")),
        "{err}"
    );
}

#[test]
fn profile_stages_flag_lands_and_needs_pinned_cpus() {
    let s = build_settings(&parse(&["--dut", "linux", "--profile-stages"]).unwrap())
        .unwrap()
        .remove(0);
    assert!(s.profile_stages);
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("saved.toml");
    std::fs::write(&saved, s.to_toml()).unwrap();
    assert!(Settings::load(&saved).unwrap().profile_stages);
    let s = build_settings(&parse(&["--dut", "linux"]).unwrap())
        .unwrap()
        .remove(0);
    assert!(!s.profile_stages, "off by default");
    let args = parse(&["--dut", "linux", "--profile-stages", "--no-pin"]).unwrap();
    let e = format!("{:#}", build_settings(&args).unwrap_err());
    assert!(e.contains("profile_stages"), "{e}");
}

#[test]
fn per_dut_experiment_paths() {
    assert_eq!(
        per_dut_path(Path::new("r/exp.toml"), "linux", 2),
        Path::new("r/exp-linux.toml")
    );
    assert_eq!(
        per_dut_path(Path::new("r/exp.toml"), "linux", 1),
        Path::new("r/exp.toml")
    );
}

#[test]
fn link_bps_flag_sets_the_line_rate() {
    let runs = build_settings(&parse(&["--link-bps", "1e10"]).unwrap()).unwrap();
    assert_eq!(runs[0].link_bps, Some(1e10));
    let runs = build_settings(&parse(&["--dut", "linux"]).unwrap()).unwrap();
    assert_eq!(runs[0].link_bps, None);
    let err = format!(
        "{:#}",
        build_settings(&parse(&["--link-bps", "0"]).unwrap()).unwrap_err()
    );
    assert!(err.contains("link_bps"), "{err}");
}
