//! Packets for the router itself: ARP, neighbor discovery, echo requests,
//! UDP (answered with port unreachable). Replies are built in place in the
//! received buffer, so answering never needs a second buffer.

use crate::cx::Cx;
use crate::drop::DropReason;
use crate::icmp;
use crate::neighbor::{unicast_mac, Learn};
use crate::shared::{AddrClass, Learned};
use netio::Buf;
use packet::arp::{self, Operation, ARPOP_REPLY, ARPOP_REQUEST};
use packet::build;
use packet::checksum;
use packet::ethernet::{self, Address, ETH_IPV4, ETH_IPV6, ETH_LEN};
use packet::icmpv4::{self, ICMP_ECHO, ICMP_ECHOREPLY};
use packet::icmpv6::{
    self, ICMPV6_ECHO_REPLY, ICMPV6_ECHO_REQUEST, NDISC_NEIGHBOUR_ADVERTISEMENT,
    NDISC_NEIGHBOUR_SOLICITATION,
};
use packet::ip::{PROTO_ICMP, PROTO_ICMPV6, PROTO_UDP};
use packet::ipv4;
use packet::ipv6::{self, ALL_NODES, IPV6_LEN};
use packet::ndp::{
    self, ND_NA_FLAG_OVERRIDE, ND_NA_FLAG_ROUTER, ND_NA_FLAG_SOLICITED, ND_OPT_SOURCE_LL_ADDR,
    ND_OPT_TARGET_LL_ADDR,
};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// ARP (RFC 826, with the policy of [`crate::neighbor`]): answers
/// requests for the port's addresses, learns only what may be learned,
/// and defends the router's addresses against frames claiming them.
#[inline(never)]
pub(crate) fn arp(cx: &mut Cx, mut buf: Buf) {
    let in_port = cx.out.in_port();
    let a = match arp::Packet::new_checked(&cx.out.pool.data(buf)[ETH_LEN..]) {
        Ok(a) if a.is_ethernet_ipv4() => a,
        _ => return cx.out.drop(buf, DropReason::ArpInvalid),
    };
    let request = match a.operation() {
        Operation::Request => true,
        Operation::Reply => false,
        Operation::Unknown(_) => return cx.out.drop(buf, DropReason::ArpInvalid),
    };
    let sha = a.source_hardware_addr().0;
    let spa = a.source_protocol_addr();
    let tpa = a.target_protocol_addr();
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
            create: for_us && request,
            // A reply to us confirms; anything else is hearsay.
            confirm: for_us && !request,
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
    if !request {
        return cx.out.consume(buf);
    }
    let room = cx.out.pool.room_mut(buf);
    buf.len = build::arp(room, sha, ARPOP_REPLY, (mac, tpa), (sha, spa)) as u32;
    cx.out.reply(buf);
}

/// A frame claiming `addr`, one of the router's addresses: never
/// learned (counted `neighbor_own_address`); if `addr` belongs to this
/// port, a gratuitous ARP announcement restores the hosts' caches, at
/// most once per defence interval (RFC 5227 2.4 (c)). The received
/// buffer is reused for it.
fn defend_v4(cx: &mut Cx, mut buf: Buf, addr: Ipv4Addr) {
    let in_port = cx.out.in_port();
    let pc = &cx.shared.ports[in_port];
    let mac = pc.mac;
    if !pc.has_v4(addr) || !cx.shared.try_defend(in_port, false, cx.now_ms) {
        return cx.out.drop(buf, DropReason::NeighborOwnAddress);
    }
    // The received frame is dropped (counted on its input port, the
    // current one); its buffer carries the announcement, `generated`.
    cx.out.count_drop(DropReason::NeighborOwnAddress);
    let room = cx.out.pool.room_mut(buf);
    let to = Address::BROADCAST.0;
    buf.len = build::arp(room, to, ARPOP_REQUEST, (mac, addr), ([0; 6], addr)) as u32;
    cx.out.send_generated(in_port, buf);
}

