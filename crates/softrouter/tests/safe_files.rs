//! Files written as root (issue 12): the statistics file, the benchmark's
//! work folder and its DUT logs are never written through a name someone
//! else prepared: planted symlinks are not followed, folders created by
//! someone else are not used.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sr-safe-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn pcap_config(dir: &Path) -> String {
    format!(
        r#"
[router]
workers = 1

[[port]]
name = "p0"
driver = "pcap"
rx_pcap = "{d}/in.pcap"
mac = "02:00:00:00:00:10"
addresses = ["198.18.0.1/24"]

[[port]]
name = "p1"
driver = "pcap"
tx_pcap = "{d}/out1.pcap"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/24"]

# No control socket: tests run routers side by side.
[control]
socket = "off"
"#,
        d = dir.display()
    )
}

#[test]
fn statistics_never_follow_a_planted_symlink() {
    let dir = tmpdir("stats");
    let w = netio::pcap_file::Writer::new(std::fs::File::create(dir.join("in.pcap")).unwrap());
    w.unwrap().flush().unwrap();
    let cfg = dir.join("r.toml");
    std::fs::write(&cfg, pcap_config(&dir)).unwrap();
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let stats = dir.join("stats.json");
    // The temporary name the router used to write through.
    std::os::unix::fs::symlink(&victim, dir.join("stats.json.tmp")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_softrouter"))
        .args(["run", "--config", cfg.to_str().unwrap(), "--stats-json"])
        .arg(&stats)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let m = std::fs::symlink_metadata(&stats).unwrap();
    assert!(m.file_type().is_file());
    assert_eq!(m.permissions().mode() & 0o022, 0);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    dataplane::assert_accounting(&written);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bench_work_folders_are_private_and_new() {
    // Someone prepared folders and symlinks under the names the bench used
    // to take (`softrouter-bench-<pid>-<n>`): none of them is used.
    let tmp = std::env::temp_dir();
    let foreign: Vec<PathBuf> = (0..4)
        .map(|n| tmp.join(format!("softrouter-bench-{}-{n}", std::process::id())))
        .collect();
    for f in &foreign {
        let _ = std::fs::remove_dir_all(f);
        std::fs::create_dir_all(f).unwrap();
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let a = dut::softrouter::private_dir("softrouter-bench-").unwrap();
    let b = dut::softrouter::private_dir("softrouter-bench-").unwrap();
    assert_ne!(a, b);
    for d in [&a, &b] {
        assert!(
            !foreign.contains(d),
            "{} was prepared by someone else",
            d.display()
        );
        let m = std::fs::symlink_metadata(d).unwrap();
        assert!(m.file_type().is_dir());
        assert_eq!(m.permissions().mode() & 0o777, 0o700, "{}", d.display());
        assert_eq!(m.uid(), unsafe { libc::geteuid() });
        assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "new and empty");
    }
    for d in foreign.iter().chain([&a, &b]) {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn dut_logs_refuse_planted_symlinks_and_existing_files() {
    let dir = tmpdir("log");
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = dir.join("softrouter.log");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    assert!(dut::softrouter::create_log(&link).is_err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    // A dangling symlink is not followed either (O_EXCL).
    let dangling = dir.join("dangling.log");
    std::os::unix::fs::symlink(dir.join("nowhere"), &dangling).unwrap();
    assert!(dut::softrouter::create_log(&dangling).is_err());
    assert!(!dir.join("nowhere").exists());
    // An existing file is not reused.
    assert!(dut::softrouter::create_log(&victim).is_err());
    let fresh = dir.join("fresh.log");
    dut::softrouter::create_log(&fresh).unwrap();
    let m = std::fs::metadata(&fresh).unwrap();
    assert_eq!(m.permissions().mode() & 0o077, 0);
    let _ = std::fs::remove_dir_all(dir);
}
