//! Forwarding a packet that passed the input checks, with the result of
//! its FIB lookup: to the router itself (local delivery), dropped
//! (blackhole, L2 broadcast, TTL, MTU, directed broadcast), or on to a
//! next hop: ECMP member choice, a host entry for a connected
//! destination, TTL / hop limit decrement, then neighbour resolution
//! (`hold.rs`) and [`emit`] (MAC rewrite, staging, fragmentation).

use crate::drop::DropReason;
use crate::frag;
use crate::hold::{self, Holds};
use crate::icmp;
use crate::local;
use crate::router::PortCtx;
use crate::wire::*;
use crate::worker::{Cx, Out};
use fib::{NextHopId, NextHopKind, NextHopReader, Target};
use netio::Buf;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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
    let Some(t) = t else {
        cx.icmp_v4(buf, icmp::V4_NO_ROUTE);
        return cx.out.drop(buf, DropReason::NoRoute);
    };
    let d = &cx.out.pool.data(buf)[ETH_LEN..];
    let mut id = next_hop(nh, t, || flow_hash_v4(d));
    let hop = nh.get(id);
    match hop.kind {
        NextHopKind::Local => return local::v4(cx, buf),
        NextHopKind::Blackhole => return cx.out.drop(buf, DropReason::Blackhole),
        _ => {}
    }
    if multi {
        return cx.out.drop(buf, DropReason::L2BroadcastNotLocal);
    }
    let d = &cx.out.pool.data(buf)[ETH_LEN..];
    if d[8] <= 1 {
        cx.icmp_v4(buf, icmp::V4_TTL_EXCEEDED);
        return cx.out.drop(buf, DropReason::TtlExceeded);
    }
    let port = hop.port as usize;
    let Some(pc) = cx.shared.ports.get(port) else {
        return cx.out.drop(buf, DropReason::BadPort);
    };
    let mtu = pc.mtu;
    if d.len() > usize::from(mtu) && get16(d, 6) & 0x4000 != 0 {
        cx.icmp_v4(buf, icmp::v4_frag_needed(mtu));
        return cx.out.drop(buf, DropReason::FragNeeded);
    }
    if hop.kind == NextHopKind::Connected {
        let dst = Ipv4Addr::from(get32(d, 16));
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
    let ihl = (d[0] & 0xf) as usize * 4;
    ipv4_dec_ttl(&mut cx.out.pool.data_mut(buf)[ETH_LEN..ETH_LEN + ihl]);
    hold::send(cx, nh, holds, buf, id, port);
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
        cx.icmp_v6(buf, icmp::V6_NO_ROUTE);
        return cx.out.drop(buf, DropReason::NoRoute);
    };
    let d = &cx.out.pool.data(buf)[ETH_LEN..];
    let mut id = next_hop(nh, t, || flow_hash_v6(d));
    let hop = nh.get(id);
    match hop.kind {
        NextHopKind::Local => return local::v6(cx, buf, false),
        NextHopKind::Blackhole => return cx.out.drop(buf, DropReason::Blackhole),
        _ => {}
    }
    if multi {
        return cx.out.drop(buf, DropReason::L2BroadcastNotLocal);
    }
    let d = &cx.out.pool.data(buf)[ETH_LEN..];
    let src = get128(d, 8);
    let dst = get128(d, 24);
    if src == 0 {
        return cx.out.drop(buf, DropReason::Ipv6BadSource);
    }
    if src >> 118 == 0x3fa || dst >> 118 == 0x3fa {
        return cx.out.drop(buf, DropReason::Ipv6LinkLocalScope);
    }
    if d[7] <= 1 {
        cx.icmp_v6(buf, icmp::V6_HOP_LIMIT_EXCEEDED);
        return cx.out.drop(buf, DropReason::HopLimitExceeded);
    }
    let port = hop.port as usize;
    let Some(pc) = cx.shared.ports.get(port) else {
        return cx.out.drop(buf, DropReason::BadPort);
    };
    let mtu = pc.mtu;
    if d.len() > usize::from(mtu) {
        cx.icmp_v6(buf, icmp::v6_packet_too_big(mtu));
        return cx.out.drop(buf, DropReason::PacketTooBig);
    }
    if hop.kind == NextHopKind::Connected {
        let dst = Ipv6Addr::from(dst);
        if pc.subnet_special_v6(dst) {
            return cx.out.drop(buf, DropReason::SubnetRouterAnycast);
        }
        match cx.shared.connected_entry(port, IpAddr::V6(dst), cx.now_ms) {
            Ok(h) => id = h,
            Err(r) => return cx.out.drop(buf, r),
        }
    }
    cx.out.pool.data_mut(buf)[ETH_LEN + 7] -= 1;
    hold::send(cx, nh, holds, buf, id, port);
}

/// MAC rewrite and staging of a forwarded packet on `port` to `mac`
/// (fragmenting IPv4 larger than the MTU; only IPv4 without DF gets here
/// that large, checked before); counts the packet forwarded.
#[inline]
pub(crate) fn emit(out: &mut Out, ports: &[PortCtx], buf: Buf, port: usize, mac: [u8; 6]) {
    let pc = &ports[port];
    if buf.len as usize > ETH_LEN + pc.mtu as usize {
        return frag::fragment(out, pc, port, buf, mac);
    }
    let d = out.pool.data_mut(buf);
    d[0..6].copy_from_slice(&mac);
    d[6..12].copy_from_slice(&pc.mac);
    out.count_forwarded();
    out.send(port, buf);
}

/// ECMP flow hash of an IPv4 packet: 5-tuple for unfragmented TCP/UDP,
/// 3-tuple (addresses + protocol) otherwise.
#[inline]
fn flow_hash_v4(ip: &[u8]) -> u32 {
    let ihl = (ip[0] & 0xf) as usize * 4;
    let proto = ip[9];
    let frag = get16(ip, 6) & 0x3fff != 0;
    let (sp, dp) = if (proto == PROTO_TCP || proto == PROTO_UDP) && !frag && ip.len() >= ihl + 4 {
        (get16(ip, ihl), get16(ip, ihl + 2))
    } else {
        (0, 0)
    };
    fib::flow_hash_v4(get32(ip, 12), get32(ip, 16), proto, sp, dp)
}

/// ECMP flow hash of an IPv6 packet: 5-tuple when TCP/UDP directly
/// follows the fixed header, 3-tuple otherwise.
#[inline]
fn flow_hash_v6(ip: &[u8]) -> u32 {
    let next = ip[6];
    let (sp, dp) = if (next == PROTO_TCP || next == PROTO_UDP) && ip.len() >= 44 {
        (get16(ip, 40), get16(ip, 42))
    } else {
        (0, 0)
    };
    fib::flow_hash_v6(get128(ip, 8), get128(ip, 24), next, sp, dp)
}
