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

use crate::drop::DropReason;
use crate::router::PortCtx;
use crate::wire::*;
use crate::worker::Out;
use netio::Buf;
use std::net::{Ipv4Addr, Ipv6Addr};

/// An error to send: type, code and the second word of the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IcmpError {
    pub typ: u8,
    pub code: u8,
    pub rest: u32,
}

const fn err(typ: u8, code: u8) -> IcmpError {
    IcmpError { typ, code, rest: 0 }
}

/// Destination unreachable, net unreachable (no route).
pub(crate) const V4_NO_ROUTE: IcmpError = err(3, 0);
/// Destination unreachable, host unreachable (neighbour unresolved).
pub(crate) const V4_HOST_UNREACHABLE: IcmpError = err(3, 1);
/// Destination unreachable, port unreachable (UDP to the router).
pub(crate) const V4_PORT_UNREACHABLE: IcmpError = err(3, 3);
/// Time exceeded in transit.
pub(crate) const V4_TTL_EXCEEDED: IcmpError = err(11, 0);

/// Fragmentation needed and DF set, with the next-hop MTU (RFC 1191).
pub(crate) const fn v4_frag_needed(mtu: u16) -> IcmpError {
    IcmpError {
        typ: 3,
        code: 4,
        rest: mtu as u32,
    }
}

/// Parameter problem pointing at the offending octet of the header.
pub(crate) const fn v4_parameter_problem(pointer: u8) -> IcmpError {
    IcmpError {
        typ: 12,
        code: 0,
        rest: (pointer as u32) << 24,
    }
}

/// Destination unreachable, no route.
pub(crate) const V6_NO_ROUTE: IcmpError = err(1, 0);
/// Destination unreachable, address unreachable (neighbour unresolved).
pub(crate) const V6_ADDR_UNREACHABLE: IcmpError = err(1, 3);
/// Destination unreachable, port unreachable.
pub(crate) const V6_PORT_UNREACHABLE: IcmpError = err(1, 4);
/// Time exceeded, hop limit exceeded in transit.
pub(crate) const V6_HOP_LIMIT_EXCEEDED: IcmpError = err(3, 0);

/// Packet too big, with the MTU of the next link.
pub(crate) const fn v6_packet_too_big(mtu: u16) -> IcmpError {
    IcmpError {
        typ: 2,
        code: 0,
        rest: mtu as u32,
    }
}

/// The worker's ICMP error limiter: a token bucket of `router.icmp_rate`
/// errors per second with one second of burst, in thousandths of a token.
pub(crate) struct IcmpErrors {
    rate: u64,
    tokens: u64,
    refill_ms: u64,
}

impl IcmpErrors {
    /// A full bucket of `rate` errors per second.
    pub fn new(rate: u32) -> IcmpErrors {
        let rate = u64::from(rate);
        IcmpErrors {
            rate,
            tokens: rate * 1000,
            refill_ms: 0,
        }
    }

    /// Starts the refill clock at `now_ms`.
    pub fn start(&mut self, now_ms: u64) {
        self.refill_ms = now_ms;
    }

    /// Adds the tokens earned since the last refill (once per round).
    pub fn refill(&mut self, now_ms: u64) {
        let dt = now_ms.saturating_sub(self.refill_ms);
        if dt > 0 {
            self.tokens = (self.tokens + dt * self.rate).min(self.rate * 1000);
            self.refill_ms = now_ms;
        }
    }

    fn take(&mut self, out: &Out) -> bool {
        if self.tokens >= 1000 {
            self.tokens -= 1000;
            true
        } else {
            out.count_drop(DropReason::IcmpRateLimited);
            false
        }
    }

    /// Sends `e` about the IPv4 packet in `orig` (still owned by the
    /// caller) back out the input port.
    pub fn v4(&mut self, out: &mut Out, ports: &[PortCtx], orig: Buf, e: IcmpError) {
        let in_port = out.in_port;
        let d = out.pool.data(orig);
        if d.len() < ETH_LEN + 20 {
            return;
        }
        let ip = &d[ETH_LEN..];
        let ihl = (ip[0] & 0xf) as usize * 4;
        let src = get32(ip, 12);
        let dst = get32(ip, 16);
        if get16(ip, 6) & 0x1fff != 0
            || ipv4_martian_source(src)
            || dst >> 28 >= 0xe
            || d[0] & 1 != 0
        {
            return;
        }
        if ip[9] == PROTO_ICMP && ip.len() > ihl && matches!(ip[ihl], 3 | 4 | 5 | 11 | 12) {
            return;
        }
        let pc = &ports[in_port];
        let src_mac = pc.mac;
        let Some(me) = pc
            .v4_for(Ipv4Addr::from(src))
            .or_else(|| ports.iter().find_map(|p| p.v4.first().map(|a| a.0)))
        else {
            return;
        };
        if !self.take(out) {
            return;
        }
        let Some(mut nb) = out.pool.alloc() else {
            out.stats.drop_on(in_port, DropReason::ReplyNoBuffer, 1);
            return;
        };
        let (r, w) = out.pool.pair_mut(orig, nb);
        let n = build_icmp4_error(
            w,
            mac_at(r, 6),
            src_mac,
            me,
            Ipv4Addr::from(src),
            e.typ,
            e.code,
            e.rest,
            &r[ETH_LEN..],
        );
        nb.len = n as u32;
        out.send_generated(in_port, nb);
    }

    /// Sends `e` about the IPv6 packet in `orig` back out the input port.
    pub fn v6(&mut self, out: &mut Out, ports: &[PortCtx], orig: Buf, e: IcmpError) {
        let in_port = out.in_port;
        let d = out.pool.data(orig);
        if d.len() < ETH_LEN + 40 {
            return;
        }
        let ip = &d[ETH_LEN..];
        let src = get128(ip, 8);
        let dst = get128(ip, 24);
        if src == 0 || src >> 120 == 0xff || dst >> 120 == 0xff || d[0] & 1 != 0 {
            return;
        }
        if ip[6] == PROTO_ICMPV6 && ip.len() > 40 && ip[40] < 128 {
            return;
        }
        let pc = &ports[in_port];
        let src_mac = pc.mac;
        let Some(me) = pc
            .v6_for(Ipv6Addr::from(src))
            .or_else(|| ports.iter().find_map(|p| p.v6.first().map(|a| a.0)))
        else {
            return;
        };
        if !self.take(out) {
            return;
        }
        let Some(mut nb) = out.pool.alloc() else {
            out.stats.drop_on(in_port, DropReason::ReplyNoBuffer, 1);
            return;
        };
        let (r, w) = out.pool.pair_mut(orig, nb);
        let n = build_icmp6_error(
            w,
            mac_at(r, 6),
            src_mac,
            me,
            Ipv6Addr::from(src),
            e.typ,
            e.code,
            e.rest,
            &r[ETH_LEN..],
        );
        nb.len = n as u32;
        out.send_generated(in_port, nb);
    }
}

impl crate::worker::Cx<'_> {
    /// Sends the ICMP error `e` about the IPv4 packet in `orig` (which the
    /// caller still owns and ends).
    #[inline]
    pub(crate) fn icmp_v4(&mut self, orig: Buf, e: IcmpError) {
        self.icmp.v4(&mut self.out, &self.shared.ports, orig, e);
    }

    /// Sends the ICMPv6 error `e` about the IPv6 packet in `orig`.
    #[inline]
    pub(crate) fn icmp_v6(&mut self, orig: Buf, e: IcmpError) {
        self.icmp.v6(&mut self.out, &self.shared.ports, orig, e);
    }
}
