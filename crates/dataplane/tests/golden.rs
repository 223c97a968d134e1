//! Golden tests: crafted frames through a 3-port router on in-memory pcap
//! ports, what each port sent compared byte for byte (mismatches are
//! written to target/golden/*.pcap).

mod common;
use common::*;
use dataplane::{DropReason, SnapshotChecks};
use etherparse::{Icmpv4Type, Icmpv6Type, NetSlice, SlicedPacket, TransportSlice};

fn icmp4_of(frame: &[u8]) -> (etherparse::Ipv4Header, Icmpv4Type, Vec<u8>) {
    let p = SlicedPacket::from_ethernet(frame).unwrap();
    let Some(NetSlice::Ipv4(ip)) = p.net else {
        panic!("not ipv4")
    };
    let Some(TransportSlice::Icmpv4(icmp)) = p.transport else {
        panic!("not icmp")
    };
    // Checksums verify.
    let h = ip.header().to_header();
    assert_eq!(h.calc_header_checksum(), h.header_checksum);
    let sum = icmp.icmp_type().calc_checksum(icmp.payload());
    assert_eq!(sum, icmp.checksum(), "icmp checksum");
    (h, icmp.icmp_type(), icmp.payload().to_vec())
}

fn icmp6_of(frame: &[u8]) -> (etherparse::Ipv6Header, Icmpv6Type, Vec<u8>) {
    let p = SlicedPacket::from_ethernet(frame).unwrap();
    let Some(NetSlice::Ipv6(ip)) = p.net else {
        panic!("not ipv6")
    };
    let Some(TransportSlice::Icmpv6(icmp)) = p.transport else {
        panic!("not icmpv6")
    };
    let h = ip.header().to_header();
    let sum = icmp
        .icmp_type()
        .calc_checksum(h.source, h.destination, icmp.payload())
        .unwrap();
    assert_eq!(sum, icmp.checksum(), "icmpv6 checksum");
    (h, icmp.icmp_type(), icmp.payload().to_vec())
}

#[test]
fn forwards_v4_and_v6_with_static_neighbor() {
    let a = udp4(
        HOST0,
        MAC0,
        "198.18.0.2",
        "198.19.200.1",
        64,
        1000,
        &[1; 18],
        false,
    );
    let b = udp6(
        HOST0,
        MAC0,
        "2001:2:0:1::2",
        "2001:2:0:8001::1",
        64,
        1000,
        &[2; 10],
    );
    let mut r = Rig::new(CONFIG, vec![vec![a.clone(), b.clone()]]);
    r.run();
    assert_frames(
        "fwd",
        &r.sent(1),
        &[forwarded4(&a, MAC1, NB1), forwarded6(&b, MAC1, NB1)],
    );
    assert!(r.sent(0).is_empty());
    let s = r.stats();
    assert_eq!(s.forwarded, 2);
    assert_eq!(s.ports[1].tx_packets, 2);
}

#[test]
fn ttl_and_hop_limit_exceeded() {
    let a = udp4(
        HOST0,
        MAC0,
        "198.18.0.2",
        "198.19.200.1",
        1,
        1000,
        &[1; 18],
        false,
    );
    let b = udp6(
        HOST0,
        MAC0,
        "2001:2:0:1::2",
        "2001:2:0:8001::1",
        1,
        1000,
        &[2; 10],
    );
    let mut r = Rig::new(CONFIG, vec![vec![a.clone(), b.clone()]]);
    r.run();
    let out = r.sent(0);
    assert_eq!(out.len(), 2);
    assert_eq!(&out[0][0..12], &[HOST0, MAC0].concat()[..]);
    let (h, t, quote) = icmp4_of(&out[0]);
    assert_eq!(h.source, ip4("198.18.0.1"));
    assert_eq!(h.destination, ip4("198.18.0.2"));
    assert!(matches!(t, Icmpv4Type::TimeExceeded(_)));
    assert_eq!(quote, a[14..]);
    let (h6, t6, quote6) = icmp6_of(&out[1]);
    assert_eq!(h6.source, ip6("2001:2:0:1::1"));
    assert!(matches!(t6, Icmpv6Type::TimeExceeded(_)));
    assert_eq!(quote6, b[14..]);
    let s = r.stats();
    assert_eq!(s.drop_count(DropReason::TtlExceeded), 1);
    assert_eq!(s.drop_count(DropReason::HopLimitExceeded), 1);
    assert!(r.sent(1).is_empty());
}

