//! The gap program live: a veth end whose NAPI thread is kept off its CPU
//! for a known time while frames arrive must show a gap at least that
//! long; a pause of the sender is no gap when its transmits are seen; a
//! closed window must see nothing.

use super::*;
use crate::count::Counter;
use crate::gen::{Frame, Generator, Phase, Plan, Port};
use crate::testutil::{can_run, enter_netns, ifindex};
use testbed::napi::{pin, schedule, thread_napi_in, NapiPolicy};
use testbed::{Netns, VethPair};

/// How long the hog keeps the receiving end's NAPI thread off its CPU.
const STALL: Duration = Duration::from_millis(30);
/// How long the sender pauses: long beside the stalls other work on this
/// shared machine can cause the receiver (it only has to stay below half).
const PAUSE: Duration = Duration::from_millis(150);

/// What happens while the frames flow.
#[derive(Clone, Copy, PartialEq)]
enum Event {
    Nothing,
    /// A SCHED_FIFO thread spins on the receiver's CPU for [`STALL`].
    ReceiverStall,
    /// The sender stops for [`PAUSE`] (two runs of the generator); the
    /// receiver's NAPI thread runs at SCHED_FIFO 20, so it is never late.
    SenderPause,
}

/// Frames a -> b for 300 ms at 100 kfps (b's NAPI threaded on CPU 0, the
/// generator on CPU 1 at SCHED_FIFO 5), the meter armed for `window`
/// (`tracked`: with the sender's transmits seen), `event` 100 ms in.
/// Also returns when the hog began to spin, after the meter was armed.
fn run(window: Duration, event: Event, tracked: bool) -> (Gaps, Option<Duration>) {
    let _one = crate::testutil::live_lock();
    let ns = Netns::new("gap").unwrap();
    let v = VethPair::new(&ns, &ns, 1).unwrap();
    // No IPv6 on the pair: its duplicate address detection, router
    // solicitations and MLD reports are frames of their own, and one sent
    // inside the sender's pause is a poll that splits the gap (CI saw a
    // 150 ms pause measured as 104 ms).
    for end in [&v.a, &v.b] {
        ns.sysctl(&format!("net.ipv6.conf.{end}.disable_ipv6"), "1")
            .unwrap();
    }
    let (name, a, b) = (ns.name().to_string(), v.a.clone(), v.b.clone());
    let gaps = std::thread::spawn(move || {
        enter_netns(&name);
        // The counter gives b NAPI (XDP in driver mode).
        let _c = Counter::new(1, 1 << 20, &[ifindex(&b)]).unwrap();
        let napi = if event == Event::SenderPause {
            NapiPolicy::Fifo(20)
        } else {
            NapiPolicy::Normal
        };
        thread_napi_in(&name, &b, &[0], napi).unwrap();
        pin(0, &[1]).unwrap();
        // The sender must not stall too (the machine is shared): a frame
        // that is not sent waits for nothing.
        schedule(0, NapiPolicy::Fifo(5)).unwrap();
        let mut g = Generator::new(1, 1).unwrap();
        let (bytes, l) = crate::testutil::frame(0, 64, false, 0, 0);
        g.set_frame(0, 0, &Frame::from_layout(&bytes, &l)).unwrap();
        let meter = GapMeter::new(&[Receiver {
            name: b.clone(),
            sender: tracked.then(|| a.clone()),
        }])
        .unwrap();
        let hog = (event == Event::ReceiverStall).then(|| {
            std::thread::spawn(|| {
                pin(0, &[0]).unwrap();
                std::thread::sleep(Duration::from_millis(100));
                schedule(0, NapiPolicy::Fifo(10)).unwrap();
                let t = std::time::Instant::now();
                while t.elapsed() < STALL {
                    std::hint::spin_loop();
                }
                schedule(0, NapiPolicy::Normal).unwrap();
                t
            })
        });
        meter.arm_handle().arm(window);
        let armed_at = std::time::Instant::now();
        let plan = |frames| Plan {
            ports: vec![Port {
                ifindex: ifindex(&a),
                streams: vec![0],
            }],
            phases: vec![Phase {
                frames,
                rate_fps: Some(100_000.0),
            }],
            schedule: vec![0],
            batch: 16,
            grace: Duration::from_millis(50),
            lead: Duration::from_millis(1),
            latency_every: 1,
            catchup_frames: crate::gen::CATCHUP_FRAMES,
        };
        let s = if event == Event::SenderPause {
            g.run(&plan(10_000)).unwrap();
            std::thread::sleep(PAUSE);
            g.run(&plan(20_000)).unwrap()
        } else {
            g.run(&plan(30_000)).unwrap()
        };
        assert!(s.sent > 0, "{s:?}");
        let hog_at = hog.map(|h| h.join().unwrap().saturating_duration_since(armed_at));
        std::thread::sleep(Duration::from_millis(20));
        schedule(0, NapiPolicy::Normal).unwrap();
        (meter.read().unwrap(), hog_at)
    })
    .join()
    .expect("gap test thread");
    drop(v);
    gaps
}

