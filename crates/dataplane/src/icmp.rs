//! ICMP and ICMPv6 errors about a received packet, rate-limited by the
//! worker's token bucket.
//!
//! Never about: ICMP errors, non-first fragments, multicast/broadcast
//! destinations, martian or unspecified sources (RFC 1812 4.3.2.7,
//! RFC 4443 2.4(e)). Multicast/broadcast destinations and martian sources
//! are dropped by the input checks before any error could be generated;
//! the checks here are the defensive repeat.
//!
//! An error goes back out the port the packet came in by, to the frame's
//! Ethernet source (the previous hop), from the router's address on that
//! port (on the packet source's subnet if it has one there).

use crate::cx::Cx;
use crate::drop::DropReason;
use netio::Buf;
use packet::build::{self, IcmpError};
use packet::ethernet::{self, ETH_LEN};
use packet::icmpv4::{
    self, ICMP_DEST_UNREACH, ICMP_EXC_TTL, ICMP_FRAG_NEEDED, ICMP_HOST_UNREACH, ICMP_NET_UNREACH,
    ICMP_PARAMETERPROB, ICMP_PORT_UNREACH, ICMP_TIME_EXCEEDED,
};
use packet::icmpv6::{
    self, ICMPV6_ADDR_UNREACH, ICMPV6_DEST_UNREACH, ICMPV6_EXC_HOPLIMIT, ICMPV6_NOROUTE,
    ICMPV6_PKT_TOOBIG, ICMPV6_PORT_UNREACH, ICMPV6_TIME_EXCEED,
};
use packet::ip::{PROTO_ICMP, PROTO_ICMPV6};
use packet::ipv4::{self, IPV4_LEN};
use packet::ipv6::{self, IPV6_LEN};

const fn err(typ: u8, code: u8) -> IcmpError {
    IcmpError {
        typ,
        code,
        rest: [0; 4],
    }
}

/// Destination unreachable, net unreachable (no route).
pub(crate) const V4_NO_ROUTE: IcmpError = err(ICMP_DEST_UNREACH, ICMP_NET_UNREACH);
/// Destination unreachable, host unreachable (neighbour unresolved).
pub(crate) const V4_HOST_UNREACHABLE: IcmpError = err(ICMP_DEST_UNREACH, ICMP_HOST_UNREACH);
/// Destination unreachable, port unreachable (UDP to the router).
pub(crate) const V4_PORT_UNREACHABLE: IcmpError = err(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH);
/// Time exceeded in transit.
pub(crate) const V4_TTL_EXCEEDED: IcmpError = err(ICMP_TIME_EXCEEDED, ICMP_EXC_TTL);

/// Fragmentation needed and DF set, with the next-hop MTU (RFC 1191).
pub(crate) const fn v4_frag_needed(mtu: u16) -> IcmpError {
    let m = mtu.to_be_bytes();
    IcmpError {
        typ: ICMP_DEST_UNREACH,
        code: ICMP_FRAG_NEEDED,
        rest: [0, 0, m[0], m[1]],
    }
}

/// Parameter problem pointing at the offending octet of the header.
pub(crate) const fn v4_parameter_problem(pointer: u8) -> IcmpError {
    IcmpError {
        typ: ICMP_PARAMETERPROB,
        code: 0,
        rest: [pointer, 0, 0, 0],
    }
}

/// Destination unreachable, no route.
pub(crate) const V6_NO_ROUTE: IcmpError = err(ICMPV6_DEST_UNREACH, ICMPV6_NOROUTE);
/// Destination unreachable, address unreachable (neighbour unresolved).
pub(crate) const V6_ADDR_UNREACHABLE: IcmpError = err(ICMPV6_DEST_UNREACH, ICMPV6_ADDR_UNREACH);
/// Destination unreachable, port unreachable.
pub(crate) const V6_PORT_UNREACHABLE: IcmpError = err(ICMPV6_DEST_UNREACH, ICMPV6_PORT_UNREACH);
/// Time exceeded, hop limit exceeded in transit.
pub(crate) const V6_HOP_LIMIT_EXCEEDED: IcmpError = err(ICMPV6_TIME_EXCEED, ICMPV6_EXC_HOPLIMIT);

