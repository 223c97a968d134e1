//! The supervisor as an operator meets it (issue 12), without root: `mem`
//! ports keep a router running until it is told to stop.
//!
//! * bad `--duration` values are usage errors (exit 2), never a panic;
//! * a SIGUSR1 whose statistics cannot be written is logged, and the
//!   router keeps running;
//! * SIGHUP and `ctl reload` apply a changed file (routes, neighbours),
//!   name what needs a restart, and refuse a bad file changing nothing;
//! * `--log-format json` logs JSON lines; text has no colours off a tty;
//! * a worker that panics is noticed at once: the router stops, writes its
//!   statistics and exits non-zero with the panic in its message;
//! * `run` and `check-config` reject the same configurations.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_softrouter"))
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sr-sup-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Two idle `mem` ports: nothing arrives, the router runs until stopped.
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

# The control socket next to the file (each test has its own folder).
[control]
socket = "ctl.sock"
"#;

/// A running softrouter whose stderr is collected as it is written.
struct Running {
    child: Child,
    err: Arc<Mutex<String>>,
}

impl Running {
    fn start(cfg: &Path, extra: &[&str], env: &[(&str, &str)]) -> Running {
        let mut c = bin();
        c.args(["run", "--config", cfg.to_str().unwrap()])
            .args(extra)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c.spawn().unwrap();
        let err = Arc::new(Mutex::new(String::new()));
        let pipe = child.stderr.take().unwrap();
        let sink = err.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        let r = Running { child, err };
        r.wait_for("forwarding on", Duration::from_secs(20));
        r
    }

    fn stderr(&self) -> String {
        self.err.lock().unwrap().clone()
    }

