//! Placement of the xdp tester's receive work (root only). A file of its
//! own: it sets the process-wide tester CPU, which would pin every other
//! test's tester threads to one CPU too.

mod common;

use std::time::Duration;

use bench::plan::TesterBackend;
use bench::search::{Trial, TrialSpec};
use bench::sizes::FrameSize;
use common::{quick, wire};
use traffic::NetTrial;

/// With a tester CPU, every tester end's NAPI runs in threads pinned to
/// it at a real-time priority (they must preempt the spinning generator),
/// also after a long trial reloaded the counter (detaching XDP deletes
/// the ends' NAPI threads; the new ones must be placed again).
#[test]
fn xdp_tester_ends_are_threaded_on_the_tester_cpu() {
    if !testbed::require_root("xdp_tester_ends_are_threaded_on_the_tester_cpu") {
        return;
    }
    let cpu = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
    traffic::cpu::set_tester_cpu(Some(cpu));
    let w = wire("xn", TesterBackend::Xdp, false, 2);
    let mut t = NetTrial::new(w.plan.clone(), None, quick()).unwrap();
    let check = |when: &str| {
        for p in &w.plan.ports {
            let pids = testbed::napi::napi_threads(&p.iface).unwrap();
            assert!(!pids.is_empty(), "{when}: {} has NAPI threads", p.iface);
            for pid in pids {
                assert_eq!(testbed::napi::affinity(pid).unwrap(), vec![cpu], "{when}");
                assert_eq!(testbed::napi::policy(pid), libc::SCHED_FIFO, "{when}");
            }
        }
    };
    check("after start");
    // 2^20 frames per stream is the first counter's bitmap: a trial of
    // 3 M frames over 2 streams needs a larger one.
    let spec = TrialSpec::constant(3_000_000.0, Duration::from_secs(1), FrameSize::Fixed(64));
    let o = t.run(&spec).unwrap();
    assert!(o.sent > 0);
    check("after a counter reload");
    traffic::cpu::set_tester_cpu(None);
}
