//! The configuration as written: serde structures that keep every value's
//! position so validation errors can name the line.
//!
//! `schema::config_file` has the same tables and keys without positions,
//! for writing files; a key added here goes there too (the tests below
//! compare the two key by key). Why two models and not one: this one must
//! (a) wrap every value in [`Spanned`] so the validator can name the line
//! of the value it refuses, and (b) read kinds (`mode`, `driver`,
//! `xdp_mode`, ...) and addresses as text and numbers as `i64`, so that a
//! wrong one gets the validator's message (`port "p1": mac: ... is not a
//! MAC address`, with the allowed values) rather than serde's. A writer
//! wants the opposite: typed values (`Mode`, `Cidr`, `u16`) and no
//! positions. One generic model over both wrappings would put a type
//! parameter on every table and give up (b); the key-by-key test keeps the
//! two in step instead.

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

#[cfg(test)]
mod tests {
    use super::*;
    use schema::config_file::*;
    use serde::de::{self, Visitor};
    use std::path::{Path, PathBuf};

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
