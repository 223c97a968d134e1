//! ICMP for IPv4 (RFC 792): echo, and the errors a router originates.

use crate::checksum;
use crate::field::get_u16;
use crate::{Error, Result};

/// Length of the fixed ICMP header (type, code, checksum, 4 rest bytes).
pub const ICMP_LEN: usize = 8;

/// Offset of the type.
pub const ICMP_TYPE: usize = 0;
/// Offset of the code.
pub const ICMP_CODE: usize = 1;
/// Offset of the checksum.
pub const ICMP_CHECKSUM: usize = 2;
/// Offset of the rest of the header (identifier and sequence, MTU,
/// pointer, by type).
pub const ICMP_REST: usize = 4;

// Types and codes, with the names of `<linux/icmp.h>`.
/// Echo Reply.
pub const ICMP_ECHOREPLY: u8 = 0;
/// Destination Unreachable.
pub const ICMP_DEST_UNREACH: u8 = 3;
/// Source Quench (deprecated, still an error message).
pub const ICMP_SOURCE_QUENCH: u8 = 4;
/// Redirect.
pub const ICMP_REDIRECT: u8 = 5;
/// Echo Request.
pub const ICMP_ECHO: u8 = 8;
/// Time Exceeded.
pub const ICMP_TIME_EXCEEDED: u8 = 11;
/// Parameter Problem.
pub const ICMP_PARAMETERPROB: u8 = 12;

/// Destination Unreachable: net unreachable (no route).
pub const ICMP_NET_UNREACH: u8 = 0;
/// Destination Unreachable: host unreachable (neighbour unresolved).
pub const ICMP_HOST_UNREACH: u8 = 1;
/// Destination Unreachable: protocol unreachable.
pub const ICMP_PROT_UNREACH: u8 = 2;
/// Destination Unreachable: port unreachable.
pub const ICMP_PORT_UNREACH: u8 = 3;
/// Destination Unreachable: fragmentation needed and DF set (carries the
/// next-hop MTU, RFC 1191).
pub const ICMP_FRAG_NEEDED: u8 = 4;
/// Destination Unreachable: communication administratively prohibited.
pub const ICMP_PKT_FILTERED: u8 = 13;
/// Time Exceeded: TTL exceeded in transit.
pub const ICMP_EXC_TTL: u8 = 0;
/// Time Exceeded: fragment reassembly time exceeded.
pub const ICMP_EXC_FRAGTIME: u8 = 1;

/// True for the types that report an error (RFC 1812 §4.3.2.7: no error
/// is ever sent about one of these).
#[inline]
pub const fn is_error(typ: u8) -> bool {
    matches!(
        typ,
        ICMP_DEST_UNREACH
            | ICMP_SOURCE_QUENCH
            | ICMP_REDIRECT
            | ICMP_TIME_EXCEEDED
            | ICMP_PARAMETERPROB
    )
}

/// ICMP message type. Unknown values are preserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Message {
    /// Echo Reply (0).
    EchoReply,
    /// Destination Unreachable (3).
    DstUnreachable,
    /// Redirect (5).
    Redirect,
    /// Echo Request (8).
    EchoRequest,
    /// Time Exceeded (11).
    TimeExceeded,
    /// Parameter Problem (12).
    ParamProblem,
    /// Any other type.
    Unknown(u8),
}

impl From<u8> for Message {
    fn from(v: u8) -> Self {
        match v {
            ICMP_ECHOREPLY => Message::EchoReply,
            ICMP_DEST_UNREACH => Message::DstUnreachable,
            ICMP_REDIRECT => Message::Redirect,
            ICMP_ECHO => Message::EchoRequest,
            ICMP_TIME_EXCEEDED => Message::TimeExceeded,
            ICMP_PARAMETERPROB => Message::ParamProblem,
            o => Message::Unknown(o),
        }
    }
}

impl From<Message> for u8 {
    fn from(m: Message) -> u8 {
        match m {
            Message::EchoReply => ICMP_ECHOREPLY,
            Message::DstUnreachable => ICMP_DEST_UNREACH,
            Message::Redirect => ICMP_REDIRECT,
            Message::EchoRequest => ICMP_ECHO,
            Message::TimeExceeded => ICMP_TIME_EXCEEDED,
            Message::ParamProblem => ICMP_PARAMETERPROB,
            Message::Unknown(v) => v,
        }
    }
}

