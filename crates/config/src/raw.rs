//! The configuration as written: serde structures that keep every value's
//! position so validation errors can name the line. [`crate::file`] has the
//! same tables and keys without positions, for writing files; a key added
//! here goes there too (its tests compare the two).

use serde::Deserialize;
use toml::Spanned;

pub type S<T> = Spanned<T>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    #[serde(default)]
    pub router: Option<S<RawRouter>>,
    #[serde(default)]
    pub port: Vec<S<RawPort>>,
    #[serde(default)]
    pub route: Vec<S<RawRoute>>,
    #[serde(default)]
    pub neighbor: Vec<S<RawNeighbor>>,
    #[serde(default)]
    pub queue: Vec<S<RawQueue>>,
    #[serde(default)]
    pub routes_file: Option<S<RawRoutesFile>>,
    #[serde(default)]
    pub control: Option<S<RawControl>>,
    #[serde(default)]
    pub metrics: Option<S<RawMetrics>>,
    #[serde(default)]
    pub kernel: Option<S<RawKernel>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawRouter {
    pub workers: Option<S<i64>>,
    pub cores: Option<S<Vec<i64>>>,
    pub mode: Option<S<String>>,
    pub fast_path: Option<S<String>>,
    pub budget: Option<S<i64>>,
    pub icmp_rate: Option<S<i64>>,
    pub hold_packets: Option<S<i64>>,
    pub neighbor_timeout: Option<S<i64>>,
    pub pool_frames: Option<S<i64>>,
    pub frame_size: Option<S<i64>>,
    pub forwarding: Option<S<String>>,
    pub tx_queues: Option<S<String>>,
    pub ipv4_tbl8_groups: Option<S<i64>>,
    pub ipv6_tbl8_groups: Option<S<i64>>,
    pub hugepages: Option<S<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPort {
    pub name: S<String>,
    pub driver: S<String>,
    pub rx_pcap: Option<S<String>>,
    pub tx_pcap: Option<S<String>>,
    pub iface: Option<S<String>>,
    pub mac: Option<S<String>>,
    #[serde(default)]
    pub addresses: Vec<S<String>>,
    pub mtu: Option<S<i64>>,
    pub queues: Option<S<i64>>,
    pub xdp_mode: Option<S<String>>,
    pub zero_copy: Option<S<bool>>,
    pub ring_size: Option<S<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRoute {
    pub prefix: S<String>,
    pub via: S<Vec<S<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNeighbor {
    pub address: S<String>,
    pub mac: S<String>,
    pub port: S<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawQueue {
    pub port: S<String>,
    pub queue: S<i64>,
    pub core: S<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRoutesFile {
    pub path: S<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawControl {
    pub socket: Option<S<String>>,
    pub group: Option<S<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMetrics {
    pub listen: S<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawKernel {
    pub routes: Option<S<bool>>,
    pub table: Option<S<i64>>,
    pub local: Option<S<bool>>,
}
