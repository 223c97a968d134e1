//! The input stage: [`frame`] takes a received frame through the Ethernet
//! filter, removes an 802.1Q tag, hands ARP and IPv6 multicast for the
//! router to local delivery and checks IPv4 and IPv6 headers; what passes
//! goes on to the FIB lookup ([`Next`]). The checks themselves are pure
//! functions over the bytes, so they can be tested (and reasoned about)
//! without a worker.
//!
//! * Ethernet: which destination MACs a port accepts, and that the source
//!   is a unicast MAC (replies and ICMP errors go back to it).
//! * IPv4: RFC 1812 5.2.2 (version, IHL, checksum, lengths, options) and
//!   5.3.7 (martian addresses). Bad options are answered with a Parameter
//!   Problem pointing at the offending octet (RFC 1812 4.3.2.5 / 5.2.2).
//! * IPv6: RFC 8200 (version, lengths) and RFC 4291 2.5.2 / 2.5.3. A
//!   payload length of 0 announces a jumbogram (RFC 2675), which softrouter
//!   does not support: such a packet is dropped unless it says nothing
//!   follows the header (Next Header 59), so a jumbogram is never forwarded
//!   as a bare header.

use crate::cx::Cx;
use crate::drop::DropReason;
use crate::icmp;
use crate::local;
use crate::shared::PortCtx;
use netio::Buf;
use packet::ethernet::{self, Address, ETH_ARP, ETH_IPV4, ETH_IPV6, ETH_LEN, ETH_VLAN};
use packet::ip::IPV6_NH_NONE;
use packet::ipv4::{
    self, IPV4_DADDR, IPV4_LEN, IPV4_SADDR, IPV4_TOT_LEN, IPV4_VER_IHL, IPV4_VER_IHL_PLAIN,
};
use packet::ipv6::{self, IPV6_LEN};
use packet::vlan::{self, VLAN_HLEN};
use std::net::Ipv6Addr;

/// Where a frame goes after the input stage.
pub(crate) enum Next {
    /// Ended here: dropped, or delivered locally (ARP, IPv6 multicast).
    Done,
    /// An IPv4 packet to look up: its descriptor (untagged, trimmed to
    /// the IP total length), whether it came as a link-layer
    /// broadcast/multicast, and its destination (host order), read while
    /// the header is in cache.
    V4 { buf: Buf, multi: bool, dst: u32 },
    /// An IPv6 packet to look up.
    V6 { buf: Buf, multi: bool, dst: u128 },
}

/// The input stage for one received frame on `cx.out.in_port()`, whose
/// MAC is `mac` (read once per burst by the caller).
///
/// Nearly every frame is a plain IPv4 packet to the port's MAC: that one
/// is recognised by [`plain_v4`] in a few loads and a single branch (as
/// l3fwd's RFC 1812 step); anything else, or anything odd about it, takes
/// the full classification ([`classify`]), which decides the drop reason.
#[inline(always)]
pub(crate) fn frame(cx: &mut Cx, mac: [u8; 6], buf: Buf) -> Next {
    if let Some((total, dst)) = plain_v4(mac, cx.out.pool.data(buf)) {
        let buf = Buf {
            len: (ETH_LEN + total) as u32,
            ..buf
        };
        return Next::V4 {
            buf,
            multi: false,
            dst,
        };
    }
    classify(cx, buf)
}

