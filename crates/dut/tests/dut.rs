//! The DUT launchers on real namespace testbeds: each kind starts, its plan
//! matches the interfaces, a kernel ping from the tester namespace crosses
//! the DUT, describe() carries version and configuration, a probe returns
//! CPU figures, and stop() removes everything (and restores global knobs).
//!
//! Needs root (skipped with a message otherwise). The softrouter tests need
//! the `softrouter` binary of the same build: `cargo test --workspace` (the
//! project's `scripts/test.sh`) builds it next to this test's executable;
//! `SOFTROUTER_BIN` overrides its path. Tests run one at a time: softrouter
//! pins workers, and the linux test changes the global netdev_budget.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use bench::settings::{DutSettings, Pattern, RpsMode, SoftrouterMode};
use dut::{self, bed, ping_through, Dut, DutOptions};
use schema::dut_sample::DutStats;
use testbed::link::format_mac;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// The binary cargo built for this test run: tests live in
/// `target/PROFILE/deps/`, the workspace's binaries in `target/PROFILE/`
/// (a separate release build would double CI's compile time).
fn softrouter_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("SOFTROUTER_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("the test's own path");
    exe.parent()
        .and_then(|deps| deps.parent())
        .expect("target/PROFILE/deps/TEST")
        .join("softrouter")
}

fn ns_exists(name: &str) -> bool {
    std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.split_whitespace().next() == Some(name))
        })
        .unwrap_or(false)
}

/// The plan's MACs are the ones `ip link` shows, pairs follow the pattern.
fn check_plan(d: &dyn Dut, pattern: Pattern) {
    let plan = d.plan(false, 4);
    let names = d.bed().namespaces();
    assert_eq!(plan.ports.len(), pattern.ports() as usize);
    assert_eq!(plan.pairs, dut::pairs(pattern));
    assert_eq!(plan.flows_per_pair, 4);
    for (i, p) in plan.ports.iter().enumerate() {
        assert_eq!(p.netns.as_deref(), Some(names[0].as_str()));
        let shown = bed::ip_in(Some(&names[0]), &["link", "show", "dev", &p.iface]).unwrap();
        assert!(shown.contains(&format_mac(&p.mac)), "{shown}");
        let dut_if = &d.bed().ports[i].dut_if;
        // The traffic engine measures the DUT's receive gaps on it.
        assert_eq!(p.dut_iface.as_ref(), Some(dut_if));
        let shown = bed::ip_in(Some(&names[1]), &["link", "show", "dev", dut_if]).unwrap();
        assert!(shown.contains(&format_mac(&p.peer_mac)), "{shown}");
        assert_eq!(p.v4.to_string(), format!("198.18.{i}.2"));
        assert_eq!(p.peer_v4.to_string(), format!("198.18.{i}.1"));
        assert_eq!(p.dest_v4.to_string(), format!("198.19.{i}.0"));
        assert_eq!(p.dest_v6.to_string(), format!("2001:2:0:{:x}::", 0x100 + i));
    }
    assert!(d.plan(true, 1).ipv6);
}

/// begin, pings through the DUT, end: sys stats and the DUT's counters.
fn probe_around_pings(d: &dyn Dut, from: usize, to: usize) -> DutStats {
    let mut probe = d.probe();
    probe.begin().unwrap();
    for _ in 0..3 {
        ping_through(d.bed(), from, to, false).unwrap();
    }
    let s = probe.end().unwrap();
    let sys = s.sys.expect("sys stats");
    assert!(!sys.cpus.is_empty());
    assert!(sys.interval_s > 0.0);
    let stats = s.dut_stats.expect("dut stats");
    let cpu = stats.cpu.as_ref().expect("cpu figures");
    assert!(cpu.tsc_hz > 0.0 && cpu.interval_s > 0.0, "{stats:#?}");
    assert!(
        cpu.forwarded_packets.unwrap() >= 3,
        "3 echo requests forwarded: {stats:#?}"
    );
    // The DUT's own drops, for the trial's loss split.
    assert!(stats.dropped.is_some(), "dropped missing: {stats:#?}");
    stats
}

