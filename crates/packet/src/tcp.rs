//! TCP headers (RFC 9293): enough for a router to read ports and flags
//! and to fix the checksum after rewriting.

use crate::checksum;
use crate::field::{get_u16, get_u32, set_u16, set_u32};
use crate::{Error, Result};
use std::net::{Ipv4Addr, Ipv6Addr};

/// Length of a TCP header without options.
pub const HEADER_LEN: usize = 20;

const PROTO: u8 = 6;

/// TCP flag bits as returned by [`Packet::flags`].
pub mod flags {
    /// FIN.
    pub const FIN: u16 = 0x001;
    /// SYN.
    pub const SYN: u16 = 0x002;
    /// RST.
    pub const RST: u16 = 0x004;
    /// PSH.
    pub const PSH: u16 = 0x008;
    /// ACK.
    pub const ACK: u16 = 0x010;
    /// URG.
    pub const URG: u16 = 0x020;
    /// ECE.
    pub const ECE: u16 = 0x040;
    /// CWR.
    pub const CWR: u16 = 0x080;
    /// NS (historic, RFC 3540).
    pub const NS: u16 = 0x100;
}

/// A zero-copy view of a TCP segment. TCP has no length field, so the
/// buffer must be exactly the segment (the IP payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer` without checking it.
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps `buffer` after [`check_len`](Self::check_len).
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Validates `20 <= header_len <= buffer length`.
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        let n = self.buffer.as_ref().len();
        if n < HEADER_LEN {
            return Err(Error::Truncated);
        }
        if self.header_len() < HEADER_LEN {
            return Err(Error::Malformed);
        }
        if self.header_len() > n {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    /// Returns the wrapped buffer.
    #[inline]
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Source port.
    #[inline]
    pub fn src_port(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 0)
    }

    /// Destination port.
    #[inline]
    pub fn dst_port(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 2)
    }

    /// Sequence number.
    #[inline]
    pub fn seq(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 4)
    }

    /// Acknowledgment number (meaningful only with the ACK flag).
    #[inline]
    pub fn ack(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 8)
    }

    /// Header length in bytes (data offset * 4).
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[12] >> 4) * 4
    }

    /// The nine flag bits (see [`flags`]).
    #[inline]
    pub fn flags(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 12) & 0x01ff
    }

    /// True if all bits of `f` are set.
    #[inline]
    pub fn has_flags(&self, f: u16) -> bool {
        self.flags() & f == f
    }

    /// Window size.
    #[inline]
    pub fn window(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 14)
    }

    /// Checksum field.
    #[inline]
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 16)
    }

    /// Urgent pointer.
    #[inline]
    pub fn urgent_ptr(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 18)
    }

    /// Option bytes.
    #[inline]
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..self.header_len()]
    }

    /// Segment data after the header.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }

    /// True if the checksum with the IPv4 pseudo header is correct.
    #[inline]
    pub fn verify_checksum_v4(&self, src: Ipv4Addr, dst: Ipv4Addr) -> bool {
        let b = self.buffer.as_ref();
        let Ok(len) = u16::try_from(b.len()) else {
            return false;
        };
        checksum::fold(checksum::pseudo_header_v4(src, dst, PROTO, len) + checksum::sum(b))
            == 0xffff
    }

    /// True if the checksum with the IPv6 pseudo header is correct.
    #[inline]
    pub fn verify_checksum_v6(&self, src: Ipv6Addr, dst: Ipv6Addr) -> bool {
        let b = self.buffer.as_ref();
        let Ok(len) = u32::try_from(b.len()) else {
            return false;
        };
        checksum::fold(checksum::pseudo_header_v6(src, dst, PROTO, len) + checksum::sum(b))
            == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the source port.
    #[inline]
    pub fn set_src_port(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 0, v);
    }
    /// Sets the destination port.
    #[inline]
    pub fn set_dst_port(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 2, v);
    }
    /// Sets the sequence number.
    #[inline]
    pub fn set_seq(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), 4, v);
    }
    /// Sets the acknowledgment number.
    #[inline]
    pub fn set_ack(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), 8, v);
    }
    /// Sets the header length in bytes (multiple of 4, 20..=60).
    #[inline]
    pub fn set_header_len(&mut self, len: usize) {
        let b = &mut self.buffer.as_mut()[12];
        *b = (*b & 0x0f) | (((len / 4) as u8) << 4);
    }
    /// Sets the nine flag bits.
    #[inline]
    pub fn set_flags(&mut self, f: u16) {
        let w = get_u16(self.buffer.as_ref(), 12);
        set_u16(self.buffer.as_mut(), 12, (w & 0xfe00) | (f & 0x01ff));
    }
    /// Sets the window.
    #[inline]
    pub fn set_window(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 14, v);
    }
    /// Sets the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 16, v);
    }
    /// Sets the urgent pointer.
    #[inline]
    pub fn set_urgent_ptr(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 18, v);
    }
    /// Computes the checksum with the IPv4 pseudo header.
    ///
    /// # Panics
    /// If the segment is longer than 65535 bytes.
    #[inline]
    pub fn fill_checksum_v4(&mut self, src: Ipv4Addr, dst: Ipv4Addr) {
        let len = u16::try_from(self.buffer.as_ref().len()).expect("TCP segment too long");
        self.set_checksum(0);
        let c = checksum::finish(
            checksum::pseudo_header_v4(src, dst, PROTO, len) + checksum::sum(self.buffer.as_ref()),
        );
        self.set_checksum(c);
    }
    /// Computes the checksum with the IPv6 pseudo header.
    #[inline]
    pub fn fill_checksum_v6(&mut self, src: Ipv6Addr, dst: Ipv6Addr) {
        let len = u32::try_from(self.buffer.as_ref().len()).unwrap_or(u32::MAX);
        self.set_checksum(0);
        let c = checksum::finish(
            checksum::pseudo_header_v6(src, dst, PROTO, len) + checksum::sum(self.buffer.as_ref()),
        );
        self.set_checksum(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_syn() {
        let mut b = [
            0x04, 0xd2, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x60, 0x02, 0xff, 0xff, 0, 0, 0,
            0, // header
            0x02, 0x04, 0x05, 0xb4, // MSS option
        ];
        let (s, d) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 1, 1));
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        p.fill_checksum_v4(s, d);
        assert!(p.verify_checksum_v4(s, d));
        assert_eq!(
            (p.src_port(), p.dst_port(), p.seq(), p.ack()),
            (1234, 80, 1, 0)
        );
        assert_eq!(
            (p.header_len(), p.flags(), p.window()),
            (24, flags::SYN, 0xffff)
        );
        assert!(p.has_flags(flags::SYN) && !p.has_flags(flags::SYN | flags::ACK));
        assert_eq!(p.options(), &[2, 4, 5, 0xb4]);
        assert!(p.payload().is_empty());
        p.set_flags(flags::SYN | flags::ACK | flags::NS);
        assert_eq!(p.flags(), 0x112);
        assert_eq!(p.header_len(), 24);
    }

    #[test]
    fn check_len_errors() {
        let mut b = [0u8; 20];
        b[12] = 0x40;
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::Malformed);
        b[12] = 0x60;
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&b[..19]).unwrap_err(), Error::Truncated);
    }
}
