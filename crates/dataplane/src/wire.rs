//! Byte-level helpers for the fast path and the frames the router builds.
//!
//! The pipeline works on raw offsets (Ethernet header at 0, IP header at
//! 14 once any 802.1Q tag has been removed); these helpers keep that code
//! short. Builders write into a caller-provided buffer and return the
//! frame length; nothing allocates.

use packet::checksum;
use std::net::{Ipv4Addr, Ipv6Addr};

pub const ETH_LEN: usize = 14;
pub const ETH_IPV4: u16 = 0x0800;
pub const ETH_ARP: u16 = 0x0806;
pub const ETH_IPV6: u16 = 0x86dd;
pub const ETH_VLAN: u16 = 0x8100;
pub const BROADCAST: [u8; 6] = [0xff; 6];
/// Ethernet minimum frame length without FCS; generated ARP frames are
/// padded to it.
pub const ETH_MIN: usize = 60;

pub const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
pub const PROTO_ICMPV6: u8 = 58;

#[inline(always)]
pub fn get16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

#[inline(always)]
pub fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

#[inline(always)]
pub fn get32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[inline(always)]
pub fn get128(b: &[u8], at: usize) -> u128 {
    let mut a = [0u8; 16];
    a.copy_from_slice(&b[at..at + 16]);
    u128::from_be_bytes(a)
}

#[inline(always)]
pub fn mac_at(b: &[u8], at: usize) -> [u8; 6] {
    [b[at], b[at + 1], b[at + 2], b[at + 3], b[at + 4], b[at + 5]]
}

#[inline(always)]
pub fn write_eth(b: &mut [u8], dst: [u8; 6], src: [u8; 6], ethertype: u16) {
    b[0..6].copy_from_slice(&dst);
    b[6..12].copy_from_slice(&src);
    put16(b, 12, ethertype);
}

/// Full IPv4 header checksum over `hdr` (checksum field included as is).
#[inline]
pub fn ipv4_header_sum_ok(hdr: &[u8]) -> bool {
    checksum::fold(checksum::sum(hdr)) == 0xffff
}

/// Recomputes the checksum of the IPv4 header `hdr`.
#[inline]
pub fn ipv4_set_checksum(hdr: &mut [u8]) {
    put16(hdr, 10, 0);
    let c = checksum::finish(checksum::sum(hdr));
    put16(hdr, 10, c);
}

/// Decrements the TTL of the IPv4 header `hdr` (TTL > 1 checked by the
/// caller) and updates its checksum incrementally (RFC 1624 eqn. 3).
#[inline(always)]
pub fn ipv4_dec_ttl(hdr: &mut [u8]) {
    let old = get16(hdr, 8);
    hdr[8] -= 1;
    let new = get16(hdr, 8);
    let c = checksum::update_u16(get16(hdr, 10), old, new);
    put16(hdr, 10, c);
}

/// Martian IPv4 sources (RFC 1812 5.3.7): 0/8, 127/8, 224/4 (multicast)
/// and 240/4 (reserved, including the limited broadcast).
#[inline(always)]
pub fn ipv4_martian_source(a: u32) -> bool {
    let top = a >> 24;
    top == 0 || top == 127 || top >= 224
}

/// IPv6 solicited-node multicast address of `a`.
pub fn solicited_node(a: Ipv6Addr) -> Ipv6Addr {
    let o = a.octets();
    Ipv6Addr::new(
        0xff02,
        0,
        0,
        0,
        0,
        1,
        0xff00 | u16::from(o[13]),
        u16::from_be_bytes([o[14], o[15]]),
    )
}

/// The Ethernet multicast MAC of an IPv6 multicast address (RFC 2464 7).
pub fn ipv6_multicast_mac(a: Ipv6Addr) -> [u8; 6] {
    let o = a.octets();
    [0x33, 0x33, o[12], o[13], o[14], o[15]]
}

