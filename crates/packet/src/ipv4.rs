//! IPv4 headers (RFC 791) and the address classes a router filters on.

use crate::checksum;
use crate::field::{get_array, get_u16, set_u16};
use crate::{Error, Result};
use std::net::Ipv4Addr;

pub use crate::ip::Protocol;

/// Length of an IPv4 header without options.
pub const IPV4_LEN: usize = 20;
/// Longest IPv4 header (IHL 15).
pub const IPV4_MAX_LEN: usize = 60;

// Field offsets, named after `struct iphdr`.
/// Offset of version (high nibble) and IHL (low nibble, in 32-bit words).
pub const IPV4_VER_IHL: usize = 0;
/// Offset of the DSCP/ECN byte.
pub const IPV4_TOS: usize = 1;
/// Offset of the total length.
pub const IPV4_TOT_LEN: usize = 2;
/// Offset of the identification.
pub const IPV4_ID: usize = 4;
/// Offset of the flags and fragment offset word.
pub const IPV4_FRAG_OFF: usize = 6;
/// Offset of the time to live.
pub const IPV4_TTL: usize = 8;
/// Offset of the protocol.
pub const IPV4_PROTOCOL: usize = 9;
/// Offset of the header checksum.
pub const IPV4_CHECK: usize = 10;
/// Offset of the source address.
pub const IPV4_SADDR: usize = 12;
/// Offset of the destination address.
pub const IPV4_DADDR: usize = 16;
/// The byte at [`IPV4_VER_IHL`] of a header without options (version 4,
/// IHL 5): what a fast path that leaves options to a slower one compares
/// against (the XDP programs).
pub const IPV4_VER_IHL_PLAIN: u8 = 0x40 | (IPV4_LEN / 4) as u8;

// Bits of the word at IPV4_FRAG_OFF (names of the kernel's `net/ip.h`).
/// Reserved flag (must be zero).
pub const IP_RF: u16 = 0x8000;
/// Don't Fragment.
pub const IP_DF: u16 = 0x4000;
/// More Fragments.
pub const IP_MF: u16 = 0x2000;
/// Fragment offset, in 8-byte units.
pub const IP_OFFSET: u16 = 0x1fff;

// Option types (RFC 791; names of `<linux/ip.h>`).
/// End of option list.
pub const IPOPT_END: u8 = 0;
/// No operation.
pub const IPOPT_NOOP: u8 = 1;
/// Record Route.
pub const IPOPT_RR: u8 = 7;
/// Timestamp.
pub const IPOPT_TIMESTAMP: u8 = 68;
/// Loose Source and Record Route.
pub const IPOPT_LSRR: u8 = 131;
/// Strict Source and Record Route.
pub const IPOPT_SSRR: u8 = 137;
/// The copy flag of an option type: copied into every fragment.
pub const IPOPT_COPY: u8 = 0x80;