fn stop_and_check_removed(d: Box<dyn Dut>) -> serde_json::Value {
    let names = d.bed().namespaces();
    assert_eq!(names.len(), 2);
    assert!(names.iter().all(|n| ns_exists(n)));
    let v = serde_json::to_value(d.stop().unwrap()).unwrap();
    for n in &names {
        assert!(!ns_exists(n), "namespace {n} left behind");
    }
    v
}

#[test]
fn linux_one_to_one_with_budget_and_rps() {
    if !testbed::require_root("linux_one_to_one_with_budget_and_rps") {
        return;
    }
    let _g = serial();
    let budget_file = "/proc/sys/net/core/netdev_budget";
    let before = std::fs::read_to_string(budget_file).unwrap();
    let settings = DutSettings::Linux {
        napi_budget: Some(77),
        rps: Some(RpsMode::PerPort),
        napi: Some(true),
        napi_defer_hard_irqs: None,
        gro_flush_timeout_us: None,
    };
    let opts = DutOptions {
        queues: 2,
        ..DutOptions::default()
    };
    let d = dut::start(&settings, Pattern::OneToOne, &opts).unwrap();
    assert_eq!(d.kind(), "linux");
    assert_eq!(d.plan(false, 1).queues, 2);
    assert_eq!(std::fs::read_to_string(budget_file).unwrap().trim(), "77");
    check_plan(d.as_ref(), Pattern::OneToOne);
    ping_through(d.bed(), 0, 1, false).unwrap();
    ping_through(d.bed(), 1, 0, false).unwrap();
    ping_through(d.bed(), 0, 1, true).unwrap();
    let desc = serde_json::to_value(d.describe()).unwrap();
    assert!(
        desc["version"].as_str().unwrap().starts_with("Linux "),
        "{desc}"
    );
    assert_eq!(desc["sysctls_in_dut_namespace"]["net.ipv4.ip_forward"], "1");
    assert_eq!(desc["netdev_budget"]["set"], 77);
    let rps = desc["rps_cpus"].as_object().unwrap();
    assert_eq!(rps.len(), 4, "two ports, two RX queues each: {desc}");
    let masks: Vec<&str> = rps.values().map(|v| v.as_str().unwrap()).collect();
    assert!(
        masks.iter().all(|m| !m.trim_start_matches('0').is_empty()),
        "{desc}"
    );
    let s = probe_around_pings(d.as_ref(), 0, 1);
    eprintln!("linux probe: {s:#?}");
    assert_eq!(s.cpu.unwrap().direct_source, "softirq");
    let fin = stop_and_check_removed(d);
    assert!(fin["forwarded"].as_u64().unwrap() >= 6, "{fin}");
    assert_eq!(
        std::fs::read_to_string(budget_file).unwrap(),
        before,
        "budget restored"
    );
}

#[test]
fn softrouter_mesh3() {
    if !testbed::require_root("softrouter_mesh3") {
        return;
    }
    let bin = softrouter_bin();
    assert!(
        bin.is_file(),
        "softrouter binary {} missing: run the workspace's tests (`cargo test --workspace`, \
         as scripts/test.sh does), or point SOFTROUTER_BIN at it",
        bin.display()
    );
    let _g = serial();
    let opts = DutOptions {
        softrouter_bin: Some(bin),
        ready_timeout: Duration::from_secs(20),
        queues: 2,
        ..DutOptions::default()
    };
    let settings = DutSettings::Softrouter {
        config: None,
        workers: Some(2),
        mode: Some(SoftrouterMode::Adaptive),
        driver: None,
        budget: None,
        fast_path: None,
    };
    let d = dut::start(&settings, Pattern::Mesh(3), &opts).unwrap();
    assert_eq!(d.kind(), "softrouter");
    check_plan(d.as_ref(), Pattern::Mesh(3));
    ping_through(d.bed(), 0, 2, false).unwrap();
    ping_through(d.bed(), 2, 1, false).unwrap();
    ping_through(d.bed(), 1, 2, true).unwrap();
    let desc = serde_json::to_value(d.describe()).unwrap();
    assert!(
        desc["version"].as_str().unwrap().contains("softrouter"),
        "{desc}"
    );
    let cfg = desc["config"].as_str().unwrap();
    assert_eq!(cfg.matches("[[port]]").count(), 3, "{cfg}");
    assert!(cfg.contains("driver = \"afxdp\""), "{cfg}");
    assert_eq!(cfg.matches("[[neighbor]]").count(), 6, "{cfg}");
    let s = probe_around_pings(d.as_ref(), 1, 0);
    eprintln!("softrouter probe: {s:#?}");
    assert_eq!(s.cpu.as_ref().unwrap().direct_source, "process");
    let sr = s.softrouter.as_ref().expect("softrouter's counters");
    assert!(sr.forwarded >= 3, "{s:#?}");
    let fin = stop_and_check_removed(d);
    assert!(
        fin["stats"]["ports"].as_array().unwrap().len() == 3,
        "{fin}"
    );
    dataplane::assert_accounting(&fin["stats"]);
}

