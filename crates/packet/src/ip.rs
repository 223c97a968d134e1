//! IP protocol numbers, shared by IPv4 (`protocol`) and IPv6 (`next_header`),
//! and where TCP and UDP keep their ports.
//!
//! The constants carry the names of `<linux/in.h>` / `<linux/in6.h>`, so a
//! C program (an XDP tier) reads the same words.

/// IPv6 Hop-by-Hop Options.
pub const IPPROTO_HOPOPTS: u8 = 0;
/// ICMP.
pub const IPPROTO_ICMP: u8 = 1;
/// IGMP.
pub const IPPROTO_IGMP: u8 = 2;
/// TCP.
pub const IPPROTO_TCP: u8 = 6;
/// UDP.
pub const IPPROTO_UDP: u8 = 17;
/// IPv6 Routing header.
pub const IPPROTO_ROUTING: u8 = 43;
/// IPv6 Fragment header.
pub const IPPROTO_FRAGMENT: u8 = 44;
/// ICMPv6.
pub const IPPROTO_ICMPV6: u8 = 58;
/// IPv6 No Next Header (RFC 8200 4.7).
pub const IPPROTO_NONE: u8 = 59;
/// IPv6 Destination Options.
pub const IPPROTO_DSTOPTS: u8 = 60;

/// TCP and UDP both begin with the source and destination ports (RFC 9293,
/// RFC 768): their offsets in the transport header, read by a flow hash.
pub const L4_SPORT: usize = 0;
/// See [`L4_SPORT`].
pub const L4_DPORT: usize = 2;

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
            IPPROTO_HOPOPTS => Protocol::HopByHop,
            IPPROTO_ICMP => Protocol::Icmp,
            IPPROTO_IGMP => Protocol::Igmp,
            IPPROTO_TCP => Protocol::Tcp,
            IPPROTO_UDP => Protocol::Udp,
            IPPROTO_ROUTING => Protocol::Ipv6Route,
            IPPROTO_FRAGMENT => Protocol::Ipv6Frag,
            IPPROTO_ICMPV6 => Protocol::Icmpv6,
            IPPROTO_NONE => Protocol::Ipv6NoNxt,
            IPPROTO_DSTOPTS => Protocol::Ipv6Opts,
            other => Protocol::Unknown(other),
        }
    }
}

impl From<Protocol> for u8 {
    #[inline]
    fn from(p: Protocol) -> u8 {
        match p {
            Protocol::HopByHop => IPPROTO_HOPOPTS,
            Protocol::Icmp => IPPROTO_ICMP,
            Protocol::Igmp => IPPROTO_IGMP,
            Protocol::Tcp => IPPROTO_TCP,
            Protocol::Udp => IPPROTO_UDP,
            Protocol::Ipv6Route => IPPROTO_ROUTING,
            Protocol::Ipv6Frag => IPPROTO_FRAGMENT,
            Protocol::Icmpv6 => IPPROTO_ICMPV6,
            Protocol::Ipv6NoNxt => IPPROTO_NONE,
            Protocol::Ipv6Opts => IPPROTO_DSTOPTS,
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
