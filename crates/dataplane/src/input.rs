//! Input checks: pure functions over the bytes of a received frame, so
//! they can be tested (and reasoned about) without a worker.
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
use crate::router::PortCtx;
use crate::wire::*;

/// Next Header value "No Next Header" (RFC 8200 4.7).
const NO_NEXT_HEADER: u8 = 59;

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
