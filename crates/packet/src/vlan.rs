//! IEEE 802.1Q VLAN tags.
//!
//! A [`Tag`] views the four bytes that *follow* the 0x8100 TPID in an
//! Ethernet frame (i.e. `frame.payload()` when `ethertype() == Vlan`):
//! the Tag Control Information and the encapsulated EtherType.

use crate::ethernet::EtherType;
use crate::field::{get_u16, set_u16};
use crate::{Error, Result};

// The tag's length is defined beside the TPIDs, where the Ethernet
// header's walk through tags needs it (`ethernet::payload_offset`), so
// that this module depends on `ethernet` and not the other way round.
pub use crate::ethernet::VLAN_HLEN;
/// Offset of the Tag Control Information (PCP, DEI, VID) in the tag.
pub const VLAN_TCI: usize = 0;
/// Offset of the encapsulated EtherType in the tag.
pub const VLAN_ENCAP_TYPE: usize = 2;

view! {
    /// A zero-copy view of an 802.1Q tag and what it encapsulates.
    Tag { buffer }
}

impl<T: AsRef<[u8]>> Tag<T> {
    /// Checks that the buffer holds the tag.
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < VLAN_HLEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// Priority Code Point (3 bits).
    #[inline]
    pub fn pcp(&self) -> u8 {
        self.buffer.as_ref()[0] >> 5
    }

    /// Drop Eligible Indicator.
    #[inline]
    pub fn dei(&self) -> bool {
        self.buffer.as_ref()[0] & 0x10 != 0
    }

    /// VLAN identifier (12 bits).
    #[inline]
    pub fn vid(&self) -> u16 {
        get_u16(self.buffer.as_ref(), VLAN_TCI) & 0x0fff
    }

    /// The encapsulated EtherType.
    #[inline]
    pub fn ethertype(&self) -> EtherType {
        EtherType::from(self.ethertype_raw())
    }

    /// The encapsulated EtherType as a number (`ETH_IPV4`, `ETH_ARP`, ...).
    #[inline]
    pub fn ethertype_raw(&self) -> u16 {
        get_u16(self.buffer.as_ref(), VLAN_ENCAP_TYPE)
    }

    /// Bytes after the tag.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[VLAN_HLEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Tag<T> {
    /// Sets the priority (only the low 3 bits are used).
    #[inline]
    pub fn set_pcp(&mut self, pcp: u8) {
        let b = &mut self.buffer.as_mut()[0];
        *b = (*b & 0x1f) | ((pcp & 0x07) << 5);
    }

    /// Sets the drop eligible indicator.
    #[inline]
    pub fn set_dei(&mut self, dei: bool) {
        let b = &mut self.buffer.as_mut()[0];
        *b = (*b & !0x10) | if dei { 0x10 } else { 0 };
    }

    /// Sets the VLAN id (only the low 12 bits are used).
    #[inline]
    pub fn set_vid(&mut self, vid: u16) {
        let tci = get_u16(self.buffer.as_ref(), VLAN_TCI);
        set_u16(
            self.buffer.as_mut(),
            VLAN_TCI,
            (tci & 0xf000) | (vid & 0x0fff),
        );
    }

    /// Sets the encapsulated EtherType.
    #[inline]
    pub fn set_ethertype(&mut self, e: EtherType) {
        set_u16(self.buffer.as_mut(), VLAN_ENCAP_TYPE, e.into());
    }
}

/// A parsed 802.1Q tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Priority Code Point (0..=7).
    pub pcp: u8,
    /// Drop Eligible Indicator.
    pub dei: bool,
    /// VLAN id (0..=4095).
    pub vid: u16,
    /// Encapsulated EtherType.
    pub ethertype: EtherType,
}

impl Repr {
    /// Reads a tag.
    pub fn parse<T: AsRef<[u8]>>(tag: &Tag<T>) -> Result<Repr> {
        tag.check_len()?;
        Ok(Repr {
            pcp: tag.pcp(),
            dei: tag.dei(),
            vid: tag.vid(),
            ethertype: tag.ethertype(),
        })
    }

    /// Writes the tag.
    ///
    /// # Panics
    /// If the buffer is shorter than [`VLAN_HLEN`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, tag: &mut Tag<T>) {
        set_u16(tag.buffer.as_mut(), VLAN_TCI, 0);
        tag.set_pcp(self.pcp);
        tag.set_dei(self.dei);
        tag.set_vid(self.vid);
        tag.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parse_tag() {
        // PCP 5, DEI 1, VID 0x123, inner IPv6.
        let b = [0xb1, 0x23, 0x86, 0xdd, 0x60];
        let t = Tag::new_checked(&b[..]).unwrap();
        assert_eq!(
            (t.pcp(), t.dei(), t.vid(), t.ethertype()),
            (5, true, 0x123, EtherType::Ipv6)
        );
        assert_eq!(t.payload(), &[0x60]);
        assert_eq!(Tag::new_checked(&b[..3]).unwrap_err(), Error::Truncated);
    }

    proptest! {
        #[test]
        fn repr_roundtrip(pcp in 0u8..8, dei in any::<bool>(), vid in 0u16..4096, et in any::<u16>()) {
            let r = Repr { pcp, dei, vid, ethertype: et.into() };
            let mut b = [0xffu8; 4];
            r.emit(&mut Tag::new_unchecked(&mut b[..]));
            prop_assert_eq!(Repr::parse(&Tag::new_checked(&b[..]).unwrap()).unwrap(), r);
        }
    }
}