view! {
    /// A zero-copy view of an IPv4 packet.
    ///
    /// The buffer may be longer than `total_len` (Ethernet pads short frames
    /// to 60 bytes); `payload()` is bounded by `total_len`, not the buffer.
    Packet { buffer }
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Validates what the getters rely on: version 4, IHL >= 5, header
    /// within the buffer, `header_len <= total_len <= buffer length`.
    /// Does not verify the checksum (see [`verify_checksum`](Self::verify_checksum)).
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < IPV4_LEN {
            return Err(Error::Truncated);
        }
        if self.version() != 4 || self.header_len() < IPV4_LEN {
            return Err(Error::Malformed);
        }
        if self.header_len() > len {
            return Err(Error::Truncated);
        }
        let total = usize::from(self.total_len());
        if total < self.header_len() {
            return Err(Error::Malformed);
        }
        if total > len {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    /// Version field (4).
    #[inline]
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[IPV4_VER_IHL] >> 4
    }

    /// Header length in bytes (IHL * 4).
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[IPV4_VER_IHL] & 0x0f) * 4
    }

    /// The whole second byte: DSCP (6 bits) and ECN (2 bits).
    #[inline]
    pub fn dscp_ecn(&self) -> u8 {
        self.buffer.as_ref()[IPV4_TOS]
    }

    /// Differentiated Services Code Point.
    #[inline]
    pub fn dscp(&self) -> u8 {
        self.buffer.as_ref()[IPV4_TOS] >> 2
    }

    /// Explicit Congestion Notification bits.
    #[inline]
    pub fn ecn(&self) -> u8 {
        self.buffer.as_ref()[IPV4_TOS] & 0x03
    }

    /// Total length (header + payload) in bytes.
    #[inline]
    pub fn total_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), IPV4_TOT_LEN)
    }

    /// Identification.
    #[inline]
    pub fn ident(&self) -> u16 {
        get_u16(self.buffer.as_ref(), IPV4_ID)
    }

    /// The flags and fragment offset word (see `IP_DF`, `IP_MF`, `IP_OFFSET`).
    #[inline]
    pub fn frag_off_raw(&self) -> u16 {
        get_u16(self.buffer.as_ref(), IPV4_FRAG_OFF)
    }

    /// The reserved flag bit (must be zero, RFC 791).
    #[inline]
    pub fn reserved_flag(&self) -> bool {
        self.frag_off_raw() & IP_RF != 0
    }

    /// Don't Fragment flag.
    #[inline]
    pub fn dont_frag(&self) -> bool {
        self.frag_off_raw() & IP_DF != 0
    }

    /// More Fragments flag.
    #[inline]
    pub fn more_frags(&self) -> bool {
        self.frag_off_raw() & IP_MF != 0
    }

    /// Fragment offset in bytes (the field counts 8-byte units).
    #[inline]
    pub fn frag_offset(&self) -> u16 {
        (self.frag_off_raw() & IP_OFFSET) << 3
    }

    /// True if this is any fragment (MF set or offset non-zero).
    #[inline]
    pub fn is_fragment(&self) -> bool {
        self.frag_off_raw() & (IP_MF | IP_OFFSET) != 0
    }

    /// True for a later fragment (offset non-zero), which carries no
    /// transport header.
    #[inline]
    pub fn is_later_fragment(&self) -> bool {
        self.frag_off_raw() & IP_OFFSET != 0
    }

    /// Time to live.
    #[inline]
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[IPV4_TTL]
    }

    /// Alias of [`ttl`](Self::ttl), named as in IPv6.
    #[inline]
    pub fn hop_limit(&self) -> u8 {
        self.ttl()
    }

    /// Protocol of the payload.
    #[inline]
    pub fn protocol(&self) -> Protocol {
        Protocol::from(self.protocol_raw())
    }

    /// The protocol as a number, to compare with the `PROTO_*` constants.
    #[inline]
    pub fn protocol_raw(&self) -> u8 {
        self.buffer.as_ref()[IPV4_PROTOCOL]
    }

    /// Alias of [`protocol`](Self::protocol), named as in IPv6.
    #[inline]
    pub fn next_header(&self) -> Protocol {
        self.protocol()
    }

    /// Header checksum field.
    #[inline]
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), IPV4_CHECK)
    }

    /// Source address.
    #[inline]
    pub fn src_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(get_array::<4>(self.buffer.as_ref(), IPV4_SADDR))
    }

    /// Destination address.
    #[inline]
    pub fn dst_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(get_array::<4>(self.buffer.as_ref(), IPV4_DADDR))
    }

    /// Options bytes (empty when IHL is 5).
    #[inline]
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[IPV4_LEN..self.header_len()]
    }

    /// The header, options included.
    #[inline]
    pub fn header(&self) -> &[u8] {
        &self.buffer.as_ref()[..self.header_len()]
    }

    /// Payload: from the end of the header to `total_len`.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..usize::from(self.total_len())]
    }

    /// True if the header checksum is correct.
    #[inline]
    pub fn verify_checksum(&self) -> bool {
        checksum::fold(checksum::sum(self.header())) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the version.
    #[inline]
    pub fn set_version(&mut self, v: u8) {
        let b = &mut self.buffer.as_mut()[IPV4_VER_IHL];
        *b = (*b & 0x0f) | (v << 4);
    }

    /// Sets the header length in bytes (must be a multiple of 4, <= 60).
    #[inline]
    pub fn set_header_len(&mut self, len: usize) {
        let b = &mut self.buffer.as_mut()[IPV4_VER_IHL];
        *b = (*b & 0xf0) | ((len / 4) as u8 & 0x0f);
    }

    /// Sets the DSCP/ECN byte.
    #[inline]
    pub fn set_dscp_ecn(&mut self, v: u8) {
        self.buffer.as_mut()[IPV4_TOS] = v;
    }

    /// Sets the total length.
    #[inline]
    pub fn set_total_len(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), IPV4_TOT_LEN, v);
    }

    /// Sets the identification.
    #[inline]
    pub fn set_ident(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), IPV4_ID, v);
    }

    /// Sets the whole flags and fragment offset word.
    #[inline]
    pub fn set_frag_off_raw(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), IPV4_FRAG_OFF, v);
    }

    /// Sets the Don't Fragment flag.
    #[inline]
    pub fn set_dont_frag(&mut self, v: bool) {
        let raw = self.frag_off_raw();
        self.set_frag_off_raw((raw & !IP_DF) | if v { IP_DF } else { 0 });
    }

    /// Sets the More Fragments flag.
    #[inline]
    pub fn set_more_frags(&mut self, v: bool) {
        let raw = self.frag_off_raw();
        self.set_frag_off_raw((raw & !IP_MF) | if v { IP_MF } else { 0 });
    }

    /// Sets the fragment offset in bytes (must be a multiple of 8).
    #[inline]
    pub fn set_frag_offset(&mut self, bytes: u16) {
        let raw = self.frag_off_raw();
        self.set_frag_off_raw((raw & !IP_OFFSET) | (bytes >> 3));
    }

    /// Sets the TTL (checksum not updated; see
    /// [`decrement_ttl_incremental`](Self::decrement_ttl_incremental)).
    #[inline]
    pub fn set_ttl(&mut self, v: u8) {
        self.buffer.as_mut()[IPV4_TTL] = v;
    }

    /// Alias of [`set_ttl`](Self::set_ttl).
    #[inline]
    pub fn set_hop_limit(&mut self, v: u8) {
        self.set_ttl(v);
    }

    /// Sets the protocol.
    #[inline]
    pub fn set_protocol(&mut self, p: Protocol) {
        self.buffer.as_mut()[IPV4_PROTOCOL] = p.into();
    }

    /// Alias of [`set_protocol`](Self::set_protocol).
    #[inline]
    pub fn set_next_header(&mut self, p: Protocol) {
        self.set_protocol(p);
    }

    /// Sets the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), IPV4_CHECK, v);
    }

    /// Sets the source address.
    #[inline]
    pub fn set_src_addr(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[IPV4_SADDR..IPV4_SADDR + 4].copy_from_slice(&a.octets());
    }

    /// Sets the destination address.
    #[inline]
    pub fn set_dst_addr(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[IPV4_DADDR..IPV4_DADDR + 4].copy_from_slice(&a.octets());
    }

    /// Recomputes the header checksum over `header_len` bytes.
    #[inline]
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = checksum::finish(checksum::sum(self.header()));
        self.set_checksum(c);
    }

    /// The forwarding fast path: TTL -= 1 and patch the checksum with
    /// RFC 1624 eqn. 3 instead of re-summing the header. Returns the new
    /// TTL. A TTL that is already 0 is left alone (returns 0); the caller
    /// must check for expiry (`ttl() <= 1`) before forwarding anyway.
    #[inline]
    pub fn decrement_ttl_incremental(&mut self) -> u8 {
        // One bounds check for the whole 12-byte prefix we touch.
        let h = &mut self.buffer.as_mut()[..IPV4_CHECK + 2];
        let ttl = h[IPV4_TTL];
        if ttl == 0 {
            return 0;
        }
        // Eqn. 3, HC' = ~(~HC + ~m + m'), for the word m = (TTL, protocol)
        // becoming m' = m - 0x0100: ~m + m' is 0xffff - 0x0100 = 0xfeff
        // whatever the TTL and protocol, so the update is one addition
        // (what `checksum::update_u16` computes, in a few instructions
        // instead of two byte swaps and two more additions per packet).
        const TTL_MINUS_ONE: u32 = 0xffff - 0x0100;
        let c = !checksum::fold(u32::from(!get_u16(h, IPV4_CHECK)) + TTL_MINUS_ONE);
        h[IPV4_TTL] = ttl - 1;
        set_u16(h, IPV4_CHECK, c);
        ttl - 1
    }

    /// Mutable payload (bounded by `total_len`).
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (start, end) = (self.header_len(), usize::from(self.total_len()));
        &mut self.buffer.as_mut()[start..end]
    }
}

