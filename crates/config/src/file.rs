//! The configuration file as written: its tables and keys as plain serde
//! types, for programs that write or adapt a configuration (the bench's
//! softrouter launcher) instead of routing with it.
//!
//! Why a model of its own next to [`Config`](crate::Config): `Config` is
//! what a file *means* (ports referred to by index, next hops paired with
//! their port, defaults filled in, paths resolved against the file's
//! folder), so it cannot be written back as a file. [`ConfigFile`] has the
//! file's shape: `toml::to_string` of one is a configuration the router
//! reads, and `toml::from_str` reads one back. It checks the TOML types
//! and what a typed field implies (an address is an address, a mode one of
//! the modes); everything else is left to [`crate::parse`], the one
//! validator, which a program writing a configuration should run on what
//! it wrote, as the router will.
//!
//! The validator reads the positioned form in `raw.rs` (it needs every
//! value's line for its messages); this model has the same tables and
//! keys, which the tests below check key by key.

use crate::{Cidr, Driver, FastPath, Forwarding, HugePages, Mode, TxQueues, XdpMode};
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
/// [`Router`](crate::Router) for the meaning of each).
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
    /// Seconds ([`Router::neighbor_timeout_s`](crate::Router)).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::*;
    use serde::de::{self, Visitor};
    use std::path::Path;

    /// Records the keys a derived `Deserialize` struct asks for, which
    /// serde passes to `deserialize_struct`, so the two models' keys can be
    /// compared without listing them by hand.
    struct Keys<'a>(&'a mut &'static [&'static str]);

    impl<'de> serde::Deserializer<'de> for Keys<'_> {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("keys recorded"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }

    fn keys<T: for<'de> Deserialize<'de>>() -> Vec<&'static str> {
        let mut k: &'static [&'static str] = &[];
        let _ = T::deserialize(Keys(&mut k));
        let mut k = k.to_vec();
        k.sort_unstable();
        assert!(!k.is_empty(), "{} has no keys", std::any::type_name::<T>());
        k
    }

    #[test]
    fn the_file_model_has_the_validators_keys() {
        assert_eq!(keys::<RawConfig>(), keys::<ConfigFile>());
        assert_eq!(keys::<RawRouter>(), keys::<RouterTable>());
        assert_eq!(keys::<RawPort>(), keys::<PortTable>());
        assert_eq!(keys::<RawRoute>(), keys::<RouteTable>());
        assert_eq!(keys::<RawNeighbor>(), keys::<NeighborTable>());
        assert_eq!(keys::<RawQueue>(), keys::<QueueTable>());
        assert_eq!(keys::<RawRoutesFile>(), keys::<RoutesFileTable>());
        assert_eq!(keys::<RawControl>(), keys::<ControlTable>());
        assert_eq!(keys::<RawMetrics>(), keys::<MetricsTable>());
        assert_eq!(keys::<RawKernel>(), keys::<KernelTable>());
    }

    /// Every key, over two files: `cores` and `[[queue]]` exclude each
    /// other, as do the pcap and the live drivers' keys.
    const CORES: &str = r#"
[router]
workers = 2
cores = [0, 3]
mode = "interrupt"
budget = 32
icmp_rate = 10
hold_packets = 4
neighbor_timeout = 30
pool_frames = 4096
frame_size = 4096

[[port]]
name = "p0"
driver = "pcap"
rx_pcap = "in0.pcap"
tx_pcap = "/tmp/out0.pcap"
mac = "02:00:00:00:00:10"
addresses = ["198.18.0.1/24", "2001:2:0:1::1/64"]
mtu = 1280
queues = 2
ring_size = 1024

[[port]]
name = "p1"
driver = "afxdp"
iface = "veth1"
mac = "02-00-00-00-00-11"
addresses = ["198.19.0.1/24"]
xdp_mode = "generic"
zero_copy = false

[[port]]
name = "p2"
driver = "afpacket"
iface = "veth2"
addresses = ["198.20.0.1/30"]

[[port]]
name = "p3"
driver = "mem"
mac = "02:00:00:00:00:13"

[[route]]
prefix = "10.0.0.0/8"
via = ["198.19.0.2", "198.20.0.2"]

[[route]]
prefix = "2001:db8::/32"
via = ["2001:2:0:1::2"]

[[neighbor]]
address = "198.19.0.2"
mac = "02:00:00:00:00:22"
port = "p1"
"#;

    const QUEUES: &str = r#"
[router]
mode = "poll"

[[port]]
name = "p0"
driver = "afxdp"
iface = "veth0"
addresses = ["198.18.0.1/24"]
xdp_mode = "native"

[[queue]]
port = "p0"
queue = 1
core = 2

[routes_file]
path = "Cargo.toml"
"#;

    /// Where the files "are": the crate's folder, so the relative
    /// `routes_file` names a file that exists.
    fn at() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("router.toml")
    }

    #[test]
    fn a_file_means_the_same_after_a_round_trip_through_the_model() {
        for text in [CORES, QUEUES] {
            let want = crate::parse(text, &at()).unwrap();
            let file: ConfigFile = toml::from_str(text).unwrap();
            let written = toml::to_string(&file).unwrap();
            let got = crate::parse(&written, &at())
                .unwrap_or_else(|e| panic!("{e}\nin the written file:\n{written}"));
            assert_eq!(got, want, "written:\n{written}");
            let again: ConfigFile = toml::from_str(&written).unwrap();
            assert_eq!(again, file);
        }
    }

    #[test]
    fn the_model_checks_types_and_leaves_meaning_to_the_validator() {
        let typo = "[router]\nwrokers = 2\n";
        assert!(toml::from_str::<ConfigFile>(typo).is_err(), "unknown key");
        let bad = "[[route]]\nprefix = \"10.0.0.0/33\"\nvia = []\n";
        assert!(toml::from_str::<ConfigFile>(bad).is_err(), "not a prefix");
        let mode = "[router]\nmode = \"busy\"\n";
        assert!(toml::from_str::<ConfigFile>(mode).is_err(), "not a mode");

        // Well-typed but meaningless: a next hop on no port's subnet.
        let file = ConfigFile {
            port: vec![PortTable {
                iface: Some("veth0".into()),
                addresses: vec!["198.18.0.1/24".parse().unwrap()],
                ..PortTable::new("p0", Driver::AfPacket)
            }],
            route: vec![RouteTable {
                prefix: "10.0.0.0/8".parse().unwrap(),
                via: vec!["198.99.0.2".parse().unwrap()],
            }],
            ..ConfigFile::default()
        };
        let text = toml::to_string(&file).unwrap();
        let e = crate::parse(&text, &at()).unwrap_err();
        assert!(e.message.contains("on no port's subnet"), "{e}");
    }
}
