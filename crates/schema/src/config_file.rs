//! The configuration file as written: its tables and keys as plain serde
//! types, for programs that write or adapt a configuration (the bench's
//! softrouter launcher) instead of routing with it.
//!
//! Why a model of its own next to `config::Config`: `Config` is what a
//! file *means* (ports referred to by index, next hops paired with their
//! port, defaults filled in, paths resolved against the file's folder), so
//! it cannot be written back as a file. [`ConfigFile`] has the file's
//! shape: `toml::to_string` of one is a configuration the router reads,
//! and `toml::from_str` reads one back. It checks the TOML types and what
//! a typed field implies (an address is an address, a mode one of the
//! modes); everything else is left to `config::parse`, the one validator,
//! which a program writing a configuration should run on what it wrote, as
//! the router will.
//!
//! The validator reads a positioned form of the same tables and keys
//! (`config/src/raw.rs`, which says why it stays a second model); the
//! config crate's tests check the two key by key.

use crate::addr::Cidr;
use serde::{Deserialize, Serialize};
use std::net::IpAddr;
use std::path::PathBuf;

/// A whole configuration file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router: Option<RouterTable>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub port: Vec<PortTable>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub route: Vec<RouteTable>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub neighbor: Vec<NeighborTable>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queue: Vec<QueueTable>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routes_file: Option<RoutesFileTable>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<ControlTable>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<MetricsTable>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelTable>,
}

/// `[router]`; an unset key takes the router's default (see
/// `config::Router` for the meaning of each).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterTable {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<Vec<usize>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_path: Option<FastPath>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icmp_rate: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_packets: Option<u32>,
    /// Seconds (`config::Router::neighbor_timeout_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbor_timeout: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_frames: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_size: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forwarding: Option<Forwarding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_queues: Option<TxQueues>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hugepages: Option<HugePages>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv4_tbl8_groups: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv6_tbl8_groups: Option<u32>,
}

/// `[[port]]`.
///
/// MAC addresses stay text as written: a program adapting a file may
/// find a name there to fill in (the bench's `{tester_mac0}`), and the
/// validator judges them either way.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortTable {
    pub name: String,
    pub driver: Driver,
    /// Relative paths are relative to the configuration file's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_pcap: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_pcap: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iface: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<Cidr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queues: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xdp_mode: Option<XdpMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_copy: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_size: Option<u32>,
}

impl PortTable {
    /// A port with only its required keys; set the others with struct
    /// update syntax.
    pub fn new(name: impl Into<String>, driver: Driver) -> PortTable {
        PortTable {
            name: name.into(),
            driver,
            rx_pcap: None,
            tx_pcap: None,
            iface: None,
            mac: None,
            addresses: Vec::new(),
            mtu: None,
            queues: None,
            xdp_mode: None,
            zero_copy: None,
            ring_size: None,
        }
    }
}

/// `[[route]]`: a prefix and its next hops (ECMP if several).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteTable {
    pub prefix: Cidr,
    pub via: Vec<IpAddr>,
}

/// `[[neighbor]]`: a static neighbor on the port named `port`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NeighborTable {
    pub address: IpAddr,
    /// Text, as [`PortTable::mac`].
    pub mac: String,
    pub port: String,
}

/// `[[queue]]`: RX queue `queue` of the port named `port` on `core`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueTable {
    pub port: String,
    pub queue: u16,
    pub core: usize,
}

/// `[routes_file]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutesFileTable {
    /// Relative to the configuration file's folder.
    pub path: PathBuf,
}

/// `[control]`: the control socket (`softrouter ctl`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlTable {
    /// Relative to the configuration file's folder; `"off"`: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<PathBuf>,
    /// The group (besides root) that may use the socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// `[metrics]`: the OpenMetrics endpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsTable {
    pub listen: std::net::SocketAddr,
}

/// `[kernel]`: mirror a kernel routing table; share the router's
/// addresses with the kernel's stack (`local`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelTable {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routes: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<bool>,
}

/// How a worker waits for packets (paper 000's reception mechanisms).
/// Written `poll`, `interrupt`, `adaptive` (serde: the [`ConfigFile`]
/// form).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Spin on the queues: lowest latency, one full core per worker.
    Poll,
    /// Sleep on the sockets whenever a round found nothing (NAPI analog).
    Interrupt,
    /// Poll while traffic flows; sleep after a number of idle rounds.
    Adaptive,
}

/// `[router] fast_path`: the tier that forwards the common case before
/// the workers see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FastPath {
    /// An XDP program on every `afxdp` port forwards what it can in the
    /// driver and punts the rest to the workers (the default).
    Xdp,
    /// The workers forward everything.
    Off,
}

/// `[router] hugepages`: which pages the big regions (packet pools and
/// UMEMs, FIB, next-hop and neighbour tables) are on; see the `hugemem`
/// crate for the order it tries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HugePages {
    /// Explicit 2 MiB huge pages, else transparent huge pages, else small
    /// pages (the default; a warning names a large region left on small
    /// pages).
    #[default]
    Auto,
    /// Explicit 2 MiB huge pages, or the router does not start.
    Require,
    /// 4 KiB pages only.
    Off,
}

/// `[router] forwarding`: what the workers do with a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Forwarding {
    /// An IP router (the default).
    Ip,
    /// Port to port, no lookup (ports 0<->1, 2<->3, ...): the I/O
    /// baseline of the papers (DPDK l2fwd's role); only the source MAC is
    /// rewritten to the output port's.
    CrossConnect,
}

/// `[router] tx_queues`: how workers transmit on a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TxQueues {
    /// Each worker its own TX queue on every port, touched by it alone
    /// (the default; paper 002's fix).
    PerWorker,
    /// One TX path per port that every worker takes in turn, under a
    /// lock held while it hands over a burst and kicks the queue: the
    /// standard SMP kernel's shared TX ring, paper 002's bottleneck, kept
    /// to show it.
    Shared,
}

/// Written `pcap`, `mem`, `afxdp`, `afpacket`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Driver {
    Pcap,
    Mem,
    AfXdp,
    AfPacket,
}

/// Written `auto`, `native`, `generic`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum XdpMode {
    Auto,
    Native,
    Generic,
}
