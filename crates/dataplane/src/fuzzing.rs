//! Entry point for fuzz targets: runs arbitrary frames through a worker of
//! a fixed 2-port router and checks that nothing panics, every buffer comes
//! back to the pool and the accounting identities hold.

use crate::{Router, SnapshotChecks, Worker};
use netio::pcap::PcapPort;
use netio::pcap_file::Capture;
use netio::{Pool, Port};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The router configuration used by [`fuzz_one`].
pub const FUZZ_CONFIG: &str = r#"
[router]
workers = 1
hold_packets = 4
icmp_rate = 1000000
pool_frames = 1024

[[port]]
name = "p0"
driver = "pcap"
mac = "02:00:00:00:00:10"
addresses = ["198.18.0.1/24", "2001:2:0:1::1/64"]

[[port]]
name = "p1"
driver = "pcap"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/24", "2001:2:0:2::1/64"]
mtu = 1280

[[route]]
prefix = "198.18.128.0/17"
via = ["198.19.0.2", "198.19.0.3"]

[[route]]
prefix = "2001:2:0:8000::/49"
via = ["2001:2:0:2::2"]

[[neighbor]]
address = "198.19.0.2"
mac = "02:00:00:00:00:22"
port = "p1"

[[neighbor]]
address = "2001:2:0:2::2"
mac = "02:00:00:00:00:22"
port = "p1"
"#;

fn router() -> &'static (Router, Vec<netio::PortInfo>) {
    static R: OnceLock<(Router, Vec<netio::PortInfo>)> = OnceLock::new();
    R.get_or_init(|| {
        let cfg = config::parse(FUZZ_CONFIG, Path::new("fuzz.toml")).expect("fuzz config");
        let infos: Vec<netio::PortInfo> = cfg
            .ports
            .iter()
            .map(|p| netio::PortInfo {
                name: p.name.clone(),
                mac: p.mac.unwrap_or_default(),
                mtu: p.mtu.unwrap_or(1500),
                rx_queues: 1,
            })
            .collect();
        let r = Router::new(&cfg, &infos).expect("fuzz router");
        (r, infos)
    })
}

/// Feeds `frames` to port 0 of a fresh worker (the routing state is
/// shared between calls, as learned neighbors would be), runs it until
/// the input is exhausted, lets the hold-queue timers expire, and checks
/// the accounting identities and that no buffer leaked.
pub fn fuzz_one(frames: &[&[u8]]) -> Result<(), String> {
    let (router, infos) = router();
    let mut cap = Capture::new();
    for f in frames {
        cap.push(f);
    }
    let ports: Vec<Arc<PcapPort>> = infos
        .iter()
        .enumerate()
        .map(|(i, info)| {
            let rx = if i == 0 { cap.clone() } else { Capture::new() };
            Arc::new(PcapPort::in_memory(&info.name, info.mac, info.mtu, rx))
        })
        .collect();
    let mut pool = Pool::new(1024, 2048).map_err(|e| e.to_string())?;
    let frames_total = pool.frames();
    let mut rx = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        rx.push((i, p.open_rx(0, &mut pool).map_err(|e| e.to_string())?));
    }
    let mut tx = Vec::new();
    for p in &ports {
        tx.push(p.open_tx(0, &mut pool).map_err(|e| e.to_string())?);
    }
    let mut w = Worker::new(0, router.shared(), pool, rx, tx);
    let stats = w.stats();
    for _ in 0..10_000 {
        w.poll_once(64);
        if w.inputs_exhausted() {
            break;
        }
    }
    for _ in 0..10 {
        if w.pending() == 0 {
            break;
        }
        w.advance_clock(1000);
        w.poll_once(64);
    }
    w.refresh_port_counters();
    let snap = stats.snapshot();
    snap.check_identity()?;
    // Frames too large for a buffer are counted (`rx_oversize`), not lost.
    if snap.received() != frames.len() as u64 {
        return Err(format!(
            "received {} of {} frames",
            snap.received(),
            frames.len()
        ));
    }
    let pending = w.pending();
    let pool = w.shutdown();
    let snap = stats.snapshot();
    snap.check_identity()?;
    if snap.held != 0 {
        return Err(format!(
            "{} held after shutdown ({pending} pending)",
            snap.held
        ));
    }
    if pool.available() != frames_total as usize {
        return Err(format!(
            "leaked {} buffers",
            frames_total as usize - pool.available()
        ));
    }
    Ok(())
}
