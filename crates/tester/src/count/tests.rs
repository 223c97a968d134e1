//! The counter run on crafted frames (`BPF_PROG_TEST_RUN`, no network).

use super::*;
use crate::testutil::{can_run, frame, run_once, XDP_DROP, XDP_PASS};
use crate::timer::mono_ns;

fn counter(n: usize) -> Counter {
    Counter::new(n, 1 << 12, &[]).expect("load the counter")
}

fn feed(c: &mut Counter, data: &[u8]) -> u32 {
    let prog = c.loaded().xdp("sr_count").expect("program");
    run_once(prog, data).0
}

#[test]
fn buckets_are_monotonic_and_narrow() {
    let mut last = 0;
    for v in (1..5_000_000u64).step_by(97).chain([LAT_CAP, u64::MAX]) {
        let b = bucket(v);
        assert!(b >= last && b < NBUCKETS, "{v}");
        last = b;
        let (lo, hi) = bucket_range(b);
        assert!(
            lo <= v.min(LAT_CAP) && v.min(LAT_CAP) <= hi,
            "{v} {b} {lo} {hi}"
        );
        assert!((hi - lo) as f64 <= lo as f64 / 31.0, "{v}");
    }
}

#[test]
fn counts_long_and_short_frames_of_both_versions() {
    if !can_run("counts_long_and_short_frames_of_both_versions") {
        return;
    }
    let mut c = counter(4);
    // (stream, size, v6): short form at 64 (v4) and 78 (v6), long beyond.
    let cases = [
        (0, 64, false),
        (1, 128, false),
        (2, 78, true),
        (3, 1518, true),
    ];
    for &(s, size, v6) in &cases {
        for seq in [0u64, 1, 3] {
            let (f, _) = frame(s, size, v6, seq, mono_ns() - 1_000);
            assert_eq!(feed(&mut c, &f), XDP_DROP, "test frames are consumed");
        }
    }
    let got = c.read(&[4, 4, 4, 4]);
    assert_eq!(got.received, 12);
    assert_eq!(got.lost, 4, "seq 2 of every stream never came");
    assert!(!c.was_received(0, 2) && c.was_received(0, 3) && c.was_received(3, 0));
    assert_eq!((got.duplicates, got.reordered, got.non_test), (0, 0, 0));
    assert_eq!(got.latency.count, 12);
    assert!(got.latency.min_ns >= 1_000, "{:?}", got.latency.min_ns);
    assert!(got.latency.max_ns < 1_000_000_000);
}

#[test]
fn duplicates_reordering_learning_and_strangers() {
    if !can_run("duplicates_reordering_learning_and_strangers") {
        return;
    }
    let mut c = counter(2);
    let now = mono_ns();
    for seq in [5u64, 5, 4] {
        feed(&mut c, &frame(0, 256, false, seq, now).0);
    }
    // A learning frame is counted apart and not as received.
    let mut buf = vec![0u8; 128];
    let l = packet::test_frame::build(
        &crate::testutil::flow(1, false),
        128,
        packet::test_frame::FLAG_LEARNING,
        &mut buf,
    )
    .unwrap();
    assert_eq!(feed(&mut c, &buf[..l.buf_len]), XDP_DROP);
    // Not ours: ARP, a truncated test frame, IPv4 with options, another port.
    let arp = [
        [0xffu8; 6].as_slice(),
        &[2, 0, 0, 0, 0, 9],
        &[0x08, 0x06],
        &[0; 46],
    ]
    .concat();
    assert_eq!(feed(&mut c, &arp), XDP_PASS);
    let (f, _) = frame(0, 128, false, 9, now);
    assert_eq!(feed(&mut c, &f[..50]), XDP_PASS);
    let mut opts = f.clone();
    opts[14] = 0x46;
    assert_eq!(feed(&mut c, &opts), XDP_PASS);
    let mut port = f.clone();
    port[36] = 0x12; // UDP destination port
    assert_eq!(feed(&mut c, &port), XDP_PASS);
    // A stream the counter does not know.
    feed(&mut c, &frame(7, 128, false, 0, now).0);

    let got = c.read(&[6, 0]);
    assert_eq!(got.received, 3);
    assert_eq!(got.duplicates, 1);
    assert_eq!(got.reordered, 1, "4 after 5");
    assert_eq!(got.lost, 4, "0..=3 never came");
    assert_eq!((got.learning, got.non_test, got.unknown), (1, 4, 1));
}

