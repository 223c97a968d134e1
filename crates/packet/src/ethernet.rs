//! Ethernet II frames (IEEE 802.3 with an EtherType, no FCS).
//!
//! Lengths as `<linux/if_ether.h>` has them where it has one (`ETH_ALEN`,
//! `ETH_ZLEN`, `ETH_FCS_LEN`; the header is `ETH_LEN`, the project's name),
//! EtherTypes as the project's C headers name them (`ETH_IPV4`, ...).

use crate::field::{get_array, get_u16, set_u16};
use crate::{Error, Result};
use core::fmt;
use core::str::FromStr;
use std::net::Ipv6Addr;

/// Length of the Ethernet II header: destination, source, EtherType.
pub const ETH_LEN: usize = 14;
/// Length of a MAC address.
pub const ETH_ALEN: usize = 6;
/// Shortest frame without the FCS (64 bytes on the wire with it); shorter
/// frames are padded to it.
pub const ETH_ZLEN: usize = 60;
/// Length of the frame check sequence, which buffers do not hold.
pub const ETH_FCS_LEN: usize = 4;

/// Offset of the destination MAC.
pub const ETH_DST: usize = 0;
/// Offset of the source MAC.
pub const ETH_SRC: usize = 6;
/// Offset of the EtherType.
pub const ETH_TYPE: usize = 12;

/// EtherType of IPv4.
pub const ETH_IPV4: u16 = 0x0800;
/// EtherType of ARP.
pub const ETH_ARP: u16 = 0x0806;
/// EtherType of IPv6.
pub const ETH_IPV6: u16 = 0x86dd;
/// TPID of an IEEE 802.1Q VLAN tag.
pub const ETH_VLAN: u16 = 0x8100;
/// TPID of an IEEE 802.1ad service tag (the outer tag of QinQ).
pub const ETH_QINQ: u16 = 0x88a8;
/// Bytes a tag adds to a frame: the TPID (in the outer EtherType's place)
/// plus four, TCI (2) and the inner EtherType (2), which is also the
/// length of the tag as [`crate::vlan::Tag`] sees it (after the TPID).
pub const VLAN_HLEN: usize = 4;

/// A 48-bit Ethernet MAC address.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Address(pub [u8; 6]);

impl Address {
    /// ff:ff:ff:ff:ff:ff.
    pub const BROADCAST: Address = Address([0xff; 6]);
    /// 00:00:00:00:00:00 (used in ARP requests for the unknown target).
    pub const UNSPECIFIED: Address = Address([0; 6]);

    /// Builds an address from the first six bytes of `data`.
    /// Returns `None` if `data` is shorter than six bytes.
    pub fn from_bytes(data: &[u8]) -> Option<Address> {
        data.get(..6).map(|b| Address(get_array(b, 0)))
    }

    /// The six octets.
    #[inline]
    pub const fn as_bytes(&self) -> &[u8; 6] {
        &self.0
    }

    /// The I/G bit is set: group (multicast or broadcast) address.
    #[inline]
    pub const fn is_multicast(&self) -> bool {
        self.0[0] & 0x01 != 0
    }

    /// Not a group address.
    #[inline]
    pub const fn is_unicast(&self) -> bool {
        !self.is_multicast()
    }

    /// ff:ff:ff:ff:ff:ff.
    #[inline]
    pub fn is_broadcast(&self) -> bool {
        *self == Self::BROADCAST
    }

    /// The U/L bit is set: locally administered.
    #[inline]
    pub const fn is_local(&self) -> bool {
        self.0[0] & 0x02 != 0
    }

    /// The Ethernet multicast address an IPv6 multicast group maps to
    /// (RFC 2464 §7): 33:33 followed by the group's low 32 bits.
    #[inline]
    pub fn ipv6_multicast(group: Ipv6Addr) -> Address {
        let o = group.octets();
        Address([0x33, 0x33, o[12], o[13], o[14], o[15]])
    }

    /// True for an address of the IPv6 multicast range 33:33:xx:xx:xx:xx.
    #[inline]
    pub const fn is_ipv6_multicast(&self) -> bool {
        self.0[0] == 0x33 && self.0[1] == 0x33
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = &self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Error from parsing a MAC address string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressParseError;

impl fmt::Display for AddressParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid MAC address (expected aa:bb:cc:dd:ee:ff)")
    }
}

impl std::error::Error for AddressParseError {}

impl FromStr for Address {
    type Err = AddressParseError;