    fn wait_for(&self, needle: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        while !self.stderr().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "no {needle:?} within {limit:?}; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, sig) }, 0);
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Waits for the exit; (status code, stderr).
    fn wait(mut self, limit: Duration) -> (Option<i32>, String) {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("did not exit within {limit:?}; stderr:\n{}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        // Let the reader thread drain the pipe.
        std::thread::sleep(Duration::from_millis(100));
        (status.code(), self.stderr())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn bad_durations_are_usage_errors_not_panics() {
    let dir = tmpdir("duration");
    let cfg = dir.join("r.toml");
    std::fs::write(&cfg, MEM_CONFIG).unwrap();
    for bad in [
        "nan", "NaN", "inf", "-inf", "-1", "-0.5", "1e300", "1e10", "abc", "",
    ] {
        let out = bin()
            .args(["run", "--config", cfg.to_str().unwrap(), "--duration", bad])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--duration {bad:?}: {err}");
        assert!(err.contains("--duration"), "--duration {bad:?}: {err}");
        assert!(!err.contains("panicked"), "--duration {bad:?}: {err}");
    }
    // A good one still runs (and stops by itself).
    let out = bin()
        .args([
            "run",
            "--config",
            cfg.to_str().unwrap(),
            "--duration",
            "0.2",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_stats_path_is_a_usage_error() {
    let dir = tmpdir("statspath");
    let cfg = dir.join("r.toml");
    std::fs::write(&cfg, MEM_CONFIG).unwrap();
    for bad in [dir.join("nope").join("s.json"), dir.clone()] {
        let out = bin()
            .args(["run", "--config", cfg.to_str().unwrap(), "--duration", "5"])
            .arg("--stats-json")
            .arg(&bad)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", bad.display());
        assert!(err.contains("--stats-json"), "{err}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sigusr1_that_cannot_write_keeps_forwarding() {
    let dir = tmpdir("usr1");
    let cfg = dir.join("r.toml");
    std::fs::write(&cfg, MEM_CONFIG).unwrap();
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let stats = out.join("stats.json");
    let mut r = Running::start(&cfg, &["--stats-json", stats.to_str().unwrap()], &[]);
    r.signal(libc::SIGUSR1);
    r.wait_for("statistics written", Duration::from_secs(5));
    assert!(stats.is_file());
    // The folder goes away: the next snapshot cannot be written.
    std::fs::remove_dir_all(&out).unwrap();
    r.signal(libc::SIGUSR1);
    r.wait_for("statistics not written", Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        r.running(),
        "stopped after a failed SIGUSR1:\n{}",
        r.stderr()
    );
    // Back: the final statistics are written at exit.
    std::fs::create_dir_all(&out).unwrap();
    r.signal(libc::SIGTERM);
    let (code, err) = r.wait(Duration::from_secs(10));
    assert_eq!(code, Some(0), "{err}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert!(s["elapsed_s"].as_f64().unwrap() > 0.0);
    dataplane::assert_accounting(&s);
    let _ = std::fs::remove_dir_all(dir);
}

/// A route and a neighbour in the file, to be changed by reloads.
const RELOAD_ROUTES: &str = r#"
[[route]]
prefix = "198.20.0.0/16"
via = ["198.19.0.2"]

[[route]]
prefix = "198.22.0.0/16"
via = ["198.19.0.2"]

[[neighbor]]
address = "198.19.0.2"
mac = "02:00:00:00:00:22"
port = "b"
"#;

/// SIGHUP and `ctl reload` re-read the file: changed routes and
/// neighbours are applied, what needs a restart is named and kept, a
/// file that does not validate (or whose routes the running ports
/// cannot take) changes nothing; the router runs on throughout.
#[test]
fn sighup_and_ctl_reload_apply_the_changed_file() {
    let dir = tmpdir("hup");
    let cfg = dir.join("r.toml");
    let sock = dir.join("ctl.sock");
    std::fs::write(&cfg, format!("{MEM_CONFIG}{RELOAD_ROUTES}")).unwrap();
    let stats = dir.join("stats.json");
    let mut r = Running::start(&cfg, &["--stats-json", stats.to_str().unwrap()], &[]);
    // The routes as `ctl route show` prints them, blanks squeezed.
    let show = || {
        let (code, out, err) = ctl(&sock, &["route", "show"]);
        assert_eq!(code, Some(0), "{err}");
        out.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(show().contains("198.22.0.0/16 forward 198.19.0.2 (b)"));

    // SIGHUP: one route replaced (ECMP now), one removed, one added, the
    // neighbour's MAC changed; a worker count and an address that only a
    // restart applies.
    let changed = MEM_CONFIG
        .replace("workers = 1", "workers = 2")
        .replace("198.18.0.1/24", "198.18.0.1/25");
    let routes = RELOAD_ROUTES
        .replace(
            "prefix = \"198.20.0.0/16\"\nvia = [\"198.19.0.2\"]",
            "prefix = \"198.20.0.0/16\"\nvia = [\"198.19.0.2\", \"198.19.0.3\"]",
        )
        .replace("198.22.0.0/16", "198.21.0.0/16")
        .replace("02:00:00:00:00:22", "02:00:00:00:00:23");
    std::fs::write(&cfg, format!("{changed}{routes}")).unwrap();
    r.signal(libc::SIGHUP);
    r.wait_for("reloaded", Duration::from_secs(5));
    let log = r.stderr();
    for line in [
        "reload: route 198.20.0.0/16 replaced",
        "reload: route 198.21.0.0/16 added",
        "reload: route 198.22.0.0/16 removed",
        "reload: neighbor 198.19.0.2 set",
        "reload: [router] workers changed: kept as running until a restart",
        "reload: [[port]] \"a\" changed",
    ] {
        assert!(log.contains(line), "no {line:?} in:\n{log}");
    }
    let routes_now = show();
    assert!(
        routes_now.contains("198.20.0.0/16 forward 198.19.0.2 (b), 198.19.0.3 (b)")
            && routes_now.contains("198.21.0.0/16 forward 198.19.0.2 (b)")
            && !routes_now.contains("198.22.0.0/16"),
        "{routes_now}"
    );
    let (_, neigh, _) = ctl(&sock, &["neigh", "show"]);
    assert!(neigh.contains("02:00:00:00:00:23"), "{neigh}");

    // ctl reload of the same file: nothing to apply, the restart list
    // again (still not applied).
    let (code, out, err) = ctl(&sock, &["reload"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("reloaded: no route or neighbour changed")
            && out.contains("needs a restart (kept as running): [router] workers"),
        "{out}"
    );

    // A file that does not validate: refused with its file:line, nothing
    // changed.
    std::fs::write(
        &cfg,
        format!(
            "{changed}{routes}\n[[route]]\nprefix = \"198.30.0.0/33\"\nvia = [\"198.19.0.2\"]\n"
        ),
    )
    .unwrap();
    let (code, _, err) = ctl(&sock, &["reload"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("r.toml:") && err.contains("still running the previous configuration"),
        "{err}"
    );
    // Routes the running ports cannot take (its gateway is on the new
    // subnet of port b): refused whole, even the valid change beside it.
    let moved = changed.replace("198.19.0.1/24", "198.31.0.1/24");
    std::fs::write(
        &cfg,
        format!("{moved}\n[[route]]\nprefix = \"198.20.0.0/16\"\nvia = [\"198.31.0.2\"]\n"),
    )
    .unwrap();
    let (code, _, err) = ctl(&sock, &["reload"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("running ports") && err.contains("nothing changed"),
        "{err}"
    );
    assert_eq!(show(), routes_now, "a refused reload changed the routes");

    std::thread::sleep(Duration::from_millis(200));
    assert!(r.running(), "a reload stopped the router:\n{}", r.stderr());
    r.signal(libc::SIGTERM);
    let (code, err) = r.wait(Duration::from_secs(10));
    assert_eq!(code, Some(0), "{err}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    dataplane::assert_accounting(&s);
    let _ = std::fs::remove_dir_all(dir);
}

/// `--log-format json`: every log line is one JSON object with a level
/// and a message; the text format has no colour codes off a terminal.
#[test]
fn logs_are_json_on_request_and_plain_off_a_terminal() {
    let dir = tmpdir("logs");
    let cfg = dir.join("r.toml");
    std::fs::write(&cfg, MEM_CONFIG).unwrap();
    for (format, json) in [("json", true), ("text", false)] {
        let out = bin()
            .args([
                "--log-format",
                format,
                "run",
                "--config",
                cfg.to_str().unwrap(),
                "--duration",
                "0.3",
            ])
            .env("RUST_LOG", "info")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        let logs: Vec<&str> = err
            .lines()
            .filter(|l| !l.starts_with("softrouter: "))
            .collect();
        assert!(
            logs.iter().any(|l| l.contains("forwarding on 2 port(s)")),
            "{err}"
        );
        assert!(!err.contains('\x1b'), "colour codes off a terminal:\n{err}");
        if json {
            for l in &logs {
                let v: serde_json::Value =
                    serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
                assert!(
                    v["level"].is_string() && v["fields"]["message"].is_string(),
                    "{l}"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn worker_panic_stops_the_router_with_an_error_and_statistics() {
    let dir = tmpdir("panic");
    let cfg = dir.join("r.toml");
    std::fs::write(&cfg, MEM_CONFIG.replace("workers = 1", "workers = 2")).unwrap();
    let stats = dir.join("stats.json");
    let r = Running::start(
        &cfg,
        &["--duration", "120", "--stats-json", stats.to_str().unwrap()],
        &[("SOFTROUTER_TEST_WORKER_PANIC_MS", "300")],
    );
    // Noticed: well before the 120 s duration (`wait` fails past 60 s).
    // About 1 s alone; 9 s once in a full test run, behind the namespace
    // cleanups of the tests before it: the bound is the duration, not the
    // machine's speed.
    let (code, err) = r.wait(Duration::from_secs(60));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("worker 0 panicked"), "{err}");
    assert!(err.contains("injected worker panic"), "{err}");
    assert!(err.contains("statistics written"), "{err}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let notes = s["notes"].to_string();
    assert!(notes.contains("worker 0 panicked"), "{notes}");
    dataplane::assert_accounting(&s);
    let _ = std::fs::remove_dir_all(dir);
}

/// `run` and `check-config` reject the same configurations, with the same
/// file:line message.
#[test]
fn run_and_check_config_reject_the_same_things() {
    let dir = tmpdir("agree");
    let base = MEM_CONFIG.replace("198.19.0.1/24", "198.20.0.1/15");
    let cases: Vec<(&str, String, String)> = vec![
        (
            "next hop off every subnet",
            "203.0.113.0/24 198.20.0.2\n203.0.114.0/24 192.0.2.1\n".to_string(),
            "t.txt:2:".to_string(),
        ),
        (
            "more next hops than the table holds",
            (0..70_000u32)
                .map(|i| {
                    let h = 2 + i;
                    format!(
                        "{}.{}.{}.0/24 198.{}.{}.{}\n",
                        10 + (i >> 16),
                        (i >> 8) & 0xff,
                        i & 0xff,
                        20 + (h >> 16),
                        (h >> 8) & 0xff,
                        h & 0xff
                    )
                })
                .collect(),
            // 65,536 entries: 4 for the ports, so line 65,533 is the first
            // next hop too many.
            "t.txt:65533:".to_string(),
        ),
    ];
    for (what, table, needle) in cases {
        std::fs::write(dir.join("t.txt"), &table).unwrap();
        let cfg = dir.join("r.toml");
        std::fs::write(&cfg, format!("{base}\n[routes_file]\npath = \"t.txt\"\n")).unwrap();
        let check = bin()
            .args(["check-config", cfg.to_str().unwrap()])
            .output()
            .unwrap();
        let run = bin()
            .args(["run", "--config", cfg.to_str().unwrap(), "--duration", "1"])
            .output()
            .unwrap();
        let check_err = String::from_utf8_lossy(&check.stderr).to_string();
        let run_err = String::from_utf8_lossy(&run.stderr).to_string();
        assert_eq!(
            check.status.code(),
            Some(2),
            "{what}: check-config: {check_err}"
        );
        assert_eq!(run.status.code(), Some(2), "{what}: run: {run_err}");
        assert!(check_err.contains(&needle), "{what}: {check_err}");
        assert_eq!(
            run_err.trim().trim_start_matches("softrouter: "),
            check_err.trim(),
            "{what}: the same message"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A pcapng capture is refused by check-config as by run.
#[test]
fn pcapng_input_fails_check_config() {
    let dir = tmpdir("pcapng");
    // A pcapng Section Header Block.
    let mut ng = Vec::new();
    ng.extend_from_slice(&0x0a0d0d0au32.to_le_bytes());
    ng.extend_from_slice(&28u32.to_le_bytes());
    ng.extend_from_slice(&0x1a2b3c4du32.to_le_bytes());
    ng.extend_from_slice(&[1, 0, 0, 0]);
    ng.extend_from_slice(&u64::MAX.to_le_bytes());
    ng.extend_from_slice(&28u32.to_le_bytes());
    std::fs::write(dir.join("in.pcapng"), &ng).unwrap();
    let cfg = dir.join("r.toml");
    std::fs::write(
        &cfg,
        MEM_CONFIG
            .replace("driver = \"mem\"", "driver = \"pcap\"")
            .replacen(
                "name = \"a\"\n",
                "name = \"a\"\nrx_pcap = \"in.pcapng\"\n",
                1,
            ),
    )
    .unwrap();
    let check = bin()
        .args(["check-config", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    let check_err = String::from_utf8_lossy(&check.stderr).to_string();
    assert_eq!(check.status.code(), Some(2), "{check_err}");
    assert!(
        check_err.contains("pcapng") && check_err.contains("in.pcapng"),
        "{check_err}"
    );
    let run = bin()
        .args(["run", "--config", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    let run_err = String::from_utf8_lossy(&run.stderr).to_string();
    assert!(!run.status.success(), "{run_err}");
    assert!(run_err.contains("pcapng"), "{run_err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// `softrouter ctl` against a running router: (exit code, stdout,
/// stderr).
fn ctl(socket: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = bin()
        .args(["ctl", "--socket", socket.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 22, defect 3: the router's own and connected routes are not
/// `ctl`'s to take. `route del` of its address, of a connected subnet or
/// of a host inside one is refused with the reason (exit 1), as `route
/// add` of them is, and the routes stay.
#[test]
fn ctl_cannot_take_the_routers_own_routes() {
    let dir = tmpdir("ctl-own");
    let cfg = dir.join("r.toml");
    std::fs::write(&cfg, MEM_CONFIG).unwrap();
    let r = Running::start(&cfg, &[], &[]);
    let sock = dir.join("ctl.sock");
    for (prefix, why) in [
        ("198.18.0.1/32", "is the router's own address"),
        ("198.18.0.0/24", "connected subnet"),
        ("198.19.0.0/24", "connected subnet"),
        ("198.18.0.7/32", "is inside port \"a\"'s connected subnet"),
    ] {
        let (code, _, err) = ctl(&sock, &["route", "del", prefix]);
        assert_eq!(code, Some(1), "route del {prefix}: {err}");
        assert!(err.contains(why), "route del {prefix}: {err}");
        let (code, _, err) = ctl(&sock, &["route", "add", prefix, "via", "198.19.0.2"]);
        assert_eq!(code, Some(1), "route add {prefix}: {err}");
        assert!(err.contains(why), "route add {prefix}: {err}");
    }
    let (code, all, err) = ctl(&sock, &["--json", "route", "show"]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&all).unwrap();
    let kind = |p: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|r| r["prefix"] == p)
            .map(|r| r["kind"].clone())
    };
    assert_eq!(kind("198.18.0.1/32"), Some("local".into()), "{all}");
    assert_eq!(kind("198.18.0.0/24"), Some("connected".into()), "{all}");
    assert_eq!(kind("198.19.0.0/24"), Some("connected".into()), "{all}");
    r.signal(libc::SIGTERM);
    let (code, _) = r.wait(Duration::from_secs(20));
    assert_eq!(code, Some(0));
    let _ = std::fs::remove_dir_all(dir);
}

/// Routes and neighbours changed and shown through the control socket of
/// a running router; bad requests change nothing and say why; a second
/// router on the same socket is refused; the metrics endpoint answers.
#[test]
fn ctl_changes_and_shows_a_running_router() {
    let dir = tmpdir("ctl");
    let cfg = dir.join("r.toml");
    // A free port for the metrics endpoint (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(
        &cfg,
        format!("{MEM_CONFIG}\n[metrics]\nlisten = \"127.0.0.1:{port}\"\n"),
    )
    .unwrap();
    let r = Running::start(&cfg, &[], &[]);
    let sock = dir.join("ctl.sock");
    assert!(sock.exists(), "{}", r.stderr());

    let ok = |args: &[&str]| {
        let (code, out, err) = ctl(&sock, args);
        assert_eq!(code, Some(0), "ctl {args:?}: {err}");
        out
    };
    ok(&[
        "route",
        "add",
        "198.20.0.0/16",
        "via",
        "198.19.0.2",
        "198.19.0.3",
    ]);
    let shown = ok(&["route", "show", "--longest", "198.20.1.1"]);
    assert!(
        shown.contains("198.20.0.0/16  forward  198.19.0.2 (b), 198.19.0.3 (b)"),
        "{shown}"
    );
    let all = ok(&["--json", "route", "show"]);
    let v: serde_json::Value = serde_json::from_str(&all).unwrap();
    assert!(v
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["prefix"] == "198.18.0.1/32" && r["kind"] == "local"));
    // Bad requests: exit 1 with the router's reason, nothing changed.
    let (code, _, err) = ctl(
        &sock,
        &["route", "add", "198.21.0.0/16", "via", "203.0.113.1"],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("route 198.21.0.0/16: via: "), "{err}");
    let (code, _, err) = ctl(&sock, &["route", "del", "198.22.0.0/16"]);
    assert_eq!(
        (code, err.contains("no route 198.22.0.0/16")),
        (Some(1), true),
        "{err}"
    );
    ok(&["neigh", "add", "198.19.0.2", "02:00:00:00:00:22", "b"]);
    let neigh = ok(&["neigh", "show"]);
    let row: Vec<&str> = neigh
        .lines()
        .find(|l| l.starts_with("198.19.0.2 "))
        .unwrap_or_else(|| panic!("{neigh}"))
        .split_whitespace()
        .collect();
    assert_eq!(
        row,
        [
            "198.19.0.2",
            "b",
            "static",
            "02:00:00:00:00:22",
            "permanent"
        ]
    );
    ok(&["route", "del", "198.20.0.0/16"]);
    assert!(!ok(&["route", "show"]).contains("198.20.0.0/16"));
    let ports = ok(&["port", "show"]);
    assert!(
        ports.starts_with("PORT") && ports.contains("\na "),
        "{ports}"
    );
    // A table by default; the document with --json (after the subcommand
    // too).
    assert!(ok(&["stats"]).starts_with("version"));
    let stats: serde_json::Value = serde_json::from_str(&ok(&["stats", "--json"])).unwrap();
    assert_eq!(stats["workers"], 1);
    dataplane::assert_accounting(&stats);

    // The metrics endpoint.
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
    let mut page = String::new();
    c.read_to_string(&mut page).unwrap();
    assert!(
        page.contains("softrouter_port_rx_packets_total{port=\"a\"} 0"),
        "{page}"
    );

    // A second router on the same socket is refused (exit 1, says why).
    let out = bin()
        .args(["run", "--config", cfg.to_str().unwrap(), "--duration", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("held by a running softrouter"), "{err}");

    r.signal(libc::SIGTERM);
    let (code, _) = r.wait(Duration::from_secs(20));
    assert_eq!(code, Some(0));
    assert!(!sock.exists(), "the socket is removed at exit");
    // No router: a clear message, exit 2.
    let (code, _, err) = ctl(&sock, &["stats"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("is softrouter running"), "{err}");
}