/// The common frame, recognised in one test: an untagged IPv4 packet
/// without options to `mac` (unicast) from a unicast MAC, with a good
/// header checksum and total length, between ordinary addresses (first
/// octet 1-223 but not 127: no martian, loopback, multicast or broadcast
/// address, RFC 1812 5.3.7). Returns its total length and destination
/// (host order). The conditions are combined without branching and
/// checked once; `None` says only "not the common case": [`classify`]
/// then runs every check and names the reason. Each accepted frame is
/// one [`classify`] accepts with the same length and destination (test
/// `plain_v4_agrees_with_the_full_checks`).
#[inline(always)]
pub(crate) fn plain_v4(mac: [u8; 6], d: &[u8]) -> Option<(usize, u32)> {
    let h: &[u8; ETH_LEN + IPV4_LEN] = d.get(..ETH_LEN + IPV4_LEN)?.try_into().ok()?;
    let word = |i: usize| u32::from_be_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
    let ip = ETH_LEN;
    let total = usize::from(u16::from_be_bytes([
        h[ip + IPV4_TOT_LEN],
        h[ip + IPV4_TOT_LEN + 1],
    ]));
    let (src, dst) = (word(ip + IPV4_SADDR), word(ip + IPV4_DADDR));
    // One's complement sum of the header's ten words, as five 32-bit
    // ones (the sum does not depend on how words are grouped).
    let mut sum: u64 = (0..5).map(|k| u64::from(word(ip + 4 * k))).sum();
    sum = (sum & 0xffff_ffff) + (sum >> 32);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    let ordinary = |a: u32| {
        let first = a >> 24;
        first.wrapping_sub(1) < 223 && first != 127
    };
    let ok = (h[..6] == mac[..])
        & (mac[0] & 1 == 0)
        & (h[6] & 1 == 0)
        & (u16::from_be_bytes([h[ethernet::ETH_TYPE], h[ethernet::ETH_TYPE + 1]]) == ETH_IPV4)
        & (h[ip + IPV4_VER_IHL] == IPV4_VER_IHL_PLAIN)
        & (sum == 0xffff)
        & (total >= IPV4_LEN)
        & (total <= d.len() - ETH_LEN)
        & ordinary(src)
        & ordinary(dst);
    ok.then_some((total, dst))
}

/// The full input classification of a frame [`plain_v4`] did not accept:
/// every check, in order, with its drop reason. Out of line: the burst
/// loop keeps its registers for the common case.
#[inline(never)]
fn classify(cx: &mut Cx, mut buf: Buf) -> Next {
    let port = &cx.shared.ports[cx.out.in_port()];
    let d = cx.out.pool.data(buf);
    if d.len() < ETH_LEN {
        cx.out.drop(buf, DropReason::TruncatedFrame);
        return Next::Done;
    }
    let eth = ethernet::Frame::new_unchecked(d);
    let dst = eth.dst_addr();
    let multi = dst.is_multicast();
    if !accepts_mac(port, dst) {
        cx.out.drop(buf, DropReason::OtherHostMac);
        return Next::Done;
    }
    if eth.src_addr().is_multicast() {
        // Nothing may be sent back to a group address (replies, ICMP).
        cx.out.drop(buf, DropReason::L2MulticastSource);
        return Next::Done;
    }
    let mut et = eth.ethertype_raw();
    if et == ETH_VLAN {
        let Ok(tag) = vlan::Tag::new_checked(eth.payload()) else {
            cx.out.drop(buf, DropReason::TruncatedFrame);
            return Next::Done;
        };
        // One tag is removed: the addresses move up over it.
        et = tag.ethertype_raw();
        cx.out
            .pool
            .data_mut(buf)
            .copy_within(..ethernet::ETH_TYPE, VLAN_HLEN);
        buf.addr += VLAN_HLEN as u64;
        buf.len -= VLAN_HLEN as u32;
    }
    match et {
        ETH_IPV4 => v4(cx, buf, multi),
        ETH_IPV6 => v6(cx, buf, multi),
        ETH_ARP => {
            local::arp(cx, buf);
            Next::Done
        }
        _ => {
            cx.out.drop(buf, DropReason::UnsupportedEthertype);
            Next::Done
        }
    }
}

fn v4(cx: &mut Cx, mut buf: Buf, multi: bool) -> Next {
    let d = &cx.out.pool.data(buf)[ETH_LEN..];
    match check_v4(d) {
        Ok(total) => {
            let dst = ipv4::Packet::new_unchecked(d).dst_addr().into();
            buf.len = (ETH_LEN + total) as u32;
            Next::V4 { buf, multi, dst }
        }
        Err(r) => {
            if let Some(ptr) = r.pointer {
                // Parameter Problem, pointer to the bad octet (RFC 1812
                // 4.3.2.5); rate-limited like every ICMP error.
                icmp::v4(cx, buf, icmp::v4_parameter_problem(ptr));
            }
            cx.out.drop(buf, r.reason);
            Next::Done
        }
    }
}

