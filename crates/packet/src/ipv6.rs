//! IPv6 fixed headers (RFC 8200) and address classification.
//!
//! Extension headers are not walked here: `next_header()` reports the
//! first one and the router punts packets whose first header is not a
//! transport it handles. Jumbograms (payload length 0 with a Hop-by-Hop
//! jumbo option) are not supported: their `payload()` is empty.

use crate::field::{get_array, get_u16, get_u32, set_u16, set_u32};
use crate::{Error, Result};
use std::net::Ipv6Addr;

pub use crate::ip::Protocol;

/// Length of the fixed IPv6 header.
pub const IPV6_LEN: usize = 40;
/// The minimum link MTU of IPv6 (RFC 8200 §5).
pub const IPV6_MIN_MTU: usize = 1280;

// Field offsets, named after `struct ipv6hdr`.
/// Offset of the payload length.
pub const IPV6_PAYLOAD_LEN: usize = 4;
/// Offset of the next header.
pub const IPV6_NEXTHDR: usize = 6;
/// Offset of the hop limit.
pub const IPV6_HOP_LIMIT: usize = 7;
/// Offset of the source address.
pub const IPV6_SADDR: usize = 8;
/// Offset of the destination address.
pub const IPV6_DADDR: usize = 24;

/// The link-local all-nodes group, ff02::1.
pub const ALL_NODES: Ipv6Addr = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1);

view! {
    /// A zero-copy view of an IPv6 packet. The buffer may extend past the
    /// payload (Ethernet padding); `payload()` is bounded by `payload_len`.
    Packet { buffer }
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Validates version 6 and `40 + payload_len <= buffer length`.
    ///
    /// It starts as IPv4's does (the fixed header, then the version) and
    /// is not shared with it: past those two lines each header has its
    /// own length rule (IPv4: IHL, then total length against header and
    /// buffer; IPv6: payload length), and a helper for the two lines
    /// would split each RFC's order of checks across two places for
    /// nothing.
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < IPV6_LEN {
            return Err(Error::Truncated);
        }
        if self.version() != 6 {
            return Err(Error::Malformed);
        }
        if IPV6_LEN + usize::from(self.payload_len()) > len {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    /// Version field (6).
    #[inline]
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[0] >> 4
    }

    /// Traffic class (DSCP + ECN).
    #[inline]
    pub fn traffic_class(&self) -> u8 {
        (get_u16(self.buffer.as_ref(), 0) >> 4) as u8
    }

    /// Flow label (20 bits).
    #[inline]
    pub fn flow_label(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 0) & 0x000f_ffff
    }

    /// Payload length (everything after the fixed header).
    #[inline]
    pub fn payload_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), IPV6_PAYLOAD_LEN)
    }

    /// Next header (first extension header or upper-layer protocol).
    #[inline]
    pub fn next_header(&self) -> Protocol {
        Protocol::from(self.next_header_raw())
    }

    /// The next header as a number, to compare with the `PROTO_*` and
    /// `IPV6_NH_*` constants.
    #[inline]
    pub fn next_header_raw(&self) -> u8 {
        self.buffer.as_ref()[IPV6_NEXTHDR]
    }

    /// Hop limit.
    #[inline]
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[IPV6_HOP_LIMIT]
    }

    /// Source address.
    #[inline]
    pub fn src_addr(&self) -> Ipv6Addr {
        Ipv6Addr::from(get_array::<16>(self.buffer.as_ref(), IPV6_SADDR))
    }

    /// Destination address.
    #[inline]
    pub fn dst_addr(&self) -> Ipv6Addr {
        Ipv6Addr::from(get_array::<16>(self.buffer.as_ref(), IPV6_DADDR))
    }

    /// Payload, bounded by `payload_len`.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[IPV6_LEN..IPV6_LEN + usize::from(self.payload_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the version.
    #[inline]
    pub fn set_version(&mut self, v: u8) {
        let b = &mut self.buffer.as_mut()[0];
        *b = (*b & 0x0f) | (v << 4);
    }

    /// Sets the traffic class.
    #[inline]
    pub fn set_traffic_class(&mut self, tc: u8) {
        let w = get_u16(self.buffer.as_ref(), 0);
        set_u16(self.buffer.as_mut(), 0, (w & 0xf00f) | (u16::from(tc) << 4));
    }

    /// Sets the flow label (low 20 bits used).
    #[inline]
    pub fn set_flow_label(&mut self, fl: u32) {
        let w = get_u32(self.buffer.as_ref(), 0);
        set_u32(
            self.buffer.as_mut(),
            0,
            (w & 0xfff0_0000) | (fl & 0x000f_ffff),
        );
    }

    /// Sets the payload length.
    #[inline]
    pub fn set_payload_len(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), IPV6_PAYLOAD_LEN, v);
    }

    /// Sets the next header.
    #[inline]
    pub fn set_next_header(&mut self, p: Protocol) {
        self.buffer.as_mut()[IPV6_NEXTHDR] = p.into();
    }

    /// Sets the hop limit (IPv6 has no header checksum to patch).
    #[inline]
    pub fn set_hop_limit(&mut self, v: u8) {
        self.buffer.as_mut()[IPV6_HOP_LIMIT] = v;
    }

    /// Sets the source address.
    #[inline]
    pub fn set_src_addr(&mut self, a: Ipv6Addr) {
        self.buffer.as_mut()[IPV6_SADDR..IPV6_SADDR + 16].copy_from_slice(&a.octets());
    }

    /// Sets the destination address.
    #[inline]
    pub fn set_dst_addr(&mut self, a: Ipv6Addr) {
        self.buffer.as_mut()[IPV6_DADDR..IPV6_DADDR + 16].copy_from_slice(&a.octets());
    }

    /// Mutable payload, bounded by `payload_len`.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = IPV6_LEN + usize::from(self.payload_len());
        &mut self.buffer.as_mut()[IPV6_LEN..end]
    }
}

