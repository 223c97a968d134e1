//! The generator run on crafted frames (one iteration, no transmit) and
//! over a real veth pair into the counter (live frames).

use super::*;
use crate::count::Counter;
use crate::testutil::{can_run, frame, run_once, XDP_REDIRECT};
use packet::test_frame::{checksums_ok, parse};

/// A generator with `streams` streams x `sizes` (IPv4, long form unless 64).
fn generator(streams: u32, sizes: &[usize]) -> Generator {
    let mut g = Generator::new(streams as usize, sizes.len()).expect("load the generator");
    for s in 0..streams {
        for (i, &size) in sizes.iter().enumerate() {
            let (b, l) = frame(s, size, false, 0, 0);
            g.set_frame(s, i, &Frame::from_layout(&b, &l)).unwrap();
        }
    }
    g
}

fn plan(ports: Vec<Port>, phases: Vec<Phase>, schedule: Vec<u16>) -> Plan {
    Plan {
        ports,
        phases,
        schedule,
        batch: 16,
        grace: Duration::from_millis(20),
        lead: Duration::from_millis(1),
        latency_every: 1,
        catchup_frames: crate::gen::CATCHUP_FRAMES,
    }
}

/// One frame in a burst from one port (ifindex 1) sending `streams`: a
/// plan for what `check` and `page_len` read of one.
fn burst_plan(streams: Vec<u32>, schedule: Vec<u16>) -> Plan {
    let port = Port {
        ifindex: 1,
        streams,
    };
    let burst = Phase {
        frames: 1,
        rate_fps: None,
    };
    plan(vec![port], vec![burst], schedule)
}

/// Set `stream`'s template at size slot 0 to a `size`-byte frame.
fn set_slot0(g: &mut Generator, stream: u32, size: usize) {
    let (b, l) = frame(stream, size, false, 0, 0);
    g.set_frame(stream, 0, &Frame::from_layout(&b, &l)).unwrap();
}

/// One iteration on `page` (what a recycled page holds).
fn step(g: &mut Generator, page: &[u8]) -> (u32, Vec<u8>) {
    let prog = g.prog().unwrap();
    run_once(prog, page)
}

/// CI once cut an IPv6 trial 7 frames short: its call started 20+ ms
/// late, and the moved deadline had lost the grace.
#[test]
fn a_late_start_moves_the_deadline_and_keeps_the_grace() {
    let d = Deadline {
        ideal_end: 1_000_000_000,
        grace: 20_000_000,
        setup: 5_000_000,
    };
    // On time or late within the usual setup: the timer's first arming.
    assert_eq!(d.at(0), 1_025_000_000);
    assert_eq!(d.at(5_000_000), 1_025_000_000);
    // Later than usual: the schedule moved by the shift, the grace stays.
    for shift in [6_000_000, 30_000_000, 90_000_000] {
        assert_eq!(
            d.at(shift) - (d.ideal_end + shift),
            d.grace,
            "shift {shift}"
        );
    }
}

#[test]
fn latency_sampling_keeps_tens_of_thousands_of_samples_a_second() {
    assert_eq!(latency_every(Some(1_000.0)), 1);
    assert_eq!(latency_every(Some(65_536.0)), 1);
    for rate in [70e3, 1e6, 3e6, 14.88e6, 60e6] {
        let every = latency_every(Some(rate));
        assert!(every.is_power_of_two(), "{rate}");
        let per_s = rate / f64::from(every);
        assert!(
            (32_768.0..=65_536.0).contains(&per_s) || every == MAX_LATENCY_EVERY,
            "{rate}: one in {every}"
        );
    }
    assert_eq!(latency_every(None), MAX_LATENCY_EVERY);
}