#[test]
fn only_sampled_frames_are_timed_and_sampling_survives_a_reset() {
    if !can_run("only_sampled_frames_are_timed_and_sampling_survives_a_reset") {
        return;
    }
    let mut c = counter(2);
    assert!(c.set_latency_every(3).is_err(), "not a power of two");
    c.set_latency_every(4).unwrap();
    c.reset();
    // Unsampled frames carry a stale time (as the generator leaves them):
    // it must not reach the latency figures.
    let now = mono_ns();
    for seq in 0..10u64 {
        let ts = if seq % 4 == 0 {
            now - 5_000
        } else {
            now - 900_000_000
        };
        feed(&mut c, &frame(0, 128, false, seq, ts).0);
        feed(&mut c, &frame(1, 64, false, seq, ts).0);
    }
    let got = c.read(&[10, 10]);
    assert_eq!((got.received, got.lost), (20, 0), "every frame is counted");
    assert_eq!(got.latency.count, 6, "seq 0, 4, 8 of both streams");
    assert!(got.latency.max_ns < 100_000_000, "{:?}", got.latency);
    assert_eq!(got.latency.ipdv_count, 4, "between consecutive samples");
}

#[test]
fn ipdv_is_the_latency_change_between_consecutive_frames() {
    if !can_run("ipdv_is_the_latency_change_between_consecutive_frames") {
        return;
    }
    let mut c = counter(1);
    // Latencies of about 1 ms, 3 ms, 2 ms: |IPDV| about 2 ms and 1 ms.
    for (seq, age) in [(0u64, 1_000_000u64), (1, 3_000_000), (2, 2_000_000)] {
        feed(&mut c, &frame(0, 512, false, seq, mono_ns() - age).0);
    }
    let l = c.read(&[3]).latency;
    assert_eq!(l.ipdv_count, 2);
    let mean = l.ipdv_sum_ns as f64 / 2.0;
    assert!((1.4e6..1.8e6).contains(&mean), "mean |IPDV| {mean}");
    assert!(
        (1.9e6..2.4e6).contains(&(l.ipdv_max_ns as f64)),
        "{}",
        l.ipdv_max_ns
    );
}

#[test]
fn random_frames_are_passed_or_counted_never_lost() {
    if !can_run("random_frames_are_passed_or_counted_never_lost") {
        return;
    }
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0x5eed);
    let mut c = counter(4);
    let (mut passed, mut dropped) = (0u64, 0u64);
    for i in 0..3000 {
        // Valid frames mutated at a few random bytes, and pure noise.
        let mut f = if i % 3 == 0 {
            let n = rng.gen_range(14..200);
            (0..n).map(|_| rng.gen()).collect()
        } else {
            let size = [64, 78, 128, 1518][rng.gen_range(0..4)];
            frame(
                rng.gen_range(0..4),
                size,
                size == 78,
                rng.gen_range(0..100),
                mono_ns(),
            )
            .0
        };
        for _ in 0..rng.gen_range(0..3) {
            let k = rng.gen_range(0..f.len());
            f[k] = rng.gen();
        }
        match feed(&mut c, &f) {
            XDP_PASS => passed += 1,
            XDP_DROP => dropped += 1,
            other => panic!("action {other}"),
        }
    }
    let got = c.read(&[100; 4]);
    assert_eq!(
        got.non_test, passed,
        "every passed frame is counted as non-test"
    );
    assert_eq!(
        got.received + got.learning + got.unknown,
        dropped,
        "every consumed frame is accounted"
    );
}

/// The counter's own cost per frame (run by hand: `cargo test --release
/// -p softrouter-tester -- --ignored --nocapture count_program_cost`).
#[test]
#[ignore]
fn count_program_cost() {
    let mut c = counter(1);
    // Sequence 7 is no latency sample: the figure is the counter's, not
    // a clock reading's (~40 ns, one frame in `every` on the wire).
    c.set_latency_every(8).unwrap();
    let (f, _) = frame(0, 64, false, 7, mono_ns());
    let prog = c.loaded().xdp("sr_count").unwrap();
    let r = aya::programs::TestRun::test_run(
        prog,
        aya::programs::TestRunOptions {
            data_in: Some(&f),
            repeat: 1_000_000,
            ..aya::programs::TestRunOptions::new()
        },
    )
    .unwrap();
    eprintln!("64 B: {:?} per run", r.duration);
}