fn v6(cx: &mut Cx, mut buf: Buf, multi: bool) -> Next {
    match check_v6(&cx.out.pool.data(buf)[ETH_LEN..]) {
        Ok((plen, dst)) => {
            buf.len = (ETH_LEN + IPV6_LEN + plen) as u32;
            if ipv6::is_multicast(dst) {
                let port = &cx.shared.ports[cx.out.in_port()];
                if accepts_v6_multicast(port, dst) {
                    local::v6(cx, buf, true);
                } else {
                    cx.out.drop(buf, DropReason::Ipv6MulticastDestination);
                }
                return Next::Done;
            }
            Next::V6 {
                buf,
                multi,
                dst: dst.into(),
            }
        }
        Err(reason) => {
            cx.out.drop(buf, reason);
            Next::Done
        }
    }
}

/// True for the IPv6 multicast groups the router listens to on `port`:
/// all-nodes and the solicited-node groups of its addresses.
fn accepts_v6_multicast(port: &PortCtx, dst: Ipv6Addr) -> bool {
    dst == ipv6::ALL_NODES
        || port
            .v6
            .iter()
            .any(|(a, _)| ipv6::solicited_node_multicast(*a) == dst)
}

/// Why an IPv4 header was refused, and for bad options where the ICMP
/// Parameter Problem points (offset in the IP header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    pub reason: DropReason,
    pub pointer: Option<u8>,
}

impl From<DropReason> for Refused {
    fn from(reason: DropReason) -> Refused {
        Refused {
            reason,
            pointer: None,
        }
    }
}

/// True if `port` accepts a frame sent to `dst`: its own MAC, broadcast,
/// all-nodes, and the solicited-node groups of its IPv6 addresses.
#[inline]
pub(crate) fn accepts_mac(port: &PortCtx, dst: Address) -> bool {
    dst.0 == port.mac
        || dst.is_broadcast()
        || (dst.is_ipv6_multicast()
            && (dst == Address::ipv6_multicast(ipv6::ALL_NODES)
                || port.v6.iter().any(|(a, _)| {
                    dst == Address::ipv6_multicast(ipv6::solicited_node_multicast(*a))
                })))
}

/// RFC 1812 5.2.2 / 5.3.7 checks of the IPv4 packet `d` (from the IP
/// header to the end of the frame). Returns the packet's total length.
pub(crate) fn check_v4(d: &[u8]) -> Result<usize, Refused> {
    if d.len() < IPV4_LEN {
        return Err(DropReason::Ipv4Truncated.into());
    }
    let ip = ipv4::Packet::new_unchecked(d);
    if ip.version() != 4 {
        return Err(DropReason::Ipv4BadVersion.into());
    }
    let ihl = ip.header_len();
    if ihl < IPV4_LEN {
        return Err(DropReason::Ipv4BadIhl.into());
    }
    if d.len() < ihl {
        return Err(DropReason::Ipv4Truncated.into());
    }
    // Without options (nearly every packet) the header's length is a
    // constant here, and the sum an unrolled handful of adds.
    let sum_ok = if ihl == IPV4_LEN {
        ipv4::Packet::new_unchecked(&d[..IPV4_LEN]).verify_checksum()
    } else {
        ip.verify_checksum()
    };
    if !sum_ok {
        return Err(DropReason::Ipv4BadChecksum.into());
    }
    let total = usize::from(ip.total_len());
    if total < ihl || total > d.len() {
        return Err(DropReason::Ipv4BadLength.into());
    }
    if ipv4::is_martian_source(ip.src_addr()) {
        return Err(DropReason::Ipv4MartianSource.into());
    }
    let dst = ip.dst_addr();
    if ipv4::is_limited_broadcast(dst) {
        return Err(DropReason::Ipv4BroadcastDestination.into());
    }
    if ipv4::is_martian_destination(dst) {
        return Err(DropReason::Ipv4MartianDestination.into());
    }
    if ipv4::is_multicast(dst) {
        return Err(DropReason::Ipv4MulticastDestination.into());
    }
    if ihl > IPV4_LEN {
        if let Err(at) = ipv4::options_check(ip.options()) {
            return Err(Refused {
                reason: DropReason::Ipv4BadOptions,
                pointer: Some((IPV4_LEN + at) as u8),
            });
        }
    }
    Ok(total)
}