#[test]
fn every_run_writes_the_whole_frame_then_stamps_it() {
    if !can_run("every_run_writes_the_whole_frame_then_stamps_it") {
        return;
    }
    let sizes = [64, 1518, 594];
    let mut g = generator(2, &sizes);
    let p = plan(
        vec![Port {
            ifindex: 1,
            streams: vec![0, 1],
        }],
        vec![Phase {
            frames: 100,
            rate_fps: None,
        }],
        vec![0, 1, 2],
    );
    g.check(&p).unwrap();
    g.write_plan(&p, 0);
    // Pages as a DUT returns them: garbage of any length.
    let pages: [&[u8]; 3] = [&[0xAB; 1514], &[0x11; 60], &[0u8; 900]];
    let mut seen = Vec::new();
    for k in 0..12u64 {
        let before = crate::timer::mono_ns();
        let (act, out) = step(&mut g, pages[k as usize % 3]);
        assert_eq!(act, XDP_REDIRECT);
        // Frame k: stream k % 2, size slot (k / 2) % 3, sequence k / 2.
        let (stream, slot, seq) = ((k % 2) as u32, (k / 2 % 3) as usize, k / 2);
        let t = parse(&out).expect("a test frame");
        assert_eq!((t.stream, t.seq), (stream, seq), "frame {k}");
        assert!(checksums_ok(&out), "frame {k}: checksums");
        assert_eq!(out.len(), sizes[slot] - 4, "frame {k}: length");
        // Everything but sequence, timestamp and checksum is the template.
        let (mut want, l) = frame(stream, sizes[slot], false, seq, t.tx_ns);
        l.patch(&mut want, seq, t.tx_ns);
        assert_eq!(out, want, "frame {k}: bytes");
        let ts = if l.long {
            t.tx_ns
        } else {
            t.tx_ns & 0xffff_ffff
        };
        let lo = if l.long { before } else { before & 0xffff_ffff };
        assert!(ts >= lo || !l.long, "frame {k}: timestamp {ts} before {lo}");
        seen.push((t.stream, t.seq));
    }
    let s = g.results(&p, 100, 0, 0, Vec::new(), 1);
    assert_eq!(s.sent, 12);
    assert_eq!(s.port_frames, vec![12]);
    assert_eq!(s.stream_frames, vec![6, 6]);
    assert_eq!(s.errors, 0);
}

/// A burst reads the clock for the first frame, the latency samples and
/// every 16th frame only, and stamps each sample with a fresh reading.
#[test]
fn a_burst_reads_the_clock_only_for_samples() {
    if !can_run("a_burst_reads_the_clock_only_for_samples") {
        return;
    }
    let mut g = generator(1, &[256]);
    let mut p = plan(
        vec![Port {
            ifindex: 1,
            streams: vec![0],
        }],
        vec![Phase {
            frames: 64,
            rate_fps: None,
        }],
        vec![0],
    );
    p.latency_every = 8;
    g.check(&p).unwrap();
    g.write_plan(&p, 0);
    let page = [0u8; 252];
    let mut last_sample = 0;
    for k in 0..64u64 {
        let before = crate::timer::mono_ns();
        let (_, out) = step(&mut g, &page);
        let t = parse(&out).expect("a test frame");
        assert_eq!(t.seq, k);
        if k % 8 == 0 {
            assert!(t.tx_ns >= before, "sample {k}: a stale time");
            last_sample = t.tx_ns;
        } else {
            assert_eq!(t.tx_ns, last_sample, "frame {k}: the last reading");
        }
    }
    let reads = g.ctl_ref().clock_reads;
    assert_eq!(
        reads, 8,
        "seq 0, 8, .., 56 (every 16th frame is a sample too)"
    );
    p.latency_every = 3;
    assert!(g.check(&p).is_err(), "not a power of two");
}

#[test]
fn paced_phases_hold_frames_until_due_and_count_phases() {
    if !can_run("paced_phases_hold_frames_until_due_and_count_phases") {
        return;
    }
    let mut g = generator(1, &[128]);
    let p = plan(
        vec![Port {
            ifindex: 1,
            streams: vec![0],
        }],
        vec![
            Phase {
                frames: 2,
                rate_fps: Some(1.0),
            },
            Phase {
                frames: 1,
                rate_fps: None,
            },
        ],
        vec![0],
    );
    g.check(&p).unwrap();
    let now = crate::timer::mono_ns();
    let (ideal_end, clock) = g.write_plan(&p, now);
    assert_eq!(
        clock,
        vec![(now, 1_000_000_000_000), (now + 2_000_000_000, 0)]
    );
    assert_eq!(
        ideal_end,
        now + 2_000_000_000,
        "the burst's frame is due when phase 2 starts"
    );
    let page = [0u8; 200];
    assert_eq!(step(&mut g, &page).0, XDP_REDIRECT, "frame 0 is due at t0");
    for _ in 0..5 {
        assert_eq!(step(&mut g, &page).0, 1, "frame 1 is due a second later");
    }
    let c = g.ctl_ref();
    assert_eq!((c.sent, c.early, c.errors), (1, 5, 0));
}