#[test]
fn command_gets_env_and_forwards_with_the_kernel() {
    if !testbed::require_root("command_gets_env_and_forwards_with_the_kernel") {
        return;
    }
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let envf = dir.path().join("env.txt");
    let settings = DutSettings::Command {
        command: format!(
            "env | grep ^SR_ | sort > {}; sysctl -q -w net.ipv4.ip_forward=1; exec sleep 1000",
            envf.display()
        ),
        version_command: Some("echo kernel-forwarder 1.0".into()),
        addresses: None,
        settle_seconds: Some(0.3),
    };
    let d = dut::start(&settings, Pattern::OneToOne, &DutOptions::default()).unwrap();
    check_plan(d.as_ref(), Pattern::OneToOne);
    let env = std::fs::read_to_string(&envf).unwrap();
    let b = d.bed();
    for want in [
        format!("SR_IF_IN={}", b.ports[0].dut_if),
        format!("SR_IF_OUT={}", b.ports[1].dut_if),
        format!("SR_IFACES={} {}", b.ports[0].dut_if, b.ports[1].dut_if),
        format!(
            "SR_TESTER_MACS={} {}",
            format_mac(&b.ports[0].tester_mac),
            format_mac(&b.ports[1].tester_mac)
        ),
        "SR_DEST_V4=198.19.0.0/24 198.19.1.0/24".to_string(),
    ] {
        assert!(env.lines().any(|l| l == want), "{want:?} not in\n{env}");
    }
    ping_through(d.bed(), 0, 1, false).unwrap();
    let desc = serde_json::to_value(d.describe()).unwrap();
    assert_eq!(desc["version"], "kernel-forwarder 1.0");
    assert_eq!(desc["ip_forward"], "1");
    let s = probe_around_pings(d.as_ref(), 0, 1);
    assert_eq!(s.cpu.unwrap().direct_source, "process");
    let fin = stop_and_check_removed(d);
    assert!(fin["exit"].is_string(), "{fin}");
}

#[test]
fn command_that_exits_fails_with_its_output() {
    if !testbed::require_root("command_that_exits_fails_with_its_output") {
        return;
    }
    let settings = DutSettings::Command {
        command: "echo no such router >&2; exit 3".into(),
        version_command: None,
        addresses: Some(false),
        settle_seconds: Some(2.0),
    };
    let e = dut::start(&settings, Pattern::OneToOne, &DutOptions::default())
        .err()
        .expect("a failing command must not start");
    let msg = format!("{e:#}");
    assert!(
        msg.contains("no such router") && msg.contains("exit"),
        "{msg}"
    );
}

#[test]
fn missing_softrouter_binary_says_how_to_build_it() {
    let opts = DutOptions {
        softrouter_bin: Some(PathBuf::from("/nonexistent/softrouter")),
        ..DutOptions::default()
    };
    let e = dut::start(&DutSettings::default(), Pattern::OneToOne, &opts)
        .err()
        .expect("no binary");
    assert!(
        format!("{e:#}").contains("cargo build --release -p softrouter"),
        "{e:#}"
    );
}

