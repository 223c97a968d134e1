use super::procedure::{confirm, holds, host_fault, Precision};
use super::verdict::fewest_windows_holding;
use super::*;

#[test]
fn through_a_dut_only_the_testers_own_loss_fails_a_rate() {
    let o = |lost, dut_ring, tester_ring| bench::search::TrialOutcome {
        sent: 1000,
        lost,
        loss_split: Some(bench::search::LossSplit {
            dut_ring,
            dut_drops: 0,
            tester_ring,
            elsewhere: lost - dut_ring - tester_ring,
        }),
        ..Default::default()
    };
    assert!(tester_held(&o(0, 0, 0), false) && tester_held(&o(0, 0, 0), true));
    // The floor's ring overflowed in a stall: the tester held.
    assert!(tester_held(&o(30, 30, 0), true));
    // In loopback there is no DUT: every loss is the tester's.
    assert!(!tester_held(&o(30, 30, 0), false));
    // The tester's own ring, or loss nobody claims: not held.
    assert!(!tester_held(&o(5, 0, 5), true));
    assert!(!tester_held(&o(5, 0, 0), true));
}

/// The tester's receive drops in at most half the windows of a load
/// it offered as asked: a stall, not its limit.
#[test]
fn receive_drops_in_few_windows_do_not_fail_a_rate() {
    let o = |lossy: usize, held: bool, beyond: bool| {
        let lost: Vec<u64> = (0..10).map(|i| u64::from(i < lossy) * 7).collect();
        bench::search::TrialOutcome {
            sent: 1000,
            lost: lost.iter().sum(),
            tester_limited: true,
            tester_dropped: lost.iter().sum(),
            load_held: held,
            fault_beyond_receive: beyond,
            measurement_fault: Some("the tester's receive ring dropped frames".into()),
            timeline: Some(bench::search::LossTimeline {
                interval_ns: 100_000_000,
                sent: vec![100; 10],
                lost,
                last_lost_ns: None,
            }),
            ..Default::default()
        }
    };
    for through in [false, true] {
        assert!(tester_held(&o(1, true, false), through));
        assert!(tester_held(&o(5, true, false), through));
        assert!(!tester_held(&o(6, true, false), through));
        // The generator did not offer the load, or something else
        // spoiled the trial: the windows tell nothing.
        assert!(!tester_held(&o(1, false, false), through));
        assert!(!tester_held(&o(1, true, true), through));
    }
    // Through a DUT, its own losses in other windows do not count.
    let mut floor = o(1, true, false);
    floor.lost += 6 * 3;
    let tl = floor.timeline.as_mut().unwrap();
    for l in &mut tl.lost[4..] {
        *l += 3;
    }
    floor.loss_split = Some(bench::search::LossSplit {
        dut_ring: 18,
        dut_drops: 0,
        tester_ring: 7,
        elsewhere: 0,
    });
    assert!(tester_held(&floor, true));
    assert!(
        !tester_held(&floor, false),
        "in loopback every loss is the tester's"
    );
    assert_eq!(
        fewest_windows_holding(10, &[(9, 4), (9, 0), (9, 7), (9, 5)]),
        2
    );
    assert_eq!(fewest_windows_holding(0, &[(9, 4)]), 0);
    // Without a timeline, any drop of the tester's fails the rate.
    let mut untimed = o(1, true, false);
    untimed.timeline = None;
    assert!(!tester_held(&untimed, false));
}

#[test]
fn of_two_passes_the_higher_maximum_is_kept_with_every_trial() {
    let pass = |max, trials| SizeCalibration {
        size: FrameSize::Fixed(64),
        max_rate_fps: max,
        generator_max_fps: 2e6,
        latency_floor: LatencySummary::default(),
        trials,
        path: LOOPBACK.into(),
        other_paths: Vec::new(),
        senders: 1,
    };
    let h = higher(pass(1.11e6, 20), pass(1.77e6, 25));
    assert_eq!((h.max_rate_fps, h.trials), (1.77e6, 45));
    let h = higher(pass(1.9e6, 20), pass(1.5e6, 25));
    assert_eq!((h.max_rate_fps, h.trials), (1.9e6, 45));
}

