//! ARP (RFC 826) for the only combination a router needs: Ethernet
//! hardware addresses and IPv4 protocol addresses.

use crate::ethernet::{Address as EthernetAddress, ETH_ALEN, ETH_IPV4};
use crate::field::{get_array, get_u16, set_u16};
use crate::{Error, Result};
use std::net::Ipv4Addr;

/// Length of an Ethernet/IPv4 ARP packet.
pub const ARP_LEN: usize = 28;

/// Offset of the hardware type.
pub const ARP_HRD: usize = 0;
/// Offset of the protocol type.
pub const ARP_PRO: usize = 2;
/// Offset of the hardware address length.
pub const ARP_HLN: usize = 4;
/// Offset of the protocol address length.
pub const ARP_PLN: usize = 5;
/// Offset of the operation.
pub const ARP_OP: usize = 6;
/// Offset of the sender hardware address (Ethernet/IPv4 layout).
pub const ARP_SHA: usize = 8;
/// Offset of the sender protocol address.
pub const ARP_SIP: usize = 14;
/// Offset of the target hardware address.
pub const ARP_THA: usize = 18;
/// Offset of the target protocol address.
pub const ARP_TIP: usize = 24;

/// Hardware type Ethernet (`<linux/if_arp.h>` names).
pub const ARPHRD_ETHER: u16 = 1;
/// Operation: request.
pub const ARPOP_REQUEST: u16 = 1;
/// Operation: reply.
pub const ARPOP_REPLY: u16 = 2;

/// ARP operation code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Request (1).
    Request,
    /// Reply (2).
    Reply,
    /// Any other operation.
    Unknown(u16),
}

impl From<u16> for Operation {
    fn from(v: u16) -> Self {
        match v {
            ARPOP_REQUEST => Operation::Request,
            ARPOP_REPLY => Operation::Reply,
            o => Operation::Unknown(o),
        }
    }
}

impl From<Operation> for u16 {
    fn from(o: Operation) -> u16 {
        match o {
            Operation::Request => ARPOP_REQUEST,
            Operation::Reply => ARPOP_REPLY,
            Operation::Unknown(v) => v,
        }
    }
}

view! {
    /// A zero-copy view of an Ethernet/IPv4 ARP packet.
    ///
    /// The address getters use the fixed Ethernet/IPv4 layout; check
    /// `hardware_type` etc. (or use [`Repr::parse`]) before trusting them.
    Packet { buffer }
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Checks that the buffer holds an Ethernet/IPv4 ARP packet.
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < ARP_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// Hardware type (1 = Ethernet).
    #[inline]
    pub fn hardware_type(&self) -> u16 {
        get_u16(self.buffer.as_ref(), ARP_HRD)
    }

    /// Protocol type (0x0800 = IPv4).
    #[inline]
    pub fn protocol_type(&self) -> u16 {
        get_u16(self.buffer.as_ref(), ARP_PRO)
    }

    /// Hardware address length (6 for Ethernet).
    #[inline]
    pub fn hardware_len(&self) -> u8 {
        self.buffer.as_ref()[ARP_HLN]
    }

    /// Protocol address length (4 for IPv4).
    #[inline]
    pub fn protocol_len(&self) -> u8 {
        self.buffer.as_ref()[ARP_PLN]
    }

    /// Operation.
    #[inline]
    pub fn operation(&self) -> Operation {
        get_u16(self.buffer.as_ref(), ARP_OP).into()
    }

    /// Sender hardware address.
    #[inline]
    pub fn source_hardware_addr(&self) -> EthernetAddress {
        EthernetAddress(get_array(self.buffer.as_ref(), ARP_SHA))
    }

    /// Sender protocol address.
    #[inline]
    pub fn source_protocol_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(get_array::<4>(self.buffer.as_ref(), ARP_SIP))
    }

    /// Target hardware address.
    #[inline]
    pub fn target_hardware_addr(&self) -> EthernetAddress {
        EthernetAddress(get_array(self.buffer.as_ref(), ARP_THA))
    }

    /// Target protocol address.
    #[inline]
    pub fn target_protocol_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(get_array::<4>(self.buffer.as_ref(), ARP_TIP))
    }

    /// True for the one pair the address getters describe: Ethernet
    /// hardware addresses (type 1, length 6) and IPv4 protocol addresses
    /// (type 0x0800, length 4).
    #[inline]
    pub fn is_ethernet_ipv4(&self) -> bool {
        self.hardware_type() == ARPHRD_ETHER
            && self.protocol_type() == ETH_IPV4
            && self.hardware_len() == ETH_ALEN as u8
            && self.protocol_len() == 4
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the hardware type.
    #[inline]
    pub fn set_hardware_type(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), ARP_HRD, v)
    }
    /// Sets the protocol type.
    #[inline]
    pub fn set_protocol_type(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), ARP_PRO, v)
    }
    /// Sets the hardware address length.
    #[inline]
    pub fn set_hardware_len(&mut self, v: u8) {
        self.buffer.as_mut()[ARP_HLN] = v
    }
    /// Sets the protocol address length.
    #[inline]
    pub fn set_protocol_len(&mut self, v: u8) {
        self.buffer.as_mut()[ARP_PLN] = v
    }
    /// Sets the operation.
    #[inline]
    pub fn set_operation(&mut self, op: Operation) {
        set_u16(self.buffer.as_mut(), ARP_OP, op.into())
    }
    /// Sets the sender hardware address.
    #[inline]
    pub fn set_source_hardware_addr(&mut self, a: EthernetAddress) {
        self.buffer.as_mut()[ARP_SHA..ARP_SHA + ETH_ALEN].copy_from_slice(&a.0)
    }
    /// Sets the sender protocol address.
    #[inline]
    pub fn set_source_protocol_addr(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[ARP_SIP..ARP_SIP + 4].copy_from_slice(&a.octets())
    }
    /// Sets the target hardware address.
    #[inline]
    pub fn set_target_hardware_addr(&mut self, a: EthernetAddress) {
        self.buffer.as_mut()[ARP_THA..ARP_THA + ETH_ALEN].copy_from_slice(&a.0)
    }
    /// Sets the target protocol address.
    #[inline]
    pub fn set_target_protocol_addr(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[ARP_TIP..ARP_TIP + 4].copy_from_slice(&a.octets())
    }
}