#[test]
fn no_route_v4_and_v6() {
    let a = udp4(
        HOST0,
        MAC0,
        "198.18.0.2",
        "198.19.16.1",
        64,
        1000,
        &[1; 18],
        false,
    );
    let b = udp6(
        HOST0,
        MAC0,
        "2001:2:0:1::2",
        "2001:2:0:10::1",
        64,
        1000,
        &[2; 10],
    );
    let mut r = Rig::new(CONFIG, vec![vec![a, b]]);
    r.run();
    let out = r.sent(0);
    assert_eq!(out.len(), 2);
    let (_, t, _) = icmp4_of(&out[0]);
    assert_eq!(
        t,
        Icmpv4Type::DestinationUnreachable(etherparse::icmpv4::DestUnreachableHeader::Network)
    );
    let (_, t6, _) = icmp6_of(&out[1]);
    assert_eq!(
        t6,
        Icmpv6Type::DestinationUnreachable(etherparse::icmpv6::DestUnreachableCode::NoRoute)
    );
    assert_eq!(r.stats().drop_count(DropReason::NoRoute), 2);
}

#[test]
fn frag_needed_with_df_and_packet_too_big() {
    let a = udp4(
        HOST0,
        MAC0,
        "198.18.0.2",
        "198.18.64.9",
        64,
        1000,
        &[7; 1000],
        true,
    );
    let b = udp6(
        HOST0,
        MAC0,
        "2001:2:0:1::2",
        "2001:2:0:4000::9",
        64,
        1000,
        &[7; 1500],
    );
    let mut r = Rig::new(CONFIG, vec![vec![a.clone(), b]]);
    r.run();
    let out = r.sent(0);
    assert_eq!(out.len(), 2);
    let (_, t, quote) = icmp4_of(&out[0]);
    assert_eq!(
        t,
        Icmpv4Type::DestinationUnreachable(
            etherparse::icmpv4::DestUnreachableHeader::FragmentationNeeded { next_hop_mtu: 576 }
        )
    );
    assert_eq!(out[0].len(), 14 + 576, "quote fills 576 bytes");
    assert_eq!(quote[..], a[14..14 + 576 - 28]);
    let (_, t6, _) = icmp6_of(&out[1]);
    assert_eq!(t6, Icmpv6Type::PacketTooBig { mtu: 1500 });
    assert_eq!(out[1].len(), 14 + 1280);
    let s = r.stats();
    assert_eq!(s.drop_count(DropReason::FragNeeded), 1);
    assert_eq!(s.drop_count(DropReason::PacketTooBig), 1);
}

#[test]
fn fragments_without_df_and_reassembles() {
    let payload: Vec<u8> = (0..1200u32).map(|i| (i * 7) as u8).collect();
    let a = udp4(
        HOST0,
        MAC0,
        "198.18.0.2",
        "198.18.64.9",
        64,
        1000,
        &payload,
        false,
    );
    let mut r = Rig::new(CONFIG, vec![vec![a.clone()]]);
    r.run();
    let out = r.sent(2);
    assert_eq!(out.len(), 3);
    let mut data = vec![0u8; a.len() - 34];
    let mut seen = 0;
    for (i, f) in out.iter().enumerate() {
        assert!(f.len() - 14 <= 576);
        assert_eq!(&f[0..6], &NB2);
        let p = SlicedPacket::from_ethernet(f);
        let h = etherparse::Ipv4HeaderSlice::from_slice(&f[14..]).unwrap();
        assert_eq!(h.to_header().calc_header_checksum(), h.header_checksum());
        assert_eq!(h.ttl(), 63);
        assert_eq!(h.more_fragments(), i < 2);
        let off = h.fragments_offset().value() as usize * 8;
        let body = &f[34..14 + h.total_len() as usize];
        if i < 2 {
            assert_eq!(body.len() % 8, 0);
        }
        data[off..off + body.len()].copy_from_slice(body);
        seen += body.len();
        let _ = p;
    }
    assert_eq!(seen, data.len());
    assert_eq!(data, a[34..]);
    let s = r.stats();
    assert_eq!((s.forwarded, s.fragmented, s.fragments), (1, 1, 3));
}