#[test]
fn only_the_hosts_faults_are_run_again() {
    let o = |fault: Option<&str>, limited| bench::search::TrialOutcome {
        measurement_fault: fault.map(String::from),
        tester_limited: limited,
        ..Default::default()
    };
    assert_eq!(host_fault(&o(None, false)), None);
    assert_eq!(host_fault(&o(Some("paused"), false)), Some("paused"));
    // The tester fell behind or dropped frames: a limit, the answer.
    assert_eq!(host_fault(&o(Some("fell behind"), true)), None);
}

#[test]
fn a_rate_holds_when_one_of_three_trials_passes() {
    let seq = |answers: &[bool]| {
        let mut it = answers.iter().copied();
        let mut n = 0;
        let r = holds(Precision::FULL.tries, || {
            n += 1;
            Ok(it.next().unwrap())
        })
        .unwrap();
        (r, n)
    };
    assert_eq!(seq(&[true]), (true, 1));
    assert_eq!(seq(&[false, true]), (true, 2), "a stall once");
    assert_eq!(seq(&[false, false, true]), (true, 3), "a stall twice");
    assert_eq!(seq(&[false, false, false]), (false, 3), "beyond the tester");
}

/// The confirmation keeps a rate one of three trials holds at, steps
/// 3 % down from one that none holds at, and stops after its steps.
#[test]
fn the_maximum_is_confirmed_by_one_of_three_full_trials() {
    // A pause fails the first two trials at every rate: kept.
    let mut n = 0;
    let kept = confirm(1e6, Precision::FULL, |_| {
        n += 1;
        Ok(n % 3 == 0)
    })
    .unwrap();
    assert_eq!((kept, n), (1e6, 3));
    // Beyond the tester above 0.95 Mfps: two steps down.
    let mut rates = Vec::new();
    let lo = confirm(1e6, Precision::FULL, |r| {
        rates.push(r);
        Ok(r <= 0.95e6)
    })
    .unwrap();
    assert!((lo - 1e6 * 0.97 * 0.97).abs() < 1e-3, "{lo}");
    assert_eq!(rates.len(), 3 + 3 + 1, "{rates:?}");
    // Never holds: four steps, then it stops.
    let lo = confirm(1e6, Precision::FULL, |_| Ok(false)).unwrap();
    assert!((lo - 1e6 * 0.97f64.powi(4)).abs() < 1e-3, "{lo}");
    // Coarse: no confirmation.
    assert_eq!(confirm(1e6, Precision::COARSE, |_| Ok(false)).unwrap(), 1e6);
}

#[test]
fn coarse_calibration_is_asked_for_by_name_only() {
    assert_eq!(Precision::parse(None).unwrap(), Precision::FULL);
    assert_eq!(Precision::parse(Some("full")).unwrap(), Precision::FULL);
    let c = Precision::parse(Some(" coarse ")).unwrap();
    assert_eq!(c, Precision::COARSE);
    assert!(c.width > Precision::FULL.width && c.tries == 1 && c.confirm_steps == 0);
    assert!(c.passes == 1 && Precision::FULL.passes == 2);
    assert_eq!(c.settle, Duration::ZERO, "the test suite does not wait");
    let e = Precision::parse(Some("fast")).unwrap_err().to_string();
    assert!(
        e.contains("SOFTROUTER_CALIBRATION") && e.contains("\"fast\""),
        "{e}"
    );
    // One trial a rate: a single failure is the answer.
    let mut n = 0;
    assert!(!holds(Precision::COARSE.tries, || {
        n += 1;
        Ok(false)
    })
    .unwrap());
    assert_eq!(n, 1);
}

fn cal(path: &str, sizes: &[(usize, f64)]) -> Calibration {
    Calibration {
        backend: TesterBackend::Xdp,
        ipv6: false,
        tx_path: String::new(),
        sizes: sizes
            .iter()
            .map(|&(b, r)| SizeCalibration {
                size: FrameSize::Fixed(b),
                max_rate_fps: r,
                generator_max_fps: r * 1.1,
                latency_floor: LatencySummary {
                    min_ns: 1000,
                    ..LatencySummary::default()
                },
                trials: 10,
                path: path.to_string(),
                other_paths: Vec::new(),
                senders: 1,
            })
            .collect(),
    }
}