    /// Accepts six two-digit hex groups separated by `:` or `-`.
    fn from_str(s: &str) -> core::result::Result<Self, Self::Err> {
        let sep = if s.contains('-') { '-' } else { ':' };
        let mut out = [0u8; 6];
        let mut n = 0;
        for part in s.split(sep) {
            if n == 6 || part.len() != 2 {
                return Err(AddressParseError);
            }
            out[n] = u8::from_str_radix(part, 16).map_err(|_| AddressParseError)?;
            n += 1;
        }
        if n != 6 {
            return Err(AddressParseError);
        }
        Ok(Address(out))
    }
}

/// The EtherType field. Unknown values are preserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EtherType {
    /// IPv4 (0x0800).
    Ipv4,
    /// ARP (0x0806).
    Arp,
    /// IPv6 (0x86dd).
    Ipv6,
    /// IEEE 802.1Q VLAN tag (0x8100).
    Vlan,
    /// IEEE 802.1ad service tag, the outer tag of QinQ (0x88a8).
    QinQ,
    /// Anything else.
    Unknown(u16),
}

impl From<u16> for EtherType {
    #[inline]
    fn from(v: u16) -> Self {
        match v {
            ETH_IPV4 => EtherType::Ipv4,
            ETH_ARP => EtherType::Arp,
            ETH_IPV6 => EtherType::Ipv6,
            ETH_VLAN => EtherType::Vlan,
            ETH_QINQ => EtherType::QinQ,
            other => EtherType::Unknown(other),
        }
    }
}

impl From<EtherType> for u16 {
    #[inline]
    fn from(e: EtherType) -> u16 {
        match e {
            EtherType::Ipv4 => ETH_IPV4,
            EtherType::Arp => ETH_ARP,
            EtherType::Ipv6 => ETH_IPV6,
            EtherType::Vlan => ETH_VLAN,
            EtherType::QinQ => ETH_QINQ,
            EtherType::Unknown(v) => v,
        }
    }
}

view! {
    /// A zero-copy view of an Ethernet II frame.
    Frame { buffer }
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// Checks that the buffer holds a full header.
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < ETH_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// Destination MAC address.
    #[inline]
    pub fn dst_addr(&self) -> Address {
        Address(get_array(self.buffer.as_ref(), ETH_DST))
    }

    /// Source MAC address.
    #[inline]
    pub fn src_addr(&self) -> Address {
        Address(get_array(self.buffer.as_ref(), ETH_SRC))
    }

    /// The EtherType (may be [`EtherType::Vlan`]; see [`payload_offset`]).
    #[inline]
    pub fn ethertype(&self) -> EtherType {
        EtherType::from(self.ethertype_raw())
    }

    /// The EtherType as a number, to compare with the `ETH_IPV4`, `ETH_ARP`, ... constants.
    #[inline]
    pub fn ethertype_raw(&self) -> u16 {
        get_u16(self.buffer.as_ref(), ETH_TYPE)
    }

    /// Everything after the 14-byte header.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[ETH_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    /// Sets the destination MAC address.
    #[inline]
    pub fn set_dst_addr(&mut self, a: Address) {
        self.buffer.as_mut()[ETH_DST..ETH_DST + ETH_ALEN].copy_from_slice(&a.0);
    }

    /// Sets the source MAC address.
    #[inline]
    pub fn set_src_addr(&mut self, a: Address) {
        self.buffer.as_mut()[ETH_SRC..ETH_SRC + ETH_ALEN].copy_from_slice(&a.0);
    }

    /// Sets the EtherType.
    #[inline]
    pub fn set_ethertype(&mut self, e: EtherType) {
        set_u16(self.buffer.as_mut(), ETH_TYPE, e.into());
    }

    /// Writes the whole header: the frame goes from `src` to `dst` and
    /// carries `ethertype` (`ETH_IPV4`, `ETH_ARP`, ...).
    #[inline]
    pub fn write_header(&mut self, dst: Address, src: Address, ethertype: u16) {
        self.set_dst_addr(dst);
        self.set_src_addr(src);
        set_u16(self.buffer.as_mut(), ETH_TYPE, ethertype);
    }

    /// Mutable access to everything after the header.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[ETH_LEN..]
    }
}

/// Finds the network-layer protocol and offset of `frame`, looking through
/// at most one 802.1ad (QinQ, 0x88a8) outer tag and one 802.1Q (0x8100)
/// tag. Returns `(inner EtherType, L3 offset)`, or `None` if the frame is
/// too short for the headers it announces. A further tag (e.g. 0x8100
/// inside 0x8100) is reported as the inner EtherType, for the caller to
/// drop as unsupported.
#[inline]
pub fn payload_offset(frame: &[u8]) -> Option<(EtherType, usize)> {
    let read = |at: usize| {
        frame
            .get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    let mut at = ETH_TYPE;
    let mut et = read(at)?;
    if et == ETH_QINQ {
        at += VLAN_HLEN;
        et = read(at)?;
    }
    if et == ETH_VLAN {
        at += VLAN_HLEN;
        et = read(at)?;
    }
    Some((EtherType::from(et), at + 2))
}

/// A parsed Ethernet II header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Source MAC address.
    pub src_addr: Address,
    /// Destination MAC address.
    pub dst_addr: Address,
    /// EtherType.
    pub ethertype: EtherType,
}