#[test]
fn answers_arp_request() {
    let req = arp_frame(
        HOST0,
        [0xff; 6],
        1,
        HOST0,
        "198.18.0.2",
        [0; 6],
        "198.18.0.1",
    );
    let mut r = Rig::new(CONFIG, vec![vec![req]]);
    r.run();
    let mut expected = Vec::new();
    expected.extend_from_slice(&HOST0);
    expected.extend_from_slice(&MAC0);
    expected.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 2]);
    expected.extend_from_slice(&MAC0);
    expected.extend_from_slice(&ip4("198.18.0.1"));
    expected.extend_from_slice(&HOST0);
    expected.extend_from_slice(&ip4("198.18.0.2"));
    expected.resize(60, 0);
    assert_frames("arp_reply", &r.sent(0), &[expected]);
    assert_eq!(r.stats().local, 1);
}

fn ns_frame(target: &str, src: &str) -> Vec<u8> {
    let dst = {
        let t = ip6(target);
        let mut d = ip6("ff02::1:ff00:0");
        d[13..].copy_from_slice(&t[13..]);
        d
    };
    let mut body = vec![135, 0, 0, 0, 0, 0, 0, 0];
    body.extend_from_slice(&ip6(target));
    body.extend_from_slice(&[1, 1]);
    body.extend_from_slice(&HOST0);
    let mut v = Vec::new();
    etherparse::PacketBuilder::ethernet2(HOST0, [0x33, 0x33, 0xff, dst[13], dst[14], dst[15]])
        .ipv6(ip6(src), dst, 255)
        .icmpv6_raw(135, 0, [0; 4])
        .write(&mut v, &body[8..])
        .unwrap();
    v
}

#[test]
fn answers_neighbor_solicitation() {
    let ns = ns_frame("2001:2:0:1::1", "2001:2:0:1::2");
    let mut r = Rig::new(CONFIG, vec![vec![ns]]);
    r.run();
    let out = r.sent(0);
    assert_eq!(out.len(), 1);
    assert_eq!(&out[0][0..12], &[HOST0, MAC0].concat()[..]);
    let (h, t, payload) = icmp6_of(&out[0]);
    assert_eq!(h.source, ip6("2001:2:0:1::1"));
    assert_eq!(h.destination, ip6("2001:2:0:1::2"));
    assert_eq!(h.hop_limit, 255);
    assert_eq!(
        t,
        Icmpv6Type::Unknown {
            type_u8: 136,
            code_u8: 0,
            bytes5to8: [0xe0, 0, 0, 0]
        }
    );
    assert_eq!(&payload[..16], &ip6("2001:2:0:1::1"));
    assert_eq!(&payload[16..], &[&[2u8, 1][..], &MAC0[..]].concat()[..]);
    assert_eq!(r.stats().local, 1);
}

#[test]
fn answers_echo_v4_and_v6() {
    let mut e4 = Vec::new();
    etherparse::PacketBuilder::ethernet2(HOST0, MAC0)
        .ipv4(ip4("198.18.0.2"), ip4("198.18.0.1"), 64)
        .icmpv4_echo_request(0x1234, 7)
        .write(&mut e4, b"hello")
        .unwrap();
    let mut e6 = Vec::new();
    etherparse::PacketBuilder::ethernet2(HOST0, MAC0)
        .ipv6(ip6("2001:2:0:1::2"), ip6("2001:2:0:2::1"), 64)
        .icmpv6_echo_request(0x4321, 9)
        .write(&mut e6, b"hello6")
        .unwrap();
    let mut r = Rig::new(CONFIG, vec![vec![e4, e6]]);
    r.run();
    let mut x4 = Vec::new();
    etherparse::PacketBuilder::ethernet2(MAC0, HOST0)
        .ipv4(ip4("198.18.0.1"), ip4("198.18.0.2"), 64)
        .icmpv4_echo_reply(0x1234, 7)
        .write(&mut x4, b"hello")
        .unwrap();
    set_df(&mut x4, true);
    let mut x6 = Vec::new();
    etherparse::PacketBuilder::ethernet2(MAC0, HOST0)
        .ipv6(ip6("2001:2:0:2::1"), ip6("2001:2:0:1::2"), 64)
        .icmpv6_echo_reply(0x4321, 9)
        .write(&mut x6, b"hello6")
        .unwrap();
    assert_frames("echo", &r.sent(0), &[x4, x6]);
    let s = r.stats();
    assert_eq!((s.local, s.generated), (2, 2));
}

