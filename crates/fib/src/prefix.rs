//! IPv4 and IPv6 prefixes.
//!
//! Like a router's CLI, parsing accepts host bits and masks them off
//! ("10.1.2.3/8" is 10.0.0.0/8); [`Prefix4::is_canonical`] /
//! [`Prefix6::is_canonical`] on the *unmasked* input tell a caller that wants
//! to reject such input. Constructors always store the masked address, so
//! two equal prefixes compare equal.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use thiserror::Error;

/// Why a prefix string did not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid prefix {input:?}: {reason}")]
pub struct PrefixParseError {
    /// The offending text.
    pub input: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

fn perr(input: &str, reason: &'static str) -> PrefixParseError {
    PrefixParseError {
        input: input.to_string(),
        reason,
    }
}

/// Network mask of a length, host order (`len` 0..=32).
#[inline]
pub fn mask4(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len))
    }
}

/// Network mask of a length, host order (`len` 0..=128).
#[inline]
pub fn mask6(len: u8) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(len))
    }
}

/// An IPv4 prefix; the address has no bits set beyond `len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Prefix4 {
    /// Network address (host bits zero).
    pub addr: Ipv4Addr,
    /// Prefix length, 0..=32.
    pub len: u8,
}

impl Prefix4 {
    /// A prefix with host bits masked off. `None` if `len > 32`.
    pub fn new(addr: Ipv4Addr, len: u8) -> Option<Prefix4> {
        if len > 32 {
            return None;
        }
        Some(Prefix4 {
            addr: Ipv4Addr::from(u32::from(addr) & mask4(len)),
            len,
        })
    }

    /// True if `addr` has no host bits set for `len` (always true for a
    /// value built by [`Prefix4::new`] unless the fields were set directly).
    pub fn is_canonical(addr: Ipv4Addr, len: u8) -> bool {
        len <= 32 && u32::from(addr) & !mask4(len) == 0
    }

    /// Network address as a host-order integer.
    #[inline]
    pub fn bits(&self) -> u32 {
        u32::from(self.addr)
    }

    /// True if `addr` (host order) is inside the prefix.
    #[inline]
    pub fn contains(&self, addr: u32) -> bool {
        addr & mask4(self.len) == self.bits()
    }
}

/// An IPv6 prefix; the address has no bits set beyond `len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Prefix6 {
    /// Network address (host bits zero).
    pub addr: Ipv6Addr,
    /// Prefix length, 0..=128.
    pub len: u8,
}

impl Prefix6 {
    /// A prefix with host bits masked off. `None` if `len > 128`.
    pub fn new(addr: Ipv6Addr, len: u8) -> Option<Prefix6> {
        if len > 128 {
            return None;
        }
        Some(Prefix6 {
            addr: Ipv6Addr::from(u128::from(addr) & mask6(len)),
            len,
        })
    }

    /// True if `addr` has no host bits set for `len`.
    pub fn is_canonical(addr: Ipv6Addr, len: u8) -> bool {
        len <= 128 && u128::from(addr) & !mask6(len) == 0
    }

    /// Network address as a host-order integer.
    #[inline]
    pub fn bits(&self) -> u128 {
        u128::from(self.addr)
    }

    /// True if `addr` (host order) is inside the prefix.
    #[inline]
    pub fn contains(&self, addr: u128) -> bool {
        addr & mask6(self.len) == self.bits()
    }
}

/// An IPv4 or IPv6 prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Prefix {
    /// IPv4.
    V4(Prefix4),
    /// IPv6.
    V6(Prefix6),
}

impl Prefix {
    /// Prefix length.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u8 {
        match self {
            Prefix::V4(p) => p.len,
            Prefix::V6(p) => p.len,
        }
    }

    /// Network address.
    pub fn addr(&self) -> IpAddr {
        match self {
            Prefix::V4(p) => IpAddr::V4(p.addr),
            Prefix::V6(p) => IpAddr::V6(p.addr),
        }
    }
}

fn split(s: &str) -> Result<(&str, u8), PrefixParseError> {
    let (a, l) = s
        .split_once('/')
        .ok_or_else(|| perr(s, "missing '/length'"))?;
    if l.is_empty() || !l.bytes().all(|b| b.is_ascii_digit()) || l.len() > 3 {
        return Err(perr(s, "length is not a number"));
    }
    let len: u8 = l.parse().map_err(|_| perr(s, "length is not a number"))?;
    Ok((a, len))
}

impl FromStr for Prefix4 {
    type Err = PrefixParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (a, len) = split(s)?;
        let addr: Ipv4Addr = a.parse().map_err(|_| perr(s, "not an IPv4 address"))?;
        Prefix4::new(addr, len).ok_or_else(|| perr(s, "IPv4 prefix length above 32"))
    }
}

impl FromStr for Prefix6 {
    type Err = PrefixParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (a, len) = split(s)?;
        let addr: Ipv6Addr = a.parse().map_err(|_| perr(s, "not an IPv6 address"))?;
        Prefix6::new(addr, len).ok_or_else(|| perr(s, "IPv6 prefix length above 128"))
    }
}

impl FromStr for Prefix {
    type Err = PrefixParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.contains(':') {
            s.parse().map(Prefix::V6)
        } else {
            s.parse().map(Prefix::V4)
        }
    }
}

impl fmt::Display for Prefix4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl fmt::Display for Prefix6 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Prefix::V4(p) => p.fmt(f),
            Prefix::V6(p) => p.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_display_mask() {
        let p: Prefix = "198.18.0.0/15".parse().unwrap();
        assert_eq!(p.to_string(), "198.18.0.0/15");
        let p: Prefix = "2001:2::/48".parse().unwrap();
        assert_eq!(p.to_string(), "2001:2::/48");
        let p: Prefix4 = "198.19.255.1/15".parse().unwrap();
        assert_eq!(p.to_string(), "198.18.0.0/15");
        assert!(!Prefix4::is_canonical("198.19.255.1".parse().unwrap(), 15));
        assert!(Prefix4::is_canonical("198.18.0.0".parse().unwrap(), 15));
        assert!(Prefix6::is_canonical(Ipv6Addr::UNSPECIFIED, 0));
        let p: Prefix6 = "2001:2::1/128".parse().unwrap();
        assert_eq!(p.len, 128);
        let p: Prefix4 = "0.0.0.0/0".parse().unwrap();
        assert_eq!(p.bits(), 0);
    }

    #[test]
    fn parse_errors() {
        for bad in [
            "198.18.0.0",
            "198.18.0.0/33",
            "198.18.0/15",
            "198.18.0.0/-1",
            "198.18.0.0/",
            "2001:2::/129",
            "x/8",
        ] {
            let e = bad.parse::<Prefix>().unwrap_err();
            assert!(e.to_string().contains(bad), "{e}");
        }
        assert!("2001:2::/48".parse::<Prefix4>().is_err());
    }
}
