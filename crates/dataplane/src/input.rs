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
use packet::ipv4::{self, IPV4_LEN};
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

/// The input stage for one received frame on `cx.out.in_port()`.
pub(crate) fn frame(cx: &mut Cx, mut buf: Buf) -> Next {
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
