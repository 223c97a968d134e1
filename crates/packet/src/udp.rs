//! UDP (RFC 768), with IPv4 and IPv6 pseudo-header checksums.

use crate::checksum;
use crate::field::{get_u16, set_u16};
use crate::ip::{L4_DPORT, L4_SPORT, PROTO_UDP};
use crate::{Error, Result};
use std::net::{Ipv4Addr, Ipv6Addr};

/// Length of the UDP header.
pub const UDP_LEN: usize = 8;

/// Offset of the source port.
pub const UDP_SOURCE: usize = L4_SPORT;
/// Offset of the destination port.
pub const UDP_DEST: usize = L4_DPORT;
/// Offset of the length (header and payload).
pub const UDP_LENGTH: usize = 4;
/// Offset of the checksum.
pub const UDP_CHECK: usize = 6;

view! {
    /// A zero-copy view of a UDP datagram. The buffer may extend past the
    /// `len` field (e.g. padding); `payload()` is bounded by `len`.
    Packet { buffer }
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Validates `8 <= len <= buffer length`.
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        let n = self.buffer.as_ref().len();
        if n < UDP_LEN {
            return Err(Error::Truncated);
        }
        let len = usize::from(self.len());
        if len < UDP_LEN {
            return Err(Error::Malformed);
        }
        if len > n {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    /// Source port.
    #[inline]
    pub fn src_port(&self) -> u16 {
        get_u16(self.buffer.as_ref(), UDP_SOURCE)
    }

    /// Destination port.
    #[inline]
    pub fn dst_port(&self) -> u16 {
        get_u16(self.buffer.as_ref(), UDP_DEST)
    }

    /// Length field (header + payload).
    #[inline]
    pub fn len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), UDP_LENGTH)
    }

    /// True if the length field says there is no payload.
    #[inline]
    pub fn is_empty(&self) -> bool {
        usize::from(self.len()) <= UDP_LEN
    }

    /// Checksum field (0 = none, IPv4 only).
    #[inline]
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), UDP_CHECK)
    }

    /// Payload, bounded by the length field.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[UDP_LEN..usize::from(self.len())]
    }

    fn datagram(&self) -> &[u8] {
        &self.buffer.as_ref()[..usize::from(self.len())]
    }

    /// True if the checksum is correct or absent (0, allowed over IPv4).
    #[inline]
    pub fn verify_checksum_v4(&self, src: Ipv4Addr, dst: Ipv4Addr) -> bool {
        if self.checksum() == 0 {
            return true;
        }
        let s = checksum::pseudo_header_v4(src, dst, PROTO_UDP, self.len())
            + checksum::sum(self.datagram());
        checksum::fold(s) == 0xffff
    }

    /// True if the checksum is correct (mandatory over IPv6: 0 is invalid).
    #[inline]
    pub fn verify_checksum_v6(&self, src: Ipv6Addr, dst: Ipv6Addr) -> bool {
        if self.checksum() == 0 {
            return false;
        }
        let s = checksum::pseudo_header_v6(src, dst, PROTO_UDP, u32::from(self.len()))
            + checksum::sum(self.datagram());
        checksum::fold(s) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the source port.
    #[inline]
    pub fn set_src_port(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), UDP_SOURCE, v);
    }
    /// Sets the destination port.
    #[inline]
    pub fn set_dst_port(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), UDP_DEST, v);
    }
    /// Sets the length field.
    #[inline]
    pub fn set_len(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), UDP_LENGTH, v);
    }
    /// Sets the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), UDP_CHECK, v);
    }
    /// Mutable payload, bounded by the length field.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = usize::from(self.len());
        &mut self.buffer.as_mut()[UDP_LEN..end]
    }

    /// A computed 0 is sent as 0xffff (RFC 768), as 0 means "no checksum".
    fn write_checksum(&mut self, pseudo: u32) {
        self.set_checksum(0);
        let c = checksum::finish(pseudo + checksum::sum(self.datagram()));
        self.set_checksum(if c == 0 { 0xffff } else { c });
    }

    /// Computes the checksum with the IPv4 pseudo header.
    #[inline]
    pub fn fill_checksum_v4(&mut self, src: Ipv4Addr, dst: Ipv4Addr) {
        self.write_checksum(checksum::pseudo_header_v4(src, dst, PROTO_UDP, self.len()));
    }

    /// Computes the checksum with the IPv6 pseudo header.
    #[inline]
    pub fn fill_checksum_v6(&mut self, src: Ipv6Addr, dst: Ipv6Addr) {
        self.write_checksum(checksum::pseudo_header_v6(
            src,
            dst,
            PROTO_UDP,
            u32::from(self.len()),
        ));
    }
}

