//! A small harness: a router from a config string on in-memory pcap ports.
#![allow(dead_code)]

use dataplane::{NeighLimits, Router, SnapshotChecks, StatsSnapshot, Worker};
use netio::pcap::PcapPort;
use netio::pcap_file::{Capture, Writer};
use netio::{Pool, Port, PortInfo};
use std::path::Path;
use std::sync::Arc;

pub const CONFIG: &str = r#"
[router]
workers = 1
hold_packets = 4
icmp_rate = 1000
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

[[port]]
name = "p2"
driver = "pcap"
mac = "02:00:00:00:00:12"
addresses = ["198.18.1.1/24"]
mtu = 576

[[route]]
prefix = "198.19.128.0/17"
via = ["198.19.0.2"]

[[route]]
prefix = "198.19.64.0/18"
via = ["198.19.0.2", "198.19.0.3"]

[[route]]
prefix = "198.19.32.0/19"
via = ["198.19.0.9"]

[[route]]
prefix = "198.18.64.0/18"
via = ["198.18.1.2"]

[[route]]
prefix = "2001:2:0:8000::/49"
via = ["2001:2:0:2::2"]

[[route]]
prefix = "2001:2:0:4000::/50"
via = ["2001:2:0:2::2"]

[[neighbor]]
address = "198.19.0.2"
mac = "02:00:00:00:00:22"
port = "p1"

[[neighbor]]
address = "198.19.0.3"
mac = "02:00:00:00:00:23"
port = "p1"

[[neighbor]]
address = "198.18.1.2"
mac = "02:00:00:00:00:32"
port = "p2"

[[neighbor]]
address = "2001:2:0:2::2"
mac = "02:00:00:00:00:22"
port = "p1"

"#;

pub const MAC0: [u8; 6] = [2, 0, 0, 0, 0, 0x10];
pub const MAC1: [u8; 6] = [2, 0, 0, 0, 0, 0x11];
pub const MAC2: [u8; 6] = [2, 0, 0, 0, 0, 0x12];
pub const NB1: [u8; 6] = [2, 0, 0, 0, 0, 0x22];
pub const NB1B: [u8; 6] = [2, 0, 0, 0, 0, 0x23];
pub const NB2: [u8; 6] = [2, 0, 0, 0, 0, 0x32];
pub const HOST0: [u8; 6] = [2, 0, 0, 0, 0, 0x02];

pub struct Rig {
    pub router: Router,
    pub ports: Vec<Arc<PcapPort>>,
    pub worker: Option<Worker>,
    /// Simulated time the worker's clock was moved forward (ms).
    pub clock_ms: u64,
    infos: Vec<PortInfo>,
}

pub fn infos(cfg: &config::Config) -> Vec<PortInfo> {
    cfg.ports
        .iter()
        .map(|p| PortInfo {
            name: p.name.clone(),
            mac: p.mac.unwrap(),
            mtu: p.mtu.unwrap_or(1500),
            rx_queues: 1,
        })
        .collect()
}

impl Rig {
    /// A router from `text` whose port i receives `inputs[i]`.
    pub fn new(text: &str, inputs: Vec<Vec<Vec<u8>>>) -> Rig {
        Rig::with_limits(text, inputs, NeighLimits::default())
    }

    /// [`Rig::new`] with explicit neighbour limits.
    pub fn with_limits(text: &str, inputs: Vec<Vec<Vec<u8>>>, limits: NeighLimits) -> Rig {
        let cfg = config::parse(text, Path::new("test.toml")).unwrap();
        Rig::with_config(&cfg, inputs, limits)
    }

    /// [`Rig::with_limits`] from a configuration already read (a test
    /// may set what a pcap configuration cannot, e.g. `kernel_local`).
    pub fn with_config(
        cfg: &config::Config,
        inputs: Vec<Vec<Vec<u8>>>,
        limits: NeighLimits,
    ) -> Rig {
        let infos = infos(cfg);
        let router = Router::with_neighbor_limits(cfg, &infos, limits).unwrap();
        let mut rig = Rig {
            router,
            ports: Vec::new(),
            worker: None,
            clock_ms: 0,
            infos,
        };
        rig.feed(inputs);
        rig
    }

