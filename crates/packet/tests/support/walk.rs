// The exhaustive "parse everything" walk shared by the cargo-fuzz target
// (fuzz/fuzz_targets/packet_parsers.rs, via include!) and the stable-Rust
// replay test (tests/fuzz_replay.rs). It must never panic for any input;
// the asserts are invariants that hold for every input the views accept.
// Plain `//` comments only: this file is include!d into another crate root.

use packet::{arp, ethernet, icmpv4, icmpv6, ipv4, ipv6, ndp, udp, vlan, Protocol};
use std::hint::black_box;
use std::net::{Ipv4Addr, Ipv6Addr};

/// Feeds `data` to every parser directly, then walks it as a frame.
pub fn walk(data: &[u8]) {
    // Each parser on the raw bytes, so the fuzzer reaches all of them
    // without first building a valid Ethernet header.
    walk_ethernet(data);
    walk_vlan(data);
    walk_arp(data);
    walk_ipv4(data);
    walk_ipv6(data);
    let (s4, d4) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 0, 2));
    let (s6, d6) = (
        Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 1),
        Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 2),
    );
    walk_l4(Protocol::Udp, data, Some((s4, d4)), Some((s6, d6)));
    walk_l4(Protocol::Icmp, data, Some((s4, d4)), None);
    walk_l4(Protocol::Icmpv6, data, None, Some((s6, d6)));
    let _ = black_box(packet::checksum::sum(data));

    // Layered walk, as the dataplane does it.
    if let Some((et, off)) = ethernet::payload_offset(data) {
        assert!(off <= data.len());
        let l3 = &data[off..];
        match et {
            ethernet::EtherType::Ipv4 => walk_ipv4(l3),
            ethernet::EtherType::Ipv6 => walk_ipv6(l3),
            ethernet::EtherType::Arp => walk_arp(l3),
            _ => {}
        }
    }
}

fn walk_ethernet(data: &[u8]) {
    if let Ok(f) = ethernet::Frame::new_checked(data) {
        let (d, s, et) = (f.dst_addr(), f.src_addr(), f.ethertype());
        black_box((
            d.is_multicast(),
            d.is_broadcast(),
            s.is_local(),
            s.to_string(),
            f.payload(),
        ));
        assert_eq!(u16::from(et), u16::from_be_bytes([data[12], data[13]]));
        let r = ethernet::Repr::parse(&f).unwrap();
        let mut out = [0u8; ethernet::ETH_LEN];
        r.emit(&mut ethernet::Frame::new_unchecked(&mut out[..]));
        assert_eq!(&out[..], &data[..ethernet::ETH_LEN]);
        if et == ethernet::EtherType::Vlan {
            walk_vlan(f.payload());
        }
    }
}

fn walk_vlan(data: &[u8]) {
    if let Ok(t) = vlan::Tag::new_checked(data) {
        black_box((t.pcp(), t.dei(), t.vid(), t.ethertype(), t.payload()));
        let r = vlan::Repr::parse(&t).unwrap();
        let mut out = [0u8; vlan::VLAN_HLEN];
        r.emit(&mut vlan::Tag::new_unchecked(&mut out[..]));
        assert_eq!(&out[..], &data[..vlan::VLAN_HLEN]);
    }
}

fn walk_arp(data: &[u8]) {
    if let Ok(p) = arp::Packet::new_checked(data) {
        black_box((
            p.hardware_type(),
            p.protocol_type(),
            p.hardware_len(),
            p.protocol_len(),
            p.operation(),
        ));
        black_box((
            p.source_hardware_addr(),
            p.source_protocol_addr(),
            p.target_hardware_addr(),
            p.target_protocol_addr(),
        ));
        if let Ok(r) = arp::Repr::parse(&p) {
            let mut out = [0u8; arp::ARP_LEN];
            r.emit(&mut arp::Packet::new_unchecked(&mut out[..]));
            assert_eq!(&out[..], &data[..arp::ARP_LEN]);
        }
    }
}

fn walk_ipv4(data: &[u8]) {
    let Ok(p) = ipv4::Packet::new_checked(data) else {
        return;
    };
    black_box((
        p.version(),
        p.header_len(),
        p.dscp_ecn(),
        p.dscp(),
        p.ecn(),
        p.total_len(),
        p.ident(),
    ));
    black_box((
        p.dont_frag(),
        p.more_frags(),
        p.frag_offset(),
        p.is_fragment(),
        p.ttl(),
        p.hop_limit(),
    ));
    black_box((
        p.protocol(),
        p.next_header(),
        p.checksum(),
        p.options(),
        p.header(),
        p.payload(),
    ));
    let (src, dst) = (p.src_addr(), p.dst_addr());
    black_box((
        ipv4::is_martian_source(src),
        ipv4::is_martian_destination(dst),
        ipv4::is_limited_broadcast(dst),
        ipv4::is_multicast(dst),
    ));
    if let Err(at) = ipv4::options_check(p.options()) {
        assert!(at < p.options().len());
    } else {
        let mut out = [0u8; ipv4::IPV4_MAX_LEN];
        let n = ipv4::copied_options(p.options(), &mut out);
        assert!(n.is_multiple_of(4) && n <= p.options().len().div_ceil(4) * 4);
    }
    assert_eq!(
        p.header_len() + p.payload().len(),
        usize::from(p.total_len())
    );
    let valid = p.verify_checksum();
    black_box(p.reserved_flag());
    // RFC 1624 update keeps a valid checksum valid.
    let mut copy = data.to_vec();
    let mut m = ipv4::Packet::new_checked(&mut copy[..]).unwrap();
    let ttl = m.ttl();
    let new = m.decrement_ttl_incremental();
    assert_eq!(new, ttl.saturating_sub(1));
    if valid {
        assert!(m.verify_checksum());
    }
    // Fix the checksum so Repr::parse gets past it even for random input
    // (a fuzzer rarely guesses a valid checksum), then round-trip.
    m.fill_checksum();
    assert!(m.verify_checksum());
    if let Ok(r) = ipv4::Repr::parse(&m) {
        let mut out = vec![0u8; r.total_len()];
        r.emit(&mut ipv4::Packet::new_unchecked(&mut out[..]));
        assert_eq!(&out[..ipv4::IPV4_LEN], &copy[..ipv4::IPV4_LEN]);
    }
    walk_l4(p.protocol(), p.payload(), Some((src, dst)), None);
}

