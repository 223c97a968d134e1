//! The command line as users and scripts meet it: `check-config` messages
//! and exit codes, and `softrouter run` on capture ports end to end (exits by
//! itself when the input is consumed, writes the output capture and the
//! statistics JSON with the documented fields).

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_softrouter"))
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sr-cli-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

const SENDER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0x02];
const IN_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0x10];
const OUT_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0x11];
const NEIGH_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0x22];

fn config(dir: &Path) -> String {
    format!(
        r#"
[router]
workers = 1
mode = "poll"

[[port]]
name = "p0"
driver = "pcap"
rx_pcap = "{d}/in.pcap"
tx_pcap = "{d}/out0.pcap"
mac = "02:00:00:00:00:10"
addresses = ["198.18.0.1/24", "2001:2::1/64"]

[[port]]
name = "p1"
driver = "pcap"
tx_pcap = "{d}/out1.pcap"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/24", "2001:2:0:1::1/64"]

[[route]]
prefix = "198.19.128.0/17"
via = ["198.19.0.2"]

[[neighbor]]
address = "198.19.0.2"
mac = "02:00:00:00:00:22"
port = "p1"

# No control socket: tests run routers side by side.
[control]
socket = "off"
"#,
        d = dir.display()
    )
}

fn udp_frame(dst: [u8; 4], ttl: u8, seq: u16) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2(SENDER_MAC, IN_MAC)
        .ipv4([198, 18, 0, 2], dst, ttl)
        .udp(0xC020, 7);
    let payload = seq.to_be_bytes().repeat(9);
    let mut out = Vec::new();
    b.write(&mut out, &payload).unwrap();
    out
}

fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    let mut w = netio::pcap_file::Writer::new(std::fs::File::create(path).unwrap()).unwrap();
    for f in frames {
        w.write_frame(f).unwrap();
    }
    w.flush().unwrap();
}

