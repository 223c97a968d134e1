//! Packets for the router itself: ARP, neighbor discovery, echo requests,
//! UDP (answered with port unreachable). Replies are built in place in the
//! received buffer, so answering never needs a second buffer.

use crate::drop::DropReason;
use crate::icmp;
use crate::neighbor::{unicast_mac, Learn};
use crate::router::{AddrClass, Learned};
use crate::wire::*;
use crate::worker::Cx;
use netio::Buf;
use packet::checksum;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// ARP (RFC 826, with the policy of [`crate::neighbor`]): answers
/// requests for the port's addresses, learns only what may be learned,
/// and defends the router's addresses against frames claiming them.
pub(crate) fn arp(cx: &mut Cx, mut buf: Buf) {
    let in_port = cx.out.in_port;
    let d = cx.out.pool.data(buf);
    let a = &d[ETH_LEN..];
    if a.len() < 28 || get16(a, 0) != 1 || get16(a, 2) != ETH_IPV4 || a[4] != 6 || a[5] != 4 {
        return cx.out.drop(buf, DropReason::ArpInvalid);
    }
    let op = get16(a, 6);
    if op != 1 && op != 2 {
        return cx.out.drop(buf, DropReason::ArpInvalid);
    }
    let sha = mac_at(a, 8);
    let spa = Ipv4Addr::from(get32(a, 14));
    let tpa = Ipv4Addr::from(get32(a, 24));
    let pc = &cx.shared.ports[in_port];
    let mac = pc.mac;
    if sha == mac {
        // Our own frame, looped back by the link.
        return cx.out.drop(buf, DropReason::ArpNotForUs);
    }
    if !unicast_mac(sha) {
        // Never learned, never answered (a reply would go to a group).
        return cx.out.drop(buf, DropReason::ArpBadSender);
    }
    let for_us = pc.has_v4(tpa);
    let now = cx.now_ms;
    // An ARP probe (RFC 5227: sender 0.0.0.0) teaches nothing.
    if !spa.is_unspecified() {
        let how = Learn {
            // RFC 826: create only when we are the target of a request.
            create: for_us && op == 1,
            // A reply to us confirms; anything else is hearsay.
            confirm: for_us && op == 2,
            overrides: true,
        };
        match cx.shared.learn(in_port, IpAddr::V4(spa), sha, how, now) {
            Learned::Updated | Learned::Ignored => {}
            Learned::Own => return defend_v4(cx, buf, spa),
            Learned::Invalid => return cx.out.drop(buf, DropReason::ArpBadSender),
        }
    }
    if !for_us {
        return cx.out.drop(buf, DropReason::ArpNotForUs);
    }
    if op == 2 {
        return cx.out.consume(buf);
    }
    let room = cx.out.pool.room_mut(buf);
    let n = build_arp(room, sha, 2, mac, tpa, sha, spa);
    buf.len = n as u32;
    cx.out.reply(buf);
}

/// A frame claiming `addr`, one of the router's addresses: never
/// learned (counted `neighbor_own_address`); if `addr` belongs to this
/// port, a gratuitous ARP announcement restores the hosts' caches, at
/// most once per defence interval (RFC 5227 2.4 (c)). The received
/// buffer is reused for it.
fn defend_v4(cx: &mut Cx, mut buf: Buf, addr: Ipv4Addr) {
    let in_port = cx.out.in_port;
    let pc = &cx.shared.ports[in_port];
    let mac = pc.mac;
    if !pc.has_v4(addr) || !cx.shared.try_defend(in_port, false, cx.now_ms) {
        return cx.out.drop(buf, DropReason::NeighborOwnAddress);
    }
    // The received frame is dropped (counted on its input port, the
    // current one); its buffer carries the announcement, `generated`.
    cx.out.count_drop(DropReason::NeighborOwnAddress);
    let n = build_arp(
        cx.out.pool.room_mut(buf),
        BROADCAST,
        1,
        mac,
        addr,
        [0; 6],
        addr,
    );
    buf.len = n as u32;
    cx.out.send_generated(in_port, buf);
}

