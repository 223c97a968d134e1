//! A live router (sender - router - receiver, AF_PACKET ports, a ping
//! through it) under hostile and careless use of its control plane
//! (issue 22):
//!
//! * a thousand idle or slow clients on each of the control socket and the
//!   metrics endpoint: `ctl stats` and a scrape still answer at once, not a
//!   ping is lost, and SIGTERM still ends the router at once (it used to
//!   hang behind one slow metrics client, holding its interface locks);
//! * the configuration path (or its routes file) replaced by a FIFO, a
//!   symlink to `/dev/zero` or a huge file: `ctl reload` and SIGHUP refuse
//!   it with the reason at once, the router forwards on, and SIGTERM works
//!   (a FIFO used to block the reload, the supervisor and so SIGTERM;
//!   `/dev/zero` was read until the router was OOM-killed).
//!
//! Needs root; skipped with a message otherwise. One test at a time (they
//! pin workers). Figures are printed (`--nocapture`); the bounds asserted
//! are generous, the targets (100 ms, 1 s) tighter.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

mod common;

use common::{in_ns, RouterProcess};
use control::{client, Request, Response};
use testbed::three_hosts_addr::*;
use testbed::{ThreeHosts, TopologyOptions};

static SERIAL: Mutex<()> = Mutex::new(());

/// Idle plus slow clients on each server.
const CROWD: usize = 1000;

const METRICS: &str = "127.0.0.1:9469";

fn config(th: &ThreeHosts, routes_file: &Path) -> String {
    format!(
        r#"
[router]
workers = 1
mode = "interrupt"

[[port]]
name = "in"
driver = "afpacket"
iface = "{rin}"
addresses = ["{ROUTER_IN_V4}/24"]

[[port]]
name = "out"
driver = "afpacket"
iface = "{rout}"
addresses = ["{ROUTER_OUT_V4}/24"]

[routes_file]
path = "{routes}"

[control]
socket = "ctl.sock"

[metrics]
listen = "{METRICS}"
"#,
        rin = th.router_in,
        rout = th.router_out,
        routes = routes_file.display(),
    )
}

/// The router's folder (as [`RouterProcess::start`] names it) with a
/// routes file in it, and the router started.
fn start(th: &ThreeHosts, tag: &str) -> RouterProcess {
    let dir = std::env::temp_dir().join(format!("sr-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let routes = dir.join("routes.txt");
    std::fs::write(&routes, "198.20.0.0/16 198.19.0.2\n").unwrap();
    let r = RouterProcess::start(th.router(), tag, &config(th, &routes));
    let deadline = Instant::now() + Duration::from_secs(15);
    while !th
        .sender()
        .exec(&["ping", "-n", "-c", "1", "-W", "1", RECEIVER_V4])
        .unwrap()
        .status
        .success()
    {
        assert!(
            Instant::now() < deadline,
            "softrouter never forwarded a ping: {}",
            r.log()
        );
    }
    r
}

/// `count` pings 50 ms apart from sender to receiver, in the background.
fn pings(th: &ThreeHosts, count: u32) -> Child {
    th.sender()
        .command(
            "ping",
            &[
                "-n",
                "-q",
                "-i",
                "0.05",
                "-W",
                "2",
                "-c",
                &count.to_string(),
                RECEIVER_V4,
            ],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for [`pings`] to end; (sent, received).
fn ping_result(p: Child) -> (u32, u32) {
    let out = p.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("packets transmitted"))
        .unwrap_or_else(|| panic!("no ping summary: {text}"));
    let n: Vec<u32> = line
        .split(',')
        .filter_map(|f| f.split_whitespace().next()?.parse().ok())
        .collect();
    (n[0], n[1])
}

/// `f` on a thread, failing the test (not hanging it) after `limit`.
fn within<T: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("{what}: not done within {limit:?}"))
}

/// Writes one byte to each of its connections every 100 ms until dropped.
struct Trickle(Arc<AtomicBool>);

impl Trickle {
    fn start<S: Write + Send + 'static>(mut conns: Vec<S>) -> Trickle {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                for c in &mut conns {
                    let _ = c.write(b" ");
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Trickle(stop)
    }
}

