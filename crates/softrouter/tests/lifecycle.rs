//! Life cycle of softrouter on live interfaces (issue 3): clear errors at
//! start, almost no CPU at no load in `interrupt` and `adaptive` modes, and
//! the XDP program gone after a crash (SIGKILL: only the BPF link's
//! lifetime, tied to the process, can detach it then). The supervisor
//! (issue 12): an interface deleted under a running router stops it with
//! an error naming port and interface, and a second router on an
//! interface refuses to start.
//!
//! Needs root; skipped with a message otherwise. Tests run one at a time
//! (they pin workers on a two-core machine).

use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use testbed::three_hosts_addr::*;
use testbed::{ThreeHosts, TopologyOptions};

static SERIAL: Mutex<()> = Mutex::new(());

struct Router {
    child: Child,
    dir: PathBuf,
}

impl Router {
    /// Stops softrouter with SIGTERM and checks the accounting identity in
    /// the statistics it writes at exit.
    fn stop_checked(mut self) {
        // SAFETY: signalling the child we started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = self.child.wait().unwrap();
        assert!(status.success(), "softrouter exit: {status}");
        let text = std::fs::read_to_string(self.dir.join("stats.json")).expect("stats written");
        let stats: serde_json::Value = serde_json::from_str(&text).unwrap();
        dataplane::assert_accounting(&stats);
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn config(th: &ThreeHosts, driver: &str, mode: &str, rin: &str) -> String {
    format!(
        r#"
[router]
workers = 1
mode = "{mode}"

[[port]]
name = "in"
driver = "{driver}"
iface = "{rin}"
addresses = ["{ROUTER_IN_V4}/24"]

[[port]]
name = "out"
driver = "{driver}"
iface = "{rout}"
addresses = ["{ROUTER_OUT_V4}/24"]

# No control socket: tests run routers side by side.
[control]
socket = "off"
"#,
        rout = th.router_out,
    )
}

fn start(th: &ThreeHosts, tag: &str, cfg: &str) -> Router {
    start_with(th, tag, cfg, &[])
}

fn start_with(th: &ThreeHosts, tag: &str, cfg: &str, extra: &[&str]) -> Router {
    let dir = std::env::temp_dir().join(format!("sr-life-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("router.toml");
    std::fs::write(&path, cfg).unwrap();
    // Statistics go to the router's folder unless the test names a file
    // (the folder goes when the guard drops).
    let stats = dir.join("stats.json");
    let mut args = vec!["run", "--config", path.to_str().unwrap()];
    if !extra.contains(&"--stats-json") {
        args.extend_from_slice(&["--stats-json", stats.to_str().unwrap()]);
    }
    args.extend_from_slice(extra);
    let child = th
        .router()
        .command(env!("CARGO_BIN_EXE_softrouter"), &args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    Router { child, dir }
}

fn wait_forwarding(th: &ThreeHosts) {
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
            "softrouter never forwarded a ping"
        );
    }
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields overall.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

#[test]
fn missing_interface_is_a_clear_error() {
    if !testbed::require_root("missing interface") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let th = testbed::three_hosts_with(TopologyOptions::user_space_router(1)).unwrap();
    for driver in ["afxdp", "afpacket"] {
        let r = start(&th, driver, &config(&th, driver, "interrupt", "nosuchif0"));
        let out = r.wait_with_output_ref();
        assert!(!out.0.success(), "{driver}: must fail");
        assert!(
            out.1.contains("nosuchif0") && out.1.contains("\"in\""),
            "{driver}: error names port and interface: {}",
            out.1
        );
    }
}

/// `queues = 1` on a 2-queue interface (issue 22): the unserved queue's
/// frames would go to the kernel (80 of 80 pings to the router lost, and
/// nothing said). The router refuses to start, naming port, interface,
/// both queue counts and the two fixes.
#[test]
fn unserved_queues_are_refused_at_start() {
    if !testbed::require_root("unserved queues") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let th = testbed::three_hosts_with(TopologyOptions::user_space_router(2)).unwrap();
    let cfg = config(&th, "afxdp", "interrupt", &th.router_in).replacen(
        "driver = \"afxdp\"",
        "driver = \"afxdp\"\nqueues = 1",
        1,
    );
    let r = start(&th, "queues", &cfg);
    let (status, err) = r.wait_with_output_ref();
    assert_eq!(status.code(), Some(1), "{err}");
    for needle in [
        "port \"in\"",
        &format!("interface {:?}", th.router_in),
        "queues = 1, but the interface has 2 RX queues",
        "set queues = 2",
        &format!("ethtool -L {}", th.router_in),
    ] {
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
}

/// `Child::wait_with_output` consumes the child; this keeps the guard.
trait WaitRef {
    fn wait_with_output_ref(self) -> (std::process::ExitStatus, String);
}

impl WaitRef for Router {
    fn wait_with_output_ref(mut self) -> (std::process::ExitStatus, String) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "softrouter did not exit");
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut err = String::new();
        use std::io::Read;
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        (status, err)
    }
}

/// Voluntary context switches of all of a process's threads so far: how
/// often they went to sleep (and so were woken).
fn sleeps(pid: u32) -> u64 {
    let mut n = 0;
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
        n += status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0);
    }
    n
}

#[test]
fn idle_router_sleeps_in_interrupt_and_adaptive_modes() {
    if !testbed::require_root("idle CPU") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    for (driver, mode) in [
        ("afxdp", "interrupt"),
        ("afxdp", "adaptive"),
        ("afpacket", "interrupt"),
        ("afpacket", "adaptive"),
    ] {
        let th = testbed::three_hosts_with(TopologyOptions::user_space_router(1)).unwrap();
        let r = start(&th, mode, &config(&th, driver, mode, &th.router_in));
        wait_forwarding(&th);
        // Let adaptive mode notice the idleness, then measure 2 s of no load.
        std::thread::sleep(Duration::from_millis(300));
        let pid = r.child.id();
        let (t0, s0) = (cpu_ticks(pid), sleeps(pid));
        std::thread::sleep(Duration::from_secs(2));
        let used = (cpu_ticks(pid) - t0) as f64 / hz / 2.0;
        let wakeups = (sleeps(pid) - s0) as f64 / 2.0;
        assert!(
            used < 0.05,
            "{driver} {mode}: {:.1} % of a core at no load",
            used * 100.0
        );
        // Nor waking often: the threads share their CPUs with the
        // kernel's packet work. A worker polling every 10 ms and a
        // supervisor every 5 ms made ~300 a second.
        assert!(
            wakeups < 100.0,
            "{driver} {mode}: the router's threads woke {wakeups:.0} times a second at no load"
        );
        eprintln!("{driver} {mode}: {wakeups:.0} wake-ups a second at no load");
        // Control: the same measurement sees a polling router spin, so the
        // check above can fail.
        r.stop_checked();
    }
    let th = testbed::three_hosts_with(TopologyOptions::user_space_router(1)).unwrap();
    let r = start(&th, "poll", &config(&th, "afxdp", "poll", &th.router_in));
    wait_forwarding(&th);
    let pid = r.child.id();
    let t0 = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(1));
    let used = (cpu_ticks(pid) - t0) as f64 / hz;
    assert!(
        used > 0.3,
        "poll mode spins ({:.0} % of a core)",
        used * 100.0
    );
    r.stop_checked();
}