/// The IPv6 counterpart of [`defend_v4`](defend_v4): an
/// unsolicited NA (Override) for `addr` to all-nodes.
fn defend_v6(cx: &mut Cx, mut buf: Buf, addr: Ipv6Addr) {
    let in_port = cx.out.in_port;
    let pc = &cx.shared.ports[in_port];
    let mac = pc.mac;
    if !pc.has_v6(addr) || !cx.shared.try_defend(in_port, true, cx.now_ms) {
        return cx.out.drop(buf, DropReason::NeighborOwnAddress);
    }
    // The received frame is dropped (counted on its input port, the
    // current one); its buffer carries the announcement, `generated`.
    cx.out.count_drop(DropReason::NeighborOwnAddress);
    let all = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1);
    let n = build_na(
        cx.out.pool.room_mut(buf),
        ipv6_multicast_mac(all),
        mac,
        addr,
        all,
        false,
    );
    buf.len = n as u32;
    cx.out.send_generated(in_port, buf);
}

/// IPv4 to one of the router's addresses.
pub(crate) fn v4(cx: &mut Cx, buf: Buf) {
    let in_port = cx.out.in_port;
    let d = cx.out.pool.data(buf);
    let ip = &d[ETH_LEN..];
    let ihl = (ip[0] & 0xf) as usize * 4;
    if get16(ip, 6) & 0x3fff != 0 {
        // No reassembly for the router's own traffic.
        return cx.out.drop(buf, DropReason::LocalUnsupported);
    }
    match ip[9] {
        PROTO_ICMP => {
            let icmp = &ip[ihl..];
            if icmp.len() < 8 || checksum::fold(checksum::sum(icmp)) != 0xffff {
                return cx.out.drop(buf, DropReason::IcmpInvalid);
            }
            if icmp[0] != 8 || icmp[1] != 0 {
                return cx.out.drop(buf, DropReason::LocalUnsupported);
            }
            let mac = cx.shared.ports[in_port].mac;
            let d = cx.out.pool.data_mut(buf);
            let peer = mac_at(d, 6);
            write_eth(d, peer, mac, ETH_IPV4);
            let ip = &mut d[ETH_LEN..];
            let (s, t) = (get32(ip, 12), get32(ip, 16));
            ip[12..16].copy_from_slice(&t.to_be_bytes());
            ip[16..20].copy_from_slice(&s.to_be_bytes());
            ip[8] = 64;
            ipv4_set_checksum(&mut ip[..ihl]);
            let icmp = &mut ip[ihl..];
            let c = checksum::update_u16(get16(icmp, 2), 0x0800, 0x0000);
            icmp[0] = 0;
            put16(icmp, 2, c);
            cx.out.reply(buf);
        }
        PROTO_UDP => {
            cx.icmp_v4(buf, icmp::V4_PORT_UNREACHABLE);
            cx.out.drop(buf, DropReason::PortUnreachable);
        }
        _ => cx.out.drop(buf, DropReason::LocalUnsupported),
    }
}

