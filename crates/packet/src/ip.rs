//! IP protocol numbers, shared by IPv4 (`protocol`) and IPv6 (`next_header`),
//! and where TCP and UDP keep their ports.
//!
//! Upper-layer protocols are `PROTO_*`, IPv6 extension header types
//! `IPV6_NH_*`: the names the BPF programs' C header (`sr_layout.h`,
//! generated from these constants) gives them, so both tiers read the
//! same words.

/// IPv6 Hop-by-Hop Options.
pub const IPV6_NH_HOP_BY_HOP: u8 = 0;
/// ICMP.
pub const PROTO_ICMP: u8 = 1;
/// IGMP.
pub const PROTO_IGMP: u8 = 2;
/// TCP.
pub const PROTO_TCP: u8 = 6;
/// UDP.
pub const PROTO_UDP: u8 = 17;
/// IPv6 Routing header.
pub const IPV6_NH_ROUTING: u8 = 43;
/// IPv6 Fragment header.
pub const IPV6_NH_FRAGMENT: u8 = 44;
/// ICMPv6.
pub const PROTO_ICMPV6: u8 = 58;
/// IPv6 No Next Header (RFC 8200 4.7).
pub const IPV6_NH_NONE: u8 = 59;
/// IPv6 Destination Options.
pub const IPV6_NH_DEST_OPTS: u8 = 60;

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
            IPV6_NH_HOP_BY_HOP => Protocol::HopByHop,
            PROTO_ICMP => Protocol::Icmp,
            PROTO_IGMP => Protocol::Igmp,
            PROTO_TCP => Protocol::Tcp,
            PROTO_UDP => Protocol::Udp,
            IPV6_NH_ROUTING => Protocol::Ipv6Route,
            IPV6_NH_FRAGMENT => Protocol::Ipv6Frag,
            PROTO_ICMPV6 => Protocol::Icmpv6,
            IPV6_NH_NONE => Protocol::Ipv6NoNxt,
            IPV6_NH_DEST_OPTS => Protocol::Ipv6Opts,
            other => Protocol::Unknown(other),
        }
    }
}

impl From<Protocol> for u8 {
    #[inline]
    fn from(p: Protocol) -> u8 {
        match p {
            Protocol::HopByHop => IPV6_NH_HOP_BY_HOP,
            Protocol::Icmp => PROTO_ICMP,
            Protocol::Igmp => PROTO_IGMP,
            Protocol::Tcp => PROTO_TCP,
            Protocol::Udp => PROTO_UDP,
            Protocol::Ipv6Route => IPV6_NH_ROUTING,
            Protocol::Ipv6Frag => IPV6_NH_FRAGMENT,
            Protocol::Icmpv6 => PROTO_ICMPV6,
            Protocol::Ipv6NoNxt => IPV6_NH_NONE,
            Protocol::Ipv6Opts => IPV6_NH_DEST_OPTS,
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