/// A parsed IPv4 header without options and not fragmented: what the
/// router itself originates (ICMP errors, ping replies, test traffic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Source address.
    pub src_addr: Ipv4Addr,
    /// Destination address.
    pub dst_addr: Ipv4Addr,
    /// Payload protocol.
    pub protocol: Protocol,
    /// Payload length in bytes (total_len - 20).
    pub payload_len: usize,
    /// Time to live.
    pub ttl: u8,
    /// DSCP/ECN byte.
    pub dscp_ecn: u8,
    /// Identification.
    pub ident: u16,
    /// Don't Fragment flag.
    pub dont_frag: bool,
}

impl Repr {
    /// Parses a header. Fails with `Checksum` if the checksum is wrong and
    /// `Unsupported` for options, fragments or the reserved flag bit set
    /// (none of which `Repr` can carry, so `emit` could not reproduce them).
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        if !p.verify_checksum() {
            return Err(Error::Checksum);
        }
        if p.header_len() != IPV4_LEN || p.is_fragment() || p.reserved_flag() {
            return Err(Error::Unsupported);
        }
        Ok(Repr {
            src_addr: p.src_addr(),
            dst_addr: p.dst_addr(),
            protocol: p.protocol(),
            payload_len: usize::from(p.total_len()) - IPV4_LEN,
            ttl: p.ttl(),
            dscp_ecn: p.dscp_ecn(),
            ident: p.ident(),
            dont_frag: p.dont_frag(),
        })
    }

    /// Header length (20).
    pub const fn buffer_len(&self) -> usize {
        IPV4_LEN
    }

    /// Header plus payload length.
    pub const fn total_len(&self) -> usize {
        IPV4_LEN + self.payload_len
    }

    /// Writes the header, including the checksum.
    ///
    /// # Panics
    /// If the buffer is shorter than [`IPV4_LEN`] or `payload_len`
    /// exceeds 65515.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        let total = u16::try_from(self.total_len()).expect("IPv4 payload_len too large");
        p.set_version(4);
        p.set_header_len(IPV4_LEN);
        p.set_dscp_ecn(self.dscp_ecn);
        p.set_total_len(total);
        p.set_ident(self.ident);
        p.set_frag_off_raw(0);
        p.set_dont_frag(self.dont_frag);
        p.set_ttl(self.ttl);
        p.set_protocol(self.protocol);
        p.set_src_addr(self.src_addr);
        p.set_dst_addr(self.dst_addr);
        p.fill_checksum();
    }
}

