//! The value types of the settings that are not DUT options: presets,
//! tests, IP versions, traffic patterns and the tester backend.
//!
//! Every one is a closed set written as a string in the experiment file
//! and on the command line; [`named_enum!`] gives each the same
//! `FromStr`/`Display`/serde behaviour, so a value reads back as it was
//! written and a wrong one is named with the choices in the error.

use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize};

/// A fieldless enum whose values are fixed strings: `FromStr` (error lists
/// the choices), `Display`, `name()`, `ALL`, and serde through the string.
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $var:ident = $s:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(try_from = "String", into = "String")]
        $vis enum $name {
            $( $(#[$vmeta])* $var ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];

            /// The value as written in settings and flags.
            pub fn name(self) -> &'static str {
                match self {
                    $( $name::$var => $s ),+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                $name::ALL
                    .iter()
                    .copied()
                    .find(|v| v.name() == s.trim())
                    .ok_or_else(|| {
                        let names: Vec<&str> = $name::ALL.iter().map(|v| v.name()).collect();
                        format!("{s:?}: expected one of {}", names.join(", "))
                    })
            }
        }

        impl TryFrom<String> for $name {
            type Error = String;
            fn try_from(s: String) -> Result<Self, String> {
                s.parse()
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.name().to_string()
            }
        }
    };
}
pub(crate) use named_enum;

named_enum! {
    /// Duration and repetition defaults.
    #[derive(Default)]
    pub enum Preset {
        /// Short trials for development.
        #[default]
        Quick = "quick",
        /// RFC 2544 durations and repetitions.
        Rfc = "rfc",
    }
}

named_enum! {
    /// The RFC 2544 tests.
    pub enum TestKind {
        /// R8 (NDR and PDR).
        Throughput = "throughput",
        /// R9.
        Latency = "latency",
        /// R10 frame loss rate.
        Loss = "loss",
        /// R11 back-to-back.
        BackToBack = "back-to-back",
        /// R12 system recovery.
        Recovery = "recovery",
    }
}

named_enum! {
    /// Packet I/O of the tester on its ports (`--tester`).
    #[derive(Default)]
    pub enum TesterBackend {
        /// AF_XDP receive sockets (copy mode on veth), AF_PACKET or AF_XDP
        /// generation; analysis in user space (full IPDV).
        AfXdp = "afxdp",
        /// TPACKET_V3 rings; slower, but works everywhere.
        AfPacket = "afpacket",
        /// XDP live frames out (`BPF_PROG_TEST_RUN`, paced in the
        /// program), counting in an XDP program on the tester ports
        /// (`traffic::xdp`): no skb on either side, several times what
        /// the DUTs forward on veth, hence the default. Needs NAPI on the
        /// DUT's veth ends (an XDP program, or GRO on: the launchers see
        /// to it).
        #[default]
        Xdp = "xdp",
    }
}

impl TesterBackend {
    /// Whether the receive side counts in XDP (`traffic::xdp`).
    pub fn counts_in_xdp(self) -> bool {
        matches!(self, TesterBackend::Xdp)
    }
}

/// IP version(s) to test: `4`, `6` or `"both"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IpVersion {
    /// IPv4 only.
    #[default]
    V4,
    /// IPv6 only.
    V6,
    /// Both, IPv4 first.
    Both,
}

impl IpVersion {
    /// The versions to run, as `false` = IPv4, `true` = IPv6.
    pub fn versions(self) -> Vec<bool> {
        match self {
            IpVersion::V4 => vec![false],
            IpVersion::V6 => vec![true],
            IpVersion::Both => vec![false, true],
        }
    }

    /// One version: IPv6 if `v6`.
    pub fn single(v6: bool) -> IpVersion {
        if v6 {
            IpVersion::V6
        } else {
            IpVersion::V4
        }
    }
}

impl FromStr for IpVersion {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "4" | "ipv4" => Ok(IpVersion::V4),
            "6" | "ipv6" => Ok(IpVersion::V6),
            "both" | "46" => Ok(IpVersion::Both),
            o => Err(format!("ip must be 4, 6 or \"both\", not {o:?}")),
        }
    }
}

