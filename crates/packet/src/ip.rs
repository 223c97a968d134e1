//! IP protocol numbers, shared by IPv4 (`protocol`) and IPv6 (`next_header`).

/// An IANA "Assigned Internet Protocol Number".
///
/// Unknown values are kept in `Unknown` so that converting to `u8` and back
/// is lossless (a router forwards protocols it does not understand).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// IPv6 Hop-by-Hop Options (0).
    HopByHop,
    /// ICMP (1).
    Icmp,
    /// IGMP (2).
    Igmp,
    /// TCP (6).
    Tcp,
    /// UDP (17).
    Udp,
    /// IPv6 Routing header (43).
    Ipv6Route,
    /// IPv6 Fragment header (44).
    Ipv6Frag,
    /// ICMPv6 (58).
    Icmpv6,
    /// IPv6 No Next Header (59).
    Ipv6NoNxt,
    /// IPv6 Destination Options (60).
    Ipv6Opts,
    /// Any other protocol number.
    Unknown(u8),
}

impl From<u8> for Protocol {
    #[inline]
    fn from(v: u8) -> Self {
        match v {
            0 => Protocol::HopByHop,
            1 => Protocol::Icmp,
            2 => Protocol::Igmp,
            6 => Protocol::Tcp,
            17 => Protocol::Udp,
            43 => Protocol::Ipv6Route,
            44 => Protocol::Ipv6Frag,
            58 => Protocol::Icmpv6,
            59 => Protocol::Ipv6NoNxt,
            60 => Protocol::Ipv6Opts,
            other => Protocol::Unknown(other),
        }
    }
}

impl From<Protocol> for u8 {
    #[inline]
    fn from(p: Protocol) -> u8 {
        match p {
            Protocol::HopByHop => 0,
            Protocol::Icmp => 1,
            Protocol::Igmp => 2,
            Protocol::Tcp => 6,
            Protocol::Udp => 17,
            Protocol::Ipv6Route => 43,
            Protocol::Ipv6Frag => 44,
            Protocol::Icmpv6 => 58,
            Protocol::Ipv6NoNxt => 59,
            Protocol::Ipv6Opts => 60,
            Protocol::Unknown(v) => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_all_values() {
        for v in 0..=255u8 {
            assert_eq!(u8::from(Protocol::from(v)), v);
        }
    }
}