view! {
    /// A zero-copy view of an ICMPv4 message. The buffer must be exactly the
    /// message (the IPv4 payload): the checksum covers all of it.
    Packet { buffer }
}

icmp_header! {
    len: ICMP_LEN, msg_type: ICMP_TYPE, code: ICMP_CODE,
    checksum: ICMP_CHECKSUM, rest: ICMP_REST
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Next-hop MTU of a "fragmentation needed" message (bytes 6..8).
    #[inline]
    pub fn next_hop_mtu(&self) -> u16 {
        get_u16(self.buffer.as_ref(), ICMP_REST + 2)
    }

    /// Pointer of a Parameter Problem message (byte 4).
    #[inline]
    pub fn pointer(&self) -> u8 {
        self.buffer.as_ref()[ICMP_REST]
    }

    /// True if the checksum over the whole message is correct.
    #[inline]
    pub fn verify_checksum(&self) -> bool {
        checksum::fold(checksum::sum(self.buffer.as_ref())) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the next-hop MTU (also zeroes the unused bytes 4..6).
    #[inline]
    pub fn set_next_hop_mtu(&mut self, v: u16) {
        let m = v.to_be_bytes();
        self.set_rest([0, 0, m[0], m[1]]);
    }
    /// Sets the Parameter Problem pointer (and zeroes bytes 5..8).
    #[inline]
    pub fn set_pointer(&mut self, v: u8) {
        self.set_rest([v, 0, 0, 0]);
    }
    /// Computes and writes the checksum over the whole buffer.
    #[inline]
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = checksum::finish(checksum::sum(self.buffer.as_ref()));
        self.set_checksum(c);
    }
}

/// A parsed ICMPv4 message of a kind the router handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repr<'a> {
    /// Echo Request.
    EchoRequest {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq_no: u16,
        /// Echo data.
        data: &'a [u8],
    },
    /// Echo Reply.
    EchoReply {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq_no: u16,
        /// Echo data.
        data: &'a [u8],
    },
    /// Destination Unreachable (with next-hop MTU for `FRAG_NEEDED`).
    DstUnreachable {
        /// Code (an `ICMP_*` code).
        code: u8,
        /// Next-hop MTU (0 unless code is `FRAG_NEEDED`).
        next_hop_mtu: u16,
        /// Invoking packet: IP header and at least 8 bytes of payload.
        data: &'a [u8],
    },
    /// Time Exceeded.
    TimeExceeded {
        /// Code (an `ICMP_*` code).
        code: u8,
        /// Invoking packet.
        data: &'a [u8],
    },
    /// Parameter Problem.
    ParamProblem {
        /// Code.
        code: u8,
        /// Offset of the offending byte in the invoking header.
        pointer: u8,
        /// Invoking packet.
        data: &'a [u8],
    },
}

impl<'a> Repr<'a> {
    /// Parses a message after verifying its checksum; other types are
    /// `Unsupported`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&'a T>) -> Result<Repr<'a>> {
        p.check_len()?;
        if !p.verify_checksum() {
            return Err(Error::Checksum);
        }
        let data = &p.buffer.as_ref()[ICMP_LEN..];
        let (code, ident, seq_no) = (p.code(), p.echo_ident(), p.echo_seq_no());
        match p.msg_type() {
            Message::EchoRequest if code == 0 => Ok(Repr::EchoRequest {
                ident,
                seq_no,
                data,
            }),
            Message::EchoReply if code == 0 => Ok(Repr::EchoReply {
                ident,
                seq_no,
                data,
            }),
            Message::DstUnreachable => {
                let next_hop_mtu = if code == ICMP_FRAG_NEEDED {
                    p.next_hop_mtu()
                } else {
                    0
                };
                Ok(Repr::DstUnreachable {
                    code,
                    next_hop_mtu,
                    data,
                })
            }
            Message::TimeExceeded => Ok(Repr::TimeExceeded { code, data }),
            Message::ParamProblem => Ok(Repr::ParamProblem {
                code,
                pointer: p.pointer(),
                data,
            }),
            _ => Err(Error::Unsupported),
        }
    }

    /// Length of the emitted message.
    pub fn buffer_len(&self) -> usize {
        let data = match self {
            Repr::EchoRequest { data, .. }
            | Repr::EchoReply { data, .. }
            | Repr::DstUnreachable { data, .. }
            | Repr::TimeExceeded { data, .. }
            | Repr::ParamProblem { data, .. } => data,
        };
        ICMP_LEN + data.len()
    }

    /// Writes the message and its checksum. The buffer must be exactly
    /// [`buffer_len`](Self::buffer_len) bytes (the checksum covers it all).
    ///
    /// # Panics
    /// If the buffer is shorter than `buffer_len()`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        let (ty, code, rest, data): (Message, u8, [u8; 4], &[u8]) = match *self {
            Repr::EchoRequest {
                ident,
                seq_no,
                data,
            } => (Message::EchoRequest, 0, echo_rest(ident, seq_no), data),
            Repr::EchoReply {
                ident,
                seq_no,
                data,
            } => (Message::EchoReply, 0, echo_rest(ident, seq_no), data),
            Repr::DstUnreachable {
                code,
                next_hop_mtu,
                data,
            } => {
                let m = next_hop_mtu.to_be_bytes();
                (Message::DstUnreachable, code, [0, 0, m[0], m[1]], data)
            }
            Repr::TimeExceeded { code, data } => (Message::TimeExceeded, code, [0; 4], data),
            Repr::ParamProblem {
                code,
                pointer,
                data,
            } => (Message::ParamProblem, code, [pointer, 0, 0, 0], data),
        };
        p.set_msg_type(ty);
        p.set_code(code);
        p.set_rest(rest);
        p.data_mut()[..data.len()].copy_from_slice(data);
        p.fill_checksum();
    }
}

