//! Forwarding a packet that passed the input checks, with the result of
//! its FIB lookup: to the router itself (local delivery), dropped
//! (blackhole, L2 broadcast, TTL, MTU, directed broadcast), or on to a
//! next hop: ECMP member choice, a host entry for a connected
//! destination, TTL / hop limit decrement, then neighbour resolution
//! (`hold.rs`) and output (`output.rs`: MAC rewrite, fragmentation,
//! staging).

use crate::cx::Cx;
use crate::drop::DropReason;
use crate::hold::{self, Holds};
use crate::icmp;
use crate::local;
use fib::{HopClass, NextHopId, NextHopReader, Target};
use netio::Buf;
use packet::ethernet::ETH_LEN;
use packet::field::get_u16;
use packet::ip::{L4_DPORT, L4_SPORT, PROTO_TCP, PROTO_UDP};
use packet::ipv4;
use packet::ipv6::{self, IPV6_LEN};
use std::net::IpAddr;

/// The next hop of target `t`: itself, or for an ECMP group the member
/// `hash` picks (computed only then).
#[inline]
fn next_hop(nh: &NextHopReader, t: Target, hash: impl FnOnce() -> u32) -> NextHopId {
    if t.is_group() {
        nh.resolve(t, hash())
    } else {
        NextHopId(t.index())
    }
}

/// Forwards the IPv4 packet `buf` whose lookup gave `t` (`multi`: it came
/// as a link-layer broadcast/multicast).
pub(crate) fn v4(
    cx: &mut Cx,
    nh: &NextHopReader,
    holds: &mut Holds,
    buf: Buf,
    multi: bool,
    t: Option<Target>,
) {
    if let Some(e) = cx.egress.filter(|e| t == Some(e.route)) {
        // The burst's common case: the route of the packet before, a
        // gateway whose neighbour is resolved (see `Egress`). What is left
        // to check depends on the packet alone; when one of those checks
        // trips, the full path below decides (and counts) what to do.
        let f = cx.out.pool.data_mut(buf);
        let fits = buf.len as usize <= ETH_LEN + usize::from(e.mtu);
        if let (false, true, Some((eth, ip))) = (multi, fits, f.split_at_mut_checked(ETH_LEN)) {
            let mut ip = ipv4::Packet::new_unchecked(ip);
            if ip.ttl() > 1 {
                ip.decrement_ttl_incremental();
                // output::stage, on the frame already in hand.
                eth[..12].copy_from_slice(&e.macs);
                return cx.out.forward(e.port, buf);
            }
        }
    }
    let Some(t) = t else {
        icmp::v4(cx, buf, icmp::V4_NO_ROUTE);
        return cx.out.drop(buf, DropReason::NoRoute);
    };
    let d = &cx.out.pool.data(buf)[ETH_LEN..];
    let ip = ipv4::Packet::new_unchecked(d);
    let mut id = next_hop(nh, t, || flow_hash_v4(&ip));
    let (port, class) = nh.port_class(id);
    match class {
        HopClass::Local => return local::v4(cx, buf),
        HopClass::Blackhole => return cx.out.drop(buf, DropReason::Blackhole),
        _ => {}
    }
    if multi {
        return cx.out.drop(buf, DropReason::L2BroadcastNotLocal);
    }
    if ip.ttl() <= 1 {
        icmp::v4(cx, buf, icmp::V4_TTL_EXCEEDED);
        return cx.out.drop(buf, DropReason::TtlExceeded);
    }
    let port = port as usize;
    let Some(pc) = cx.shared.ports.get(port) else {
        return cx.out.drop(buf, DropReason::BadPort);
    };
    let mtu = pc.mtu;
    if d.len() > usize::from(mtu) && ip.dont_frag() {
        icmp::v4(cx, buf, icmp::v4_frag_needed(mtu));
        return cx.out.drop(buf, DropReason::FragNeeded);
    }
    if class == HopClass::Connected {
        let dst = ip.dst_addr();
        if pc.subnet_special_v4(dst) {
            // RFC 2644 / RFC 1812 4.2.2.11: directed broadcasts are
            // not forwarded by default, and never resolved as a host.
            return cx.out.drop(buf, DropReason::DirectedBroadcast);
        }
        match cx.shared.connected_entry(port, IpAddr::V4(dst), cx.now_ms) {
            Ok(h) => id = h,
            Err(r) => return cx.out.drop(buf, r),
        }
    }
    ipv4::Packet::new_unchecked(&mut cx.out.pool.data_mut(buf)[ETH_LEN..])
        .decrement_ttl_incremental();
    hold::send(cx, nh, holds, buf, id, port);
    if class == HopClass::Gateway && !t.is_group() {
        // Sent to the resolved neighbour of a plain gateway route: the
        // next packets of this route go straight there.
        if let Some(e) = cx.egress.as_mut().filter(|e| e.id == id) {
            e.route = t;
        }
    }
}

