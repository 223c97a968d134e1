//! Neighbor Discovery (RFC 4861) Neighbor Solicitation / Advertisement.
//!
//! [`Neighbor`] views a whole ICMPv6 message of type 135 or 136 (same
//! layout: 4 flag/reserved bytes, a target address, then options). The
//! ICMPv6 checksum is handled by [`crate::icmpv6::Packet`].

use crate::ethernet::Address as EthernetAddress;
use crate::field::get_array;
use crate::icmpv6::{self, Message};
use crate::{Error, Result};
use std::net::Ipv6Addr;

/// Length of an NS/NA message without options.
pub const ND_NEIGHBOR_LEN: usize = 24;
/// Offset of the flags byte (R/S/O of an NA, reserved in an NS).
pub const ND_FLAGS: usize = 4;
/// Offset of the target address.
pub const ND_TARGET: usize = 8;
/// Offset of the first option.
pub const ND_OPTIONS: usize = 24;
/// Length of a link-layer address option carrying an Ethernet address
/// (options count their length in units of 8 bytes).
pub const ND_OPT_LL_ADDR_LEN: usize = 8;

/// Option type: Source Link-Layer Address (`net/ndisc.h` names).
pub const ND_OPT_SOURCE_LL_ADDR: u8 = 1;
/// Option type: Target Link-Layer Address.
pub const ND_OPT_TARGET_LL_ADDR: u8 = 2;

/// NA flag: sender is a router.
pub const ND_NA_FLAG_ROUTER: u8 = 0x80;
/// NA flag: sent in response to a solicitation.
pub const ND_NA_FLAG_SOLICITED: u8 = 0x40;
/// NA flag: override an existing cache entry.
pub const ND_NA_FLAG_OVERRIDE: u8 = 0x20;

/// A zero-copy view of a Neighbor Solicitation or Advertisement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Neighbor<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Neighbor<T> {
    /// Wraps `buffer` without checking it.
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Neighbor<T> {
        Neighbor { buffer }
    }

    /// Wraps `buffer`: it must hold 24 bytes and be of type 135 or 136
    /// (`Unsupported` otherwise).
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Neighbor<T>> {
        let n = Self::new_unchecked(buffer);
        n.check_len()?;
        Ok(n)
    }

    /// Checks length and type.
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < ND_NEIGHBOR_LEN {
            return Err(Error::Truncated);
        }
        match Message::from(b[0]) {
            Message::NeighborSolicit | Message::NeighborAdvert => Ok(()),
            _ => Err(Error::Unsupported),
        }
    }

    /// Returns the wrapped buffer.
    #[inline]
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// NeighborSolicit or NeighborAdvert.
    #[inline]
    pub fn msg_type(&self) -> Message {
        Message::from(self.buffer.as_ref()[0])
    }

    /// The raw flags byte (R/S/O in an NA, reserved in an NS).
    #[inline]
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[ND_FLAGS]
    }

    /// NA Router flag.
    #[inline]
    pub fn router_flag(&self) -> bool {
        self.flags() & ND_NA_FLAG_ROUTER != 0
    }

    /// NA Solicited flag.
    #[inline]
    pub fn solicited_flag(&self) -> bool {
        self.flags() & ND_NA_FLAG_SOLICITED != 0
    }

    /// NA Override flag.
    #[inline]
    pub fn override_flag(&self) -> bool {
        self.flags() & ND_NA_FLAG_OVERRIDE != 0
    }

    /// Target address.
    #[inline]
    pub fn target_addr(&self) -> Ipv6Addr {
        Ipv6Addr::from(get_array::<16>(self.buffer.as_ref(), ND_TARGET))
    }

    /// Iterates the options after the target address.
    #[inline]
    pub fn options(&self) -> OptionIter<'_> {
        OptionIter {
            data: &self.buffer.as_ref()[ND_OPTIONS..],
        }
    }

    /// The first link-layer address option of type `kind` (1 = source,
    /// 2 = target). Stops at the first malformed option.
    pub fn link_layer_addr(&self, kind: u8) -> Option<EthernetAddress> {
        self.options()
            .map_while(|o| o.ok())
            .find(|o| o.kind == kind)
            .and_then(|o| o.link_layer_addr())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Neighbor<T> {
    /// Sets the flags byte (and zeroes the 3 reserved bytes).
    #[inline]
    pub fn set_flags(&mut self, flags: u8) {
        self.buffer.as_mut()[ND_FLAGS..ND_TARGET].copy_from_slice(&[flags, 0, 0, 0]);
    }

    /// Sets the target address.
    #[inline]
    pub fn set_target_addr(&mut self, a: Ipv6Addr) {
        self.buffer.as_mut()[ND_TARGET..ND_OPTIONS].copy_from_slice(&a.octets());
    }
}

/// One NDP option (type, and body after the 2-byte type/length).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NdpOption<'a> {
    /// Option type.
    pub kind: u8,
    /// Option bytes after type and length (length * 8 - 2 bytes).
    pub data: &'a [u8],
}

