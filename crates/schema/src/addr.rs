//! Textual address forms of the configuration: MAC addresses and CIDR
//! notation (`198.18.0.1/24` for an interface, `198.19.0.0/16` for a route).

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

pub type MacAddr = [u8; 6];

/// Longest piece of user input an error message quotes.
pub const EXCERPT_CHARS: usize = 60;

/// `s` quoted for an error message: at most [`EXCERPT_CHARS`] characters,
/// with an ellipsis when cut, so a 10 MB value never makes a 10 MB message.
pub fn excerpt(s: &str) -> String {
    match s.char_indices().nth(EXCERPT_CHARS) {
        None => format!("{s:?}"),
        Some((end, _)) => format!("{:?}... ({} bytes)", &s[..end], s.len()),
    }
}

/// Whether a port may use `mac` as its own: unicast and not all zero.
pub fn is_unicast_mac(mac: &MacAddr) -> bool {
    mac[0] & 1 == 0 && *mac != [0; 6]
}

/// Parses `02:00:00:00:00:10` (also with `-` separators).
pub fn parse_mac(s: &str) -> Option<MacAddr> {
    let mut mac = [0u8; 6];
    let mut parts = s.split([':', '-']);
    for byte in mac.iter_mut() {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 2 {
            return None;
        }
        *byte = u8::from_str_radix(p, 16).ok()?;
    }
    parts.next().is_none().then_some(mac)
}

/// An address with a prefix length. For interfaces the host bits are the
/// router's address; for routes they must be zero ([`Cidr::is_network`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cidr {
    pub addr: IpAddr,
    pub len: u8,
}

impl Cidr {
    pub fn max_len(&self) -> u8 {
        if self.addr.is_ipv4() {
            32
        } else {
            128
        }
    }

    /// The address with the host bits cleared.
    pub fn network(&self) -> IpAddr {
        match self.addr {
            IpAddr::V4(a) => {
                let mask = u32::MAX.checked_shl(32 - self.len as u32).unwrap_or(0);
                IpAddr::V4((u32::from(a) & mask).into())
            }
            IpAddr::V6(a) => {
                let mask = u128::MAX.checked_shl(128 - self.len as u32).unwrap_or(0);
                IpAddr::V6((u128::from(a) & mask).into())
            }
        }
    }

    pub fn is_network(&self) -> bool {
        self.network() == self.addr
    }

    /// The subnet itself: the network address with this prefix length.
    pub fn subnet(&self) -> Cidr {
        Cidr {
            addr: self.network(),
            len: self.len,
        }
    }

    /// For an IPv4 subnet of /30 or shorter: whether `ip` is its network or
    /// broadcast address (never a host's). Always false for IPv6 and for
    /// /31 (RFC 3021) and /32.
    pub fn is_network_or_broadcast(&self, ip: IpAddr) -> bool {
        let (IpAddr::V4(_), IpAddr::V4(a)) = (self.addr, ip) else {
            return false;
        };
        if self.len > 30 || !self.contains(ip) {
            return false;
        }
        let host_mask = u32::MAX >> self.len;
        let host = u32::from(a) & host_mask;
        host == 0 || host == host_mask
    }

    /// For an IPv6 subnet of /126 or shorter: whether `ip` is its
    /// Subnet-Router anycast address (RFC 4291 2.6.1: the subnet's prefix
    /// with a zero interface identifier), which every router on the link
    /// answers and no host owns. Always false for IPv4 and for /127 (RFC
    /// 6164) and /128.
    pub fn is_subnet_router_anycast(&self, ip: IpAddr) -> bool {
        ip.is_ipv6() && self.addr.is_ipv6() && self.len <= 126 && self.network() == ip
    }

    /// Whether `other` lies entirely inside this prefix (or equals it).
    pub fn covers(&self, other: &Cidr) -> bool {
        other.len >= self.len && self.contains(other.addr)
    }

    /// Whether `ip` lies inside this prefix.
    pub fn contains(&self, ip: IpAddr) -> bool {
        ip.is_ipv4() == self.addr.is_ipv4()
            && Cidr {
                addr: ip,
                len: self.len,
            }
            .network()
                == self.network()
    }
}

impl FromStr for Cidr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (a, l) = s
            .split_once('/')
            .ok_or_else(|| format!("{} is not in address/length form", excerpt(s)))?;
        let addr: IpAddr = a
            .parse()
            .map_err(|_| format!("{} is not an IP address", excerpt(a)))?;
        let len: u8 = l
            .parse()
            .map_err(|_| format!("{} is not a prefix length", excerpt(l)))?;
        let c = Cidr { addr, len };
        if len > c.max_len() {
            return Err(format!(
                "prefix length {len} is longer than {}",
                c.max_len()
            ));
        }
        Ok(c)
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

