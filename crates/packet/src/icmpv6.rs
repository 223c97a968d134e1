//! ICMPv6 (RFC 4443). Neighbor Discovery bodies are in [`crate::ndp`].

use crate::checksum;
use crate::field::{get_u32, set_u32};
use crate::ip::PROTO_ICMPV6;
use crate::Result;
use std::net::Ipv6Addr;

/// Length of the fixed ICMPv6 header (type, code, checksum, 4 bytes).
pub const ICMPV6_LEN: usize = 8;

/// Offset of the type.
pub const ICMPV6_TYPE: usize = 0;
/// Offset of the code.
pub const ICMPV6_CODE: usize = 1;
/// Offset of the checksum.
pub const ICMPV6_CHECKSUM: usize = 2;
/// Offset of the rest of the header (by type: identifier and sequence,
/// MTU, pointer, flags).
pub const ICMPV6_REST: usize = 4;

// Types and codes, with the names of `<linux/icmpv6.h>` and `net/ndisc.h`.
/// Destination Unreachable.
pub const ICMPV6_DEST_UNREACH: u8 = 1;
/// Packet Too Big.
pub const ICMPV6_PKT_TOOBIG: u8 = 2;
/// Time Exceeded.
pub const ICMPV6_TIME_EXCEED: u8 = 3;
/// Parameter Problem.
pub const ICMPV6_PARAMPROB: u8 = 4;
/// Echo Request.
pub const ICMPV6_ECHO_REQUEST: u8 = 128;
/// Echo Reply.
pub const ICMPV6_ECHO_REPLY: u8 = 129;
/// Router Solicitation.
pub const NDISC_ROUTER_SOLICITATION: u8 = 133;
/// Router Advertisement.
pub const NDISC_ROUTER_ADVERTISEMENT: u8 = 134;
/// Neighbor Solicitation.
pub const NDISC_NEIGHBOUR_SOLICITATION: u8 = 135;
/// Neighbor Advertisement.
pub const NDISC_NEIGHBOUR_ADVERTISEMENT: u8 = 136;
/// Redirect.
pub const NDISC_REDIRECT: u8 = 137;
/// Types below this bit are errors, types with it informational (RFC 4443 2.1).
pub const ICMPV6_INFOMSG_MASK: u8 = 0x80;

/// Destination Unreachable: no route to destination.
pub const ICMPV6_NOROUTE: u8 = 0;
/// Destination Unreachable: administratively prohibited.
pub const ICMPV6_ADM_PROHIBITED: u8 = 1;
/// Destination Unreachable: address unreachable (ND failed).
pub const ICMPV6_ADDR_UNREACH: u8 = 3;
/// Destination Unreachable: port unreachable.
pub const ICMPV6_PORT_UNREACH: u8 = 4;
/// Time Exceeded: hop limit exceeded in transit.
pub const ICMPV6_EXC_HOPLIMIT: u8 = 0;
/// Time Exceeded: fragment reassembly time exceeded.
pub const ICMPV6_EXC_FRAGTIME: u8 = 1;

/// True for the error types (RFC 4443 2.4 (e): no error is ever sent about
/// one of these).
#[inline]
pub const fn is_error(typ: u8) -> bool {
    typ & ICMPV6_INFOMSG_MASK == 0
}

/// The ICMPv6 checksum of `msg` (its checksum field included as is) with
/// the pseudo header for `src` -> `dst`, as a partial sum: 0xffff when a
/// received message verifies, and `!` of it is the value to write when the
/// field was zero.
#[inline]
fn sum_with_pseudo_header(src: Ipv6Addr, dst: Ipv6Addr, msg: &[u8]) -> u32 {
    let len = u32::try_from(msg.len()).unwrap_or(u32::MAX);
    checksum::pseudo_header_v6(src, dst, PROTO_ICMPV6, len) + checksum::sum(msg)
}

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
            ICMPV6_DEST_UNREACH => Message::DstUnreachable,
            ICMPV6_PKT_TOOBIG => Message::PacketTooBig,
            ICMPV6_TIME_EXCEED => Message::TimeExceeded,
            ICMPV6_PARAMPROB => Message::ParamProblem,
            ICMPV6_ECHO_REQUEST => Message::EchoRequest,
            ICMPV6_ECHO_REPLY => Message::EchoReply,
            NDISC_ROUTER_SOLICITATION => Message::RouterSolicit,
            NDISC_ROUTER_ADVERTISEMENT => Message::RouterAdvert,
            NDISC_NEIGHBOUR_SOLICITATION => Message::NeighborSolicit,
            NDISC_NEIGHBOUR_ADVERTISEMENT => Message::NeighborAdvert,
            NDISC_REDIRECT => Message::Redirect,
            o => Message::Unknown(o),
        }
    }
}

impl From<Message> for u8 {
    fn from(m: Message) -> u8 {
        match m {
            Message::DstUnreachable => ICMPV6_DEST_UNREACH,
            Message::PacketTooBig => ICMPV6_PKT_TOOBIG,
            Message::TimeExceeded => ICMPV6_TIME_EXCEED,
            Message::ParamProblem => ICMPV6_PARAMPROB,
            Message::EchoRequest => ICMPV6_ECHO_REQUEST,
            Message::EchoReply => ICMPV6_ECHO_REPLY,
            Message::RouterSolicit => NDISC_ROUTER_SOLICITATION,
            Message::RouterAdvert => NDISC_ROUTER_ADVERTISEMENT,
            Message::NeighborSolicit => NDISC_NEIGHBOUR_SOLICITATION,
            Message::NeighborAdvert => NDISC_NEIGHBOUR_ADVERTISEMENT,
            Message::Redirect => NDISC_REDIRECT,
            Message::Unknown(v) => v,
        }
    }
}

view! {
    /// A zero-copy view of an ICMPv6 message. The buffer must be exactly the
    /// message (the upper-layer payload): the checksum covers all of it.
    Packet { pub(crate) buffer }
}

icmp_header! {
    len: ICMPV6_LEN, msg_type: ICMPV6_TYPE, code: ICMPV6_CODE,
    checksum: ICMPV6_CHECKSUM, rest: ICMPV6_REST
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// MTU of a Packet Too Big message (bytes 4..8).
    #[inline]
    pub fn pkt_too_big_mtu(&self) -> u32 {
        get_u32(self.buffer.as_ref(), ICMPV6_REST)
    }

    /// Pointer of a Parameter Problem message (bytes 4..8).
    #[inline]
    pub fn param_problem_ptr(&self) -> u32 {
        get_u32(self.buffer.as_ref(), ICMPV6_REST)
    }

    /// True if the checksum, including the IPv6 pseudo header for
    /// `src`/`dst`, is correct.
    #[inline]
    pub fn verify_checksum(&self, src: Ipv6Addr, dst: Ipv6Addr) -> bool {
        let b = self.buffer.as_ref();
        u32::try_from(b.len()).is_ok()
            && checksum::fold(sum_with_pseudo_header(src, dst, b)) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the Packet Too Big MTU.
    #[inline]
    pub fn set_pkt_too_big_mtu(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), ICMPV6_REST, v);
    }
    /// Sets the Parameter Problem pointer.
    #[inline]
    pub fn set_param_problem_ptr(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), ICMPV6_REST, v);
    }
    /// Computes and writes the checksum with the IPv6 pseudo header.
    #[inline]
    pub fn fill_checksum(&mut self, src: Ipv6Addr, dst: Ipv6Addr) {
        self.set_checksum(0);
        let c = checksum::finish(sum_with_pseudo_header(src, dst, self.buffer.as_ref()));
        self.set_checksum(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

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
