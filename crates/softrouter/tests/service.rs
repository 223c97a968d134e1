//! The router as a systemd service (issue 19), without systemd and without
//! root: the test owns the `$NOTIFY_SOCKET` datagram socket systemd would
//! own, and runs the router on `mem` ports.
//!
//! * `READY=1` comes once, and only when the control socket answers;
//! * `ctl reload` (the unit's `ExecReload`) and SIGHUP each bring
//!   `RELOADING=1` then `READY=1`, a refused file too;
//! * SIGTERM brings `STOPPING=1` and a clean exit;
//! * `WATCHDOG=1` comes while `$WATCHDOG_USEC` is set;
//! * an abstract socket name (`@name`) works like a path;
//! * the unit file passes `systemd-analyze verify` (skipped without it).

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_softrouter"))
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sr-service-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const MEM_CONFIG: &str = r#"
[router]
workers = 1
mode = "interrupt"
pool_frames = 1024

[[port]]
name = "a"
driver = "mem"
mac = "02:00:00:00:00:10"
addresses = ["198.18.0.1/24"]

[[port]]
name = "b"
driver = "mem"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/24"]

[control]
socket = "ctl.sock"
"#;

/// A router started with `NOTIFY_SOCKET` pointing at a socket we hold.
struct Service {
    child: Child,
    notify: UnixDatagram,
    dir: PathBuf,
}

impl Service {
    fn start(tag: &str, abstract_name: bool, env: &[(&str, &str)]) -> Service {
        let dir = tmpdir(tag);
        let cfg = dir.join("r.toml");
        std::fs::write(&cfg, MEM_CONFIG).unwrap();
        let (notify, var) = if abstract_name {
            let name = format!("sr-service-{}-{tag}", std::process::id());
            let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
            (UnixDatagram::bind_addr(&addr).unwrap(), format!("@{name}"))
        } else {
            let p = dir.join("notify.sock");
            (UnixDatagram::bind(&p).unwrap(), p.display().to_string())
        };
        let mut c = bin();
        c.args(["run", "--config", cfg.to_str().unwrap()])
            .env("NOTIFY_SOCKET", &var)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in env {
            c.env(k, v);
        }
        let child = c.spawn().unwrap();
        Service { child, notify, dir }
    }

    /// The next datagram, or None within `limit`.
    fn next(&self, limit: Duration) -> Option<String> {
        self.notify.set_read_timeout(Some(limit)).unwrap();
        let mut buf = [0u8; 4096];
        let n = self.notify.recv(&mut buf).ok()?;
        Some(String::from_utf8_lossy(&buf[..n]).into_owned())
    }