/// A parsed UDP header (the checksum is handled by the view).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Payload length.
    pub payload_len: usize,
}

impl Repr {
    /// Reads the header of a checked datagram (checksum not verified:
    /// that needs the IP addresses).
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            payload_len: usize::from(p.len()) - UDP_LEN,
        })
    }

    /// Header plus payload length.
    pub const fn buffer_len(&self) -> usize {
        UDP_LEN + self.payload_len
    }

    /// Writes the header with a zero checksum; write the payload, then
    /// call `fill_checksum_v4`/`_v6`.
    ///
    /// # Panics
    /// If the buffer is shorter than [`UDP_LEN`] or `payload_len > 65527`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_src_port(self.src_port);
        p.set_dst_port(self.dst_port);
        p.set_len(u16::try_from(self.buffer_len()).expect("UDP payload_len too large"));
        p.set_checksum(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn checksum_v4_known() {
        // 198.18.0.1:1234 -> 198.18.1.1:7, payload "hi". Hand sum:
        // pseudo c612+0001+c612+0101+0011+000a = 0x18d41 -> 0x8d42;
        // udp 04d2+0007+000a+6869 = 0x6d4c; total 0xfa8e -> !0xfa8e = 0x0571.
        let mut b = [0x04, 0xd2, 0x00, 0x07, 0x00, 0x0a, 0x00, 0x00, b'h', b'i'];
        let (s, d) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 1, 1));
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        p.fill_checksum_v4(s, d);
        assert_eq!(p.checksum(), 0x0571);
        assert!(p.verify_checksum_v4(s, d));
        assert!(!p.verify_checksum_v4(s, Ipv4Addr::new(198, 18, 1, 2)));
        assert_eq!(
            (p.src_port(), p.dst_port(), p.payload()),
            (1234, 7, &b"hi"[..])
        );
    }

    #[test]
    fn zero_checksum() {
        let b = [0, 1, 0, 2, 0, 8, 0, 0];
        let p = Packet::new_checked(&b[..]).unwrap();
        let (s, d): (Ipv6Addr, Ipv6Addr) =
            ("2001:2::1".parse().unwrap(), "2001:2::2".parse().unwrap());
        assert!(p.verify_checksum_v4(Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST));
        assert!(!p.verify_checksum_v6(s, d));
    }

    #[test]
    fn check_len_errors() {
        assert_eq!(
            Packet::new_checked(&[0u8; 7][..]).unwrap_err(),
            Error::Truncated
        );
        assert_eq!(
            Packet::new_checked(&[0, 0, 0, 0, 0, 7, 0, 0][..]).unwrap_err(),
            Error::Malformed
        );
        assert_eq!(
            Packet::new_checked(&[0, 0, 0, 0, 0, 9, 0, 0][..]).unwrap_err(),
            Error::Truncated
        );
        let padded = [0, 0, 0, 0, 0, 9, 0, 0, 1, 0, 0];
        assert_eq!(Packet::new_checked(&padded[..]).unwrap().payload(), &[1]);
    }

    proptest! {
        #[test]
        fn roundtrip_v6(sp in any::<u16>(), dp in any::<u16>(), payload in proptest::collection::vec(any::<u8>(), 0..100),
                        s in any::<[u8; 16]>(), d in any::<[u8; 16]>()) {
            let r = Repr { src_port: sp, dst_port: dp, payload_len: payload.len() };
            let mut b = vec![0u8; r.buffer_len()];
            let mut p = Packet::new_unchecked(&mut b[..]);
            r.emit(&mut p);
            p.payload_mut().copy_from_slice(&payload);
            p.fill_checksum_v6(s.into(), d.into());
            let p = Packet::new_checked(&b[..]).unwrap();
            prop_assert!(p.verify_checksum_v6(s.into(), d.into()));
            prop_assert_eq!(Repr::parse(&p).unwrap(), r);
        }
    }
}
