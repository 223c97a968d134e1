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

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use control::protocol::{Request, Response};
use schema::dut_sample::{AnswerTimes, ControlLatency};

/// Time between two rounds of requests.
const EVERY: Duration = Duration::from_millis(50);

/// What is asked each round, by its index in [`Times`]: a route lookup,
/// the statistics, a metrics scrape.
const ROUTE_LOOKUP: usize = 0;
const STATS: usize = 1;
const METRICS: usize = 2;

/// Answer times (and failures) of each kind of request.
#[derive(Default)]
struct Times {
    ms: [Vec<f64>; 3],
    errors: [u64; 3],
}

impl Times {
    /// The figures of kind `i`; `None` if it got neither an answer nor an
    /// error (the metrics endpoint when it does not listen).
    fn of(&self, i: usize) -> Option<AnswerTimes> {
        let mut v = self.ms[i].clone();
        if v.is_empty() && self.errors[i] == 0 {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| {
            v.get(((v.len() as f64 - 1.0) * p).round() as usize)
                .copied()
        };
        Some(AnswerTimes {
            count: v.len() as u64,
            errors: self.errors[i],
            p50_ms: q(0.5),
            p99_ms: q(0.99),
            max_ms: v.last().copied(),
        })
    }
}

pub(super) struct ControlSampler {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Times>>,
}

impl ControlSampler {
    /// Starts asking `socket` (and `metrics`, scraped from inside the
    /// namespace `ns`, where it listens), from the CPUs of the router
    /// `pid`: the client's work is beside the router's, never on the
    /// tester's CPU, where it would take the generator's time.
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
                follow_affinity(pid);
                // The metrics address is the namespace's loopback.
                let metrics = metrics.filter(|_| ns.as_deref().is_none_or(enter_netns));
                sample(&socket, metrics, &s)
            })
            .ok();
        ControlSampler { stop, thread }
    }

    /// Stops and returns the figures; `None` if the sampling thread
    /// panicked (then the trial has no `control_latency`).
    pub(super) fn finish(mut self) -> Option<ControlLatency> {
        self.stop.store(true, Ordering::Relaxed);
        let t = self.thread.take().and_then(|h| h.join().ok())?;
        Some(ControlLatency {
            route_lookup: t.of(ROUTE_LOOKUP),
            stats: t.of(STATS),
            metrics: t.of(METRICS),
        })
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
        for (i, req) in [(ROUTE_LOOKUP, lookup), (STATS, Request::Stats)] {
            let s = Instant::now();
            let ok = matches!(
                control::client::request(socket, req),
                Ok(Response::Ok { .. })
            );
            record(i, ok, s);
        }
        if let Some(addr) = metrics {
            let s = Instant::now();
            record(METRICS, scrape(addr), s);
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

/// Run the calling thread on the CPUs process `pid` may use (nothing
/// happens when they cannot be read).
fn follow_affinity(pid: i32) {
    // SAFETY: cpu_set_t is plain data; both calls only read/write `set`.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let n = std::mem::size_of::<libc::cpu_set_t>();
        if libc::sched_getaffinity(pid, n, &mut set) == 0 {
            let _ = libc::sched_setaffinity(0, n, &set);
        }
    }
}