/// The IPv6 counterpart of [`defend_v4`]: an unsolicited NA (Override)
/// for `addr` to all-nodes.
fn defend_v6(cx: &mut Cx, mut buf: Buf, addr: Ipv6Addr) {
    let in_port = cx.out.in_port();
    let pc = &cx.shared.ports[in_port];
    let mac = pc.mac;
    if !pc.has_v6(addr) || !cx.shared.try_defend(in_port, true, cx.now_ms) {
        return cx.out.drop(buf, DropReason::NeighborOwnAddress);
    }
    // The received frame is dropped (counted on its input port, the
    // current one); its buffer carries the announcement, `generated`.
    cx.out.count_drop(DropReason::NeighborOwnAddress);
    buf.len = advertise_to_all_nodes(cx.out.pool.room_mut(buf), mac, addr) as u32;
    cx.out.send_generated(in_port, buf);
}

/// An unsolicited NA of `addr` (Router, Override) to all-nodes.
fn advertise_to_all_nodes(room: &mut [u8], mac: [u8; 6], addr: Ipv6Addr) -> usize {
    let to = (Address::ipv6_multicast(ALL_NODES).0, ALL_NODES);
    build::neighbor_advert(room, to, mac, addr, ND_NA_FLAG_ROUTER | ND_NA_FLAG_OVERRIDE)
}

/// IPv4 to one of the router's addresses.
#[inline(never)]
pub(crate) fn v4(cx: &mut Cx, buf: Buf) {
    let in_port = cx.out.in_port();
    let ip = ipv4::Packet::new_unchecked(&cx.out.pool.data(buf)[ETH_LEN..]);
    if ip.is_fragment() {
        // No reassembly for the router's own traffic.
        return cx.out.drop(buf, DropReason::LocalUnsupported);
    }
    match ip.protocol_raw() {
        PROTO_ICMP => {
            match icmpv4::Packet::new_checked(ip.payload()) {
                Ok(m) if m.verify_checksum() => {
                    if m.msg_type_raw() != ICMP_ECHO || m.code() != 0 {
                        return cx.out.drop(buf, DropReason::LocalUnsupported);
                    }
                }
                _ => return cx.out.drop(buf, DropReason::IcmpInvalid),
            }
            // The echo reply, in place: addresses swapped, TTL 64, type 0.
            let mac = cx.shared.ports[in_port].mac;
            let mut eth = ethernet::Frame::new_unchecked(cx.out.pool.data_mut(buf));
            let peer = eth.src_addr();
            eth.write_header(peer, Address(mac), ETH_IPV4);
            let mut ip = ipv4::Packet::new_unchecked(eth.payload_mut());
            let (s, t) = (ip.src_addr(), ip.dst_addr());
            ip.set_src_addr(t);
            ip.set_dst_addr(s);
            ip.set_ttl(64);
            ip.fill_checksum();
            let mut m = icmpv4::Packet::new_unchecked(ip.payload_mut());
            let (old, new) = (u16::from(ICMP_ECHO) << 8, u16::from(ICMP_ECHOREPLY) << 8);
            let c = checksum::update_u16(m.checksum(), old, new);
            m.set_msg_type(icmpv4::Message::EchoReply);
            m.set_checksum(c);
            cx.out.reply(buf);
        }
        PROTO_UDP => {
            icmp::v4(cx, buf, icmp::V4_PORT_UNREACHABLE);
            cx.out.drop(buf, DropReason::PortUnreachable);
        }
        _ => cx.out.drop(buf, DropReason::LocalUnsupported),
    }
}