#[test]
fn check_config_accepts_good_and_names_line_of_bad() {
    let dir = tmpdir("check");
    // check-config reads the input capture as `run` would (issue 12).
    write_pcap(&dir.join("in.pcap"), &[udp_frame([198, 19, 200, 1], 64, 1)]);
    let good = dir.join("good.toml");
    std::fs::write(&good, config(&dir)).unwrap();
    let out = bin()
        .args(["check-config", good.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 ports"));

    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        config(&dir).replace("02:00:00:00:00:22", "02:00:00:00:00:2x"),
    )
    .unwrap();
    let out = bin()
        .args(["check-config", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:27:", bad.display())) && err.contains("mac"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn run_on_captures_forwards_and_reports() {
    let dir = tmpdir("run");
    let mut frames: Vec<Vec<u8>> = (0..50)
        .map(|i| udp_frame([198, 19, 200, 1 + i as u8], 64, i))
        .collect();
    frames.push(udp_frame([198, 19, 200, 1], 1, 99)); // TTL expires: ICMP back out p0
    frames.push(udp_frame([198, 19, 5, 1], 64, 100)); // no route: covered by no prefix
    write_pcap(&dir.join("in.pcap"), &frames);
    let cfg = dir.join("router.toml");
    std::fs::write(&cfg, config(&dir)).unwrap();
    let stats = dir.join("stats.json");
    let out = bin()
        .args([
            "run",
            "--config",
            cfg.to_str().unwrap(),
            "--stats-json",
            stats.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let sent = netio::pcap::load_capture(&dir.join("out1.pcap")).unwrap();
    assert_eq!(sent.len(), 50, "every routed frame leaves p1");
    for (i, f) in sent.iter().enumerate() {
        let p = etherparse::SlicedPacket::from_ethernet(f).unwrap();
        let eth = p.link.unwrap().to_header().unwrap();
        let eth = eth.ethernet2().expect("Ethernet II");
        assert_eq!(eth.destination, NEIGH_MAC);
        assert_eq!(eth.source, OUT_MAC);
        let Some(etherparse::NetSlice::Ipv4(ip)) = p.net else {
            panic!("not IPv4")
        };
        assert_eq!(ip.header().ttl(), 63);
        assert_eq!(ip.header().destination(), [198, 19, 200, 1 + i as u8]);
        let h = ip.header().to_header();
        assert_eq!(
            h.header_checksum,
            h.calc_header_checksum(),
            "checksum updated"
        );
    }
    let back = netio::pcap::load_capture(&dir.join("out0.pcap")).unwrap();
    assert_eq!(
        back.len(),
        2,
        "time exceeded + net unreachable back to the sender"
    );

    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    dataplane::assert_accounting(&s);
    assert!(s["elapsed_s"].as_f64().unwrap() > 0.0);
    let ports = s["ports"].as_array().unwrap();
    assert_eq!(ports[0]["name"], "p0");
    assert_eq!(ports[0]["rx_packets"], 52);
    assert_eq!(ports[1]["tx_packets"], 50);
    assert_eq!(ports[0]["tx_packets"], 2);
    assert!(ports[1]["tx_bytes"].as_u64().unwrap() >= 50 * 60);
    assert!(s["drops"].is_object());
    for stage in ["rx", "process", "tx"] {
        assert!(s["cycles_per_packet"][stage].as_f64().is_some(), "{stage}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Runs the capture config with `[router] hugepages = policy`; returns the
/// exit status, stderr and the statistics file's `memory` rows by region.
fn run_with_hugepages(
    tag: &str,
    policy: &str,
) -> (
    bool,
    String,
    std::collections::BTreeMap<String, serde_json::Value>,
) {
    let dir = tmpdir(tag);
    write_pcap(&dir.join("in.pcap"), &[udp_frame([198, 19, 200, 1], 64, 1)]);
    let cfg = dir.join("router.toml");
    let text = config(&dir).replacen(
        "mode = \"poll\"",
        &format!("mode = \"poll\"\nhugepages = \"{policy}\""),
        1,
    );
    std::fs::write(&cfg, text).unwrap();
    let stats = dir.join("stats.json");
    let out = bin()
        .args(["run", "--config", cfg.to_str().unwrap()])
        .args(["--stats-json", stats.to_str().unwrap()])
        .output()
        .unwrap();
    let mut rows = std::collections::BTreeMap::new();
    if let Ok(t) = std::fs::read_to_string(&stats) {
        let s: serde_json::Value = serde_json::from_str(&t).unwrap();
        for r in s["memory"].as_array().expect("a memory section") {
            rows.insert(r["region"].as_str().unwrap().to_string(), r.clone());
        }
    }
    let _ = std::fs::remove_dir_all(dir);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        rows,
    )
}

fn huge(r: &serde_json::Value) -> u64 {
    r["huge_explicit_bytes"].as_u64().unwrap() + r["huge_thp_bytes"].as_u64().unwrap()
}

#[test]
fn the_statistics_say_which_regions_got_huge_pages() {
    // Off: every region listed, none of it on huge pages, and the big
    // tables warned about at start.
    let (ok, err, rows) = run_with_hugepages("huge-off", "off");
    assert!(ok, "{err}");
    for region in [
        "packet_pool",
        "lpm4_tbl24",
        "lpm6_tbl24",
        "nh_desc",
        "neigh",
    ] {
        let r = rows
            .get(region)
            .unwrap_or_else(|| panic!("no {region} in {rows:?}"));
        assert!(r["bytes"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(huge(r), 0, "{r}");
    }
    assert_eq!(rows["lpm4_tbl24"]["bytes"], 64 << 20);
    assert!(
        err.contains("region lpm4_tbl24:") && err.contains("on 4 KiB pages"),
        "{err}"
    );

    // Auto: the 64 MiB tbl24 ends up (mostly) on huge pages, explicit or
    // THP, whichever this host offers.
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .is_ok_and(|s| !s.contains("[never]"));
    let (ok, err, rows) = run_with_hugepages("huge-auto", "auto");
    assert!(ok, "{err}");
    if thp {
        let t = &rows["lpm4_tbl24"];
        assert!(huge(t) >= 32 << 20, "{t}");
        assert!(!err.contains("region lpm4_tbl24:"), "{err}");
    }

    // Require without free explicit pages: no start, and the error names
    // the first region and the pages it needs.
    let free: u64 =
        std::fs::read_to_string("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
    if free == 0 {
        let (ok, err, _) = run_with_hugepages("huge-require", "require");
        assert!(!ok);
        assert!(
            err.contains("region ") && err.contains("free 2 MiB huge pages"),
            "{err}"
        );
    }
}