/// True for source addresses a router must never accept (RFC 1812
/// §5.3.7): 0.0.0.0/8 ("this network"), 127.0.0.0/8 (loopback),
/// 224.0.0.0/4 (multicast) and 240.0.0.0/4 (reserved, which includes
/// the limited broadcast 255.255.255.255).
#[inline]
pub fn is_martian_source(a: Ipv4Addr) -> bool {
    let first = a.octets()[0];
    first == 0 || first == 127 || first >= 224
}

/// True for destination addresses a router must never forward to (RFC
/// 1812 §5.3.7 / §4.2.2.11): 0.0.0.0/8, 127.0.0.0/8 and 240.0.0.0/4
/// (reserved, which includes the limited broadcast; see
/// [`is_limited_broadcast`] to tell it apart).
#[inline]
pub fn is_martian_destination(a: Ipv4Addr) -> bool {
    let first = a.octets()[0];
    first == 0 || first == 127 || first >= 240
}

/// True for 255.255.255.255, which is never forwarded (RFC 1812 §5.3.5.1).
#[inline]
pub fn is_limited_broadcast(a: Ipv4Addr) -> bool {
    a == Ipv4Addr::BROADCAST
}

/// True for 224.0.0.0/4.
#[inline]
pub fn is_multicast(a: Ipv4Addr) -> bool {
    a.octets()[0] & 0xf0 == 0xe0
}

