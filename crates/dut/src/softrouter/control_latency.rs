//! How fast softrouter's control plane answers while the trial loads its
//! data plane (issue 10's target: `ctl` and the metrics endpoint within
//! 10 ms under full forwarding load).
//!
//! Over every trial a thread asks, every [`EVERY`], what an operator's
//! tools ask: a route lookup and the statistics over the control socket
//! (`softrouter ctl route show --longest`, `ctl stats`), and a scrape of
//! the metrics endpoint when it listens. Each answer's time is kept; the
//! trial's DUT figures get their count, median, 99th percentile and
//! maximum. 20 small requests a second cost the router nothing it would
//! notice; the thread sleeps between them (no busy wait on a shared CPU).
//!
//! The client runs beside the tester, not on the DUT's CPUs: its own
//! kernel work (connects, reads) is the bench's, and on a kernel that never
//! preempts kernel code it held the DUT's CPU for 100 us inside one of the
//! DUT's longest receive gaps (`bench/stall` trace at 1.1 Mpps). On the
//! tester's CPU it runs above the generator (whose catch-up absorbs such
//! a stint) and below the tester's NAPI threads, so it is never starved
//! into reporting the tester's load as the router's answer time.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use control::protocol::{Request, Response};
use serde_json::{json, Value};

/// Time between two rounds of requests.
const EVERY: Duration = Duration::from_millis(50);

/// What is asked each round.
const KINDS: [&str; 3] = ["route_lookup", "stats", "metrics"];

/// Answer times (and failures) of each kind of request.
#[derive(Default)]
struct Times {
    ms: [Vec<f64>; 3],
    errors: [u64; 3],
}

pub(super) struct ControlSampler {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Times>>,
}

impl ControlSampler {
    /// Starts asking `socket` (and `metrics`, scraped from inside the
    /// namespace `ns`, where it listens), from the CPUs that are not the
    /// DUT's ([`place_client`]; the router `pid`'s when the split is not
    /// known).
    pub(super) fn start(
        socket: PathBuf,
        metrics: Option<SocketAddr>,
        ns: Option<String>,
        pid: i32,
    ) -> ControlSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::Builder::new()
            .name("ctl-latency".into())
            .spawn(move || {
                place_client(pid);
                // The metrics address is the namespace's loopback.
                let metrics = metrics.filter(|_| ns.as_deref().is_none_or(enter_netns));
                sample(&socket, metrics, &s)
            })
            .ok();
        ControlSampler { stop, thread }
    }

    /// Stops and returns the figures: per kind `{count, errors, p50_ms,
    /// p99_ms, max_ms}`.
    pub(super) fn finish(mut self) -> Value {
        self.stop.store(true, Ordering::Relaxed);
        let Some(t) = self.thread.take().and_then(|h| h.join().ok()) else {
            return Value::Null;
        };
        let mut out = serde_json::Map::new();
        for (i, kind) in KINDS.iter().enumerate() {
            let mut v = t.ms[i].clone();
            if v.is_empty() && t.errors[i] == 0 {
                continue;
            }
            v.sort_by(f64::total_cmp);
            let q = |p: f64| {
                v.get(((v.len() as f64 - 1.0) * p).round() as usize)
                    .copied()
            };
            out.insert(
                kind.to_string(),
                json!({
                    "count": v.len(),
                    "errors": t.errors[i],
                    "p50_ms": q(0.5),
                    "p99_ms": q(0.99),
                    "max_ms": v.last(),
                }),
            );
        }
        Value::Object(out)
    }
}

impl Drop for ControlSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn sample(socket: &std::path::Path, metrics: Option<SocketAddr>, stop: &AtomicBool) -> Times {
    let mut t = Times::default();
    let mut record = |i: usize, ok: bool, since: Instant| {
        if ok {
            t.ms[i].push(since.elapsed().as_secs_f64() * 1e3);
        } else {
            t.errors[i] += 1;
        }
    };
    while !stop.load(Ordering::Relaxed) {
        let lookup = Request::RouteShow {
            prefix: None,
            longest: Some("198.19.0.1".parse().expect("an address")),
        };
        for (i, req) in [(0, lookup), (1, Request::Stats)] {
            let s = Instant::now();
            let ok = matches!(
                control::client::request(socket, req),
                Ok(Response::Ok { .. })
            );
            record(i, ok, s);
        }
        if let Some(addr) = metrics {
            let s = Instant::now();
            record(2, scrape(addr), s);
        }
        std::thread::sleep(EVERY);
    }
    t
}

/// One `GET /metrics`; true if a page came back whole.
fn scrape(addr: SocketAddr) -> bool {
    let Ok(mut c) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else {
        return false;
    };
    let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
    let mut page = String::new();
    c.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").is_ok()
        && c.read_to_string(&mut page).is_ok()
        && page.starts_with("HTTP/1.")
        && page.contains("# EOF")
}

/// Moves this thread into network namespace `ns`; false if it cannot.
fn enter_netns(ns: &str) -> bool {
    let Ok(f) = std::fs::File::open(format!("/var/run/netns/{ns}")) else {
        return false;
    };
    use std::os::fd::AsRawFd;
    // SAFETY: setns(2) on this thread with an open namespace file.
    unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) == 0 }
}

/// Real-time priority of the client on the tester's CPUs: above the
/// generator's (45), below the tester's NAPI threads' (50).
const CLIENT_PRIO: i32 = 47;

/// Run the calling thread off the DUT's CPUs at [`CLIENT_PRIO`] when the
/// bench split the CPUs, else on the CPUs process `pid` may use (nothing
/// happens when they cannot be read or set).
fn place_client(pid: i32) {
    let online = (0..crate::linux::online_cpus()).collect::<Vec<_>>();
    // SAFETY: cpu_set_t and sched_param are plain data; the calls only
    // read/write them.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let n = std::mem::size_of::<libc::cpu_set_t>();
        if let Some(cpus) = client_cpus(&online, &crate::probe::dut_cpus()) {
            for c in cpus {
                libc::CPU_SET(c, &mut set);
            }
            if libc::sched_setaffinity(0, n, &set) == 0 {
                let p = libc::sched_param {
                    sched_priority: CLIENT_PRIO,
                };
                let _ = libc::sched_setscheduler(0, libc::SCHED_FIFO, &p);
            }
        } else if libc::sched_getaffinity(pid, n, &mut set) == 0 {
            let _ = libc::sched_setaffinity(0, n, &set);
        }
    }
}

/// The CPUs the client may use: the online ones that are not the DUT's;
/// `None` when the split is not known or leaves none.
fn client_cpus(online: &[usize], dut: &[usize]) -> Option<Vec<usize>> {
    let rest: Vec<usize> = online
        .iter()
        .copied()
        .filter(|c| !dut.contains(c))
        .collect();
    (!dut.is_empty() && !rest.is_empty()).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::client_cpus;

    #[test]
    fn the_client_keeps_off_the_duts_cpus() {
        assert_eq!(client_cpus(&[0, 1], &[0]), Some(vec![1]));
        assert_eq!(client_cpus(&[0, 1, 2, 3], &[1, 2]), Some(vec![0, 3]));
        // Not known, or nothing left: the router's CPUs, as before.
        assert_eq!(client_cpus(&[0, 1], &[]), None);
        assert_eq!(client_cpus(&[0, 1], &[0, 1]), None);
    }
}