/// ICMPv6 checksum of `msg` (checksum field zeroed by the caller) between
/// `src` and `dst`.
pub fn icmpv6_checksum(src: Ipv6Addr, dst: Ipv6Addr, msg: &[u8]) -> u16 {
    let ph = checksum::pseudo_header_v6(src, dst, PROTO_ICMPV6, msg.len() as u32);
    checksum::finish(ph + checksum::sum(msg))
}

/// Verifies an ICMPv6 message's checksum.
pub fn icmpv6_checksum_ok(src: Ipv6Addr, dst: Ipv6Addr, msg: &[u8]) -> bool {
    let ph = checksum::pseudo_header_v6(src, dst, PROTO_ICMPV6, msg.len() as u32);
    checksum::fold(ph + checksum::sum(msg)) == 0xffff
}

/// Writes an IPv4 header without options at `b[0..20]`.
#[allow(clippy::too_many_arguments)]
pub fn write_ipv4(
    b: &mut [u8],
    tos: u8,
    total_len: u16,
    ttl: u8,
    proto: u8,
    src: Ipv4Addr,
    dst: Ipv4Addr,
) {
    b[0] = 0x45;
    b[1] = tos;
    put16(b, 2, total_len);
    put16(b, 4, 0);
    put16(b, 6, 0);
    b[8] = ttl;
    b[9] = proto;
    b[12..16].copy_from_slice(&src.octets());
    b[16..20].copy_from_slice(&dst.octets());
    ipv4_set_checksum(&mut b[..20]);
}

/// Writes an IPv6 header at `b[0..40]`.
pub fn write_ipv6(b: &mut [u8], payload_len: u16, next: u8, hop: u8, src: Ipv6Addr, dst: Ipv6Addr) {
    b[0..4].copy_from_slice(&[0x60, 0, 0, 0]);
    put16(b, 4, payload_len);
    b[6] = next;
    b[7] = hop;
    b[8..24].copy_from_slice(&src.octets());
    b[24..40].copy_from_slice(&dst.octets());
}

/// Builds an ICMPv4 error frame into `out`: Ethernet, IPv4 (TOS 0xc0,
/// TTL 64), ICMP `typ`/`code` with `rest` as the second word, quoting as
/// much of `orig` (the offending IP packet) as fits in 576 bytes.
#[allow(clippy::too_many_arguments)]
pub fn build_icmp4_error(
    out: &mut [u8],
    dst_mac: [u8; 6],
    src_mac: [u8; 6],
    src: Ipv4Addr,
    dst: Ipv4Addr,
    typ: u8,
    code: u8,
    rest: u32,
    orig: &[u8],
) -> usize {
    let quote = orig.len().min(576 - 28).min(out.len() - ETH_LEN - 28);
    let ip_len = 28 + quote;
    write_eth(out, dst_mac, src_mac, ETH_IPV4);
    write_ipv4(
        &mut out[14..34],
        0xc0,
        ip_len as u16,
        64,
        PROTO_ICMP,
        src,
        dst,
    );
    let icmp = &mut out[34..34 + 8 + quote];
    icmp[0] = typ;
    icmp[1] = code;
    put16(icmp, 2, 0);
    icmp[4..8].copy_from_slice(&rest.to_be_bytes());
    icmp[8..].copy_from_slice(&orig[..quote]);
    let c = checksum::finish(checksum::sum(icmp));
    put16(icmp, 2, c);
    ETH_LEN + ip_len
}