impl Repr {
    /// Reads the header of a checked frame.
    pub fn parse<T: AsRef<[u8]>>(frame: &Frame<T>) -> Result<Repr> {
        frame.check_len()?;
        Ok(Repr {
            src_addr: frame.src_addr(),
            dst_addr: frame.dst_addr(),
            ethertype: frame.ethertype(),
        })
    }

    /// Header length in bytes.
    pub const fn buffer_len(&self) -> usize {
        ETH_LEN
    }

    /// Writes the header.
    ///
    /// # Panics
    /// If the frame's buffer is shorter than [`ETH_LEN`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, frame: &mut Frame<T>) {
        frame.set_dst_addr(self.dst_addr);
        frame.set_src_addr(self.src_addr);
        frame.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const FRAME: [u8; 18] = [
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // dst
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, // src
        0x08, 0x00, // IPv4
        0xde, 0xad, 0xbe, 0xef,
    ];

    #[test]
    fn parse_frame() {
        let f = Frame::new_checked(&FRAME[..]).unwrap();
        assert_eq!(f.dst_addr(), Address([2, 0, 0, 0, 0, 1]));
        assert_eq!(f.src_addr().to_string(), "02:00:00:00:00:02");
        assert_eq!(f.ethertype(), EtherType::Ipv4);
        assert_eq!(f.payload(), &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(
            Frame::new_checked(&FRAME[..13]).unwrap_err(),
            Error::Truncated
        );
    }

    #[test]
    fn setters_and_repr() {
        let mut buf = [0u8; 14];
        let repr = Repr {
            src_addr: "02:00:00:00:00:02".parse().unwrap(),
            dst_addr: Address::BROADCAST,
            ethertype: EtherType::Arp,
        };
        repr.emit(&mut Frame::new_unchecked(&mut buf[..]));
        assert_eq!(&buf[12..], &[0x08, 0x06]);
        assert_eq!(
            Repr::parse(&Frame::new_checked(&buf[..]).unwrap()).unwrap(),
            repr
        );
    }

    #[test]
    fn address_parse_and_classify() {
        assert_eq!(
            "AA-bb-cc-dd-ee-ff".parse::<Address>().unwrap(),
            Address([0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff])
        );
        for bad in [
            "",
            "aa:bb",
            "aa:bb:cc:dd:ee:ff:00",
            "aa:bb:cc:dd:ee:fg",
            "a:bb:cc:dd:ee:fff",
        ] {
            assert!(bad.parse::<Address>().is_err(), "{bad}");
        }
        assert!(Address::BROADCAST.is_broadcast() && Address::BROADCAST.is_multicast());
        assert!(Address([0x01, 0, 0x5e, 0, 0, 1]).is_multicast());
        assert!(Address([0x02, 0, 0, 0, 0, 1]).is_local());
        let g: Ipv6Addr = "ff02::1:ff00:1234".parse().unwrap();
        assert_eq!(Address::ipv6_multicast(g).to_string(), "33:33:ff:00:12:34");
    }

    #[test]
    fn offsets_through_tags() {
        let mut f = FRAME.to_vec();
        assert_eq!(payload_offset(&f), Some((EtherType::Ipv4, 14)));
        // one 802.1Q tag
        f.splice(12..12, [0x81, 0x00, 0x00, 0x0a]);
        assert_eq!(payload_offset(&f), Some((EtherType::Ipv4, 18)));
        // QinQ outer tag
        f.splice(12..12, [0x88, 0xa8, 0x00, 0x64]);
        assert_eq!(payload_offset(&f), Some((EtherType::Ipv4, 22)));
        assert_eq!(payload_offset(&f[..21]), None);
        assert_eq!(payload_offset(&f[..13]), None);
    }

    proptest! {
        #[test]
        fn ethertype_roundtrip(v in any::<u16>()) {
            prop_assert_eq!(u16::from(EtherType::from(v)), v);
        }

        #[test]
        fn address_display_parse(b in any::<[u8; 6]>()) {
            let a = Address(b);
            prop_assert_eq!(a.to_string().parse::<Address>().unwrap(), a);
        }

        #[test]
        fn payload_offset_in_bounds(data in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Some((_, off)) = payload_offset(&data) {
                prop_assert!(off <= data.len());
            }
        }
    }
}