/// RFC 8200 checks of the IPv6 packet `d`. Returns the payload length and
/// the destination.
pub(crate) fn check_v6(d: &[u8]) -> Result<(usize, Ipv6Addr), DropReason> {
    if d.len() < IPV6_LEN {
        return Err(DropReason::Ipv6Truncated);
    }
    let ip = ipv6::Packet::new_unchecked(d);
    if ip.version() != 6 {
        return Err(DropReason::Ipv6BadVersion);
    }
    let plen = usize::from(ip.payload_len());
    if IPV6_LEN + plen > d.len() {
        return Err(DropReason::Ipv6BadLength);
    }
    if plen == 0 && ip.next_header_raw() != IPV6_NH_NONE {
        return Err(DropReason::Ipv6ZeroPayloadLength);
    }
    let src = ip.src_addr();
    if ipv6::is_multicast(src) || ipv6::is_loopback(src) {
        return Err(DropReason::Ipv6BadSource);
    }
    let dst = ip.dst_addr();
    if ipv6::is_loopback(dst) || ipv6::is_unspecified(dst) {
        return Err(DropReason::Ipv6BadDestination);
    }
    Ok((plen, dst))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(opts: &[u8]) -> Vec<u8> {
        let ihl = IPV4_LEN + opts.len();
        let mut h = vec![0u8; ihl + 8];
        let mut ip = ipv4::Packet::new_unchecked(&mut h[..]);
        ip.set_version(4);
        ip.set_header_len(ihl);
        ip.set_total_len((ihl + 8) as u16);
        ip.set_ttl(64);
        ip.set_protocol(packet::Protocol::Udp);
        ip.set_src_addr([198, 18, 0, 2].into());
        ip.set_dst_addr([198, 19, 0, 2].into());
        h[IPV4_LEN..ihl].copy_from_slice(opts);
        ipv4::Packet::new_unchecked(&mut h[..]).fill_checksum();
        h
    }

    #[test]
    fn bad_options_point_at_the_offending_octet() {
        assert_eq!(check_v4(&v4(&[1, 1, 1, 0])), Ok(32));
        assert_eq!(check_v4(&v4(&[7, 7, 4, 0, 0, 0, 0, 0])), Ok(36));
        let bad = |opts: &[u8]| check_v4(&v4(opts)).unwrap_err();
        // Length beyond the header: the length octet.
        assert_eq!(bad(&[1, 7, 9, 4]).pointer, Some(22));
        // Length below 2.
        assert_eq!(bad(&[7, 1, 0, 0]).pointer, Some(21));
        // A type octet with no room for its length.
        assert_eq!(bad(&[1, 1, 1, 0x44]).pointer, Some(23));
        // Record Route with a pointer below 4; Timestamp below 5.
        assert_eq!(bad(&[7, 7, 3, 0, 0, 0, 0, 0]).pointer, Some(22));
        assert_eq!(bad(&[0x44, 8, 4, 0, 0, 0, 0, 0]).pointer, Some(22));
        assert_eq!(bad(&[1, 7, 7, 4]).reason, DropReason::Ipv4BadOptions);
    }

    /// What the full classification does with an IPv4 frame on `port`
    /// (`classify`'s IPv4 path, without a worker): the total length and
    /// destination of a frame it sends to the lookup unicast and
    /// untagged, else `None`.
    fn full_v4(port: &PortCtx, f: &[u8]) -> Option<(usize, u32)> {
        let eth = ethernet::Frame::new_checked(f).ok()?;
        let ok = accepts_mac(port, eth.dst_addr())
            && !eth.dst_addr().is_multicast()
            && !eth.src_addr().is_multicast()
            && eth.ethertype_raw() == ETH_IPV4;
        let total = check_v4(&f[ETH_LEN..]).ok().filter(|_| ok)?;
        let dst = ipv4::Packet::new_unchecked(&f[ETH_LEN..]).dst_addr();
        Some((total, dst.into()))
    }

    proptest::proptest! {
        /// `plain_v4` accepts only frames the full checks accept, with
        /// the same length and destination, and does accept the plain
        /// ones: frames built valid around addresses with every special
        /// first octet, then one byte changed (or not) and the checksum
        /// refilled (or not).
        #[test]
        fn plain_v4_agrees_with_the_full_checks(
            src0 in proptest::sample::select(vec![0u8, 1, 10, 126, 127, 128, 198, 223, 224, 239, 240, 255]),
            dst0 in proptest::sample::select(vec![0u8, 1, 10, 126, 127, 128, 198, 223, 224, 239, 240, 255]),
            rest in proptest::array::uniform6(proptest::num::u8::ANY),
            opts in proptest::bool::ANY,
            extra in 0usize..4,
            change in proptest::option::of((0usize..80, proptest::num::u8::ANY)),
            refill in proptest::bool::ANY,
        ) {
            let mac = [2, 0, 0, 0, 0, 0x10];
            let port = PortCtx {
                name: "p0".into(),
                mac,
                mtu: 1500,
                v4: vec![],
                v6: vec![],
            };
            let mut f = vec![0u8; ETH_LEN];
            f[..6].copy_from_slice(&mac);
            f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
            f[12..14].copy_from_slice(&ETH_IPV4.to_be_bytes());
            let mut ip = v4(if opts { &[1, 1, 1, 0][..] } else { &[][..] });
            ip[12..16].copy_from_slice(&[src0, rest[0], rest[1], rest[2]]);
            ip[16..20].copy_from_slice(&[dst0, rest[3], rest[4], rest[5]]);
            ipv4::Packet::new_unchecked(&mut ip[..]).fill_checksum();
            f.extend_from_slice(&ip);
            f.resize(f.len() + extra, 0);
            let plain = plain_v4(mac, &f);
            if !opts && [src0, dst0].iter().all(|&a| (1..224).contains(&a) && a != 127) {
                proptest::prop_assert_eq!(plain, full_v4(&port, &f));
                proptest::prop_assert!(plain.is_some());
            }
            if let Some((at, byte)) = change {
                let at = at % f.len();
                f[at] = byte;
                let ihl = usize::from(f[ETH_LEN] & 0xf) * 4;
                if refill && ihl <= f.len() - ETH_LEN {
                    ipv4::Packet::new_unchecked(&mut f[ETH_LEN..]).fill_checksum();
                }
            }
            if let Some(p) = plain_v4(mac, &f) {
                proptest::prop_assert_eq!(Some(p), full_v4(&port, &f));
            }
            // Cut short, the frame is never the plain case.
            let cut = &f[..ETH_LEN + IPV4_LEN - 1];
            proptest::prop_assert_eq!(plain_v4(mac, cut), None);
        }
    }

    #[test]
    fn zero_payload_length_only_with_no_next_header() {
        let mut h = [0u8; 60];
        let mut ip = ipv6::Packet::new_unchecked(&mut h[..]);
        ip.set_version(6);
        ip.set_src_addr("2000::".parse().unwrap());
        ip.set_dst_addr("2000::1".parse().unwrap());
        ip.set_next_header(IPV6_NH_NONE.into());
        assert!(check_v6(&h).is_ok());
        for next in [0u8, 6, 17, 58] {
            ipv6::Packet::new_unchecked(&mut h[..]).set_next_header(next.into());
            assert_eq!(check_v6(&h), Err(DropReason::Ipv6ZeroPayloadLength));
        }
        ipv6::Packet::new_unchecked(&mut h[..]).set_payload_len(8);
        assert!(check_v6(&h).is_ok());
    }
}
