//! Cross-checks against etherparse: packets built by etherparse must parse
//! (and verify) with our views, and packets we emit must parse with
//! etherparse and carry the checksums etherparse computes.

use etherparse::{NetHeaders, PacketBuilder, PacketHeaders, TransportHeader};
use packet::{ethernet, icmpv4, icmpv6, ipv4, ipv6, udp, Protocol};
use proptest::prelude::*;
use std::net::{Ipv4Addr, Ipv6Addr};

fn l3(frame: &[u8]) -> &[u8] {
    let (_, off) = ethernet::payload_offset(frame).unwrap();
    &frame[off..]
}

proptest! {
    #[test]
    fn ipv4_udp(src in any::<[u8; 4]>(), dst in any::<[u8; 4]>(), ttl in 1u8.., sp in any::<u16>(), dp in any::<u16>(),
                vid in proptest::option::of(0u16..4095), payload in proptest::collection::vec(any::<u8>(), 0..200)) {
        let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
        let mut frame = Vec::new();
        match vid {
            Some(v) => b.single_vlan(etherparse::VlanId::try_new(v).unwrap()).ipv4(src, dst, ttl).udp(sp, dp).write(&mut frame, &payload).unwrap(),
            None => b.ipv4(src, dst, ttl).udp(sp, dp).write(&mut frame, &payload).unwrap(),
        }
        let (et, off) = ethernet::payload_offset(&frame).unwrap();
        prop_assert_eq!(et, ethernet::EtherType::Ipv4);
        prop_assert_eq!(off, if vid.is_some() { 18 } else { 14 });
        let ip = ipv4::Packet::new_checked(&frame[off..]).unwrap();
        prop_assert!(ip.verify_checksum());
        prop_assert_eq!((ip.src_addr(), ip.dst_addr(), ip.ttl()), (Ipv4Addr::from(src), Ipv4Addr::from(dst), ttl));
        prop_assert_eq!(ip.protocol(), Protocol::Udp);
        let u = udp::Packet::new_checked(ip.payload()).unwrap();
        prop_assert!(u.verify_checksum_v4(src.into(), dst.into()));
        prop_assert_eq!((u.src_port(), u.dst_port(), u.payload()), (sp, dp, &payload[..]));
        // Our fill must reproduce etherparse's value exactly.
        let mut copy = ip.payload().to_vec();
        let mut u2 = udp::Packet::new_checked(&mut copy[..]).unwrap();
        u2.fill_checksum_v4(src.into(), dst.into());
        prop_assert_eq!(u2.checksum(), u.checksum());
        // TTL decrement keeps etherparse's view of the checksum valid.
        let mut ipbuf = frame[off..].to_vec();
        let mut ipm = ipv4::Packet::new_checked(&mut ipbuf[..]).unwrap();
        ipm.decrement_ttl_incremental();
        let h = etherparse::Ipv4HeaderSlice::from_slice(&ipbuf).unwrap().to_header();
        prop_assert_eq!(h.calc_header_checksum(), h.header_checksum);
    }

    #[test]
    fn ipv4_icmp(src in any::<[u8; 4]>(), dst in any::<[u8; 4]>(),
                 id in any::<u16>(), sn in any::<u16>(), payload in proptest::collection::vec(any::<u8>(), 0..100)) {
        let mut frame = Vec::new();
        PacketBuilder::ethernet2([2; 6], [4; 6]).ipv4(src, dst, 64).icmpv4_echo_request(id, sn)
            .write(&mut frame, &payload).unwrap();
        let ip = ipv4::Packet::new_checked(l3(&frame)).unwrap();
        prop_assert_eq!(ip.protocol(), Protocol::Icmp);
        let i = icmpv4::Packet::new_checked(ip.payload()).unwrap();
        prop_assert!(i.verify_checksum());
        prop_assert_eq!(icmpv4::Repr::parse(&i).unwrap(), icmpv4::Repr::EchoRequest { ident: id, seq_no: sn, data: &payload });
    }

    #[test]
    fn ipv6_udp_icmp(src in any::<[u8; 16]>(), dst in any::<[u8; 16]>(), hl in any::<u8>(),
                         id in any::<u16>(), sn in any::<u16>(), payload in proptest::collection::vec(any::<u8>(), 0..100)) {
        let (s6, d6) = (Ipv6Addr::from(src), Ipv6Addr::from(dst));
        let mut frame = Vec::new();
        PacketBuilder::ethernet2([2; 6], [4; 6]).ipv6(src, dst, hl).udp(53, 5353).write(&mut frame, &payload).unwrap();
        let (et, off) = ethernet::payload_offset(&frame).unwrap();
        prop_assert_eq!(et, ethernet::EtherType::Ipv6);
        let ip = ipv6::Packet::new_checked(&frame[off..]).unwrap();
        prop_assert_eq!((ip.src_addr(), ip.dst_addr(), ip.hop_limit(), ip.next_header()), (s6, d6, hl, Protocol::Udp));
        let u = udp::Packet::new_checked(ip.payload()).unwrap();
        prop_assert!(u.verify_checksum_v6(s6, d6));

        let mut frame = Vec::new();
        PacketBuilder::ethernet2([2; 6], [4; 6]).ipv6(src, dst, hl).icmpv6_echo_request(id, sn).write(&mut frame, &payload).unwrap();
        let ip = ipv6::Packet::new_checked(l3(&frame)).unwrap();
        prop_assert_eq!(ip.next_header(), Protocol::Icmpv6);
        let i = icmpv6::Packet::new_checked(ip.payload()).unwrap();
        prop_assert!(i.verify_checksum(s6, d6));
        prop_assert_eq!((i.msg_type(), i.echo_ident(), i.echo_seq_no(), i.data()), (icmpv6::Message::EchoRequest, id, sn, &payload[..]));
    }

    /// The other direction: what we emit, etherparse parses with the
    /// checksums it would have computed itself.
    #[test]
    fn ours_parsed_by_etherparse(src in any::<u32>(), dst in any::<u32>(), ttl in any::<u8>(), ident in any::<u16>(),
                                 payload in proptest::collection::vec(any::<u8>(), 0..100)) {
        let udp_repr = udp::Repr { src_port: 4000, dst_port: 9, payload_len: payload.len() };
        let ip_repr = ipv4::Repr {
            src_addr: src.into(), dst_addr: dst.into(), protocol: Protocol::Udp,
            payload_len: udp_repr.buffer_len(), ttl, dscp_ecn: 0, ident, dont_frag: true,
        };
        let mut frame = vec![0u8; ethernet::ETH_LEN + ip_repr.total_len()];
        let mut eth = ethernet::Frame::new_unchecked(&mut frame[..]);
        ethernet::Repr { src_addr: ethernet::Address([2; 6]), dst_addr: ethernet::Address([4; 6]), ethertype: ethernet::EtherType::Ipv4 }
            .emit(&mut eth);
        let mut ip = ipv4::Packet::new_unchecked(eth.payload_mut());
        ip_repr.emit(&mut ip);
        let mut u = udp::Packet::new_unchecked(ip.payload_mut());
        udp_repr.emit(&mut u);
        u.payload_mut().copy_from_slice(&payload);
        u.fill_checksum_v4(src.into(), dst.into());

        let h = PacketHeaders::from_ethernet_slice(&frame).unwrap();
        let Some(NetHeaders::Ipv4(ip4, _)) = h.net else { panic!("not ipv4") };
        prop_assert_eq!(ip4.calc_header_checksum(), ip4.header_checksum);
        prop_assert_eq!((ip4.time_to_live, ip4.identification, ip4.dont_fragment), (ttl, ident, true));
        let Some(TransportHeader::Udp(uh)) = h.transport else { panic!("not udp") };
        let expect = uh.calc_checksum_ipv4(&ip4, &payload).unwrap();
        prop_assert_eq!(uh.checksum, if expect == 0 { 0xffff } else { expect });
    }
}