/// IPv6 to one of the router's addresses (`multicast`: to all-nodes or
/// to one of our solicited-node groups; only ND is accepted there).
#[inline(never)]
pub(crate) fn v6(cx: &mut Cx, mut buf: Buf, multicast: bool) {
    let in_port = cx.out.in_port();
    let eth = ethernet::Frame::new_unchecked(cx.out.pool.data(buf));
    let peer_mac = eth.src_addr().0;
    let ip = ipv6::Packet::new_unchecked(eth.payload());
    let (src, dst, hop) = (ip.src_addr(), ip.dst_addr(), ip.hop_limit());
    match ip.next_header_raw() {
        PROTO_ICMPV6 => {}
        PROTO_UDP if !multicast => {
            icmp::v6(cx, buf, icmp::V6_PORT_UNREACHABLE);
            return cx.out.drop(buf, DropReason::PortUnreachable);
        }
        _ => return cx.out.drop(buf, DropReason::LocalUnsupported),
    }
    let msg = &eth.payload()[IPV6_LEN..];
    let typ = match icmpv6::Packet::new_checked(msg) {
        Ok(m) if m.verify_checksum(src, dst) => m.msg_type_raw(),
        _ => return cx.out.drop(buf, DropReason::IcmpInvalid),
    };
    let pc = &cx.shared.ports[in_port];
    let mac = pc.mac;
    match typ {
        ICMPV6_ECHO_REQUEST if !multicast && !src.is_unspecified() => {
            // The echo reply, in place: addresses swapped, hop limit 64.
            let mut eth = ethernet::Frame::new_unchecked(cx.out.pool.data_mut(buf));
            eth.write_header(Address(peer_mac), Address(mac), ETH_IPV6);
            let mut ip = ipv6::Packet::new_unchecked(eth.payload_mut());
            ip.set_src_addr(dst);
            ip.set_dst_addr(src);
            ip.set_hop_limit(64);
            let mut m = icmpv6::Packet::new_unchecked(ip.payload_mut());
            let (old, new) = (
                u16::from(ICMPV6_ECHO_REQUEST) << 8,
                u16::from(ICMPV6_ECHO_REPLY) << 8,
            );
            let c = checksum::update_u16(m.checksum(), old, new);
            m.set_msg_type(icmpv6::Message::EchoReply);
            m.set_checksum(c);
            cx.out.reply(buf);
        }
        NDISC_NEIGHBOUR_SOLICITATION | NDISC_NEIGHBOUR_ADVERTISEMENT => {
            // RFC 4861 7.1.1 / 7.1.2 validation.
            let nd = match ndp::Neighbor::new_checked(msg) {
                Ok(nd) if hop == build::ND_HOP_LIMIT && msg[1] == 0 => nd,
                _ => return cx.out.drop(buf, DropReason::NdInvalid),
            };
            let target = nd.target_addr();
            if target.is_multicast() {
                return cx.out.drop(buf, DropReason::NdInvalid);
            }
            // The link-layer address option: source in an NS, target in
            // an NA. Every option must be well formed (RFC 4861 7.1: no
            // length 0, none running past the message).
            let want = if typ == NDISC_NEIGHBOUR_SOLICITATION {
                ND_OPT_SOURCE_LL_ADDR
            } else {
                ND_OPT_TARGET_LL_ADDR
            };
            let mut lla = None;
            for o in nd.options() {
                let Ok(o) = o else {
                    return cx.out.drop(buf, DropReason::NdInvalid);
                };
                if o.kind == want {
                    lla = o.link_layer_addr().map(|a| a.0).or(lla);
                }
            }
            if lla.is_some_and(|m| !unicast_mac(m)) {
                return cx.out.drop(buf, DropReason::NdInvalid);
            }
            let now = cx.now_ms;
            if typ == NDISC_NEIGHBOUR_ADVERTISEMENT {
                let solicited = nd.flags() & ND_NA_FLAG_SOLICITED != 0;
                if solicited && dst.is_multicast() {
                    return cx.out.drop(buf, DropReason::NdInvalid);
                }
                if let Some(m) = lla {
                    let how = Learn {
                        create: false,
                        confirm: solicited,
                        overrides: nd.flags() & ND_NA_FLAG_OVERRIDE != 0,
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
            if src.is_unspecified() && (lla.is_some() || !dst.is_multicast()) {
                return cx.out.drop(buf, DropReason::NdInvalid);
            }
            if !pc.has_v6(target) {
                return cx.out.drop(buf, DropReason::NdNotForUs);
            }
            let n = if src.is_unspecified() {
                // Duplicate address detection of one of our addresses:
                // answer all-nodes (the address is taken).
                advertise_to_all_nodes(cx.out.pool.room_mut(buf), mac, target)
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
                let to = (lla.unwrap_or(peer_mac), src);
                let flags = ND_NA_FLAG_ROUTER | ND_NA_FLAG_SOLICITED | ND_NA_FLAG_OVERRIDE;
                build::neighbor_advert(cx.out.pool.room_mut(buf), to, mac, target, flags)
            };
            buf.len = n as u32;
            cx.out.reply(buf);
        }
        _ => cx.out.drop(buf, DropReason::LocalUnsupported),
    }
}