/// A frame due within the pacing slack (8 intervals, at most 4 µs) of the
/// last clock reading goes without a new reading; one due later needs a
/// reading, and waits for its time (`GEN_PACE_SLACK_*` in gen.bpf.c).
#[test]
fn frames_due_within_the_slack_go_without_a_clock_reading() {
    if !can_run("frames_due_within_the_slack_go_without_a_clock_reading") {
        return;
    }
    let mut g = generator(1, &[64]);
    let mut p = plan(
        vec![Port {
            ifindex: 1,
            streams: vec![0],
        }],
        vec![Phase {
            frames: 100,
            rate_fps: Some(1e6),
        }],
        vec![0],
    );
    p.latency_every = MAX_LATENCY_EVERY;
    g.check(&p).unwrap();
    let page = [0u8; 100];
    // The last reading a second ahead of the real clock: only the cached
    // reading can make a frame due, a new one finds every frame early.
    let ahead = crate::timer::mono_ns() + 1_000_000_000;
    for (due_after_reading, sent) in [(3_000, true), (4_000, true), (5_000, false)] {
        g.write_plan(&p, 0);
        {
            // SAFETY: CCtl mirrors the map value; the program is not running.
            let c: &mut CCtl = unsafe { g.ctl.as_mut() };
            (c.first_ns, c.clock_ns) = (ahead, ahead);
            c.due_ns = ahead + due_after_reading;
            // Not every 16th frame nor a latency sample (sequence 0):
            // those read the clock regardless.
            c.sent = 1;
        }
        g.seq.set(0, 1);
        let act = step(&mut g, &page).0;
        let c = g.ctl_ref();
        assert_eq!(
            act == XDP_REDIRECT,
            sent,
            "due {due_after_reading} ns after the reading"
        );
        assert_eq!(
            c.clock_reads,
            u64::from(!sent),
            "due {due_after_reading} ns after"
        );
        assert_eq!(c.early, u64::from(!sent));
    }
}

#[test]
fn rejects_plans_that_do_not_fit() {
    if !can_run("rejects_plans_that_do_not_fit") {
        return;
    }
    let g = generator(2, &[64]);
    assert!(g.check(&burst_plan(vec![0, 1], vec![0])).is_ok());
    assert!(g.check(&burst_plan(vec![2], vec![0])).is_err());
    assert!(g.check(&burst_plan(vec![0], vec![1])).is_err());
    let burst = Phase {
        frames: 1,
        rate_fps: None,
    };
    assert!(g.check(&plan(vec![], vec![burst], vec![0])).is_err());
    let bad = Phase {
        frames: 1,
        rate_fps: Some(f64::NAN),
    };
    let port = Port {
        ifindex: 1,
        streams: vec![0],
    };
    assert!(g.check(&plan(vec![port], vec![bad], vec![0])).is_err());
    let mut g = generator(1, &[64]);
    let (b, l) = frame(0, 64, false, 0, 0);
    let mut jumbo = Frame::from_layout(&b, &l);
    jumbo.bytes.resize(9000, 0);
    assert!(
        g.set_frame(0, 0, &jumbo).is_err(),
        "jumbo frames are refused"
    );
}