/// A parsed IPv6 fixed header (traffic class and flow label are not
/// carried; `emit` writes them as zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Source address.
    pub src_addr: Ipv6Addr,
    /// Destination address.
    pub dst_addr: Ipv6Addr,
    /// Next header.
    pub next_header: Protocol,
    /// Payload length in bytes.
    pub payload_len: usize,
    /// Hop limit.
    pub hop_limit: u8,
}

impl Repr {
    /// Parses a checked packet's fixed header.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr {
            src_addr: p.src_addr(),
            dst_addr: p.dst_addr(),
            next_header: p.next_header(),
            payload_len: usize::from(p.payload_len()),
            hop_limit: p.hop_limit(),
        })
    }

    /// Header length (40).
    pub const fn buffer_len(&self) -> usize {
        IPV6_LEN
    }

    /// Writes the fixed header.
    ///
    /// # Panics
    /// If the buffer is shorter than [`IPV6_LEN`] or `payload_len`
    /// exceeds 65535.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        let len = u16::try_from(self.payload_len).expect("IPv6 payload_len too large");
        set_u32(p.buffer.as_mut(), 0, 0x6000_0000);
        p.set_payload_len(len);
        p.set_next_header(self.next_header);
        p.set_hop_limit(self.hop_limit);
        p.set_src_addr(self.src_addr);
        p.set_dst_addr(self.dst_addr);
    }
}

/// The solicited-node multicast group of `addr` (RFC 4291 §2.7.1):
/// ff02::1:ffXX:XXXX with the low 24 bits of `addr`.
#[inline]
pub fn solicited_node_multicast(addr: Ipv6Addr) -> Ipv6Addr {
    let o = addr.octets();
    Ipv6Addr::from([
        0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff, o[13], o[14], o[15],
    ])
}

/// ff00::/8.
#[inline]
pub fn is_multicast(a: Ipv6Addr) -> bool {
    a.octets()[0] == 0xff
}

