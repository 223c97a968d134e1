//! Whole frames a router or a test host originates: ARP requests and
//! replies, Neighbor Solicitations and Advertisements, ICMP and ICMPv6
//! errors. Each builder writes Ethernet and everything above it into a
//! caller's buffer (a pool buffer, a stack array) through the views and
//! `Repr`s of this crate, and returns the frame's length; nothing
//! allocates.
//!
//! # Panics
//! If `out` cannot hold the frame: [`ETH_ZLEN`] bytes for ARP,
//! [`NEIGHBOR_FRAME_LEN`] for NS/NA, and for an error at least its headers
//! (the quote is cut to fit the rest).

use crate::arp::{self, ARP_LEN};
use crate::ethernet::{self, Address, ETH_ARP, ETH_IPV4, ETH_IPV6, ETH_LEN, ETH_ZLEN};
use crate::icmpv4::{self, ICMP_LEN};
use crate::icmpv6::{self, ICMPV6_LEN};
use crate::ipv4::{self, IPV4_LEN};
use crate::ipv6::{self, IPV6_LEN, IPV6_MIN_MTU};
use crate::ndp;
use crate::Protocol;
use std::net::{Ipv4Addr, Ipv6Addr};

/// The most an ICMPv4 error may be, IP header included: RFC 1812 4.3.2.3
/// quotes "as much of the original datagram as possible without the ICMP
/// datagram exceeding 576 bytes".
pub const ICMPV4_ERROR_MAX: usize = 576;

/// Length of an NS or NA frame with its link-layer address option.
pub const NEIGHBOR_FRAME_LEN: usize =
    ETH_LEN + IPV6_LEN + ndp::ND_NEIGHBOR_LEN + ndp::ND_OPT_LL_ADDR_LEN;

/// Hop limit of Neighbor Discovery messages (RFC 4861 7.1: receivers drop
/// any other).
pub const ND_HOP_LIMIT: u8 = 255;

/// The Ethernet header of a frame from `src` to `dst`.
#[inline]
fn eth(out: &mut [u8], dst: [u8; 6], src: [u8; 6], ethertype: u16) {
    ethernet::Frame::new_unchecked(out).write_header(Address(dst), Address(src), ethertype);
}

/// An error message: type, code and the four bytes after the checksum
/// (an MTU, a pointer, or zero), the same for ICMP and ICMPv6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IcmpError {
    /// Type (`ICMP_*` or `ICMPV6_*`).
    pub typ: u8,
    /// Code.
    pub code: u8,
    /// Bytes 4..8 of the message.
    pub rest: [u8; 4],
}

/// An Ethernet/IPv4 ARP frame, padded to [`ETH_ZLEN`]: operation `op`
/// (`ARPOP_*`) from `sha`/`spa` about `tha`/`tpa`, sent to `eth_dst` from
/// `sha`.
pub fn arp(
    out: &mut [u8],
    eth_dst: [u8; 6],
    op: u16,
    (sha, spa): ([u8; 6], Ipv4Addr),
    (tha, tpa): ([u8; 6], Ipv4Addr),
) -> usize {
    eth(out, eth_dst, sha, ETH_ARP);
    arp::Repr {
        operation: op.into(),
        source_hardware_addr: Address(sha),
        source_protocol_addr: spa,
        target_hardware_addr: Address(tha),
        target_protocol_addr: tpa,
    }
    .emit(&mut arp::Packet::new_unchecked(&mut out[ETH_LEN..]));
    out[ETH_LEN + ARP_LEN..ETH_ZLEN].fill(0);
    ETH_ZLEN
}

/// The IPv6 header and NS/NA of a Neighbor Discovery frame (the Ethernet
/// header is the caller's).
fn neighbor(out: &mut [u8], src: Ipv6Addr, dst: Ipv6Addr, nd: ndp::Repr) -> usize {
    let ip = &mut out[ETH_LEN..NEIGHBOR_FRAME_LEN];
    ipv6::Repr {
        src_addr: src,
        dst_addr: dst,
        next_header: Protocol::Icmpv6,
        payload_len: nd.buffer_len(),
        hop_limit: ND_HOP_LIMIT,
    }
    .emit(&mut ipv6::Packet::new_unchecked(&mut *ip));
    let mut msg = &mut ip[IPV6_LEN..];
    nd.emit(&mut msg);
    icmpv6::Packet::new_unchecked(msg).fill_checksum(src, dst);
    NEIGHBOR_FRAME_LEN
}