/// As the configuration writes it: `"198.18.0.1/24"`.
impl serde::Serialize for Cidr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// From `"198.18.0.1/24"`, by [`Cidr::from_str`] (the validator's parser).
impl<'de> serde::Deserialize<'de> for Cidr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs() {
        assert_eq!(parse_mac("02:00:00:00:00:10"), Some([2, 0, 0, 0, 0, 0x10]));
        assert_eq!(parse_mac("02-00-00-00-00-1f"), Some([2, 0, 0, 0, 0, 0x1f]));
        assert_eq!(parse_mac("02:00:00:00:00"), None);
        assert_eq!(parse_mac("02:00:00:00:00:10:11"), None);
        assert_eq!(parse_mac("02:00:00:00:00:zz"), None);
        assert_eq!(parse_mac("002:00:00:00:00:10"), None);
    }

    #[test]
    fn cidrs() {
        let c: Cidr = "198.18.0.1/24".parse().unwrap();
        assert!(!c.is_network());
        assert_eq!(c.network().to_string(), "198.18.0.0");
        assert!(c.contains("198.18.0.200".parse().unwrap()));
        assert!(!c.contains("198.19.0.1".parse().unwrap()));
        assert!(!c.contains("2001:2::1".parse().unwrap()));
        let d: Cidr = "0.0.0.0/0".parse().unwrap();
        assert!(d.contains("198.19.1.1".parse().unwrap()));
        let v6: Cidr = "2001:2:0:1::1/64".parse().unwrap();
        assert_eq!(v6.network().to_string(), "2001:2:0:1::");
        assert!("198.18.0.1/33".parse::<Cidr>().is_err());
        assert!("198.18.0.1".parse::<Cidr>().is_err());
        assert!("x/3".parse::<Cidr>().is_err());
        let s: Cidr = "198.18.0.1/24".parse().unwrap();
        assert!(s.is_network_or_broadcast("198.18.0.0".parse().unwrap()));
        assert!(s.is_network_or_broadcast("198.18.0.255".parse().unwrap()));
        assert!(!s.is_network_or_broadcast("198.18.0.254".parse().unwrap()));
        assert!(!s.is_network_or_broadcast("198.19.0.255".parse().unwrap()));
        let p2p: Cidr = "198.18.0.0/31".parse().unwrap();
        assert!(!p2p.is_network_or_broadcast("198.18.0.0".parse().unwrap()));
        assert!(!p2p.is_network_or_broadcast("198.18.0.1".parse().unwrap()));
        let v6: Cidr = "2001:2:0:1::1/64".parse().unwrap();
        assert!(v6.is_subnet_router_anycast("2001:2:0:1::".parse().unwrap()));
        assert!(!v6.is_subnet_router_anycast("2001:2:0:1::1".parse().unwrap()));
        assert!(!v6.is_subnet_router_anycast("2001:2:0:2::".parse().unwrap()));
        assert!(!s.is_subnet_router_anycast("198.18.0.0".parse().unwrap()));
        let p2p6: Cidr = "2001:2:0:1::/127".parse().unwrap();
        assert!(!p2p6.is_subnet_router_anycast("2001:2:0:1::".parse().unwrap()));
        assert!(s.covers(&"198.18.0.128/25".parse().unwrap()));
        assert!(s.covers(&"198.18.0.0/24".parse().unwrap()));
        assert!(!s.covers(&"198.18.0.0/23".parse().unwrap()));
    }

    #[test]
    fn excerpts_are_short() {
        assert_eq!(excerpt("abc"), "\"abc\"");
        let long = "x".repeat(10_000_000);
        let e = excerpt(&long);
        assert!(e.len() < 100, "{e}");
        assert!(e.contains("...") && e.contains("10000000 bytes"), "{e}");
        // Multi-byte characters are never cut in half.
        assert!(excerpt(&"é".repeat(100)).ends_with("(200 bytes)"));
        let e = "1.2.3.4/".to_string() + &"9".repeat(1 << 20);
        assert!(e.parse::<Cidr>().unwrap_err().len() < 120);
    }

    #[test]
    fn port_macs() {
        assert!(is_unicast_mac(&[2, 0, 0, 0, 0, 1]));
        assert!(!is_unicast_mac(&[0; 6]));
        assert!(!is_unicast_mac(&[0xff; 6]));
        assert!(!is_unicast_mac(&[0x01, 0, 0x5e, 0, 0, 1]));
        assert!(!is_unicast_mac(&[0x33, 0x33, 0, 0, 0, 1]));
    }
}