impl NdpOption<'_> {
    /// The Ethernet address in a source/target link-layer address option.
    pub fn link_layer_addr(&self) -> Option<EthernetAddress> {
        match self.kind {
            ND_OPT_SOURCE_LL_ADDR | ND_OPT_TARGET_LL_ADDR => EthernetAddress::from_bytes(self.data),
            _ => None,
        }
    }
}

/// Iterator over NDP options. Yields `Err` once (then stops) for an
/// option with length 0 or running past the buffer; RFC 4861 says to
/// discard such packets.
#[derive(Debug, Clone)]
pub struct OptionIter<'a> {
    data: &'a [u8],
}

impl<'a> OptionIter<'a> {
    /// Iterates options in `data` (e.g. from any ND message body).
    pub fn new(data: &'a [u8]) -> Self {
        OptionIter { data }
    }
}

impl<'a> Iterator for OptionIter<'a> {
    type Item = Result<NdpOption<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.data.is_empty() {
            return None;
        }
        let len = usize::from(*self.data.get(1).unwrap_or(&0)) * 8;
        if len == 0 || len > self.data.len() {
            self.data = &[];
            return Some(Err(if len == 0 {
                Error::Malformed
            } else {
                Error::Truncated
            }));
        }
        let (opt, rest) = self.data.split_at(len);
        self.data = rest;
        Some(Ok(NdpOption {
            kind: opt[0],
            data: &opt[2..],
        }))
    }
}

/// A parsed NS or NA with its (single) link-layer address option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Repr {
    /// Neighbor Solicitation.
    NeighborSolicit {
        /// Address being resolved.
        target_addr: Ipv6Addr,
        /// Source link-layer address option, if present.
        lladdr: Option<EthernetAddress>,
    },
    /// Neighbor Advertisement.
    NeighborAdvert {
        /// R/S/O flags byte.
        flags: u8,
        /// Address being advertised.
        target_addr: Ipv6Addr,
        /// Target link-layer address option, if present.
        lladdr: Option<EthernetAddress>,
    },
}

impl Repr {
    /// Parses an NS/NA (checksum not verified here: use
    /// `icmpv6::Packet::verify_checksum` first). Malformed options are an error.
    pub fn parse<T: AsRef<[u8]>>(n: &Neighbor<T>) -> Result<Repr> {
        n.check_len()?;
        if n.buffer.as_ref()[1] != 0 {
            return Err(Error::Malformed);
        }
        let want = if n.msg_type() == Message::NeighborSolicit {
            ND_OPT_SOURCE_LL_ADDR
        } else {
            ND_OPT_TARGET_LL_ADDR
        };
        let mut lladdr = None;
        for opt in n.options() {
            let opt = opt?;
            if opt.kind == want && lladdr.is_none() {
                lladdr = Some(opt.link_layer_addr().ok_or(Error::Malformed)?);
            }
        }
        let target_addr = n.target_addr();
        Ok(match n.msg_type() {
            Message::NeighborSolicit => Repr::NeighborSolicit {
                target_addr,
                lladdr,
            },
            _ => Repr::NeighborAdvert {
                flags: n.flags() & 0xe0,
                target_addr,
                lladdr,
            },
        })
    }

    /// Length of the emitted ICMPv6 message.
    pub fn buffer_len(&self) -> usize {
        let ll = match self {
            Repr::NeighborSolicit { lladdr, .. } | Repr::NeighborAdvert { lladdr, .. } => lladdr,
        };
        ND_NEIGHBOR_LEN + if ll.is_some() { ND_OPT_LL_ADDR_LEN } else { 0 }
    }