/// Builds an ICMPv6 error frame (hop limit 64), quoting as much of `orig`
/// as fits in the IPv6 minimum MTU of 1280 bytes.
#[allow(clippy::too_many_arguments)]
pub fn build_icmp6_error(
    out: &mut [u8],
    dst_mac: [u8; 6],
    src_mac: [u8; 6],
    src: Ipv6Addr,
    dst: Ipv6Addr,
    typ: u8,
    code: u8,
    rest: u32,
    orig: &[u8],
) -> usize {
    let quote = orig.len().min(1280 - 48).min(out.len() - ETH_LEN - 48);
    let plen = 8 + quote;
    write_eth(out, dst_mac, src_mac, ETH_IPV6);
    write_ipv6(&mut out[14..54], plen as u16, PROTO_ICMPV6, 64, src, dst);
    let icmp = &mut out[54..54 + plen];
    icmp[0] = typ;
    icmp[1] = code;
    put16(icmp, 2, 0);
    icmp[4..8].copy_from_slice(&rest.to_be_bytes());
    icmp[8..].copy_from_slice(&orig[..quote]);
    let c = icmpv6_checksum(src, dst, icmp);
    put16(icmp, 2, c);
    ETH_LEN + 40 + plen
}

/// An ARP frame (request or reply), padded to 60 bytes.
#[allow(clippy::too_many_arguments)]
pub fn build_arp(
    out: &mut [u8],
    eth_dst: [u8; 6],
    op: u16,
    sha: [u8; 6],
    spa: Ipv4Addr,
    tha: [u8; 6],
    tpa: Ipv4Addr,
) -> usize {
    write_eth(out, eth_dst, sha, ETH_ARP);
    let a = &mut out[14..ETH_MIN];
    put16(a, 0, 1);
    put16(a, 2, ETH_IPV4);
    a[4] = 6;
    a[5] = 4;
    put16(a, 6, op);
    a[8..14].copy_from_slice(&sha);
    a[14..18].copy_from_slice(&spa.octets());
    a[18..24].copy_from_slice(&tha);
    a[24..28].copy_from_slice(&tpa.octets());
    a[28..].fill(0);
    ETH_MIN
}

/// A neighbor solicitation for `target` from `src` (with the source
/// link-layer address option): to the solicited-node multicast address,
/// or, for a probe of a STALE entry (`unicast`: its MAC), to `target`
/// itself (RFC 4861 7.3.3).
pub fn build_ns(
    out: &mut [u8],
    mac: [u8; 6],
    src: Ipv6Addr,
    target: Ipv6Addr,
    unicast: Option<[u8; 6]>,
) -> usize {
    let (dst, dst_mac) = match unicast {
        Some(m) => (target, m),
        None => {
            let d = solicited_node(target);
            (d, ipv6_multicast_mac(d))
        }
    };
    write_eth(out, dst_mac, mac, ETH_IPV6);
    write_ipv6(&mut out[14..54], 32, PROTO_ICMPV6, 255, src, dst);
    let m = &mut out[54..86];
    m[0] = 135;
    m[1] = 0;
    m[2..8].fill(0);
    m[8..24].copy_from_slice(&target.octets());
    m[24] = 1;
    m[25] = 1;
    m[26..32].copy_from_slice(&mac);
    let c = icmpv6_checksum(src, dst, m);
    put16(m, 2, c);
    86
}

/// A neighbor advertisement for `target` (router and override flags set,
/// solicited as given) with the target link-layer address option.
#[allow(clippy::too_many_arguments)]
pub fn build_na(
    out: &mut [u8],
    eth_dst: [u8; 6],
    mac: [u8; 6],
    target: Ipv6Addr,
    dst: Ipv6Addr,
    solicited: bool,
) -> usize {
    write_eth(out, eth_dst, mac, ETH_IPV6);
    write_ipv6(&mut out[14..54], 32, PROTO_ICMPV6, 255, target, dst);
    let m = &mut out[54..86];
    m[0] = 136;
    m[1] = 0;
    m[2..8].fill(0);
    m[4] = 0x80 | if solicited { 0x40 } else { 0 } | 0x20;
    m[8..24].copy_from_slice(&target.octets());
    m[24] = 2;
    m[25] = 1;
    m[26..32].copy_from_slice(&mac);
    let c = icmpv6_checksum(target, dst, m);
    put16(m, 2, c);
    86
}