    /// New inputs: a fresh worker on fresh in-memory ports of the same
    /// router (its routes and neighbours are kept), its clock at the
    /// simulated time reached so far. The previous worker is shut down
    /// (its statistics must balance).
    pub fn feed(&mut self, mut inputs: Vec<Vec<Vec<u8>>>) {
        if let Some(w) = self.worker.take() {
            let stats = w.stats();
            drop(w.shutdown());
            stats.snapshot().check_identity().unwrap();
        }
        inputs.resize(self.infos.len(), Vec::new());
        self.ports = self
            .infos
            .iter()
            .zip(&inputs)
            .map(|(i, frames)| {
                let mut c = Capture::new();
                for f in frames {
                    c.push(f);
                }
                Arc::new(PcapPort::in_memory(&i.name, i.mac, i.mtu, c))
            })
            .collect();
        let mut pool = Pool::new(1024, 2048).unwrap();
        let rx = self
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| (i, p.open_rx(0, &mut pool).unwrap()))
            .collect();
        let tx = self
            .ports
            .iter()
            .map(|p| p.open_tx(0, &mut pool).unwrap())
            .collect();
        let mut worker = Worker::new(0, self.router.shared(), pool, rx, tx);
        worker.advance_clock(self.clock_ms);
        self.worker = Some(worker);
    }

    /// Moves the simulated clock forward.
    pub fn advance(&mut self, ms: u64) {
        self.clock_ms += ms;
        self.w().advance_clock(ms);
    }

    pub fn w(&mut self) -> &mut Worker {
        self.worker.as_mut().unwrap()
    }

    /// Polls until the inputs are exhausted and nothing is pending (at
    /// most 1000 rounds), then checks the accounting on every port.
    pub fn run(&mut self) {
        for _ in 0..1000 {
            self.w().poll_once(64);
            if self.w().inputs_exhausted() && self.w().pending() == 0 {
                break;
            }
        }
        self.stats();
    }

    pub fn sent(&self, port: usize) -> Vec<Vec<u8>> {
        self.ports[port]
            .take_sent()
            .iter()
            .map(|f| f.to_vec())
            .collect()
    }

    /// The worker's counters (queue counters refreshed), checked: the
    /// accounting identity holds on every port.
    pub fn stats(&mut self) -> StatsSnapshot {
        self.w().refresh_port_counters();
        let s = self.w().stats().snapshot();
        dataplane::assert_accounting(&s);
        s
    }
}

/// Compares frames byte for byte; on mismatch writes both as pcaps under
/// target/golden/ for Wireshark.
pub fn assert_frames(name: &str, actual: &[Vec<u8>], expected: &[Vec<u8>]) {
    if actual == expected {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/golden");
    let _ = std::fs::create_dir_all(&dir);
    for (suffix, frames) in [("expected", expected), ("actual", actual)] {
        let path = dir.join(format!("{name}.{suffix}.pcap"));
        if let Ok(f) = std::fs::File::create(&path) {
            let mut w = Writer::new(f).unwrap();
            for fr in frames {
                w.write_frame(fr).unwrap();
            }
            w.flush().unwrap();
        }
    }
    panic!(
        "{name}: frames differ (see target/golden/{name}.*.pcap)\nexpected {} frames: {:02x?}\nactual {} frames: {:02x?}",
        expected.len(),
        expected,
        actual.len(),
        actual
    );
}

pub fn ip4(s: &str) -> [u8; 4] {
    s.parse::<std::net::Ipv4Addr>().unwrap().octets()
}

pub fn ip6(s: &str) -> [u8; 16] {
    s.parse::<std::net::Ipv6Addr>().unwrap().octets()
}

/// An Ethernet/IPv4/UDP frame (no DF unless `df`).
#[allow(clippy::too_many_arguments)]
pub fn udp4(
    src_mac: [u8; 6],
    dst_mac: [u8; 6],
    src: &str,
    dst: &str,
    ttl: u8,
    sport: u16,
    payload: &[u8],
    df: bool,
) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2(src_mac, dst_mac).ipv4(ip4(src), ip4(dst), ttl);
    let b = b.udp(sport, 7);
    let mut v = Vec::new();
    b.write(&mut v, payload).unwrap();
    set_df(&mut v, df);
    v
}

pub fn set_df(v: &mut [u8], df: bool) {
    if df {
        v[20] |= 0x40;
    } else {
        v[20] &= !0x40;
    }
    fix_ipv4_checksum(v);
}

/// Recomputes the IPv4 header checksum of the frame `v` (a full sum,
/// where the router patches it incrementally).
pub fn fix_ipv4_checksum(v: &mut [u8]) {
    packet::ipv4::Packet::new_unchecked(&mut v[packet::ethernet::ETH_LEN..]).fill_checksum();
}

pub fn udp6(
    src_mac: [u8; 6],
    dst_mac: [u8; 6],
    src: &str,
    dst: &str,
    hop: u8,
    sport: u16,
    payload: &[u8],
) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2(src_mac, dst_mac).ipv6(ip6(src), ip6(dst), hop);
    let mut v = Vec::new();
    b.udp(sport, 7).write(&mut v, payload).unwrap();
    v
}

/// What the router should send for a forwarded IPv4 frame.
pub fn forwarded4(input: &[u8], src_mac: [u8; 6], dst_mac: [u8; 6]) -> Vec<u8> {
    let mut v = input.to_vec();
    v[0..6].copy_from_slice(&dst_mac);
    v[6..12].copy_from_slice(&src_mac);
    v[22] -= 1;
    fix_ipv4_checksum(&mut v);
    v
}

pub fn forwarded6(input: &[u8], src_mac: [u8; 6], dst_mac: [u8; 6]) -> Vec<u8> {
    let mut v = input.to_vec();
    v[0..6].copy_from_slice(&dst_mac);
    v[6..12].copy_from_slice(&src_mac);
    v[21] -= 1;
    v
}

/// An ARP frame (Ethernet II, padded to 60 bytes).
#[allow(clippy::too_many_arguments)]
pub fn arp_frame(
    eth_src: [u8; 6],
    eth_dst: [u8; 6],
    op: u8,
    sha: [u8; 6],
    spa: &str,
    tha: [u8; 6],
    tpa: &str,
) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&eth_dst);
    v.extend_from_slice(&eth_src);
    v.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, op]);
    v.extend_from_slice(&sha);
    v.extend_from_slice(&ip4(spa));
    v.extend_from_slice(&tha);
    v.extend_from_slice(&ip4(tpa));
    v.resize(60, 0);
    v
}