#[test]
fn the_lower_maximum_wins_per_size_and_says_which() {
    let lo = cal(LOOPBACK, &[(64, 4.7e6), (1518, 0.8e6), (512, 2e6)]);
    let mut fl = cal(FLOOR, &[(64, 2.1e6), (1518, 0.9e6)]);
    fl.sizes[0].latency_floor.min_ns = 9000;
    let c = lo.lower(&fl);
    let s64 = &c.sizes[0];
    assert_eq!((s64.max_rate_fps, s64.path.as_str()), (2.1e6, FLOOR));
    assert_eq!(s64.generator_max_fps, 2.1e6 * 1.1);
    assert_eq!(s64.other_paths, vec![(LOOPBACK.to_string(), 4.7e6)]);
    assert_eq!(s64.latency_floor.min_ns, 1000, "the wire's floor stays");
    assert_eq!(s64.trials, 20);
    let s1518 = &c.sizes[1];
    assert_eq!((s1518.max_rate_fps, s1518.path.as_str()), (0.8e6, LOOPBACK));
    assert_eq!(s1518.other_paths, vec![(FLOOR.to_string(), 0.9e6)]);
    // A path that passed nothing is no maximum.
    let broken = cal(LOOPBACK, &[(64, 4.7e6)]).lower(&cal(FLOOR, &[(64, 0.0)]));
    assert_eq!(broken.sizes[0].max_rate_fps, 4.7e6);
    assert_eq!(broken.sizes[0].other_paths, vec![(FLOOR.to_string(), 0.0)]);
    // A size the other path did not calibrate keeps its own.
    assert_eq!(
        (c.sizes[2].max_rate_fps, c.sizes[2].other_paths.len()),
        (2e6, 0)
    );
    let src = c.max_rate_source();
    assert!(src.contains("calibrated"), "{src}");
    assert!(
        src.contains("64 B 2.10 Mfps through the floor DUT (loopback 4.70)"),
        "{src}"
    );
    assert!(
        src.contains("1518 B 0.80 Mfps in loopback (floor DUT 0.90)"),
        "{src}"
    );
    assert!(
        src.contains("512 B 2.00 Mfps in loopback;")
            || src.ends_with("512 B 2.00 Mfps in loopback"),
        "{src}"
    );
}

/// A pattern's senders share one tester CPU: a loopback maximum (one
/// sender) is divided among them, a maximum measured with them is not,
/// and the source says a port's share.
#[test]
fn senders_share_a_maximum_calibrated_with_fewer() {
    let mut both = cal(LOOPBACK, &[(64, 4.0e6), (1518, 0.8e6)]);
    both.sizes[1].senders = 2;
    let c = both.shared_by(2);
    assert_eq!(c.sizes[0].max_rate_fps, 2.0e6);
    assert_eq!(c.sizes[0].generator_max_fps, 4.0e6 * 1.1 / 2.0);
    assert_eq!(c.sizes[0].senders, 2);
    assert_eq!(c.sizes[1].max_rate_fps, 0.8e6, "measured with two senders");
    let src = c.max_rate_source();
    assert!(
        src.contains("64 B 2.00 Mfps a port of 2 in loopback"),
        "{src}"
    );
    let one = cal(LOOPBACK, &[(64, 4.0e6)]).shared_by(1);
    assert_eq!(
        (one.sizes[0].max_rate_fps, one.sizes[0].senders),
        (4.0e6, 1)
    );
    // Shared first, then the lower of loopback's share and the floor's
    // own two-sender maximum.
    let mut fl = cal(FLOOR, &[(64, 1.5e6)]);
    fl.sizes[0].senders = 2;
    let c = cal(LOOPBACK, &[(64, 4.0e6)]).shared_by(2).lower(&fl);
    assert_eq!(
        (c.sizes[0].max_rate_fps, c.sizes[0].path.as_str()),
        (1.5e6, FLOOR)
    );
}