fn walk_ipv6(data: &[u8]) {
    let Ok(p) = ipv6::Packet::new_checked(data) else {
        return;
    };
    black_box((
        p.version(),
        p.traffic_class(),
        p.flow_label(),
        p.payload_len(),
        p.next_header(),
        p.hop_limit(),
    ));
    let (src, dst) = (p.src_addr(), p.dst_addr());
    black_box((
        ipv6::is_multicast(dst),
        ipv6::is_link_local(src),
        ipv6::is_unspecified(src),
        ipv6::is_loopback(src),
    ));
    black_box(ipv6::solicited_node_multicast(dst));
    assert_eq!(p.payload().len(), usize::from(p.payload_len()));
    let r = ipv6::Repr::parse(&p).unwrap();
    let mut out = [0u8; ipv6::IPV6_LEN];
    r.emit(&mut ipv6::Packet::new_unchecked(&mut out[..]));
    assert_eq!(&out[4..], &data[4..ipv6::IPV6_LEN]);
    walk_l4(p.next_header(), p.payload(), None, Some((src, dst)));
}

type V4 = Option<(Ipv4Addr, Ipv4Addr)>;
type V6 = Option<(Ipv6Addr, Ipv6Addr)>;

fn walk_l4(proto: Protocol, data: &[u8], v4: V4, v6: V6) {
    match proto {
        Protocol::Udp => {
            let Ok(u) = udp::Packet::new_checked(data) else {
                return;
            };
            black_box((
                u.src_port(),
                u.dst_port(),
                u.len(),
                u.is_empty(),
                u.checksum(),
                u.payload(),
            ));
            if let Some((s, d)) = v4 {
                black_box(u.verify_checksum_v4(s, d));
            }
            if let Some((s, d)) = v6 {
                black_box(u.verify_checksum_v6(s, d));
            }
            let r = udp::Repr::parse(&u).unwrap();
            assert_eq!(r.buffer_len(), usize::from(u.len()));
        }
        Protocol::Icmp => {
            let Ok(i) = icmpv4::Packet::new_checked(data) else {
                return;
            };
            black_box((
                i.msg_type(),
                i.code(),
                i.checksum(),
                i.echo_ident(),
                i.echo_seq_no(),
            ));
            black_box((i.next_hop_mtu(), i.pointer(), i.data(), i.verify_checksum()));
            let mut fixed = data.to_vec();
            icmpv4::Packet::new_unchecked(&mut fixed[..]).fill_checksum();
            if let Ok(r) = icmpv4::Repr::parse(&icmpv4::Packet::new_checked(&fixed[..]).unwrap()) {
                let mut out = vec![0u8; r.buffer_len()];
                r.emit(&mut icmpv4::Packet::new_unchecked(&mut out[..]));
                assert_eq!(
                    icmpv4::Repr::parse(&icmpv4::Packet::new_checked(&out[..]).unwrap()),
                    Ok(r)
                );
            }
        }
        Protocol::Icmpv6 => {
            let Ok(i) = icmpv6::Packet::new_checked(data) else {
                return;
            };
            black_box((
                i.msg_type(),
                i.code(),
                i.checksum(),
                i.echo_ident(),
                i.echo_seq_no(),
            ));
            black_box((i.pkt_too_big_mtu(), i.param_problem_ptr(), i.data()));
            if let Some((s, d)) = v6 {
                black_box(i.verify_checksum(s, d));
            }
            walk_ndp(data);
        }
        _ => {}
    }
}

fn walk_ndp(data: &[u8]) {
    let Ok(n) = ndp::Neighbor::new_checked(data) else {
        return;
    };
    black_box((
        n.msg_type(),
        n.flags(),
        n.router_flag(),
        n.solicited_flag(),
        n.override_flag(),
        n.target_addr(),
    ));
    for o in n.options().flatten() {
        black_box((o.kind, o.data, o.link_layer_addr()));
    }
    black_box((
        n.link_layer_addr(ndp::ND_OPT_SOURCE_LL_ADDR),
        n.link_layer_addr(ndp::ND_OPT_TARGET_LL_ADDR),
    ));
    if let Ok(r) = ndp::Repr::parse(&n) {
        let mut out = vec![0u8; r.buffer_len()];
        r.emit(&mut out);
        assert_eq!(
            ndp::Repr::parse(&ndp::Neighbor::new_checked(&out[..]).unwrap()),
            Ok(r)
        );
    }
}