    /// The next datagram that is not a watchdog ping.
    fn next_state(&self, limit: Duration) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self
                .next(left.max(Duration::from_millis(1)))
                .unwrap_or_else(|| panic!("no notification within {limit:?}"));
            if m != "WATCHDOG=1" {
                return m;
            }
        }
    }

    fn ctl(&self, args: &[&str]) -> std::process::Output {
        bin()
            .args(["ctl", "--socket"])
            .arg(self.dir.join("ctl.sock"))
            .args(args)
            .output()
            .unwrap()
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, sig) }, 0);
    }

    fn exit_code(&mut self, limit: Duration) -> Option<i32> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code();
            }
            assert!(Instant::now() < deadline, "no exit within {limit:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const LIMIT: Duration = Duration::from_secs(20);

fn fields(m: &str) -> Vec<&str> {
    m.lines().collect()
}

#[test]
fn ready_reload_and_stop_follow_the_protocol() {
    let mut s = Service::start("protocol", false, &[]);
    let ready = s.next_state(LIMIT);
    assert_eq!(fields(&ready)[0], "READY=1", "{ready}");
    assert!(ready.contains("STATUS=forwarding on 2 port(s)"), "{ready}");
    // Ready means the control socket answers now, not soon.
    let out = s.ctl(&["port", "show"]);
    assert!(
        out.status.success(),
        "READY=1 before the control socket answers: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // ctl as an operator uses it under the service: counts from counters,
    // stats as a table, flags after the subcommand.
    let out = s.ctl(&["route", "show", "--count"]);
    let n: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert!(n >= 2, "{n} routes");
    let out = s.ctl(&["route", "summary", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["routes_v4"].as_u64().unwrap() + v["routes_v6"].as_u64().unwrap(),
        n
    );
    assert_eq!(v["from_file"], 0);
    let out = s.ctl(&["stats"]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.starts_with("version"), "{table}");
    // Nothing more until asked.
    assert_eq!(s.next(Duration::from_millis(300)), None);

    // `systemctl reload` runs `softrouter ctl reload`.
    let out = s.ctl(&["reload"]);
    assert!(out.status.success(), "{out:?}");
    let m = s.next_state(LIMIT);
    assert_eq!(fields(&m)[0], "RELOADING=1", "{m}");
    assert!(fields(&m)[1].starts_with("MONOTONIC_USEC="), "{m}");
    let m = s.next_state(LIMIT);
    assert_eq!(fields(&m), ["READY=1", "STATUS=reloaded"]);

    // SIGHUP: the same; a file that does not validate is refused, and the
    // router is ready again with the previous configuration.
    std::fs::write(s.dir.join("r.toml"), "[router]\nworkers = \"many\"\n").unwrap();
    s.signal(libc::SIGHUP);
    let m = s.next_state(LIMIT);
    assert_eq!(fields(&m)[0], "RELOADING=1", "{m}");
    let m = s.next_state(LIMIT);
    assert_eq!(fields(&m)[0], "READY=1", "{m}");
    assert!(m.contains("refused"), "{m}");

    s.signal(libc::SIGTERM);
    assert_eq!(s.next_state(LIMIT), "STOPPING=1");
    assert_eq!(s.exit_code(LIMIT), Some(0));
}

#[test]
fn watchdog_and_abstract_socket() {
    let mut s = Service::start("watchdog", true, &[("WATCHDOG_USEC", "200000")]);
    let mut pings = 0;
    let deadline = Instant::now() + LIMIT;
    let mut ready = false;
    while pings < 3 {
        assert!(Instant::now() < deadline, "{pings} watchdog pings");
        match s.next(LIMIT).as_deref() {
            Some("WATCHDOG=1") => {
                assert!(ready, "WATCHDOG=1 before READY=1");
                pings += 1;
            }
            Some(m) if m.starts_with("READY=1") => ready = true,
            other => panic!("unexpected {other:?}"),
        }
    }
    s.signal(libc::SIGTERM);
    assert_eq!(s.next_state(LIMIT), "STOPPING=1");
    assert_eq!(s.exit_code(LIMIT), Some(0));
}

#[test]
fn watchdog_for_another_pid_is_not_ours() {
    let s = Service::start(
        "otherpid",
        false,
        &[("WATCHDOG_USEC", "100000"), ("WATCHDOG_PID", "1")],
    );
    assert!(s.next_state(LIMIT).starts_with("READY=1"));
    assert_eq!(s.next(Duration::from_millis(500)), None);
}

/// The shipped unit, checked by systemd's own verifier where it exists.
#[test]
fn unit_file_verifies() {
    let unit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dist/softrouter.service");
    let text = std::fs::read_to_string(&unit).unwrap();
    for needed in [
        "Type=notify",
        "ExecReload=",
        "WatchdogSec=",
        "CAP_NET_ADMIN",
        "CAP_BPF",
    ] {
        assert!(text.contains(needed), "{needed} missing in the unit");
    }
    if Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no systemd-analyze");
        return;
    }
    // verify wants ExecStart's binary to exist: point it at this build.
    let dir = tmpdir("verify");
    let copy = dir.join("softrouter.service");
    std::fs::write(
        &copy,
        text.replace(
            "/usr/local/bin/softrouter",
            env!("CARGO_BIN_EXE_softrouter"),
        ),
    )
    .unwrap();
    let out = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&copy)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // Lines about other units on the host are not ours to fix.
    let ours: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("softrouter.service"))
        .collect();
    assert!(out.status.success() && ours.is_empty(), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// The example `make install` puts in /etc/softrouter passes the check the
/// unit's ExecStartPre runs.
#[test]
fn example_config_checks() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dist/router.toml");
    let out = bin().arg("check-config").arg(&example).output().unwrap();
    assert!(out.status.success(), "{out:?}");
}