/// IPv6 to one of the router's addresses (`multicast`: to all-nodes or
/// to one of our solicited-node groups; only ND is accepted there).
pub(crate) fn v6(cx: &mut Cx, mut buf: Buf, multicast: bool) {
    let in_port = cx.out.in_port;
    let d = cx.out.pool.data(buf);
    let ip = &d[ETH_LEN..];
    let src = Ipv6Addr::from(get128(ip, 8));
    let dst = Ipv6Addr::from(get128(ip, 24));
    let hop = ip[7];
    match ip[6] {
        PROTO_ICMPV6 => {}
        PROTO_UDP if !multicast => {
            cx.icmp_v6(buf, icmp::V6_PORT_UNREACHABLE);
            return cx.out.drop(buf, DropReason::PortUnreachable);
        }
        _ => return cx.out.drop(buf, DropReason::LocalUnsupported),
    }
    let icmp = &ip[40..];
    if icmp.len() < 8 || !icmpv6_checksum_ok(src, dst, icmp) {
        return cx.out.drop(buf, DropReason::IcmpInvalid);
    }
    let typ = icmp[0];
    let pc = &cx.shared.ports[in_port];
    let mac = pc.mac;
    match typ {
        128 if !multicast && src != Ipv6Addr::UNSPECIFIED => {
            let d = cx.out.pool.data_mut(buf);
            let peer = mac_at(d, 6);
            write_eth(d, peer, mac, ETH_IPV6);
            let ip = &mut d[ETH_LEN..];
            ip[8..24].copy_from_slice(&dst.octets());
            ip[24..40].copy_from_slice(&src.octets());
            ip[7] = 64;
            let icmp = &mut ip[40..];
            let c = checksum::update_u16(get16(icmp, 2), 128 << 8, 129 << 8);
            icmp[0] = 129;
            put16(icmp, 2, c);
            cx.out.reply(buf);
        }
        135 | 136 => {
            // RFC 4861 7.1.1 / 7.1.2 validation.
            if hop != 255 || icmp[1] != 0 || icmp.len() < 24 {
                return cx.out.drop(buf, DropReason::NdInvalid);
            }
            let target = Ipv6Addr::from(get128(icmp, 8));
            if target.is_multicast() {
                return cx.out.drop(buf, DropReason::NdInvalid);
            }
            // Link-layer address option (1: source, 2: target).
            let want = if typ == 135 { 1 } else { 2 };
            let mut lla = None;
            let mut o = &icmp[24..];
            while o.len() >= 2 {
                let l = o[1] as usize * 8;
                if l == 0 || l > o.len() {
                    return cx.out.drop(buf, DropReason::NdInvalid);
                }
                if o[0] == want && l >= 8 {
                    lla = Some(mac_at(o, 2));
                }
                o = &o[l..];
            }
            if lla.is_some_and(|m| !unicast_mac(m)) {
                return cx.out.drop(buf, DropReason::NdInvalid);
            }
            let now = cx.now_ms;
            if typ == 136 {
                let flags = icmp[4];
                let solicited = flags & 0x40 != 0;
                if solicited && dst.is_multicast() {
                    return cx.out.drop(buf, DropReason::NdInvalid);
                }
                if let Some(m) = lla {
                    let how = Learn {
                        create: false,
                        confirm: solicited,
                        overrides: flags & 0x20 != 0,
                    };
                    match cx.shared.learn(in_port, IpAddr::V6(target), m, how, now) {
                        Learned::Own => return defend_v6(cx, buf, target),
                        Learned::Invalid => return cx.out.drop(buf, DropReason::NdInvalid),
                        Learned::Updated | Learned::Ignored => {}
                    }
                } else {
                    // No Target Link-Layer Address (Linux omits it when
                    // answering a unicast probe): a solicited NA
                    // confirms the MAC we have (RFC 4861 7.2.5).
                    let ip = IpAddr::V6(target);
                    let class = if solicited {
                        cx.shared.confirm(in_port, ip, now)
                    } else {
                        cx.shared.classify(in_port, ip)
                    };
                    if class == AddrClass::Own {
                        return defend_v6(cx, buf, target);
                    }
                }
                return cx.out.consume(buf);
            }
            if src == Ipv6Addr::UNSPECIFIED && (lla.is_some() || !dst.is_multicast()) {
                return cx.out.drop(buf, DropReason::NdInvalid);
            }
            if !pc.has_v6(target) {
                return cx.out.drop(buf, DropReason::NdNotForUs);
            }
            let peer_mac = mac_at(d, 6);
            let n = if src == Ipv6Addr::UNSPECIFIED {
                // Duplicate address detection of one of our addresses:
                // answer all-nodes (the address is taken).
                let all = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1);
                build_na(
                    cx.out.pool.room_mut(buf),
                    ipv6_multicast_mac(all),
                    mac,
                    target,
                    all,
                    false,
                )
            } else {
                if let Some(m) = lla {
                    // RFC 4861 7.2.3: create or update the sender's
                    // entry, STALE.
                    let how = Learn {
                        create: true,
                        confirm: false,
                        overrides: true,
                    };
                    match cx.shared.learn(in_port, IpAddr::V6(src), m, how, now) {
                        Learned::Own => return cx.out.drop(buf, DropReason::NeighborOwnAddress),
                        Learned::Invalid => return cx.out.drop(buf, DropReason::NdInvalid),
                        Learned::Updated | Learned::Ignored => {}
                    }
                } else if cx.shared.classify(in_port, IpAddr::V6(src)) == AddrClass::Own {
                    return cx.out.drop(buf, DropReason::NeighborOwnAddress);
                }
                let to = lla.unwrap_or(peer_mac);
                build_na(cx.out.pool.room_mut(buf), to, mac, target, src, true)
            };
            buf.len = n as u32;
            cx.out.reply(buf);
        }
        _ => cx.out.drop(buf, DropReason::LocalUnsupported),
    }
}