impl std::fmt::Display for IpVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IpVersion::V4 => "4",
            IpVersion::V6 => "6",
            IpVersion::Both => "both",
        })
    }
}

/// `4` and `6` are written as numbers, `"both"` as a string.
impl Serialize for IpVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            IpVersion::V4 => s.serialize_i64(4),
            IpVersion::V6 => s.serialize_i64(6),
            IpVersion::Both => s.serialize_str("both"),
        }
    }
}

impl<'de> Deserialize<'de> for IpVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(i64),
            S(String),
        }
        let s = match Raw::deserialize(d)? {
            Raw::N(n) => n.to_string(),
            Raw::S(s) => s,
        };
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Traffic pattern (R14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Pattern {
    /// Port 0 sends to port 1.
    #[default]
    OneToOne,
    /// Ports 0 and 1 send to each other.
    Bidirectional,
    /// N ports, every port sends to every other (full mesh).
    Mesh(u32),
    /// N input ports send to one output port.
    ManyToOne(u32),
}

impl Pattern {
    /// Ports the pattern needs.
    pub fn ports(self) -> u32 {
        match self {
            Pattern::OneToOne | Pattern::Bidirectional => 2,
            Pattern::Mesh(n) => n,
            Pattern::ManyToOne(n) => n + 1,
        }
    }

    /// Ports that send (each sends the trial's rate, or a burst's length).
    pub fn senders(self) -> u32 {
        match self {
            Pattern::OneToOne => 1,
            Pattern::Bidirectional => 2,
            Pattern::Mesh(n) | Pattern::ManyToOne(n) => n,
        }
    }
}

impl FromStr for Pattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let num = |v: &str, min: u32| -> Result<u32, String> {
            let n: u32 = v.parse().map_err(|_| format!("bad port count in {s:?}"))?;
            if n < min || n > 256 {
                return Err(format!("port count in {s:?} must be {min}..=256"));
            }
            Ok(n)
        };
        match s {
            "one-to-one" => Ok(Pattern::OneToOne),
            "bidirectional" => Ok(Pattern::Bidirectional),
            _ => {
                if let Some(n) = s.strip_prefix("mesh:") {
                    Ok(Pattern::Mesh(num(n, 2)?))
                } else if let Some(n) = s.strip_prefix("many-to-one:") {
                    Ok(Pattern::ManyToOne(num(n, 1)?))
                } else {
                    Err(format!(
                        "pattern {s:?}: expected one-to-one, bidirectional, mesh:N or many-to-one:N"
                    ))
                }
            }
        }
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pattern::OneToOne => f.write_str("one-to-one"),
            Pattern::Bidirectional => f.write_str("bidirectional"),
            Pattern::Mesh(n) => write!(f, "mesh:{n}"),
            Pattern::ManyToOne(n) => write!(f, "many-to-one:{n}"),
        }
    }
}

impl TryFrom<String> for Pattern {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<Pattern> for String {
    fn from(p: Pattern) -> String {
        p.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_parse() {
        assert_eq!("many-to-one:3".parse::<Pattern>().unwrap().ports(), 4);
        assert_eq!("bidirectional".parse::<Pattern>().unwrap().ports(), 2);
        assert!("mesh:1".parse::<Pattern>().is_err());
        assert!("mesh:x".parse::<Pattern>().is_err());
        assert_eq!(String::from(Pattern::ManyToOne(3)), "many-to-one:3");
    }

    #[test]
    fn named_values_read_back_as_written() {
        for b in TesterBackend::ALL {
            assert_eq!(b.name().parse::<TesterBackend>(), Ok(*b));
        }
        for t in TestKind::ALL {
            assert_eq!(t.to_string().parse::<TestKind>(), Ok(*t));
        }
        let e = "afxpd".parse::<TesterBackend>().unwrap_err();
        assert!(e.contains("afxdp, afpacket, xdp"), "{e}");
        for ip in [IpVersion::V4, IpVersion::V6, IpVersion::Both] {
            assert_eq!(ip.to_string().parse::<IpVersion>(), Ok(ip));
        }
    }
}