/// A user's configuration file with `{ifN}` placeholders, AF_PACKET ports.
#[test]
fn softrouter_user_config_afpacket() {
    if !testbed::require_root("softrouter_user_config_afpacket") {
        return;
    }
    let bin = softrouter_bin();
    assert!(
        bin.is_file(),
        "softrouter binary {} missing: run the workspace's tests (`cargo test --workspace`), \
         or point SOFTROUTER_BIN at it",
        bin.display()
    );
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("router.toml");
    std::fs::write(
        &cfg,
        r#"
[router]
workers = 1
mode = "interrupt"

[[port]]
name = "in"
driver = "afpacket"
iface = "{if0}"
addresses = ["198.18.0.1/24"]

[[port]]
name = "out"
driver = "afpacket"
iface = "{if1}"
addresses = ["198.18.1.1/24"]

[[route]]
prefix = "198.19.1.0/24"
via = ["198.18.1.2"]

[[neighbor]]
address = "198.18.1.2"
mac = "{tester_mac1}"
port = "out"
"#,
    )
    .unwrap();
    let settings = DutSettings::Softrouter {
        config: Some(cfg.clone()),
        workers: None,
        mode: None,
        driver: None,
        budget: None,
        fast_path: None,
    };
    let opts = DutOptions {
        softrouter_bin: Some(bin),
        ..DutOptions::default()
    };
    let d = dut::start(&settings, Pattern::OneToOne, &opts).unwrap();
    let desc = serde_json::to_value(d.describe()).unwrap();
    assert_eq!(desc["config_source"], cfg.display().to_string());
    let text = desc["config"].as_str().unwrap();
    assert!(
        text.contains(&d.bed().ports[1].dut_if) && !text.contains("{if"),
        "{text}"
    );
    // The user's file: wait for ARP towards the tester is not needed
    // (static neighbor); the first ping may race the DUT's ARP for .2 of
    // port 0, so allow a retry.
    if ping_through(d.bed(), 0, 1, false).is_err() {
        ping_through(d.bed(), 0, 1, false).unwrap();
    }
    let fin = stop_and_check_removed(d);
    dataplane::assert_accounting(&fin["stats"]);
}

/// Measured example for the documentation: a 2 s kernel ping flood through
/// each DUT kind with a probe around it. `cargo test -p softrouter-dut
/// --test dut -- --ignored --nocapture flood`.
#[test]
#[ignore]
fn flood_examples() {
    if !testbed::require_root("flood_examples") {
        return;
    }
    let _g = serial();
    let kinds = [
        DutSettings::Linux {
            napi_budget: None,
            rps: None,
            napi: None,
            napi_defer_hard_irqs: None,
            gro_flush_timeout_us: None,
        },
        DutSettings::Softrouter {
            config: None,
            workers: Some(1),
            mode: Some(SoftrouterMode::Adaptive),
            driver: None,
            budget: None,
            fast_path: None,
        },
    ];
    let opts = DutOptions {
        softrouter_bin: Some(softrouter_bin()),
        ..DutOptions::default()
    };
    for s in &kinds {
        let d = dut::start(s, Pattern::OneToOne, &opts).unwrap();
        let detour = dut::Detour::new(d.bed(), 0, 1, false).unwrap();
        let tester = d.bed().tester().unwrap();
        let mut probe = d.probe();
        probe.begin().unwrap();
        let out = tester
            .exec(&[
                "ping",
                "-n",
                "-q",
                "-f",
                "-w",
                "2",
                "-I",
                &detour.src,
                &detour.host,
            ])
            .unwrap();
        let sample = probe.end().unwrap();
        drop(detour);
        println!(
            "== {}: {}\n{:#}\nsys: {}",
            s.kind(),
            String::from_utf8_lossy(&out.stdout).trim(),
            serde_json::to_value(sample.dut_stats.unwrap()).unwrap(),
            serde_json::to_string(&sample.sys).unwrap()
        );
        let fin = serde_json::to_value(d.stop().unwrap()).unwrap();
        if fin["kind"] == "softrouter" {
            dataplane::assert_accounting(&fin["stats"]);
        }
    }
}