#[test]
fn xdp_program_detached_after_sigkill() {
    if !testbed::require_root("detach after crash") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let th = testbed::three_hosts_with(TopologyOptions::user_space_router(1)).unwrap();
    let mut r = start(
        &th,
        "kill",
        &config(&th, "afxdp", "interrupt", &th.router_in),
    );
    wait_forwarding(&th);
    let links = th.router().run(&["ip", "-d", "link", "show"]).unwrap();
    assert!(links.contains("xdp"), "XDP attached while running: {links}");
    r.child.kill().unwrap();
    r.child.wait().unwrap();
    // The link is released with the process's last file descriptor.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let links = th.router().run(&["ip", "-d", "link", "show"]).unwrap();
        if !links.contains("prog/xdp") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "XDP program still attached after SIGKILL: {links}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // And the interface works for the kernel again: a second softrouter
    // starts on it.
    let r2 = start(
        &th,
        "again",
        &config(&th, "afxdp", "interrupt", &th.router_in),
    );
    wait_forwarding(&th);
    r2.stop_checked();
}

#[test]
fn deleted_interface_stops_the_router_with_a_clear_error() {
    if !testbed::require_root("deleted interface") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for driver in ["afpacket", "afxdp"] {
        let th = testbed::three_hosts_with(TopologyOptions::user_space_router(1)).unwrap();
        let stats =
            std::env::temp_dir().join(format!("sr-life-{}-del-{driver}.json", std::process::id()));
        let _ = std::fs::remove_file(&stats);
        let r = start_with(
            &th,
            &format!("del-{driver}"),
            &config(&th, driver, "interrupt", &th.router_in),
            &["--stats-json", stats.to_str().unwrap()],
        );
        wait_forwarding(&th);
        th.router()
            .run(&["ip", "link", "del", &th.router_out])
            .unwrap();
        let t0 = Instant::now();
        let (status, err) = r.wait_with_output_ref();
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "{driver}: noticed after {:?}",
            t0.elapsed()
        );
        assert_eq!(status.code(), Some(1), "{driver}: {err}");
        assert!(
            err.contains("\"out\"")
                && err.contains(&format!("{:?}", th.router_out))
                && err.contains("disappeared"),
            "{driver}: the error names port and interface: {err}"
        );
        assert!(stats.is_file(), "{driver}: statistics written: {err}");
        let text = std::fs::read_to_string(&stats).unwrap();
        dataplane::assert_accounting(&serde_json::from_str::<serde_json::Value>(&text).unwrap());
        let _ = std::fs::remove_file(&stats);
    }
}

#[test]
fn second_afpacket_router_on_an_interface_refuses_to_start() {
    if !testbed::require_root("two afpacket routers") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let th = testbed::three_hosts_with(TopologyOptions::user_space_router(1)).unwrap();
    let cfg = config(&th, "afpacket", "interrupt", &th.router_in);
    let first = start(&th, "first", &cfg);
    wait_forwarding(&th);
    let second = start(&th, "second", &cfg);
    let (status, err) = second.wait_with_output_ref();
    assert!(!status.success(), "the second router must not start: {err}");
    assert!(
        err.contains("already used by another softrouter")
            && err.contains(&format!("{:?}", th.router_in))
            && err.contains(&first.child.id().to_string()),
        "names the interface and the first router: {err}"
    );
    // The first one is undisturbed.
    wait_forwarding(&th);
    drop(first);
    // Its lock went with it: a new router starts.
    let third = start(&th, "third", &cfg);
    wait_forwarding(&th);
    third.stop_checked();
}