#[test]
fn unresolved_next_hop_is_held_then_released_by_arp_reply() {
    let a = udp4(
        HOST0,
        MAC0,
        "198.18.0.2",
        "198.19.32.7",
        64,
        1000,
        &[3; 18],
        false,
    );
    let gw_mac = [2, 0, 0, 0, 0, 0x99];
    let reply = arp_frame(gw_mac, MAC1, 2, gw_mac, "198.19.0.9", MAC1, "198.19.0.1");
    let mut r = Rig::new(CONFIG, vec![vec![a.clone()], vec![reply]]);
    r.run();
    let mut req = Vec::new();
    req.extend_from_slice(&[0xff; 6]);
    req.extend_from_slice(&MAC1);
    req.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1]);
    req.extend_from_slice(&MAC1);
    req.extend_from_slice(&ip4("198.19.0.1"));
    req.extend_from_slice(&[0; 6]);
    req.extend_from_slice(&ip4("198.19.0.9"));
    req.resize(60, 0);
    assert_frames("held", &r.sent(1), &[req, forwarded4(&a, MAC1, gw_mac)]);
    let s = r.stats();
    assert_eq!((s.forwarded, s.held, s.local), (1, 0, 1));
}

#[test]
fn unresolved_connected_host_retries_then_gives_up() {
    let a = udp6(
        HOST0,
        MAC0,
        "2001:2:0:1::2",
        "2001:2:0:2::77",
        64,
        1000,
        &[3; 18],
    );
    let mut r = Rig::new(CONFIG, vec![vec![a]]);
    r.w().poll_once(64);
    assert_eq!(r.w().pending(), 1);
    for _ in 0..5 {
        r.w().advance_clock(1000);
        r.w().poll_once(64);
    }
    let out = r.sent(1);
    assert_eq!(out.len(), 4, "one solicitation and three retries");
    for ns in &out {
        assert_eq!(&ns[0..6], &[0x33, 0x33, 0xff, 0, 0, 0x77]);
        let (_, t, _) = icmp6_of(ns);
        assert!(matches!(t, Icmpv6Type::Unknown { type_u8: 135, .. }));
    }
    let back = r.sent(0);
    assert_eq!(back.len(), 1);
    let (_, t, _) = icmp6_of(&back[0]);
    assert_eq!(
        t,
        Icmpv6Type::DestinationUnreachable(etherparse::icmpv6::DestUnreachableCode::Address)
    );
    let s = r.stats();
    assert_eq!(s.drop_count(DropReason::NeighborUnresolved), 1);
    assert_eq!(s.held, 0);
}

#[test]
fn ecmp_same_flow_same_path_and_spread() {
    let mut frames = Vec::new();
    for f in 0..64u16 {
        let a = udp4(
            HOST0,
            MAC0,
            "198.18.0.2",
            "198.19.64.1",
            64,
            2000 + f,
            &[0; 18],
            false,
        );
        frames.push(a.clone());
        frames.push(a);
    }
    let mut r = Rig::new(CONFIG, vec![frames]);
    r.run();
    let out = r.sent(1);
    assert_eq!(out.len(), 128);
    let mut per = [0; 2];
    for pair in out.chunks(2) {
        // Output order is input order within a burst; both copies of one
        // flow went to the same neighbor.
        assert_eq!(pair[0], pair[1]);
        per[(pair[0][5] == NB1B[5]) as usize] += 1;
    }
    assert!(per[0] > 10 && per[1] > 10, "{per:?}");
}

#[test]
fn forwards_ipv4_options_unmodified() {
    let mut a = udp4(
        HOST0,
        MAC0,
        "198.18.0.2",
        "198.19.200.1",
        64,
        1000,
        &[1; 18],
        false,
    );
    // Insert a Record Route option (7, len 7, ptr 4) + EOL: IHL 7.
    let opts = [7u8, 7, 4, 0, 0, 0, 0, 0];
    a.splice(34..34, opts);
    a[14] = 0x47;
    let tl = u16::from_be_bytes([a[16], a[17]]) + 8;
    a[16..18].copy_from_slice(&tl.to_be_bytes());
    fix_ipv4_checksum(&mut a);
    let mut r = Rig::new(CONFIG, vec![vec![a.clone()]]);
    r.run();
    assert_frames("options", &r.sent(1), &[forwarded4(&a, MAC1, NB1)]);
}

#[test]
fn vlan_tag_is_removed() {
    let a = udp4(
        HOST0,
        MAC0,
        "198.18.0.2",
        "198.19.200.1",
        64,
        1000,
        &[1; 18],
        false,
    );
    let mut tagged = a[..12].to_vec();
    tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    tagged.extend_from_slice(&a[12..]);
    let mut r = Rig::new(CONFIG, vec![vec![tagged]]);
    r.run();
    assert_frames("vlan", &r.sent(1), &[forwarded4(&a, MAC1, NB1)]);
}