/// Unicast link-local, fe80::/10 (never forwarded).
#[inline]
pub fn is_link_local(a: Ipv6Addr) -> bool {
    let o = a.octets();
    o[0] == 0xfe && o[1] & 0xc0 == 0x80
}

/// ::.
#[inline]
pub fn is_unspecified(a: Ipv6Addr) -> bool {
    a == Ipv6Addr::UNSPECIFIED
}

/// ::1.
#[inline]
pub fn is_loopback(a: Ipv6Addr) -> bool {
    a == Ipv6Addr::LOCALHOST
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Vec<u8> {
        let mut b = vec![0x6a, 0xb1, 0x23, 0x45, 0x00, 0x04, 17, 64];
        b.extend_from_slice(&"2001:2::1".parse::<Ipv6Addr>().unwrap().octets());
        b.extend_from_slice(&"2001:2:0:1::1".parse::<Ipv6Addr>().unwrap().octets());
        b.extend_from_slice(&[1, 2, 3, 4, 0, 0]);
        b
    }

    #[test]
    fn getters() {
        let b = sample();
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.version(), 6);
        assert_eq!(p.traffic_class(), 0xab);
        assert_eq!(p.flow_label(), 0x12345);
        assert_eq!(p.payload_len(), 4);
        assert_eq!(p.next_header(), Protocol::Udp);
        assert_eq!(p.hop_limit(), 64);
        assert_eq!(p.src_addr(), "2001:2::1".parse::<Ipv6Addr>().unwrap());
        assert_eq!(p.payload(), &[1, 2, 3, 4]);
    }

    #[test]
    fn setters() {
        let mut b = sample();
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        p.set_traffic_class(0x12);
        p.set_flow_label(0xfedcb);
        p.set_hop_limit(1);
        assert_eq!(
            (
                p.version(),
                p.traffic_class(),
                p.flow_label(),
                p.hop_limit()
            ),
            (6, 0x12, 0xfedcb, 1)
        );
    }

    #[test]
    fn check_len_errors() {
        let b = sample();
        assert_eq!(Packet::new_checked(&b[..39]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&b[..43]).unwrap_err(), Error::Truncated);
        let mut v = b.clone();
        v[0] = 0x4a;
        assert_eq!(Packet::new_checked(&v[..]).unwrap_err(), Error::Malformed);
    }

    #[test]
    fn classify() {
        let a: Ipv6Addr = "2001:2::1:2:3".parse().unwrap();
        assert_eq!(
            solicited_node_multicast(a),
            "ff02::1:ff02:3".parse::<Ipv6Addr>().unwrap()
        );
        assert!(is_multicast("ff02::1".parse().unwrap()));
        assert!(
            is_link_local("fe80::1".parse().unwrap()) && is_link_local("febf::1".parse().unwrap())
        );
        assert!(!is_link_local("fec0::1".parse().unwrap()));
        assert!(is_unspecified(Ipv6Addr::UNSPECIFIED) && is_loopback(Ipv6Addr::LOCALHOST));
        assert!(!is_multicast(a) && !is_link_local(a) && !is_loopback(a));
    }

    proptest! {
        #[test]
        fn repr_roundtrip(src in any::<[u8; 16]>(), dst in any::<[u8; 16]>(), nh in any::<u8>(),
                          payload_len in 0usize..300, hop_limit in any::<u8>()) {
            let r = Repr { src_addr: src.into(), dst_addr: dst.into(), next_header: nh.into(), payload_len, hop_limit };
            let mut b = vec![0xffu8; IPV6_LEN + payload_len];
            r.emit(&mut Packet::new_unchecked(&mut b[..]));
            let p = Packet::new_checked(&b[..]).unwrap();
            prop_assert_eq!((p.traffic_class(), p.flow_label()), (0, 0));
            prop_assert_eq!(Repr::parse(&p).unwrap(), r);
        }
    }
}
