//! Shared by the integration tests: softrouter run as a child process in
//! a namespace (`live.rs`, `hostile.rs`, ...), a thread in a namespace, and
//! `softrouter bench` run to the end (`bench.rs`, `experiments.rs`,
//! `stages.rs`). Each test binary uses part of it.

#![allow(dead_code)]

use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use testbed::Netns;

/// softrouter running in a namespace with a configuration the test wrote;
/// killed on drop so a failing test never leaves it behind. Its stderr
/// goes to a log that a failed stop quotes. It runs under a
/// `$NOTIFY_SOCKET` the test reads, as systemd does (every datagram, so
/// the queue never fills), so a test can wait for `READY=1`
/// ([`RouterProcess::wait_ready`]) rather than guess from the control
/// socket, which answers before the kernel's table is in.
pub struct RouterProcess {
    child: Child,
    stats: PathBuf,
    dir: PathBuf,
    /// `READY=1` came.
    ready: Arc<AtomicBool>,
    /// Ends the notification reader.
    done: Arc<AtomicBool>,
}

/// Reads the router's notifications until `done`, setting `ready` at the
/// first `READY=1`.
fn read_notifications(sock: UnixDatagram, ready: Arc<AtomicBool>, done: Arc<AtomicBool>) {
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut buf = [0u8; 4096];
    while !done.load(Ordering::Relaxed) {
        if let Ok(n) = sock.recv(&mut buf) {
            if buf[..n].starts_with(b"READY=1") {
                ready.store(true, Ordering::Relaxed);
            }
        }
    }
}

impl RouterProcess {
    /// Start `softrouter run` in `ns` with `config`; `tag` names its
    /// private directory (config, statistics, log).
    pub fn start(ns: &Netns, tag: &str, config: &str) -> RouterProcess {
        let dir = std::env::temp_dir().join(format!("sr-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("router.toml");
        std::fs::write(&path, config).unwrap();
        let stats = dir.join("stats.json");
        let log = std::fs::File::create(dir.join("router.log")).unwrap();
        let notify_path = dir.join("notify.sock");
        let _ = std::fs::remove_file(&notify_path);
        let notify = UnixDatagram::bind(&notify_path).unwrap();
        let child = ns
            .command(
                env!("CARGO_BIN_EXE_softrouter"),
                &[
                    "run",
                    "--config",
                    path.to_str().unwrap(),
                    "--stats-json",
                    stats.to_str().unwrap(),
                ],
            )
            .env("NOTIFY_SOCKET", &notify_path)
            .stdin(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("starting softrouter");
        let ready = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        {
            let (ready, done) = (ready.clone(), done.clone());
            std::thread::spawn(move || read_notifications(notify, ready, done));
        }
        RouterProcess {
            child,
            stats,
            dir,
            ready,
            done,
        }
    }

    /// Waits for `READY=1`: ports open, the configured and the kernel's
    /// tables loaded, the control socket answering. Fails with the log if
    /// it does not come within `limit` or the router exits first.
    pub fn wait_ready(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while !self.ready.load(Ordering::Relaxed) {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "softrouter exited with {status} before ready: {}",
                    self.log()
                );
            }
            assert!(
                Instant::now() < deadline,
                "softrouter not ready within {limit:?}: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The configuration file it runs with (a test may rewrite it and
    /// reload).
    pub fn config_path(&self) -> PathBuf {
        self.dir.join("router.toml")
    }

    /// Its process id (to signal it).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What it logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("router.log")).unwrap_or_default()
    }

    /// Stops with SIGTERM and returns the statistics it wrote.
    pub fn stop(mut self) -> serde_json::Value {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(
                    status.success(),
                    "softrouter exited with {status}: {}",
                    self.log()
                );
                break;
            }
            assert!(
                Instant::now() < deadline,
                "softrouter did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let text = std::fs::read_to_string(&self.stats).expect("stats JSON written at exit");
        serde_json::from_str(&text).unwrap()
    }
}

impl Drop for RouterProcess {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `f` on a thread that has entered namespace `ns` (the thread's
/// sockets are then that namespace's).
pub fn in_ns<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    let path = format!("/var/run/netns/{ns}");
    std::thread::spawn(move || {
        let file = std::fs::File::open(&path).expect("netns file");
        use std::os::fd::AsRawFd;
        // SAFETY: setns(2) with a valid namespace fd, for this thread only.
        let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
        f()
    })
}

/// `softrouter bench ARGS...` run to the end: its output, after checking
/// that it exited successfully (stderr quoted otherwise) and left no
/// namespace behind (the bench names them `sr<pid>x...`).
pub fn run_bench(args: &[&str]) -> std::process::Output {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_softrouter"))
        .arg("bench")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting softrouter bench");
    let pid = child.id();
    let out = child
        .wait_with_output()
        .expect("waiting for softrouter bench");
    let left = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list");
    let left = String::from_utf8_lossy(&left.stdout);
    assert!(
        !left.contains(&format!("sr{}x", pid % 10000)),
        "namespaces left behind: {left}"
    );
    assert!(
        out.status.success(),
        "softrouter bench {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
