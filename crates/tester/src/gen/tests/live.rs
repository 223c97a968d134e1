//! Live frames over a real veth pair into the counter: exact counts,
//! pacing, IMIX and bursts.

use super::*;
use crate::testutil::{enter_netns, ifindex};
use testbed::{Netns, VethPair};

/// A veth pair a -> b in one namespace, the counter on b, the generator
/// sending out of a; runs `f` in a thread inside the namespace.
fn wire<T: Send + 'static>(f: impl FnOnce(Generator, Counter, u32) -> T + Send + 'static) -> T {
    let _one = crate::testutil::live_lock();
    let ns = Netns::new("gen").unwrap();
    let v = VethPair::new(&ns, &ns, 1).unwrap();
    let (name, a, b) = (ns.name().to_string(), v.a.clone(), v.b.clone());
    let out = std::thread::spawn(move || {
        enter_netns(&name);
        let sizes = [64, 128, 594, 1518];
        let mut g = Generator::new(4, sizes.len()).unwrap();
        for s in 0..4 {
            for (i, &size) in sizes.iter().enumerate() {
                let (bytes, l) = crate::testutil::frame(s, size, false, 0, 0);
                g.set_frame(s, i, &Frame::from_layout(&bytes, &l)).unwrap();
            }
        }
        let c = Counter::new(4, 1 << 22, &[ifindex(&b)]).unwrap();
        f(g, c, ifindex(&a))
    })
    .join()
    .expect("live test thread");
    drop(v);
    out
}

/// Run `p`, wait for the counter to see every frame (or go quiet), and
/// read its counts.
fn send_and_count(g: &mut Generator, c: &Counter, p: &Plan) -> (Sent, crate::count::Counts) {
    let s = g.run(p).unwrap();
    c.drain(
        s.sent,
        Duration::from_millis(5),
        Duration::from_millis(100),
        Duration::from_secs(2),
    );
    let got = c.read(&s.stream_frames);
    (s, got)
}

#[test]
fn paced_imix_arrives_exactly_and_on_time() {
    if !crate::testutil::can_run("paced_imix_arrives_exactly_and_on_time") {
        return;
    }
    let (s, got) = wire(|mut g, c, a| {
        let p = Plan {
            ports: vec![Port {
                ifindex: a,
                streams: vec![0, 1, 2, 3],
            }],
            phases: vec![Phase {
                frames: 80_000,
                rate_fps: Some(400_000.0),
            }],
            // IMIX 7:4:1 over 64/594/1518 and a 128 to see four sizes.
            schedule: vec![0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 3, 1],
            batch: 16,
            grace: Duration::from_millis(50),
            lead: Duration::from_millis(2),
            latency_every: 1,
            catchup_frames: crate::gen::CATCHUP_FRAMES,
        };
        send_and_count(&mut g, &c, &p)
    });
    assert_eq!(s.errors, 0, "{:?}", s.last_error);
    assert_eq!(s.sent, 80_000, "{s:?}");
    assert_eq!(s.stream_frames, vec![20_000; 4]);
    assert_eq!(
        (got.received, got.lost, got.duplicates),
        (80_000, 0, 0),
        "{got:?}"
    );
    assert_eq!(got.latency.count, 80_000);
    assert!(got.latency.ipdv_count > 0);
    // 80k frames at 400 kfps: the last is due 0.2 s after the first; never
    // earlier (pacing), later only by the worst lag and the pauses a
    // stall moved the schedule by (a busy machine).
    let span = (s.last_ns - s.first_ns) as f64 / 1e9;
    let lag = s.max_lag_ns as f64 / 1e9;
    let paused = s.stall_ns as f64 / 1e9;
    assert!(span >= 0.1999, "span {span} s: frames went early");
    assert!(
        span <= 0.2 + paused + lag + 0.001,
        "span {span} s, max lag {lag} s, paused {paused} s"
    );
}

#[test]
fn bursts_and_phases_send_every_frame() {
    if !crate::testutil::can_run("bursts_and_phases_send_every_frame") {
        return;
    }
    let (s, got) = wire(|mut g, c, a| {
        let p = Plan {
            ports: vec![Port {
                ifindex: a,
                streams: vec![0, 1],
            }],
            phases: vec![
                Phase {
                    frames: 20_000,
                    rate_fps: Some(200_000.0),
                },
                Phase {
                    frames: 30_000,
                    rate_fps: None,
                },
            ],
            schedule: vec![0],
            batch: 32,
            grace: Duration::from_millis(200),
            lead: Duration::from_millis(2),
            latency_every: 1,
            catchup_frames: crate::gen::CATCHUP_FRAMES,
        };
        send_and_count(&mut g, &c, &p)
    });
    assert_eq!(s.sent, 50_000, "{s:?}");
    assert_eq!((got.received, got.lost), (50_000, 0), "{got:?}");
    assert_eq!(s.phase_clock.len(), 2);
}