/// A Neighbor Solicitation for `target` from `src` (MAC `mac`, announced
/// in the source link-layer address option). To the solicited-node group
/// of `target`, or, for a probe of a known neighbour (`unicast`: its MAC),
/// to `target` itself (RFC 4861 7.3.3).
pub fn neighbor_solicit(
    out: &mut [u8],
    mac: [u8; 6],
    src: Ipv6Addr,
    target: Ipv6Addr,
    unicast: Option<[u8; 6]>,
) -> usize {
    let (dst, dst_mac) = match unicast {
        Some(m) => (target, m),
        None => {
            let group = ipv6::solicited_node_multicast(target);
            (group, Address::ipv6_multicast(group).0)
        }
    };
    eth(out, dst_mac, mac, ETH_IPV6);
    let nd = ndp::Repr::NeighborSolicit {
        target_addr: target,
        lladdr: Some(Address(mac)),
    };
    neighbor(out, src, dst, nd)
}

/// A Neighbor Advertisement of `target` (MAC `mac`, in the target
/// link-layer address option) to `dst` at `eth_dst`, from `target` itself,
/// with the `ND_NA_FLAG_*` bits `flags`.
pub fn neighbor_advert(
    out: &mut [u8],
    (eth_dst, dst): ([u8; 6], Ipv6Addr),
    mac: [u8; 6],
    target: Ipv6Addr,
    flags: u8,
) -> usize {
    eth(out, eth_dst, mac, ETH_IPV6);
    let nd = ndp::Repr::NeighborAdvert {
        flags,
        target_addr: target,
        lladdr: Some(Address(mac)),
    };
    neighbor(out, target, dst, nd)
}

/// An ICMP error about the IPv4 packet `invoking` (from its IP header on),
/// from `src` (MAC `src_mac`) back to `dst` at `dst_mac`: IPv4 with TOS
/// 0xc0 (Internetwork Control, as RFC 1812 4.3.2.5 suggests for ICMP
/// errors) and TTL 64, quoting as much of `invoking` as fits in
/// [`ICMPV4_ERROR_MAX`] bytes.
pub fn icmpv4_error(
    out: &mut [u8],
    (dst_mac, src_mac): ([u8; 6], [u8; 6]),
    src: Ipv4Addr,
    dst: Ipv4Addr,
    err: IcmpError,
    invoking: &[u8],
) -> usize {
    let quote = invoking
        .len()
        .min(ICMPV4_ERROR_MAX - IPV4_LEN - ICMP_LEN)
        .min(out.len() - ETH_LEN - IPV4_LEN - ICMP_LEN);
    let ip_len = IPV4_LEN + ICMP_LEN + quote;
    eth(out, dst_mac, src_mac, ETH_IPV4);
    let ip = &mut out[ETH_LEN..ETH_LEN + ip_len];
    ipv4::Repr {
        src_addr: src,
        dst_addr: dst,
        protocol: Protocol::Icmp,
        payload_len: ICMP_LEN + quote,
        ttl: 64,
        dscp_ecn: 0xc0,
        ident: 0,
        dont_frag: false,
    }
    .emit(&mut ipv4::Packet::new_unchecked(&mut *ip));
    let mut msg = icmpv4::Packet::new_unchecked(&mut ip[IPV4_LEN..]);
    msg.set_msg_type(err.typ.into());
    msg.set_code(err.code);
    msg.set_rest(err.rest);
    msg.data_mut().copy_from_slice(&invoking[..quote]);
    msg.fill_checksum();
    ETH_LEN + ip_len
}