fn runnable(test: &str) -> bool {
    if !can_run(test) {
        return false;
    }
    if testbed::napi::affinity(0).map_or(0, |c| c.len()) < 2 || !(0..2).all(cpu_online) {
        eprintln!("{test}: skipped (needs CPUs 0 and 1)");
        return false;
    }
    true
}

fn cpu_online(c: usize) -> bool {
    std::path::Path::new(&format!("/sys/devices/system/cpu/cpu{c}")).exists()
}

#[test]
fn a_receive_thread_kept_off_its_cpu_shows_as_a_gap() {
    if !runnable("a_receive_thread_kept_off_its_cpu_shows_as_a_gap") {
        return;
    }
    for tracked in [false, true] {
        let (g, hog_at) = run(Duration::from_secs(5), Event::ReceiverStall, tracked);
        let hog_at = hog_at.expect("the hog ran");
        assert!(g.polls > 0, "no poll of the receiving end seen: {g:?}");
        assert!(
            g.longest >= STALL / 2,
            "tracked={tracked}: a {STALL:?} stall of the receive thread, longest gap seen {g:?}"
        );
        // The gap begins when the hog began to spin (about 100 ms in,
        // later on a busy machine), within a few inter-frame times.
        let (lo, hi) = (
            hog_at.saturating_sub(Duration::from_millis(20)),
            hog_at + Duration::from_millis(20),
        );
        assert!(
            (lo..hi).contains(&g.longest_began),
            "tracked={tracked}: the hog began {hog_at:?} after the arm, the gap {g:?}"
        );
    }
}

/// The sender's pause is a gap between polls, but no frame waited in it:
/// with the transmits seen it does not count.
#[test]
fn a_pause_of_the_sender_is_no_gap_when_its_transmits_are_seen() {
    if !runnable("a_pause_of_the_sender_is_no_gap_when_its_transmits_are_seen") {
        return;
    }
    let untracked = run(Duration::from_secs(5), Event::SenderPause, false).0;
    // At least most of the pause (the window may open inside it).
    assert!(
        untracked.longest >= PAUSE * 3 / 4,
        "poll to poll: {untracked:?}"
    );
    let tracked = run(Duration::from_secs(5), Event::SenderPause, true).0;
    assert!(tracked.polls > 0, "{tracked:?}");
    assert!(tracked.longest < PAUSE / 2, "from pending: {tracked:?}");
}

#[test]
fn polls_after_the_window_are_not_counted() {
    if !runnable("polls_after_the_window_are_not_counted") {
        return;
    }
    let g = run(Duration::ZERO, Event::Nothing, true).0;
    assert_eq!((g.longest, g.polls), (Duration::ZERO, 0), "{g:?}");
}

#[test]
fn interface_names_are_keys() {
    assert_eq!(&name_key("ab").unwrap()[..3], b"ab\0");
    assert!(name_key("").is_err());
    assert!(name_key("sixteen-letters!").is_err());
}