fn echo_rest(ident: u16, seq_no: u16) -> [u8; 4] {
    let (i, s) = (ident.to_be_bytes(), seq_no.to_be_bytes());
    [i[0], i[1], s[0], s[1]]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Echo request, id 0x1234, seq 1, data "abcd"; checksum computed by hand:
    // 0x0800 + 0x1234 + 0x0001 + 0x6162 + 0x6364 = 0xdefb -> !0xdefb = 0x2104.
    const ECHO: [u8; 12] = [
        8, 0, 0x21, 0x04, 0x12, 0x34, 0x00, 0x01, b'a', b'b', b'c', b'd',
    ];

    #[test]
    fn parse_echo() {
        let p = Packet::new_checked(&ECHO[..]).unwrap();
        assert!(p.verify_checksum());
        assert_eq!(p.msg_type(), Message::EchoRequest);
        assert_eq!((p.echo_ident(), p.echo_seq_no()), (0x1234, 1));
        let r = Repr::parse(&p).unwrap();
        assert_eq!(
            r,
            Repr::EchoRequest {
                ident: 0x1234,
                seq_no: 1,
                data: b"abcd"
            }
        );
        let mut out = [0u8; 12];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, ECHO);
        let mut bad = ECHO;
        bad[9] ^= 1;
        assert_eq!(
            Repr::parse(&Packet::new_checked(&bad[..]).unwrap()),
            Err(Error::Checksum)
        );
        assert_eq!(
            Packet::new_checked(&ECHO[..7]).unwrap_err(),
            Error::Truncated
        );
    }

    #[test]
    fn frag_needed() {
        let inner = [0x45u8; 28];
        let r = Repr::DstUnreachable {
            code: ICMP_FRAG_NEEDED,
            next_hop_mtu: 1400,
            data: &inner,
        };
        let mut out = vec![0u8; r.buffer_len()];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        let p = Packet::new_checked(&out[..]).unwrap();
        assert_eq!(
            (p.msg_type(), p.code(), p.next_hop_mtu()),
            (Message::DstUnreachable, 4, 1400)
        );
        assert_eq!(Repr::parse(&p).unwrap(), r);
    }

    proptest! {
        #[test]
        fn repr_roundtrip(kind in 0u8..5, a in any::<u16>(), b in any::<u16>(), c in any::<u8>(),
                          data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let r = match kind {
                0 => Repr::EchoRequest { ident: a, seq_no: b, data: &data },
                1 => Repr::EchoReply { ident: a, seq_no: b, data: &data },
                2 => Repr::DstUnreachable { code: ICMP_FRAG_NEEDED, next_hop_mtu: a, data: &data },
                3 => Repr::TimeExceeded { code: c, data: &data },
                _ => Repr::ParamProblem { code: c, pointer: b as u8, data: &data },
            };
            let mut out = vec![0u8; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut out[..]));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&out[..]).unwrap()).unwrap(), r);
        }
    }
}
