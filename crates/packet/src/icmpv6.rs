//! ICMPv6 (RFC 4443). Neighbor Discovery bodies are in [`crate::ndp`].

use crate::checksum;
use crate::field::{get_u16, get_u32, set_u16, set_u32};
use crate::{Error, Result};
use std::net::Ipv6Addr;

/// Length of the fixed ICMPv6 header (type, code, checksum, 4 bytes).
pub const HEADER_LEN: usize = 8;

/// IPv6 next-header value of ICMPv6.
const NEXT_HEADER: u8 = 58;

/// ICMPv6 message type. Unknown values are preserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Message {
    /// Destination Unreachable (1).
    DstUnreachable,
    /// Packet Too Big (2).
    PacketTooBig,
    /// Time Exceeded (3).
    TimeExceeded,
    /// Parameter Problem (4).
    ParamProblem,
    /// Echo Request (128).
    EchoRequest,
    /// Echo Reply (129).
    EchoReply,
    /// Router Solicitation (133).
    RouterSolicit,
    /// Router Advertisement (134).
    RouterAdvert,
    /// Neighbor Solicitation (135).
    NeighborSolicit,
    /// Neighbor Advertisement (136).
    NeighborAdvert,
    /// Redirect (137).
    Redirect,
    /// Any other type.
    Unknown(u8),
}

impl From<u8> for Message {
    fn from(v: u8) -> Self {
        match v {
            1 => Message::DstUnreachable,
            2 => Message::PacketTooBig,
            3 => Message::TimeExceeded,
            4 => Message::ParamProblem,
            128 => Message::EchoRequest,
            129 => Message::EchoReply,
            133 => Message::RouterSolicit,
            134 => Message::RouterAdvert,
            135 => Message::NeighborSolicit,
            136 => Message::NeighborAdvert,
            137 => Message::Redirect,
            o => Message::Unknown(o),
        }
    }
}

impl From<Message> for u8 {
    fn from(m: Message) -> u8 {
        match m {
            Message::DstUnreachable => 1,
            Message::PacketTooBig => 2,
            Message::TimeExceeded => 3,
            Message::ParamProblem => 4,
            Message::EchoRequest => 128,
            Message::EchoReply => 129,
            Message::RouterSolicit => 133,
            Message::RouterAdvert => 134,
            Message::NeighborSolicit => 135,
            Message::NeighborAdvert => 136,
            Message::Redirect => 137,
            Message::Unknown(v) => v,
        }
    }
}

/// Code values for the error types a router sends.
pub mod code {
    /// Destination Unreachable: no route to destination.
    pub const NO_ROUTE: u8 = 0;
    /// Destination Unreachable: administratively prohibited.
    pub const ADMIN_PROHIBITED: u8 = 1;
    /// Destination Unreachable: address unreachable (ND failed).
    pub const ADDR_UNREACHABLE: u8 = 3;
    /// Destination Unreachable: port unreachable.
    pub const PORT_UNREACHABLE: u8 = 4;
    /// Time Exceeded: hop limit exceeded in transit.
    pub const HOP_LIMIT_EXCEEDED: u8 = 0;
    /// Time Exceeded: fragment reassembly time exceeded.
    pub const FRAG_REASSEMBLY_EXCEEDED: u8 = 1;
}