/// The test run's pages start at the plan's most common frame length,
/// not the longest ever set: a 64 B trial after a learning frame or an
/// IMIX trial once shrank every frame (`bpf_xdp_adjust_tail`) and had
/// each fresh page initialised with 1514 bytes.
#[test]
fn pages_start_at_the_plans_most_common_length() {
    if !can_run("pages_start_at_the_plans_most_common_length") {
        return;
    }
    let mut g = generator(2, &[64, 594, 1518]);
    let imix = vec![0, 1, 0, 2, 0, 1, 0, 0, 1, 0, 1, 0];
    let both = |schedule: Vec<u16>| burst_plan(vec![0, 1], schedule);
    assert_eq!(g.page_len(&both(vec![0])), 60);
    assert_eq!(g.page_len(&both(imix)), 60, "IMIX: mostly 64 B");
    assert_eq!(g.page_len(&both(vec![2])), 1514);
    assert_eq!(g.page_len(&both(vec![1, 2])), 590, "of equals, the shorter");
    // A longer frame set in a slot and then replaced (the learning frame
    // shares slot 0) leaves no trace.
    set_slot0(&mut g, 0, 128);
    assert_eq!(g.page_len(&burst_plan(vec![0], vec![0])), 124);
    assert_eq!(
        g.page_len(&both(vec![0])),
        60,
        "streams 0 and 1 tie: the shorter"
    );
    set_slot0(&mut g, 0, 64);
    assert_eq!(g.page_len(&burst_plan(vec![0], vec![0])), 60);
    // A stream whose size was never set is refused, not sent as zeros.
    let mut g = Generator::new(1, 2).unwrap();
    set_slot0(&mut g, 0, 64);
    assert!(g.check(&burst_plan(vec![0], vec![0])).is_ok());
    assert!(g.check(&burst_plan(vec![0], vec![0, 1])).is_err());
}

mod live;

/// The program's own cost per frame (run by hand: `cargo test --release
/// -p softrouter-tester -- --ignored --nocapture gen_program_cost`):
/// non-live test runs report the mean time per run.
#[test]
#[ignore]
fn gen_program_cost() {
    let mut g = generator(1, &[64, 1518]);
    for (slot, label) in [(0u16, "64 B"), (1, "1518 B")] {
        let p = plan(
            vec![Port {
                ifindex: 1,
                streams: vec![0],
            }],
            vec![Phase {
                frames: u64::MAX / 2,
                rate_fps: None,
            }],
            vec![slot],
        );
        // Latency samples as the bench takes them at high rates: the
        // clock is read for one frame in 16 (the first/last times).
        let p = Plan {
            latency_every: crate::gen::latency_every(Some(10_000_000.0)),
            ..p
        };
        g.write_plan(&p, 0);
        let page = vec![0u8; if slot == 0 { 60 } else { 1514 }];
        let prog = g.prog().unwrap();
        let r = prog
            .test_run(aya::programs::TestRunOptions {
                data_in: Some(&page),
                repeat: 1_000_000,
                ..aya::programs::TestRunOptions::new()
            })
            .unwrap();
        eprintln!("{label}: {:?} per run", r.duration);
    }
}

#[test]
fn ipv6_frames_are_stamped_with_valid_checksums() {
    if !can_run("ipv6_frames_are_stamped_with_valid_checksums") {
        return;
    }
    let sizes = [78, 98, 1518];
    let mut g = Generator::new(1, sizes.len()).unwrap();
    for (i, &size) in sizes.iter().enumerate() {
        let (b, l) = frame(0, size, true, 0, 0);
        g.set_frame(0, i, &Frame::from_layout(&b, &l)).unwrap();
    }
    let p = plan(
        vec![Port {
            ifindex: 1,
            streams: vec![0],
        }],
        vec![Phase {
            frames: 10,
            rate_fps: None,
        }],
        vec![0, 1, 2],
    );
    g.check(&p).unwrap();
    g.write_plan(&p, 0);
    for k in 0..6u64 {
        let (act, out) = step(&mut g, &[0x5a; 1000]);
        assert_eq!(act, XDP_REDIRECT);
        let t = parse(&out).expect("an IPv6 test frame");
        assert_eq!(t.seq, k, "frame {k}");
        assert_eq!(out.len(), sizes[k as usize % 3] - 4);
        assert!(checksums_ok(&out), "frame {k}: checksums");
    }
}