/// Packet too big, with the MTU of the next link.
pub(crate) const fn v6_packet_too_big(mtu: u16) -> IcmpError {
    let m = (mtu as u32).to_be_bytes();
    IcmpError {
        typ: ICMPV6_PKT_TOOBIG,
        code: 0,
        rest: m,
    }
}

/// Sends the ICMP error `e` about the IPv4 packet in `orig` (still owned
/// by the caller, who ends it) back out the input port.
#[cold]
#[inline(never)]
pub(crate) fn v4(cx: &mut Cx, orig: Buf, e: IcmpError) {
    let (out, ports) = (&mut cx.out, &cx.shared.ports[..]);
    let in_port = out.in_port();
    let d = out.pool.data(orig);
    if d.len() < ETH_LEN + IPV4_LEN {
        return;
    }
    let eth = ethernet::Frame::new_unchecked(d);
    let ip = ipv4::Packet::new_unchecked(eth.payload());
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    if ip.is_later_fragment()
        || ipv4::is_martian_source(src)
        || dst.octets()[0] >= 224
        || eth.dst_addr().is_multicast()
    {
        return;
    }
    let ihl = ip.header_len();
    if ip.protocol_raw() == PROTO_ICMP
        && eth.payload().len() > ihl
        && icmpv4::is_error(eth.payload()[ihl])
    {
        return;
    }
    let pc = &ports[in_port];
    let Some(me) = pc
        .v4_for(src)
        .or_else(|| ports.iter().find_map(|p| p.v4.first().map(|a| a.0)))
    else {
        return;
    };
    if !cx.icmp.take() {
        out.count_drop(DropReason::IcmpRateLimited);
        return;
    }
    let Some(mut nb) = out.pool.alloc() else {
        out.stats.drop_on(in_port, DropReason::ReplyNoBuffer, 1);
        return;
    };
    let (r, w) = out.pool.pair_mut(orig, nb);
    let eth = ethernet::Frame::new_unchecked(r);
    let macs = (eth.src_addr().0, pc.mac);
    nb.len = build::icmpv4_error(w, macs, me, src, e, eth.payload()) as u32;
    out.send_generated(in_port, nb);
}

/// Sends the ICMPv6 error `e` about the IPv6 packet in `orig` back out
/// the input port.
#[cold]
#[inline(never)]
pub(crate) fn v6(cx: &mut Cx, orig: Buf, e: IcmpError) {
    let (out, ports) = (&mut cx.out, &cx.shared.ports[..]);
    let in_port = out.in_port();
    let d = out.pool.data(orig);
    if d.len() < ETH_LEN + IPV6_LEN {
        return;
    }
    let eth = ethernet::Frame::new_unchecked(d);
    let ip = ipv6::Packet::new_unchecked(eth.payload());
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    if ipv6::is_unspecified(src)
        || ipv6::is_multicast(src)
        || ipv6::is_multicast(dst)
        || eth.dst_addr().is_multicast()
    {
        return;
    }
    if ip.next_header_raw() == PROTO_ICMPV6
        && eth.payload().len() > IPV6_LEN
        && icmpv6::is_error(eth.payload()[IPV6_LEN])
    {
        return;
    }
    let pc = &ports[in_port];
    let Some(me) = pc
        .v6_for(src)
        .or_else(|| ports.iter().find_map(|p| p.v6.first().map(|a| a.0)))
    else {
        return;
    };
    if !cx.icmp.take() {
        out.count_drop(DropReason::IcmpRateLimited);
        return;
    }
    let Some(mut nb) = out.pool.alloc() else {
        out.stats.drop_on(in_port, DropReason::ReplyNoBuffer, 1);
        return;
    };
    let (r, w) = out.pool.pair_mut(orig, nb);
    let eth = ethernet::Frame::new_unchecked(r);
    let macs = (eth.src_addr().0, pc.mac);
    nb.len = build::icmpv6_error(w, macs, me, src, e, eth.payload()) as u32;
    out.send_generated(in_port, nb);
}