#[test]
fn each_malformed_input_is_counted_by_its_reason() {
    let good = udp4(
        HOST0,
        MAC0,
        "198.18.0.2",
        "198.19.200.1",
        64,
        1000,
        &[1; 18],
        false,
    );
    let good6 = udp6(
        HOST0,
        MAC0,
        "2001:2:0:1::2",
        "2001:2:0:8001::1",
        64,
        1000,
        &[2; 10],
    );
    let mut cases: Vec<(Vec<u8>, DropReason)> = Vec::new();
    cases.push((good[..10].to_vec(), DropReason::TruncatedFrame));
    let mut m = good.clone();
    m[0] = 0x04;
    cases.push((m, DropReason::OtherHostMac));
    let mut m = good.clone();
    m[12] = 0x88;
    cases.push((m, DropReason::UnsupportedEthertype));
    cases.push((good[..30].to_vec(), DropReason::Ipv4Truncated));
    let mut m = good.clone();
    m[14] = 0x55;
    fix_ipv4_checksum(&mut m);
    cases.push((m, DropReason::Ipv4BadVersion));
    let mut m = good.clone();
    m[14] = 0x44;
    cases.push((m, DropReason::Ipv4BadIhl));
    let mut m = good.clone();
    m[24] ^= 1;
    cases.push((m, DropReason::Ipv4BadChecksum));
    let mut m = good.clone();
    m[17] += 40;
    fix_ipv4_checksum(&mut m);
    cases.push((m, DropReason::Ipv4BadLength));
    for src in [
        "127.0.0.1",
        "0.0.0.1",
        "224.0.0.5",
        "255.255.255.255",
        "240.0.0.1",
    ] {
        cases.push((
            udp4(HOST0, MAC0, src, "198.19.200.1", 64, 1, &[0; 18], false),
            DropReason::Ipv4MartianSource,
        ));
    }
    cases.push((
        udp4(
            HOST0,
            MAC0,
            "198.18.0.2",
            "255.255.255.255",
            64,
            1,
            &[0; 18],
            false,
        ),
        DropReason::Ipv4BroadcastDestination,
    ));
    cases.push((
        udp4(
            HOST0,
            MAC0,
            "198.18.0.2",
            "127.0.0.1",
            64,
            1,
            &[0; 18],
            false,
        ),
        DropReason::Ipv4MartianDestination,
    ));
    cases.push((
        udp4(
            HOST0,
            MAC0,
            "198.18.0.2",
            "239.1.1.1",
            64,
            1,
            &[0; 18],
            false,
        ),
        DropReason::Ipv4MulticastDestination,
    ));
    cases.push((good6[..40].to_vec(), DropReason::Ipv6Truncated));
    let mut m = good6.clone();
    m[14] = 0x40;
    cases.push((m, DropReason::Ipv6BadVersion));
    let mut m = good6.clone();
    m[19] += 1;
    cases.push((m, DropReason::Ipv6BadLength));
    for src in ["ff02::1", "::1", "::"] {
        cases.push((
            udp6(HOST0, MAC0, src, "2001:2:0:8001::1", 64, 1, &[0; 4]),
            DropReason::Ipv6BadSource,
        ));
    }
    cases.push((
        udp6(HOST0, MAC0, "2001:2:0:1::2", "::1", 64, 1, &[0; 4]),
        DropReason::Ipv6BadDestination,
    ));
    cases.push((
        udp6(HOST0, MAC0, "fe80::2", "2001:2:0:8001::1", 64, 1, &[0; 4]),
        DropReason::Ipv6LinkLocalScope,
    ));
    cases.push((
        udp4(
            HOST0,
            [0xff; 6],
            "198.18.0.2",
            "198.19.200.1",
            64,
            1,
            &[0; 18],
            false,
        ),
        DropReason::L2BroadcastNotLocal,
    ));
    cases.push((
        udp4(
            HOST0,
            MAC0,
            "198.18.0.2",
            "198.18.0.1",
            64,
            1,
            &[0; 18],
            false,
        ),
        DropReason::PortUnreachable,
    ));
    for (frame, reason) in cases {
        let mut r = Rig::new(CONFIG, vec![vec![frame]]);
        r.run();
        let s = r.stats();
        assert_eq!(s.drop_count(reason), 1, "{reason:?}: {:?}", s.drops);
        assert_eq!(s.input_drops(), 1, "{reason:?}: {:?}", s.drops);
    }
}
