//! ICMP and ICMPv6 errors about a received packet, rate-limited by the
//! worker's token bucket.
//!
//! Never about: ICMP errors, non-first fragments, multicast/broadcast
//! destinations, martian or unspecified sources (RFC 1812 4.3.2.7,
//! RFC 4443 2.4(e)). Multicast/broadcast destinations and martian sources
//! are dropped by the input checks before any error could be generated;
//! the checks here are the defensive repeat.

use crate::drop::DropReason;
use crate::wire::*;
use crate::worker::Worker;
use netio::Buf;
use std::net::{Ipv4Addr, Ipv6Addr};

impl Worker {
    fn take_icmp_token(&mut self) -> bool {
        if self.icmp_tokens >= 1000 {
            self.icmp_tokens -= 1000;
            true
        } else {
            self.count_drop(DropReason::IcmpRateLimited);
            false
        }
    }

    /// Sends ICMP `typ`/`code` about the IPv4 packet in `orig` (still owned
    /// by the caller) back out `in_port`.
    pub(crate) fn icmp4_error(&mut self, in_port: usize, orig: Buf, typ: u8, code: u8, rest: u32) {
        let d = self.pool.data(orig);
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
        let pc = &self.shared.ports[in_port];
        let src_mac = pc.mac;
        let Some(me) = pc.v4_for(Ipv4Addr::from(src)).or_else(|| {
            self.shared
                .ports
                .iter()
                .find_map(|p| p.v4.first().map(|a| a.0))
        }) else {
            return;
        };
        if !self.take_icmp_token() {
            return;
        }
        let Some(mut nb) = self.pool.alloc() else {
            self.stats.drop_on(in_port, DropReason::ReplyNoBuffer, 1);
            return;
        };
        let (r, w) = self.pool.pair_mut(orig, nb);
        let n = build_icmp4_error(
            w,
            mac_at(r, 6),
            src_mac,
            me,
            Ipv4Addr::from(src),
            typ,
            code,
            rest,
            &r[ETH_LEN..],
        );
        nb.len = n as u32;
        self.stats.generated.add(1);
        self.send(in_port, nb);
    }

    /// Sends ICMPv6 `typ`/`code` about the IPv6 packet in `orig`.
    pub(crate) fn icmp6_error(&mut self, in_port: usize, orig: Buf, typ: u8, code: u8, rest: u32) {
        let d = self.pool.data(orig);
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
        let pc = &self.shared.ports[in_port];
        let src_mac = pc.mac;
        let Some(me) = pc.v6_for(Ipv6Addr::from(src)).or_else(|| {
            self.shared
                .ports
                .iter()
                .find_map(|p| p.v6.first().map(|a| a.0))
        }) else {
            return;
        };
        if !self.take_icmp_token() {
            return;
        }
        let Some(mut nb) = self.pool.alloc() else {
            self.stats.drop_on(in_port, DropReason::ReplyNoBuffer, 1);
            return;
        };
        let (r, w) = self.pool.pair_mut(orig, nb);
        let n = build_icmp6_error(
            w,
            mac_at(r, 6),
            src_mac,
            me,
            Ipv6Addr::from(src),
            typ,
            code,
            rest,
            &r[ETH_LEN..],
        );
        nb.len = n as u32;
        self.stats.generated.add(1);
        self.send(in_port, nb);
    }
}
