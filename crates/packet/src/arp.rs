//! ARP (RFC 826) for the only combination a router needs: Ethernet
//! hardware addresses and IPv4 protocol addresses.

use crate::ethernet::Address as EthernetAddress;
use crate::field::{get_array, get_u16, set_u16};
use crate::{Error, Result};
use std::net::Ipv4Addr;

/// Length of an Ethernet/IPv4 ARP packet.
pub const PACKET_LEN: usize = 28;

const HTYPE_ETHERNET: u16 = 1;
const PTYPE_IPV4: u16 = 0x0800;

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
            1 => Operation::Request,
            2 => Operation::Reply,
            o => Operation::Unknown(o),
        }
    }
}

impl From<Operation> for u16 {
    fn from(o: Operation) -> u16 {
        match o {
            Operation::Request => 1,
            Operation::Reply => 2,
            Operation::Unknown(v) => v,
        }
    }
}

/// A zero-copy view of an Ethernet/IPv4 ARP packet.
///
/// The address getters use the fixed Ethernet/IPv4 layout; check
/// `hardware_type` etc. (or use [`Repr::parse`]) before trusting them.
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

    /// Wraps `buffer`, failing with `Truncated` if shorter than [`PACKET_LEN`].
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the buffer holds an Ethernet/IPv4 ARP packet.
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < PACKET_LEN {
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

    /// Hardware type (1 = Ethernet).
    #[inline]
    pub fn hardware_type(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 0)
    }

    /// Protocol type (0x0800 = IPv4).
    #[inline]
    pub fn protocol_type(&self) -> u16 {
        get_u16(self.buffer.as_ref(), 2)
    }

    /// Hardware address length (6 for Ethernet).
    #[inline]
    pub fn hardware_len(&self) -> u8 {
        self.buffer.as_ref()[4]
    }

    /// Protocol address length (4 for IPv4).
    #[inline]
    pub fn protocol_len(&self) -> u8 {
        self.buffer.as_ref()[5]
    }

    /// Operation.
    #[inline]
    pub fn operation(&self) -> Operation {
        get_u16(self.buffer.as_ref(), 6).into()
    }

    /// Sender hardware address.
    #[inline]
    pub fn source_hardware_addr(&self) -> EthernetAddress {
        EthernetAddress(get_array(self.buffer.as_ref(), 8))
    }

    /// Sender protocol address.
    #[inline]
    pub fn source_protocol_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(get_array::<4>(self.buffer.as_ref(), 14))
    }

    /// Target hardware address.
    #[inline]
    pub fn target_hardware_addr(&self) -> EthernetAddress {
        EthernetAddress(get_array(self.buffer.as_ref(), 18))
    }

    /// Target protocol address.
    #[inline]
    pub fn target_protocol_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(get_array::<4>(self.buffer.as_ref(), 24))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the hardware type.
    #[inline]
    pub fn set_hardware_type(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 0, v)
    }
    /// Sets the protocol type.
    #[inline]
    pub fn set_protocol_type(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), 2, v)
    }
    /// Sets the hardware address length.
    #[inline]
    pub fn set_hardware_len(&mut self, v: u8) {
        self.buffer.as_mut()[4] = v
    }
    /// Sets the protocol address length.
    #[inline]
    pub fn set_protocol_len(&mut self, v: u8) {
        self.buffer.as_mut()[5] = v
    }
    /// Sets the operation.
    #[inline]
    pub fn set_operation(&mut self, op: Operation) {
        set_u16(self.buffer.as_mut(), 6, op.into())
    }
    /// Sets the sender hardware address.
    #[inline]
    pub fn set_source_hardware_addr(&mut self, a: EthernetAddress) {
        self.buffer.as_mut()[8..14].copy_from_slice(&a.0)
    }
    /// Sets the sender protocol address.
    #[inline]
    pub fn set_source_protocol_addr(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[14..18].copy_from_slice(&a.octets())
    }
    /// Sets the target hardware address.
    #[inline]
    pub fn set_target_hardware_addr(&mut self, a: EthernetAddress) {
        self.buffer.as_mut()[18..24].copy_from_slice(&a.0)
    }
    /// Sets the target protocol address.
    #[inline]
    pub fn set_target_protocol_addr(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[24..28].copy_from_slice(&a.octets())
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
        if p.hardware_type() != HTYPE_ETHERNET
            || p.protocol_type() != PTYPE_IPV4
            || p.hardware_len() != 6
            || p.protocol_len() != 4
        {
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
        PACKET_LEN
    }

    /// Writes the packet.
    ///
    /// # Panics
    /// If the buffer is shorter than [`PACKET_LEN`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_hardware_type(HTYPE_ETHERNET);
        p.set_protocol_type(PTYPE_IPV4);
        p.set_hardware_len(6);
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