/// Checks the options of an IPv4 header (the bytes after the first 20):
/// every option fits, lengths are at least 2, and the options with a
/// pointer (Record Route, Loose/Strict Source Route, Timestamp) are long
/// enough for it and point at least at their first slot (RFC 791, RFC
/// 1812 §5.2.2). On error, returns the offset in `opts` of the offending
/// octet, for the pointer of an ICMP Parameter Problem.
pub fn options_check(opts: &[u8]) -> core::result::Result<(), usize> {
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            IPOPT_END => return Ok(()),
            IPOPT_NOOP => i += 1,
            t => {
                if i + 1 >= opts.len() {
                    return Err(i);
                }
                let l = opts[i + 1] as usize;
                if l < 2 || i + l > opts.len() {
                    return Err(i + 1);
                }
                let min_pointer = match t {
                    // The first address at 4.
                    IPOPT_RR | IPOPT_LSRR | IPOPT_SSRR => 4,
                    // The first slot at 5.
                    IPOPT_TIMESTAMP => 5,
                    _ => 0,
                };
                if min_pointer > 0 {
                    if l < min_pointer - 1 {
                        return Err(i + 1);
                    }
                    if (opts[i + 2] as usize) < min_pointer {
                        return Err(i + 2);
                    }
                }
                i += l;
            }
        }
    }
    Ok(())
}