/// A parsed Ethernet/IPv4 ARP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Operation.
    pub operation: Operation,
    /// Sender hardware address.
    pub source_hardware_addr: EthernetAddress,
    /// Sender protocol address.
    pub source_protocol_addr: Ipv4Addr,
    /// Target hardware address.
    pub target_hardware_addr: EthernetAddress,
    /// Target protocol address.
    pub target_protocol_addr: Ipv4Addr,
}

impl Repr {
    /// Parses a packet, rejecting (`Unsupported`) anything but
    /// htype 1 / ptype 0x0800 / hlen 6 / plen 4.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        if !p.is_ethernet_ipv4() {
            return Err(Error::Unsupported);
        }
        Ok(Repr {
            operation: p.operation(),
            source_hardware_addr: p.source_hardware_addr(),
            source_protocol_addr: p.source_protocol_addr(),
            target_hardware_addr: p.target_hardware_addr(),
            target_protocol_addr: p.target_protocol_addr(),
        })
    }

    /// Length of the emitted packet.
    pub const fn buffer_len(&self) -> usize {
        ARP_LEN
    }

    /// Writes the packet.
    ///
    /// # Panics
    /// If the buffer is shorter than [`ARP_LEN`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_hardware_type(ARPHRD_ETHER);
        p.set_protocol_type(ETH_IPV4);
        p.set_hardware_len(ETH_ALEN as u8);
        p.set_protocol_len(4);
        p.set_operation(self.operation);
        p.set_source_hardware_addr(self.source_hardware_addr);
        p.set_source_protocol_addr(self.source_protocol_addr);
        p.set_target_hardware_addr(self.target_hardware_addr);
        p.set_target_protocol_addr(self.target_protocol_addr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Who has 198.18.0.1? Tell 198.18.0.2 (from 02:00:00:00:00:02).
    const REQUEST: [u8; 28] = [
        0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, // htype ptype hlen plen op
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 198, 18, 0, 2, // sha spa
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 198, 18, 0, 1, // tha tpa
    ];

    #[test]
    fn parse_request() {
        let r = Repr::parse(&Packet::new_checked(&REQUEST[..]).unwrap()).unwrap();
        assert_eq!(r.operation, Operation::Request);
        assert_eq!(r.source_hardware_addr, EthernetAddress([2, 0, 0, 0, 0, 2]));
        assert_eq!(r.source_protocol_addr, Ipv4Addr::new(198, 18, 0, 2));
        assert_eq!(r.target_hardware_addr, EthernetAddress::UNSPECIFIED);
        assert_eq!(r.target_protocol_addr, Ipv4Addr::new(198, 18, 0, 1));
        let mut out = [0u8; 28];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, REQUEST);
    }

    #[test]
    fn rejects_other_types() {
        assert_eq!(
            Packet::new_checked(&REQUEST[..27]).unwrap_err(),
            Error::Truncated
        );
        for (i, v) in [(1, 6), (3, 0xdd), (4, 8), (5, 16)] {
            let mut b = REQUEST;
            b[i] = v;
            assert_eq!(
                Repr::parse(&Packet::new_checked(&b[..]).unwrap()),
                Err(Error::Unsupported)
            );
        }
    }

    proptest! {
        #[test]
        fn repr_roundtrip(op in any::<u16>(), sha in any::<[u8; 6]>(), spa in any::<u32>(),
                          tha in any::<[u8; 6]>(), tpa in any::<u32>()) {
            let r = Repr {
                operation: op.into(),
                source_hardware_addr: EthernetAddress(sha),
                source_protocol_addr: spa.into(),
                target_hardware_addr: EthernetAddress(tha),
                target_protocol_addr: tpa.into(),
            };
            let mut b = [0u8; 28];
            r.emit(&mut Packet::new_unchecked(&mut b[..]));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap(), r);
        }
    }
}