/// An ICMPv6 error about the IPv6 packet `invoking`, from `src` (MAC
/// `src_mac`) back to `dst` at `dst_mac`, hop limit 64, quoting as much of
/// `invoking` as fits in the IPv6 minimum MTU (RFC 4443 2.4 (c)).
pub fn icmpv6_error(
    out: &mut [u8],
    (dst_mac, src_mac): ([u8; 6], [u8; 6]),
    src: Ipv6Addr,
    dst: Ipv6Addr,
    err: IcmpError,
    invoking: &[u8],
) -> usize {
    let quote = invoking
        .len()
        .min(IPV6_MIN_MTU - IPV6_LEN - ICMPV6_LEN)
        .min(out.len() - ETH_LEN - IPV6_LEN - ICMPV6_LEN);
    let plen = ICMPV6_LEN + quote;
    eth(out, dst_mac, src_mac, ETH_IPV6);
    let ip = &mut out[ETH_LEN..ETH_LEN + IPV6_LEN + plen];
    ipv6::Repr {
        src_addr: src,
        dst_addr: dst,
        next_header: Protocol::Icmpv6,
        payload_len: plen,
        hop_limit: 64,
    }
    .emit(&mut ipv6::Packet::new_unchecked(&mut *ip));
    let mut msg = icmpv6::Packet::new_unchecked(&mut ip[IPV6_LEN..]);
    msg.set_msg_type(err.typ.into());
    msg.set_code(err.code);
    msg.set_rest(err.rest);
    msg.data_mut().copy_from_slice(&invoking[..quote]);
    msg.fill_checksum(src, dst);
    ETH_LEN + IPV6_LEN + plen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arp::{ARPOP_REPLY, ARPOP_REQUEST};
    use crate::icmpv4::{ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED};
    use crate::icmpv6::{ICMPV6_PKT_TOOBIG, NDISC_NEIGHBOUR_SOLICITATION};
    use crate::ndp::{ND_NA_FLAG_OVERRIDE, ND_NA_FLAG_ROUTER, ND_OPT_SOURCE_LL_ADDR};

    const A: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const B: [u8; 6] = [2, 0, 0, 0, 0, 2];

    #[test]
    fn arp_frames_are_padded_and_parse_back() {
        let mut out = [0xaau8; 100];
        let (spa, tpa) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 0, 2));
        let n = arp(&mut out, [0xff; 6], ARPOP_REQUEST, (A, spa), ([0; 6], tpa));
        assert_eq!(n, ETH_ZLEN);
        assert_eq!(&out[12..14], &[0x08, 0x06]);
        assert!(out[ETH_LEN + ARP_LEN..n].iter().all(|&b| b == 0));
        let p = arp::Packet::new_checked(&out[ETH_LEN..n]).unwrap();
        let r = arp::Repr::parse(&p).unwrap();
        assert_eq!(r.operation, arp::Operation::Request);
        assert_eq!((r.source_protocol_addr, r.target_protocol_addr), (spa, tpa));
        let n = arp(&mut out, B, ARPOP_REPLY, (A, spa), (B, tpa));
        assert_eq!(&out[..6], &B);
        assert_eq!(
            arp::Packet::new_checked(&out[ETH_LEN..n])
                .unwrap()
                .operation(),
            arp::Operation::Reply
        );
    }

    #[test]
    fn solicitation_goes_to_the_solicited_node_group_or_the_target() {
        let mut out = [0u8; 128];
        let src: Ipv6Addr = "2001:2::1".parse().unwrap();
        let target: Ipv6Addr = "2001:2::12:3456".parse().unwrap();
        let n = neighbor_solicit(&mut out, A, src, target, None);
        assert_eq!(n, NEIGHBOR_FRAME_LEN);
        assert_eq!(&out[..6], &[0x33, 0x33, 0xff, 0x12, 0x34, 0x56]);
        let ip = ipv6::Packet::new_checked(&out[ETH_LEN..n]).unwrap();
        assert_eq!(ip.dst_addr(), ipv6::solicited_node_multicast(target));
        assert_eq!(ip.hop_limit(), ND_HOP_LIMIT);
        let msg = icmpv6::Packet::new_checked(ip.payload()).unwrap();
        assert!(msg.verify_checksum(src, ip.dst_addr()));
        assert_eq!(msg.msg_type_raw(), NDISC_NEIGHBOUR_SOLICITATION);
        let nd = ndp::Neighbor::new_checked(ip.payload()).unwrap();
        assert_eq!(nd.link_layer_addr(ND_OPT_SOURCE_LL_ADDR), Some(Address(A)));
        neighbor_solicit(&mut out, A, src, target, Some(B));
        assert_eq!(&out[..6], &B);
        let ip = ipv6::Packet::new_checked(&out[ETH_LEN..n]).unwrap();
        assert_eq!(ip.dst_addr(), target);
    }

    #[test]
    fn advertisement_carries_flags_and_verifies() {
        let mut out = [0u8; 128];
        let target: Ipv6Addr = "2001:2::1".parse().unwrap();
        let flags = ND_NA_FLAG_ROUTER | ND_NA_FLAG_OVERRIDE;
        let n = neighbor_advert(&mut out, (B, ipv6::ALL_NODES), A, target, flags);
        let ip = ipv6::Packet::new_checked(&out[ETH_LEN..n]).unwrap();
        assert_eq!((ip.src_addr(), ip.dst_addr()), (target, ipv6::ALL_NODES));
        assert!(icmpv6::Packet::new_checked(ip.payload())
            .unwrap()
            .verify_checksum(target, ipv6::ALL_NODES));
        let r = ndp::Repr::parse(&ndp::Neighbor::new_checked(ip.payload()).unwrap()).unwrap();
        assert_eq!(
            r,
            ndp::Repr::NeighborAdvert {
                flags,
                target_addr: target,
                lladdr: Some(Address(A))
            }
        );
    }

    #[test]
    fn errors_quote_what_fits_and_verify() {
        let invoking = [0x45u8; 1500];
        let mut out = [0u8; 2048];
        let (s, d) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 0, 2));
        let err = IcmpError {
            typ: ICMP_DEST_UNREACH,
            code: ICMP_FRAG_NEEDED,
            rest: [0, 0, 0x05, 0xdc],
        };
        let n = icmpv4_error(&mut out, (B, A), s, d, err, &invoking);
        assert_eq!(n, ETH_LEN + ICMPV4_ERROR_MAX);
        let ip = ipv4::Packet::new_checked(&out[ETH_LEN..n]).unwrap();
        assert!(ip.verify_checksum());
        assert_eq!((ip.ttl(), ip.dscp_ecn(), ip.src_addr()), (64, 0xc0, s));
        let m = icmpv4::Packet::new_checked(ip.payload()).unwrap();
        assert!(m.verify_checksum());
        assert_eq!((m.code(), m.next_hop_mtu()), (ICMP_FRAG_NEEDED, 1500));
        // A short packet is quoted whole.
        let n = icmpv4_error(&mut out, (B, A), s, d, err, &invoking[..30]);
        assert_eq!(n, ETH_LEN + IPV4_LEN + ICMP_LEN + 30);

        let (s6, d6): (Ipv6Addr, Ipv6Addr) =
            ("2001:2::1".parse().unwrap(), "2001:2::2".parse().unwrap());
        let err = IcmpError {
            typ: ICMPV6_PKT_TOOBIG,
            code: 0,
            rest: 1280u32.to_be_bytes(),
        };
        let n = icmpv6_error(&mut out, (B, A), s6, d6, err, &[0x60; 1500]);
        assert_eq!(n, ETH_LEN + IPV6_MIN_MTU);
        let ip = ipv6::Packet::new_checked(&out[ETH_LEN..n]).unwrap();
        let m = icmpv6::Packet::new_checked(ip.payload()).unwrap();
        assert!(m.verify_checksum(s6, d6));
        assert_eq!(m.pkt_too_big_mtu(), 1280);
        // Cut to the buffer.
        let n = icmpv6_error(&mut out[..200], (B, A), s6, d6, err, &[0x60; 1500]);
        assert_eq!(n, 200);
    }
}
