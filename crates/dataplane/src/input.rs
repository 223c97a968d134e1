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

use crate::drop::DropReason;
use crate::icmp;
use crate::local;
use crate::router::PortCtx;
use crate::wire::*;
use crate::worker::Cx;
use netio::Buf;
use std::net::Ipv6Addr;

/// Next Header value "No Next Header" (RFC 8200 4.7).
const NO_NEXT_HEADER: u8 = 59;

/// Where a frame goes after the input stage.
pub(crate) enum Next {
    /// Ended here: dropped, or delivered locally (ARP, IPv6 multicast).
    Done,
    /// An IPv4 packet to look up: its descriptor (untagged, trimmed to
    /// the IP total length) and whether it came as a link-layer
    /// broadcast/multicast.
    V4 { buf: Buf, multi: bool },
    /// An IPv6 packet to look up.
    V6 { buf: Buf, multi: bool },
}

/// The input stage for one received frame on `cx.out.in_port`.
pub(crate) fn frame(cx: &mut Cx, mut buf: Buf) -> Next {
    let port = &cx.shared.ports[cx.out.in_port];
    let d = cx.out.pool.data(buf);
    if d.len() < ETH_LEN {
        cx.out.drop(buf, DropReason::TruncatedFrame);
        return Next::Done;
    }
    let dst = mac_at(d, 0);
    let multi = dst[0] & 1 != 0;
    if !accepts_mac(port, dst) {
        cx.out.drop(buf, DropReason::OtherHostMac);
        return Next::Done;
    }
    if d[6] & 1 != 0 {
        // Nothing may be sent back to a group address (replies, ICMP).
        cx.out.drop(buf, DropReason::L2MulticastSource);
        return Next::Done;
    }
    let mut et = get16(d, 12);
    if et == ETH_VLAN {
        if d.len() < ETH_LEN + 4 {
            cx.out.drop(buf, DropReason::TruncatedFrame);
            return Next::Done;
        }
        et = get16(d, 16);
        let dm = cx.out.pool.data_mut(buf);
        dm.copy_within(0..12, 4);
        buf.addr += 4;
        buf.len -= 4;
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
    match check_v4(&cx.out.pool.data(buf)[ETH_LEN..]) {
        Ok(total) => {
            buf.len = (ETH_LEN + total) as u32;
            Next::V4 { buf, multi }
        }
        Err(r) => {
            if let Some(ptr) = r.pointer {
                // Parameter Problem, pointer to the bad octet (RFC 1812
                // 4.3.2.5); rate-limited like every ICMP error.
                cx.icmp_v4(buf, icmp::v4_parameter_problem(ptr));
            }
            cx.out.drop(buf, r.reason);
            Next::Done
        }
    }
}

fn v6(cx: &mut Cx, mut buf: Buf, multi: bool) -> Next {
    match check_v6(&cx.out.pool.data(buf)[ETH_LEN..]) {
        Ok((plen, dst)) => {
            buf.len = (ETH_LEN + 40 + plen) as u32;
            if dst >> 120 == 0xff {
                let port = &cx.shared.ports[cx.out.in_port];
                if accepts_v6_multicast(port, Ipv6Addr::from(dst)) {
                    local::v6(cx, buf, true);
                } else {
                    cx.out.drop(buf, DropReason::Ipv6MulticastDestination);
                }
                return Next::Done;
            }
            Next::V6 { buf, multi }
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
    dst == Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1)
        || port.v6.iter().any(|(a, _)| solicited_node(*a) == dst)
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
pub(crate) fn accepts_mac(port: &PortCtx, dst: [u8; 6]) -> bool {
    dst == port.mac
        || dst == BROADCAST
        || (dst[0] == 0x33
            && dst[1] == 0x33
            && (dst == [0x33, 0x33, 0, 0, 0, 1]
                || (dst[2] == 0xff
                    && port.v6.iter().any(|(a, _)| a.octets()[13..16] == dst[3..6]))))
}

/// RFC 1812 5.2.2 / 5.3.7 checks of the IPv4 packet `d` (from the IP
/// header to the end of the frame). Returns the packet's total length.
pub(crate) fn check_v4(d: &[u8]) -> Result<usize, Refused> {
    if d.len() < 20 {
        return Err(DropReason::Ipv4Truncated.into());
    }
    if d[0] >> 4 != 4 {
        return Err(DropReason::Ipv4BadVersion.into());
    }
    let ihl = (d[0] & 0xf) as usize * 4;
    if ihl < 20 {
        return Err(DropReason::Ipv4BadIhl.into());
    }
    if d.len() < ihl {
        return Err(DropReason::Ipv4Truncated.into());
    }
    if !ipv4_header_sum_ok(&d[..ihl]) {
        return Err(DropReason::Ipv4BadChecksum.into());
    }
    let total = get16(d, 2) as usize;
    if total < ihl || total > d.len() {
        return Err(DropReason::Ipv4BadLength.into());
    }
    let src = get32(d, 12);
    if ipv4_martian_source(src) {
        return Err(DropReason::Ipv4MartianSource.into());
    }
    let dst = get32(d, 16);
    if dst == u32::MAX {
        return Err(DropReason::Ipv4BroadcastDestination.into());
    }
    let top = dst >> 24;
    if top == 0 || top == 127 || top >= 240 {
        return Err(DropReason::Ipv4MartianDestination.into());
    }
    if top >= 224 {
        return Err(DropReason::Ipv4MulticastDestination.into());
    }
    if ihl > 20 {
        if let Err(at) = ipv4_options_check(&d[20..ihl]) {
            return Err(Refused {
                reason: DropReason::Ipv4BadOptions,
                pointer: Some((20 + at) as u8),
            });
        }
    }
    Ok(total)
}

/// RFC 8200 checks of the IPv6 packet `d`. Returns the payload length and
/// the destination.
pub(crate) fn check_v6(d: &[u8]) -> Result<(usize, u128), DropReason> {
    if d.len() < 40 {
        return Err(DropReason::Ipv6Truncated);
    }
    if d[0] >> 4 != 6 {
        return Err(DropReason::Ipv6BadVersion);
    }
    let plen = get16(d, 4) as usize;
    if 40 + plen > d.len() {
        return Err(DropReason::Ipv6BadLength);
    }
    if plen == 0 && d[6] != NO_NEXT_HEADER {
        return Err(DropReason::Ipv6ZeroPayloadLength);
    }
    let src = get128(d, 8);
    if src >> 120 == 0xff || src == 1 {
        return Err(DropReason::Ipv6BadSource);
    }
    let dst = get128(d, 24);
    if dst == 1 || dst == 0 {
        return Err(DropReason::Ipv6BadDestination);
    }
    Ok((plen, dst))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(opts: &[u8]) -> Vec<u8> {
        let ihl = 20 + opts.len();
        let mut h = vec![0u8; ihl + 8];
        h[0] = 0x40 | (ihl / 4) as u8;
        put16(&mut h, 2, (ihl + 8) as u16);
        h[8] = 64;
        h[9] = 17;
        h[12..16].copy_from_slice(&[198, 18, 0, 2]);
        h[16..20].copy_from_slice(&[198, 19, 0, 2]);
        h[20..ihl].copy_from_slice(opts);
        ipv4_set_checksum(&mut h[..ihl]);
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
        h[0] = 0x60;
        h[8] = 0x20;
        h[24] = 0x20;
        h[39] = 1;
        h[6] = NO_NEXT_HEADER;
        assert!(check_v6(&h).is_ok());
        for next in [0u8, 6, 17, 58] {
            h[6] = next;
            assert_eq!(check_v6(&h), Err(DropReason::Ipv6ZeroPayloadLength));
        }
        put16(&mut h, 4, 8);
        assert!(check_v6(&h).is_ok());
    }
}