/// Checks the options of an IPv4 header (IHL > 5): every option fits,
/// lengths are at least 2, and the options with a pointer (Record Route,
/// Loose/Strict Source Route, Timestamp) are long enough for it and point
/// at least at their first slot. RFC 1812 5.2.2 / RFC 791. On error,
/// returns the offset (in `opts`) of the offending octet, for the pointer
/// of an ICMP Parameter Problem.
pub fn ipv4_options_check(opts: &[u8]) -> Result<(), usize> {
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            0 => return Ok(()),
            1 => i += 1,
            t => {
                if i + 1 >= opts.len() {
                    return Err(i);
                }
                let l = opts[i + 1] as usize;
                if l < 2 || i + l > opts.len() {
                    return Err(i + 1);
                }
                let min_pointer = match t {
                    // Record Route, LSRR, SSRR: the first address at 4.
                    0x07 | 0x83 | 0x89 => 4,
                    // Timestamp: the first slot at 5.
                    0x44 => 5,
                    _ => 0,
                };
                if min_pointer > 0 {
                    if l < min_pointer - 1 {
                        return Err(i + 1);
                    }
                    if (opts[i + 2] as usize) < min_pointer {
                        return Err(i + 2);
                    }
                }
                i += l;
            }
        }
    }
    Ok(())
}

/// [`ipv4_options_check`] as a boolean.
pub fn ipv4_options_ok(opts: &[u8]) -> bool {
    ipv4_options_check(opts).is_ok()
}

/// Copies the options with the copy flag (RFC 791) from `opts` into `out`,
/// padded with end-of-list to a multiple of 4; returns the length written.
/// `opts` must have passed [`ipv4_options_ok`].
pub fn ipv4_copied_options(opts: &[u8], out: &mut [u8]) -> usize {
    let mut i = 0;
    let mut n = 0;
    while i < opts.len() {
        match opts[i] {
            0 => break,
            1 => i += 1,
            t => {
                let l = opts[i + 1] as usize;
                if t & 0x80 != 0 {
                    out[n..n + l].copy_from_slice(&opts[i..i + l]);
                    n += l;
                }
                i += l;
            }
        }
    }
    let padded = n.div_ceil(4) * 4;
    out[n..padded].fill(0);
    padded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_decrement_matches_full_recompute() {
        let mut rng = 0x1234_5678_u32;
        for _ in 0..10_000 {
            let mut h = [0u8; 20];
            for b in h.iter_mut() {
                rng = rng.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                *b = (rng >> 24) as u8;
            }
            h[0] = 0x45;
            h[8] = h[8].max(2);
            ipv4_set_checksum(&mut h);
            assert!(ipv4_header_sum_ok(&h));
            let mut a = h;
            ipv4_dec_ttl(&mut a);
            assert_eq!(a[8], h[8] - 1);
            assert!(ipv4_header_sum_ok(&a), "{h:?}");
            let mut b = a;
            ipv4_set_checksum(&mut b);
            // Equal up to the two representations of zero.
            assert!(get16(&a, 10) == get16(&b, 10) || (get16(&a, 10) | get16(&b, 10)) == 0xffff);
        }
    }

    #[test]
    fn martians() {
        for a in [
            "0.1.2.3",
            "127.0.0.1",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(ipv4_martian_source(u32::from(
                a.parse::<Ipv4Addr>().unwrap()
            )));
        }
        assert!(!ipv4_martian_source(u32::from(Ipv4Addr::new(
            198, 18, 0, 1
        ))));
    }

    #[test]
    fn copied_options() {
        // NOP, Record Route (not copied, len 7), Security-like copied option (0x82, len 4).
        let opts = [1, 7, 7, 4, 0, 0, 0, 0, 0x82, 4, 9, 9, 0, 0, 0, 0];
        assert!(ipv4_options_ok(&opts));
        let mut out = [0xaau8; 16];
        let n = ipv4_copied_options(&opts, &mut out);
        assert_eq!(&out[..n], &[0x82, 4, 9, 9]);
        assert!(!ipv4_options_ok(&[7, 9, 0, 0]));
        assert!(!ipv4_options_ok(&[7, 1, 0, 0]));
    }
}