    /// Writes the whole ICMPv6 message with a zero checksum; call
    /// `icmpv6::Packet::fill_checksum(src, dst)` afterwards.
    ///
    /// # Panics
    /// If the buffer is shorter than `buffer_len()`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, buf: &mut T) {
        let (ty, flags, target, ll, kind) = match *self {
            Repr::NeighborSolicit {
                target_addr,
                lladdr,
            } => (
                Message::NeighborSolicit,
                0,
                target_addr,
                lladdr,
                ND_OPT_SOURCE_LL_ADDR,
            ),
            Repr::NeighborAdvert {
                flags,
                target_addr,
                lladdr,
            } => (
                Message::NeighborAdvert,
                flags,
                target_addr,
                lladdr,
                ND_OPT_TARGET_LL_ADDR,
            ),
        };
        let b = buf.as_mut();
        let mut icmp = icmpv6::Packet::new_unchecked(&mut *b);
        icmp.set_msg_type(ty);
        icmp.set_code(0);
        icmp.set_checksum(0);
        let mut n = Neighbor::new_unchecked(&mut *b);
        n.set_flags(flags);
        n.set_target_addr(target);
        if let Some(a) = ll {
            let o = &mut b[ND_OPTIONS..ND_OPTIONS + ND_OPT_LL_ADDR_LEN];
            o[0] = kind;
            o[1] = (ND_OPT_LL_ADDR_LEN / 8) as u8;
            o[2..].copy_from_slice(&a.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn neighbor_solicit() {
        let src: Ipv6Addr = "2001:2::2".parse().unwrap();
        let target: Ipv6Addr = "2001:2::1".parse().unwrap();
        let mac = EthernetAddress([2, 0, 0, 0, 0, 2]);
        let r = Repr::NeighborSolicit {
            target_addr: target,
            lladdr: Some(mac),
        };
        let mut b = vec![0xffu8; r.buffer_len()];
        r.emit(&mut b);
        let dst = crate::ipv6::solicited_node_multicast(target);
        icmpv6::Packet::new_checked(&mut b[..])
            .unwrap()
            .fill_checksum(src, dst);
        assert!(icmpv6::Packet::new_checked(&b[..])
            .unwrap()
            .verify_checksum(src, dst));
        let n = Neighbor::new_checked(&b[..]).unwrap();
        assert_eq!(n.target_addr(), target);
        assert_eq!(n.link_layer_addr(ND_OPT_SOURCE_LL_ADDR), Some(mac));
        assert_eq!(n.link_layer_addr(ND_OPT_TARGET_LL_ADDR), None);
        assert_eq!(Repr::parse(&n).unwrap(), r);
    }

    #[test]
    fn advert_flags_and_bad_options() {
        let mut b = vec![
            136u8,
            0,
            0,
            0,
            ND_NA_FLAG_SOLICITED | ND_NA_FLAG_OVERRIDE,
            0,
            0,
            0,
        ];
        b.extend_from_slice(&[0u8; 16]);
        b.extend_from_slice(&[2, 0, 1, 2, 3, 4, 5, 6]);
        let n = Neighbor::new_checked(&b[..]).unwrap();
        assert!(!n.router_flag() && n.solicited_flag() && n.override_flag());
        assert_eq!(n.link_layer_addr(ND_OPT_TARGET_LL_ADDR), None); // length 0 is malformed
        assert_eq!(Repr::parse(&n), Err(Error::Malformed));
        b[25] = 2; // claims 16 bytes, only 8 present
        let n = Neighbor::new_checked(&b[..]).unwrap();
        assert_eq!(n.options().collect::<Vec<_>>(), vec![Err(Error::Truncated)]);
        b[0] = 128;
        assert_eq!(
            Neighbor::new_checked(&b[..]).unwrap_err(),
            Error::Unsupported
        );
        assert_eq!(
            Neighbor::new_checked(&b[..23]).unwrap_err(),
            Error::Truncated
        );
    }

    proptest! {
        #[test]
        fn repr_roundtrip(na in any::<bool>(), flags in 0u8..8, t in any::<[u8; 16]>(), mac in proptest::option::of(any::<[u8; 6]>())) {
            let target_addr = Ipv6Addr::from(t);
            let lladdr = mac.map(EthernetAddress);
            let r = if na { Repr::NeighborAdvert { flags: flags << 5, target_addr, lladdr } }
                    else { Repr::NeighborSolicit { target_addr, lladdr } };
            let mut b = vec![0u8; r.buffer_len()];
            r.emit(&mut b);
            prop_assert_eq!(Repr::parse(&Neighbor::new_checked(&b[..]).unwrap()).unwrap(), r);
        }

        #[test]
        fn options_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            for o in OptionIter::new(&data).flatten() {
                let _ = o.link_layer_addr();
            }
        }
    }
}