impl Drop for Trickle {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The slowest of five timed calls of `f`, in ms.
fn slowest(mut f: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(0.0, f64::max)
}

fn scrape(addr: SocketAddr) -> String {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut page = String::new();
    let _ = c.read_to_string(&mut page);
    page
}

#[test]
fn a_crowd_of_clients_blocks_no_one_and_sigterm_ends_the_router_at_once() {
    if !testbed::require_root("hostile clients: a crowd") {
        return;
    }
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    control::serve::raise_fd_limit(8 * CROWD as u64);
    let th = testbed::three_hosts_with(TopologyOptions::user_space_router(1)).unwrap();
    let r = start(&th, "crowd");
    let sock = r.config_path().with_file_name("ctl.sock");
    let addr: SocketAddr = METRICS.parse().unwrap();
    let ping = pings(&th, 100);

    let s = sock.clone();
    let unix: Vec<UnixStream> = within(Duration::from_secs(30), "control crowd", move || {
        (0..CROWD)
            .map(|_| UnixStream::connect(&s).unwrap())
            .collect()
    });
    let router_ns = th.router().name().to_string();
    let tcp: Vec<TcpStream> = within(Duration::from_secs(30), "metrics crowd", move || {
        in_ns(&router_ns, move || {
            (0..CROWD)
                .map(|_| TcpStream::connect(addr).unwrap())
                .collect()
        })
        .join()
        .unwrap()
    });
    // Half of each crowd sends a byte every 100 ms (the issue's slow client
    // sent one every 2 s), never a whole request; the other half is idle.
    let (unix_idle, unix_slow): (Vec<_>, Vec<_>) =
        unix.into_iter().enumerate().partition(|(i, _)| i % 2 == 0);
    let (tcp_idle, tcp_slow): (Vec<_>, Vec<_>) =
        tcp.into_iter().enumerate().partition(|(i, _)| i % 2 == 0);
    let _t1 = Trickle::start(unix_slow.into_iter().map(|(_, c)| c).collect());
    let _t2 = Trickle::start(tcp_slow.into_iter().map(|(_, c)| c).collect());
    std::thread::sleep(Duration::from_millis(300));

    let s = sock.clone();
    let stats_ms = within(Duration::from_secs(60), "ctl stats", move || {
        slowest(|| {
            let a = client::request(&s, Request::Stats).unwrap();
            assert!(matches!(a, Response::Ok { .. }), "{a:?}");
        })
    });
    let router_ns = th.router().name().to_string();
    let scrape_ms = within(Duration::from_secs(60), "scrapes", move || {
        in_ns(&router_ns, move || {
            slowest(|| {
                let page = scrape(addr);
                assert!(
                    page.contains("softrouter_port_rx_packets_total{port=\"in\"}"),
                    "{page}"
                );
            })
        })
        .join()
        .unwrap()
    });
    println!(
        "beside {CROWD} idle and slow clients on each: ctl stats slowest of 5 {stats_ms:.1} ms, scrape {scrape_ms:.1} ms"
    );
    assert!(stats_ms < 1000.0, "ctl stats took {stats_ms:.1} ms");
    assert!(scrape_ms < 1000.0, "a scrape took {scrape_ms:.1} ms");

    let (sent, received) = ping_result(ping);
    println!("pings through the router meanwhile: {received} of {sent}");
    assert_eq!(received, sent, "pings lost: {}", r.log());

    // SIGTERM with every client still connected.
    let t = Instant::now();
    let stats = r.stop();
    let s = t.elapsed().as_secs_f64();
    println!("SIGTERM to exit with {CROWD} + {CROWD} clients connected: {s:.3} s");
    assert!(s < 3.0, "SIGTERM took {s:.3} s");
    dataplane::assert_accounting(&stats);
    drop((unix_idle, tcp_idle));
}

/// The issue's case: one metrics client that trickles its request (and one
/// on the control socket) must not keep SIGTERM from ending the router.
#[test]
fn sigterm_ends_the_router_whatever_one_slow_client_does() {
    if !testbed::require_root("hostile clients: one slow client") {
        return;
    }
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let th = testbed::three_hosts_with(TopologyOptions::user_space_router(1)).unwrap();
    let r = start(&th, "one-slow");
    let addr: SocketAddr = METRICS.parse().unwrap();
    let router_ns = th.router().name().to_string();
    let mut m = in_ns(&router_ns, move || TcpStream::connect(addr).unwrap())
        .join()
        .unwrap();
    m.write_all(b"GET /metrics HTTP/1.1\r\nX-Slow: ").unwrap();
    let mut c = UnixStream::connect(r.config_path().with_file_name("ctl.sock")).unwrap();
    c.write_all(b"{\"version\":1,").unwrap();
    let _t = (Trickle::start(vec![m]), Trickle::start(vec![c]));
    std::thread::sleep(Duration::from_millis(500));
    let t = Instant::now();
    let stats = r.stop();
    let s = t.elapsed().as_secs_f64();
    println!("SIGTERM to exit with a slow metrics client and a slow control client: {s:.3} s");
    assert!(s < 3.0, "SIGTERM took {s:.3} s");
    dataplane::assert_accounting(&stats);
}

/// `softrouter ctl reload` on `sock`: (exit code, stderr), and how long.
fn ctl_reload(sock: &Path) -> (Option<i32>, String, f64) {
    let t = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_softrouter"))
        .args(["ctl", "--socket", sock.to_str().unwrap(), "reload"])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        t.elapsed().as_secs_f64(),
    )
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn signal(r: &RouterProcess, sig: i32) {
    // SAFETY: kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(r.pid() as i32, sig) }, 0);
}

fn wait_log(r: &RouterProcess, needle: &str, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while r.log().matches(needle).count() < count {
        assert!(
            Instant::now() < deadline,
            "no {needle:?} (x{count}) in the log within 5 s:\n{}",
            r.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn reload_reads_only_regular_files_of_bounded_size() {
    if !testbed::require_root("hostile clients: reload files") {
        return;
    }
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let th = testbed::three_hosts_with(TopologyOptions::user_space_router(1)).unwrap();
    let r = start(&th, "reload-files");
    let cfg = r.config_path();
    let good = std::fs::read_to_string(&cfg).unwrap();
    let sock = cfg.with_file_name("ctl.sock");
    let ping = pings(&th, 120);

    let refused = |what: &str, needle: &str| {
        let (code, err, s) = ctl_reload(&sock);
        println!("ctl reload of {what}: refused in {:.1} ms", s * 1e3);
        assert_eq!(code, Some(1), "{what}: {err}");
        assert!(
            err.contains(needle) && err.contains("still running the previous configuration"),
            "{what}: {err}"
        );
        assert!(s < 3.0, "{what}: took {s:.1} s");
    };
    // A FIFO nobody writes to: refused at once (the open never blocks).
    mkfifo(&cfg);
    refused("a FIFO", "a FIFO, not a regular file");
    // The same by SIGHUP: logged, and the supervisor goes on.
    signal(&r, libc::SIGHUP);
    wait_log(&r, "SIGHUP: reload:", 1);
    // A symlink to /dev/zero: refused, not read.
    std::fs::remove_file(&cfg).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &cfg).unwrap();
    refused("/dev/zero", "a character device, not a regular file");
    // A regular file larger than a configuration may be (sparse).
    std::fs::remove_file(&cfg).unwrap();
    std::fs::File::create(&cfg)
        .unwrap()
        .set_len(config::source::MAX_CONFIG_BYTES + 1)
        .unwrap();
    refused("a 16 MiB file", "bytes (16 MiB) read at most");
    // A good file whose routes file is a FIFO.
    let fifo_routes = cfg.with_file_name("routes.fifo");
    mkfifo(&fifo_routes);
    let routes = cfg.with_file_name("routes.txt");
    std::fs::write(
        &cfg,
        good.replace(routes.to_str().unwrap(), fifo_routes.to_str().unwrap()),
    )
    .unwrap();
    refused(
        "a routes file that is a FIFO",
        "routes.fifo does not exist or is not a file",
    );
    // A routes file larger than one may be (sparse).
    let big_routes = cfg.with_file_name("routes.big");
    std::fs::File::create(&big_routes)
        .unwrap()
        .set_len(config::source::MAX_ROUTES_FILE_BYTES + 1)
        .unwrap();
    std::fs::write(
        &cfg,
        good.replace(routes.to_str().unwrap(), big_routes.to_str().unwrap()),
    )
    .unwrap();
    refused("a routes file of 1 GiB", "bytes (1024 MiB) read at most");
    std::fs::remove_file(&big_routes).unwrap();
    // Back to the good file: reloaded.
    std::fs::write(&cfg, &good).unwrap();
    let (code, err, _) = ctl_reload(&sock);
    assert_eq!(code, Some(0), "{err}");

    let (sent, received) = ping_result(ping);
    println!("pings through the router meanwhile: {received} of {sent}");
    assert_eq!(received, sent, "pings lost: {}", r.log());

    // A FIFO again, SIGHUP, then SIGTERM at once: the router ends.
    mkfifo(&cfg);
    signal(&r, libc::SIGHUP);
    wait_log(&r, "SIGHUP: reload:", 2);
    let t = Instant::now();
    let stats = r.stop();
    let s = t.elapsed().as_secs_f64();
    println!("SIGTERM after a SIGHUP with a FIFO for a configuration: exit in {s:.3} s");
    assert!(s < 3.0, "SIGTERM took {s:.3} s");
    dataplane::assert_accounting(&stats);
}
