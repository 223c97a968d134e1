//! The validated configuration, as the router uses it.
//!
//! Its kinds (`Mode`, `Driver`, ...) are words of the file, defined with
//! the file's model in the `schema` crate and named here too.

pub use schema::config_file::{Driver, FastPath, Forwarding, HugePages, Mode, TxQueues, XdpMode};

use crate::{Cidr, MacAddr};
use std::net::IpAddr;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The file this came from (for messages).
    pub source: PathBuf,
    pub router: Router,
    pub ports: Vec<Port>,
    pub routes: Vec<Route>,
    pub neighbors: Vec<Neighbor>,
    pub routes_file: Option<PathBuf>,
    /// The control socket; `None`: none (`[control] socket = "off"`).
    pub control: Control,
    /// Where the OpenMetrics endpoint listens, if anywhere.
    pub metrics: Option<std::net::SocketAddr>,
    /// The kernel routing table softrouter mirrors (`[kernel] routes =
    /// true`, `table`, default main = 254), if any.
    pub kernel_routes: Option<u32>,
    /// `[kernel] local = true`: traffic to the router's addresses that
    /// softrouter does not answer itself (everything but ICMP echo
    /// requests), ARP and ND go to the kernel's stack on the same
    /// interface, and neighbours come from the kernel's table (design in
    /// docs/control.md). Needs the XDP tier on every live port.
    pub kernel_local: bool,
}

/// The control socket's place and who may use it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Control {
    /// `None`: no socket.
    pub socket: Option<PathBuf>,
    /// Besides root, members of this group may connect.
    pub group: Option<String>,
}

/// Where `softrouter run` listens and `softrouter ctl` connects unless
/// told otherwise.
pub const DEFAULT_CONTROL_SOCKET: &str = "/run/softrouter/softrouter.sock";

impl Config {
    pub fn port_index(&self, name: &str) -> Option<usize> {
        self.ports.iter().position(|p| p.name == name)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Router {
    pub workers: usize,
    /// Core of worker i (`cores[i]`); empty: not pinned beyond the default
    /// (worker i on core i modulo the cores the process may use).
    pub cores: Vec<usize>,
    /// Explicit (port, queue) -> worker assignment, as DPDK l3fwd's
    /// `--config`; empty: queues are dealt round-robin to workers.
    pub queue_map: Vec<QueueMap>,
    pub mode: Mode,
    pub forwarding: Forwarding,
    pub tx_queues: TxQueues,
    /// The XDP tier on `afxdp` ports (`"xdp"`, the default) or not
    /// (`"off"`); other drivers have none.
    pub fast_path: FastPath,
    /// Packets per port per round.
    pub budget: u32,
    /// ICMP errors per second each worker may send (token bucket).
    pub icmp_rate: u32,
    /// Packets held per unresolved next hop (per worker).
    pub hold_packets: u32,
    /// Reachable time, seconds: a learned neighbour not confirmed for this
    /// long goes STALE (still used, probed by unicast; RFC 4861 7.3.3).
    pub neighbor_timeout_s: u32,
    /// Frames in each worker's buffer pool.
    pub pool_frames: u32,
    /// Size of one buffer (a power of two, 2048 or 4096 for AF_XDP).
    pub frame_size: u32,
    /// Extra-long-prefix groups of the IPv4 table (DPDK lpm's
    /// `number_tbl8s`; 1 KiB each); `None`: sized from the configuration
    /// (2^13 plus what the ports' neighbours need).
    pub ipv4_tbl8_groups: Option<u32>,
    /// Groups of the IPv6 table (1.25 KiB each); `None`: 2^14, or 2^18
    /// when the routes file holds more than 1,000 IPv6 routes. A router
    /// that takes a full table from the kernel (`[kernel] routes`) sets
    /// it: 2^18 holds today's 160,000 IPv6 prefixes.
    pub ipv6_tbl8_groups: Option<u32>,
    pub hugepages: HugePages,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueMap {
    pub port: usize,
    pub queue: u16,
    pub worker: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Port {
    pub name: String,
    pub driver: Driver,
    pub rx_pcap: Option<PathBuf>,
    pub tx_pcap: Option<PathBuf>,
    /// Live drivers: the kernel interface.
    pub iface: Option<String>,
    /// Required for pcap/mem; live drivers take the interface's unless set.
    pub mac: Option<MacAddr>,
    pub addresses: Vec<Cidr>,
    /// IP MTU; live drivers take the interface's unless set, others 1500.
    pub mtu: Option<u16>,
    /// RX queues to use (live: default all; mem: default = workers).
    pub queues: Option<u16>,
    pub xdp_mode: XdpMode,
    /// `None`: zero-copy if the driver can.
    pub zero_copy: Option<bool>,
    pub ring_size: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub prefix: Cidr,
    /// Next hops with the port each is reached through (ECMP if several).
    pub via: Vec<(IpAddr, usize)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Neighbor {
    pub address: IpAddr,
    pub mac: MacAddr,
    pub port: usize,
}