/// A stall of the generator (a real-time thread takes its CPU for 20 ms
/// in the middle of a paced trial) moves the schedule: no frame leaves
/// more than the catch-up's intervals late, and the pause is counted.
/// With the catch-up unbounded (0) the same stall is a 20 ms lag, sent
/// back to back afterwards: the burst the bound exists to prevent.
#[test]
fn a_stall_moves_the_schedule_instead_of_a_burst() {
    if !crate::testutil::can_run("a_stall_moves_the_schedule_instead_of_a_burst") {
        return;
    }
    for catchup in [crate::gen::CATCHUP_FRAMES, 0] {
        let (s, got) = wire(move |mut g, c, a| {
            let cpu = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
            testbed::napi::pin(0, &[cpu]).unwrap();
            let hog = std::thread::spawn(move || {
                testbed::napi::pin(0, &[cpu]).unwrap();
                testbed::napi::schedule(0, testbed::napi::NapiPolicy::Fifo(60)).unwrap();
                std::thread::sleep(Duration::from_millis(150));
                let t = std::time::Instant::now();
                while t.elapsed() < Duration::from_millis(20) {
                    std::hint::spin_loop();
                }
            });
            let p = Plan {
                ports: vec![Port {
                    ifindex: a,
                    streams: vec![0, 1],
                }],
                phases: vec![Phase {
                    frames: 100_000,
                    rate_fps: Some(200_000.0),
                }],
                schedule: vec![0],
                batch: 16,
                grace: Duration::from_millis(100),
                lead: Duration::from_millis(2),
                latency_every: 1,
                catchup_frames: catchup,
            };
            let out = send_and_count(&mut g, &c, &p);
            hog.join().unwrap();
            out
        });
        assert_eq!((s.sent, got.received), (100_000, 100_000), "{s:?}");
        let interval_ns = 5_000;
        if catchup > 0 {
            // Caught up at most `catchup` intervals, seen within 16 frames.
            assert!(
                s.max_lag_ns <= (u64::from(catchup) + 17) * interval_ns,
                "{s:?}"
            );
            assert!(s.long_stalls >= 1 && s.long_stall_ns >= 15_000_000, "{s:?}");
            assert!(s.stalls >= 1 && s.stall_ns >= 15_000_000, "{s:?}");
            assert!(s.max_stall_ns <= s.stall_ns, "{s:?}");
            // The trial took the pause longer than its schedule.
            assert!(s.last_ns - s.first_ns >= 500_000_000 - interval_ns + 15_000_000);
        } else {
            assert!(s.max_lag_ns >= 15_000_000, "{s:?}");
            assert_eq!((s.stalls, s.stall_ns), (0, 0), "{s:?}");
        }
    }
}

/// Capacity figures (run by hand: `cargo test -p softrouter-tester --
/// --ignored --nocapture gen_capacity`): 64-byte frames flat out into the
/// counter, for several batch sizes, with the receiving end's NAPI inline
/// (in the generator's context) or in a thread on the same CPU.
#[test]
#[ignore]
fn gen_capacity() {
    for threaded in [false, true] {
        for batch in [16u32, 64, 256] {
            let ns = Netns::new("cap").unwrap();
            let v = VethPair::new(&ns, &ns, 1).unwrap();
            let (name, a, b) = (ns.name().to_string(), v.a.clone(), v.b.clone());
            let nsn = name.clone();
            let r = std::thread::spawn(move || {
                let cpu = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
                // SAFETY: pinning this thread.
                unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(cpu, &mut set);
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                }
                enter_netns(&name);
                let mut g = Generator::new(1, 1).unwrap();
                let (bytes, l) = crate::testutil::frame(0, 64, false, 0, 0);
                g.set_frame(0, 0, &Frame::from_layout(&bytes, &l)).unwrap();
                let c = Counter::new(1, 1 << 26, &[ifindex(&b)]).unwrap();
                if threaded {
                    testbed::napi::thread_napi_in(
                        &nsn,
                        &b,
                        &[cpu],
                        testbed::napi::NapiPolicy::Fifo(50),
                    )
                    .unwrap();
                }
                let p = Plan {
                    ports: vec![Port {
                        ifindex: ifindex(&a),
                        streams: vec![0],
                    }],
                    phases: vec![Phase {
                        frames: 5_000_000,
                        rate_fps: None,
                    }],
                    schedule: vec![0],
                    batch,
                    grace: Duration::from_millis(50),
                    lead: Duration::ZERO,
                    latency_every: crate::gen::latency_every(None),
                    catchup_frames: crate::gen::CATCHUP_FRAMES,
                };
                c.set_latency_every(p.latency_every).unwrap();
                let (s, got) = send_and_count(&mut g, &c, &p);
                let secs = (s.last_ns - s.first_ns) as f64 / 1e9;
                assert!(got.latency.count > 0 && s.clock_reads < s.sent / 8, "{s:?}");
                (
                    s.sent as f64 / secs / 1e6,
                    got.received as f64 / s.sent as f64,
                )
            })
            .join()
            .unwrap();
            eprintln!(
                "threaded={threaded} batch={batch}: {:.2} Mfps, {:.1} % received",
                r.0,
                r.1 * 100.0
            );
            drop(v);
        }
    }
}