/// Copies the options with the copy flag ([`IPOPT_COPY`]) from `opts` into
/// `out`, padded with end-of-list to a multiple of 4, for the header of a
/// non-first fragment (RFC 791 3.2); returns the length written. `opts`
/// must have passed [`options_check`].
pub fn copied_options(opts: &[u8], out: &mut [u8]) -> usize {
    let mut i = 0;
    let mut n = 0;
    while i < opts.len() {
        match opts[i] {
            IPOPT_END => break,
            IPOPT_NOOP => i += 1,
            t => {
                let l = opts[i + 1] as usize;
                if t & IPOPT_COPY != 0 {
                    out[n..n + l].copy_from_slice(&opts[i..i + l]);
                    n += l;
                }
                i += l;
            }
        }
    }
    let padded = n.div_ceil(4) * 4;
    out[n..padded].fill(IPOPT_END);
    padded
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // 198.18.0.1 -> 198.18.1.1, UDP, TTL 64, 4 bytes payload, plus 2 bytes
    // of Ethernet-style padding after total_len.
    fn sample() -> Vec<u8> {
        let mut b = vec![
            0x45, 0x00, 0x00, 0x18, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 198, 18, 0, 1,
            198, 18, 1, 1, 0xde, 0xad, 0xbe, 0xef, 0, 0,
        ];
        let c = checksum::finish(checksum::sum(&b[..20]));
        b[10..12].copy_from_slice(&c.to_be_bytes());
        b
    }

    #[test]
    fn getters() {
        let b = sample();
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.version(), 4);
        assert_eq!(p.header_len(), 20);
        assert_eq!(p.total_len(), 24);
        assert_eq!(p.ident(), 0x1234);
        assert!(p.dont_frag() && !p.more_frags() && !p.is_fragment());
        assert_eq!(p.frag_offset(), 0);
        assert_eq!(p.ttl(), 64);
        assert_eq!(p.protocol(), Protocol::Udp);
        assert_eq!(p.src_addr(), Ipv4Addr::new(198, 18, 0, 1));
        assert_eq!(p.dst_addr(), Ipv4Addr::new(198, 18, 1, 1));
        assert_eq!(p.payload(), &[0xde, 0xad, 0xbe, 0xef]);
        assert!(p.options().is_empty());
        assert!(p.verify_checksum());
    }

    #[test]
    fn known_checksum() {
        let mut h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        h[2..4].copy_from_slice(&20u16.to_be_bytes());
        let mut p = Packet::new_unchecked(&mut h[..]);
        p.set_total_len(0x73);
        p.fill_checksum();
        assert_eq!(p.checksum(), 0xb861);
    }

    #[test]
    fn check_len_errors() {
        let b = sample();
        let with = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut v = b.clone();
            f(&mut v);
            Packet::new_checked(v).err()
        };
        assert_eq!(with(&|v| v.truncate(19)), Some(Error::Truncated));
        assert_eq!(with(&|v| v[0] = 0x65), Some(Error::Malformed));
        assert_eq!(with(&|v| v[0] = 0x44), Some(Error::Malformed));
        assert_eq!(with(&|v| v[0] = 0x4f), Some(Error::Truncated));
        assert_eq!(with(&|v| v[3] = 19), Some(Error::Malformed));
        assert_eq!(with(&|v| v[3] = 27), Some(Error::Truncated));
        assert_eq!(with(&|_| ()), None);
    }

    #[test]
    fn fragments_and_options() {
        let mut b = sample();
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.set_more_frags(true);
        p.set_frag_offset(1480);
        p.fill_checksum();
        assert!(p.more_frags() && p.dont_frag() && p.frag_offset() == 1480);
        assert_eq!(Repr::parse(&p), Err(Error::Unsupported));
        p.set_checksum(0);
        assert_eq!(Repr::parse(&p), Err(Error::Checksum));
        // Reserved bit: found by the fuzz_replay walk (emit dropped it).
        let mut b = sample();
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.buffer[6] |= 0x80;
        p.fill_checksum();
        assert!(p.reserved_flag());
        assert_eq!(Repr::parse(&p), Err(Error::Unsupported));
    }

    /// The TTL step's one addition is `checksum::update_u16` of the
    /// (TTL, protocol) word, for every checksum, TTL and a few protocols
    /// (it does not depend on the protocol).
    #[test]
    fn ttl_decrement_is_the_general_update() {
        let mut b = sample();
        for proto in [0u8, 6, 17, 255] {
            for ttl in 1..=255u8 {
                for hc in 0..=0xffffu16 {
                    let mut p = Packet::new_unchecked(&mut b[..]);
                    p.buffer[IPV4_TTL] = ttl;
                    p.buffer[IPV4_PROTOCOL] = proto;
                    p.set_checksum(hc);
                    p.decrement_ttl_incremental();
                    let (m, m1) = (
                        u16::from_be_bytes([ttl, proto]),
                        u16::from_be_bytes([ttl - 1, proto]),
                    );
                    assert_eq!(
                        p.checksum(),
                        checksum::update_u16(hc, m, m1),
                        "{hc:#x} {ttl} {proto}"
                    );
                }
            }
        }
    }

    #[test]
    fn ttl_decrement() {
        let mut b = sample();
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        for expect in (0..64).rev() {
            assert_eq!(p.decrement_ttl_incremental(), expect);
            assert!(p.verify_checksum());
        }
        let c = p.checksum();
        assert_eq!(p.decrement_ttl_incremental(), 0);
        assert_eq!(p.checksum(), c);
    }

    #[test]
    fn martians() {
        for a in [
            "0.0.0.0",
            "0.1.2.3",
            "127.0.0.1",
            "224.0.0.1",
            "239.255.255.255",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(is_martian_source(a.parse().unwrap()), "{a}");
        }
        for a in [
            "198.18.0.1",
            "1.1.1.1",
            "223.255.255.255",
            "126.255.255.255",
        ] {
            assert!(!is_martian_source(a.parse().unwrap()), "{a}");
        }
        for a in ["0.0.0.1", "127.1.2.3", "240.0.0.1", "255.255.255.255"] {
            assert!(is_martian_destination(a.parse().unwrap()), "{a}");
        }
        for a in ["198.18.0.1", "224.0.0.1", "239.255.255.255"] {
            assert!(!is_martian_destination(a.parse().unwrap()), "{a}");
        }
        assert!(is_limited_broadcast(Ipv4Addr::BROADCAST));
        assert!(!is_limited_broadcast(Ipv4Addr::new(198, 18, 255, 255)));
        assert!(
            is_multicast(Ipv4Addr::new(224, 0, 0, 5)) && !is_multicast(Ipv4Addr::new(240, 0, 0, 1))
        );
    }

    #[test]
    fn options_point_at_the_offending_octet() {
        assert_eq!(
            options_check(&[IPOPT_NOOP, IPOPT_NOOP, IPOPT_NOOP, 0]),
            Ok(())
        );
        assert_eq!(options_check(&[IPOPT_RR, 7, 4, 0, 0, 0, 0, 0]), Ok(()));
        // Length beyond the options; below 2; a type with no room for its
        // length; Record Route pointing below 4; Timestamp below 5.
        assert_eq!(options_check(&[1, 7, 9, 4]), Err(2));
        assert_eq!(options_check(&[7, 1, 0, 0]), Err(1));
        assert_eq!(options_check(&[1, 1, 1, 0x44]), Err(3));
        assert_eq!(options_check(&[7, 7, 3, 0, 0, 0, 0, 0]), Err(2));
        assert_eq!(options_check(&[0x44, 8, 4, 0, 0, 0, 0, 0]), Err(2));
        assert_eq!(options_check(&[7, 9, 0, 0]), Err(1));
    }

    #[test]
    fn copied_options_keep_only_the_copy_flag() {
        // NOP, Record Route (not copied, len 7), a copied option (0x82, len 4).
        let opts = [1, 7, 7, 4, 0, 0, 0, 0, 0x82, 4, 9, 9, 0, 0, 0, 0];
        assert!(options_check(&opts).is_ok());
        let mut out = [0xaau8; 16];
        let n = copied_options(&opts, &mut out);
        assert_eq!(&out[..n], &[0x82, 4, 9, 9]);
        let n = copied_options(&[0x83, 3, 4], &mut out);
        assert_eq!(&out[..n], &[0x83, 3, 4, IPOPT_END]);
    }

    proptest! {
        #[test]
        fn repr_roundtrip(src in any::<u32>(), dst in any::<u32>(), proto in any::<u8>(),
                          payload_len in 0usize..1500, ttl in any::<u8>(), dscp_ecn in any::<u8>(),
                          ident in any::<u16>(), dont_frag in any::<bool>()) {
            let r = Repr { src_addr: src.into(), dst_addr: dst.into(), protocol: proto.into(),
                           payload_len, ttl, dscp_ecn, ident, dont_frag };
            let mut b = vec![0xa5u8; r.total_len()];
            r.emit(&mut Packet::new_unchecked(&mut b[..]));
            let p = Packet::new_checked(&b[..]).unwrap();
            prop_assert!(p.verify_checksum());
            prop_assert_eq!(Repr::parse(&p).unwrap(), r);
        }

        #[test]
        fn ttl_decrement_equals_recompute(ttl in 1u8.., seed in any::<[u8; 20]>()) {
            let mut b = seed;
            b[0] = 0x45; b[2] = 0; b[3] = 20; b[8] = ttl;
            let mut p = Packet::new_checked(&mut b[..]).unwrap();
            p.fill_checksum();
            p.decrement_ttl_incremental();
            let inc = p.checksum();
            p.fill_checksum();
            prop_assert_eq!(inc, p.checksum());
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(p) = Packet::new_checked(&data[..]) {
                let _ = (p.payload(), p.options(), p.verify_checksum(), p.frag_offset(), Repr::parse(&p));
            }
        }
    }
}