/// A zero-copy view of an ICMPv6 message. The buffer must be exactly the
/// message (the upper-layer payload): the checksum covers all of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    pub(crate) buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer` without checking it.
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps `buffer`, failing with `Truncated` if shorter than [`HEADER_LEN`].
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the buffer holds the fixed header.
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// Returns the wrapped buffer.
    #[inline]
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Message type.
    #[inline]
    pub fn msg_type(&self) -> Message {
        Message::from(self.buffer.as_ref()[0])
    }

    /// Message code.
    #[inline]
    pub fn code(&self) -> u8 {
        self.buffer.as_ref()[1]
    }

    /// Checksum field.
    #[inline]
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 2)
    }

    /// Echo identifier (bytes 4..6).
    #[inline]
    pub fn echo_ident(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 4)
    }

    /// Echo sequence number (bytes 6..8).
    #[inline]
    pub fn echo_seq_no(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 6)
    }

    /// MTU of a Packet Too Big message (bytes 4..8).
    #[inline]
    pub fn pkt_too_big_mtu(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 4)
    }

    /// Pointer of a Parameter Problem message (bytes 4..8).
    #[inline]
    pub fn param_problem_ptr(&self) -> u32 {
        get_u32(self.buffer.as_ref(), 4)
    }

    /// Everything after the 8-byte header.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }

    /// True if the checksum, including the IPv6 pseudo header for
    /// `src`/`dst`, is correct.
    #[inline]
    pub fn verify_checksum(&self, src: Ipv6Addr, dst: Ipv6Addr) -> bool {
        let b = self.buffer.as_ref();
        let Ok(len) = u32::try_from(b.len()) else {
            return false;
        };
        let s = checksum::pseudo_header_v6(src, dst, NEXT_HEADER, len) + checksum::sum(b);
        checksum::fold(s) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the type.
    #[inline]
    pub fn set_msg_type(&mut self, m: Message) {
        self.buffer.as_mut()[0] = m.into();
    }
    /// Sets the code.
    #[inline]
    pub fn set_code(&mut self, c: u8) {
        self.buffer.as_mut()[1] = c;
    }
    /// Sets the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 2, v);
    }
    /// Sets the echo identifier.
    #[inline]
    pub fn set_echo_ident(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 4, v);
    }
    /// Sets the echo sequence number.
    #[inline]
    pub fn set_echo_seq_no(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 6, v);
    }
    /// Sets the Packet Too Big MTU.
    #[inline]
    pub fn set_pkt_too_big_mtu(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), 4, v);
    }
    /// Sets the Parameter Problem pointer.
    #[inline]
    pub fn set_param_problem_ptr(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), 4, v);
    }
    /// Mutable data after the header.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_LEN..]
    }
    /// Computes and writes the checksum with the IPv6 pseudo header.
    #[inline]
    pub fn fill_checksum(&mut self, src: Ipv6Addr, dst: Ipv6Addr) {
        self.set_checksum(0);
        let b = self.buffer.as_ref();
        let len = u32::try_from(b.len()).unwrap_or(u32::MAX);
        let c = checksum::finish(
            checksum::pseudo_header_v6(src, dst, NEXT_HEADER, len) + checksum::sum(b),
        );
        self.set_checksum(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addrs() -> (Ipv6Addr, Ipv6Addr) {
        ("2001:2::1".parse().unwrap(), "2001:2::2".parse().unwrap())
    }

    #[test]
    fn echo_checksum() {
        let (s, d) = addrs();
        let mut b = [128u8, 0, 0, 0, 0x12, 0x34, 0, 7, 1, 2, 3];
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        p.fill_checksum(s, d);
        assert!(p.verify_checksum(s, d));
        assert!(!p.verify_checksum(d, "2001:2::3".parse().unwrap()));
        assert_eq!(
            (p.msg_type(), p.echo_ident(), p.echo_seq_no()),
            (Message::EchoRequest, 0x1234, 7)
        );
        assert_eq!(p.data(), &[1, 2, 3]);
        assert_eq!(Packet::new_checked(&b[..7]).unwrap_err(), Error::Truncated);
    }

    #[test]
    fn too_big() {
        let mut b = [0u8; 8];
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.set_msg_type(Message::PacketTooBig);
        p.set_pkt_too_big_mtu(1280);
        assert_eq!(b, [2, 0, 0, 0, 0, 0, 0x05, 0x00]);
    }

    #[test]
    fn message_roundtrip() {
        for v in 0..=255u8 {
            assert_eq!(u8::from(Message::from(v)), v);
        }
    }
}
