//! Textual address forms of the configuration: MAC addresses and CIDR
//! notation (`198.18.0.1/24` for an interface, `198.19.0.0/16` for a route).

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

pub type MacAddr = [u8; 6];

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
            .ok_or_else(|| format!("{s:?} is not in address/length form"))?;
        let addr: IpAddr = a
            .parse()
            .map_err(|_| format!("{a:?} is not an IP address"))?;
        let len: u8 = l
            .parse()
            .map_err(|_| format!("{l:?} is not a prefix length"))?;
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
    }
}