/// Forwards the IPv6 packet `buf` whose lookup gave `t`.
pub(crate) fn v6(
    cx: &mut Cx,
    nh: &NextHopReader,
    holds: &mut Holds,
    buf: Buf,
    multi: bool,
    t: Option<Target>,
) {
    let Some(t) = t else {
        icmp::v6(cx, buf, icmp::V6_NO_ROUTE);
        return cx.out.drop(buf, DropReason::NoRoute);
    };
    let d = &cx.out.pool.data(buf)[ETH_LEN..];
    let ip = ipv6::Packet::new_unchecked(d);
    let mut id = next_hop(nh, t, || flow_hash_v6(&ip));
    let (port, class) = nh.port_class(id);
    match class {
        HopClass::Local => return local::v6(cx, buf, false),
        HopClass::Blackhole => return cx.out.drop(buf, DropReason::Blackhole),
        _ => {}
    }
    if multi {
        return cx.out.drop(buf, DropReason::L2BroadcastNotLocal);
    }
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    if ipv6::is_unspecified(src) {
        return cx.out.drop(buf, DropReason::Ipv6BadSource);
    }
    if ipv6::is_link_local(src) || ipv6::is_link_local(dst) {
        return cx.out.drop(buf, DropReason::Ipv6LinkLocalScope);
    }
    if ip.hop_limit() <= 1 {
        icmp::v6(cx, buf, icmp::V6_HOP_LIMIT_EXCEEDED);
        return cx.out.drop(buf, DropReason::HopLimitExceeded);
    }
    let port = port as usize;
    let Some(pc) = cx.shared.ports.get(port) else {
        return cx.out.drop(buf, DropReason::BadPort);
    };
    let mtu = pc.mtu;
    if d.len() > usize::from(mtu) {
        icmp::v6(cx, buf, icmp::v6_packet_too_big(mtu));
        return cx.out.drop(buf, DropReason::PacketTooBig);
    }
    if class == HopClass::Connected {
        if pc.subnet_special_v6(dst) {
            return cx.out.drop(buf, DropReason::SubnetRouterAnycast);
        }
        match cx.shared.connected_entry(port, IpAddr::V6(dst), cx.now_ms) {
            Ok(h) => id = h,
            Err(r) => return cx.out.drop(buf, r),
        }
    }
    let mut ip = ipv6::Packet::new_unchecked(&mut cx.out.pool.data_mut(buf)[ETH_LEN..]);
    ip.set_hop_limit(ip.hop_limit() - 1);
    hold::send(cx, nh, holds, buf, id, port);
}

/// ECMP flow hash of an IPv4 packet: 5-tuple for unfragmented TCP/UDP,
/// 3-tuple (addresses + protocol) otherwise.
#[inline]
fn flow_hash_v4(ip: &ipv4::Packet<&[u8]>) -> u32 {
    let proto = ip.protocol_raw();
    let l4 = &ip.into_inner()[ip.header_len()..];
    let (sp, dp) = if (proto == PROTO_TCP || proto == PROTO_UDP)
        && !ip.is_fragment()
        && l4.len() >= L4_DPORT + 2
    {
        (get_u16(l4, L4_SPORT), get_u16(l4, L4_DPORT))
    } else {
        (0, 0)
    };
    let (src, dst) = (ip.src_addr().into(), ip.dst_addr().into());
    fib::flow_hash_v4(src, dst, proto, sp, dp)
}

/// ECMP flow hash of an IPv6 packet: 5-tuple when TCP/UDP directly
/// follows the fixed header, 3-tuple otherwise.
#[inline]
fn flow_hash_v6(ip: &ipv6::Packet<&[u8]>) -> u32 {
    let next = ip.next_header_raw();
    let l4 = &ip.into_inner()[IPV6_LEN..];
    let (sp, dp) = if (next == PROTO_TCP || next == PROTO_UDP) && l4.len() >= L4_DPORT + 2 {
        (get_u16(l4, L4_SPORT), get_u16(l4, L4_DPORT))
    } else {
        (0, 0)
    };
    let (src, dst) = (ip.src_addr().into(), ip.dst_addr().into());
    fib::flow_hash_v6(src, dst, next, sp, dp)
}
