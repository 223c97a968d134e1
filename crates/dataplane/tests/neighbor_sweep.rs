//! Issue 12, "neighbour exhaustion is permanent": traffic from the far
//! side to 70,000 random addresses of a connected IPv6 /64 used to fill the
//! IPv6 host table and then the next-hop table for good, after which no
//! new host on any port was ever resolved. Here the sweep runs through the
//! pipeline (pcap ports, simulated clock): the table stays within its
//! per-port bound throughout, and afterwards new hosts on every port, in
//! both families, are resolved and reached.

mod common;
use common::*;
use dataplane::{DropReason, NeighLimits};

const SWEEP_CONFIG: &str = r#"
[router]
workers = 1
hold_packets = 4
icmp_rate = 100
pool_frames = 1024

[[port]]
name = "p0"
driver = "pcap"
mac = "02:00:00:00:00:10"
addresses = ["198.18.0.1/24", "2001:2:0:1::1/64"]

[[port]]
name = "p1"
driver = "pcap"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/16", "2001:2:0:2::1/64"]
"#;

fn arp_reply(mac: [u8; 6], ip: &str, to_mac: [u8; 6], to_ip: &str) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&to_mac);
    v.extend_from_slice(&mac);
    v.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 2]);
    v.extend_from_slice(&mac);
    v.extend_from_slice(&ip4(ip));
    v.extend_from_slice(&to_mac);
    v.extend_from_slice(&ip4(to_ip));
    v.resize(60, 0);
    v
}

fn solicited_na(mac: [u8; 6], target: &str, to_mac: [u8; 6], to: &str) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&ip6(target));
    body.extend_from_slice(&[2, 1]);
    body.extend_from_slice(&mac);
    let mut v = Vec::new();
    etherparse::PacketBuilder::ethernet2(mac, to_mac)
        .ipv6(ip6(target), ip6(to), 255)
        .icmpv6_raw(136, 0, [0x60, 0, 0, 0])
        .write(&mut v, &body)
        .unwrap();
    v
}

/// xorshift: deterministic "random" addresses.
fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn a_70k_sweep_never_exhausts_the_tables() {
    let limits = NeighLimits {
        max_per_port: 512,
        gc_soft: 256,
        resolve_rate: 200,
        ..NeighLimits::default()
    };
    let attacker = [2, 0, 0, 0, 0, 0x66];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let sweep: Vec<Vec<u8>> = (0..70_000)
        .map(|_| {
            let r = rng(&mut seed);
            let dst = format!(
                "2001:2:0:2:{:x}:{:x}:{:x}:{:x}",
                r >> 48,
                (r >> 32) & 0xffff,
                (r >> 16) & 0xffff,
                r & 0xffff
            );
            udp6(attacker, MAC0, "2001:2:0:1::66", &dst, 64, 1, &[0; 8])
        })
        .collect();
    let mut r = Rig::with_limits(SWEEP_CONFIG, vec![sweep], limits);
    let shared = r.router.shared();
    let max = shared.neighbor_limits().max_per_port as usize;
    assert_eq!(max, 512);
    let (base_nh, _) = shared.next_hops();
    // 70,000 frames in rounds of 64, 10 ms apart: about 11 s of sweep.
    let mut peak = 0;
    for _ in 0..2000 {
        r.w().poll_once(64);
        r.advance(10);
        let n = shared.neighbor_counts();
        peak = peak.max(n[1]);
        assert!(n[1] <= max, "port 1 holds {} entries (limit {max})", n[1]);
        let (live, _) = shared.next_hops();
        assert!(live <= base_nh + 2 * max, "{live} next hops live");
        if r.w().inputs_exhausted() {
            break;
        }
    }
    assert!(r.w().inputs_exhausted());
    assert!(peak >= max / 2, "the sweep filled the table ({peak})");
    let s = r.stats();
    assert_eq!(s.rx_packets(), 70_000);
    assert!(
        s.drop_count(DropReason::NeighborRateLimited) > 50_000,
        "{:?}",
        s.drops
    );
    assert_eq!(s.forwarded, 0);

    // Quiet: the sweep's failed entries are collected.
    for _ in 0..20 {
        r.advance(500);
        r.w().poll_once(64);
    }
    assert_eq!(shared.neighbor_counts(), vec![0, 0]);
    let (live, _) = shared.next_hops();
    assert_eq!(live, base_nh, "every dynamic next hop released");

    // New hosts on both ports, both families, are resolved and reached.
    let h0 = [2, 0, 0, 0, 0, 0x70];
    let h1 = [2, 0, 0, 0, 0, 0x71];
    let to_v4_1 = udp4(
        h0,
        MAC0,
        "198.18.0.70",
        "198.19.77.1",
        64,
        1,
        &[1; 18],
        false,
    );
    let to_v6_1 = udp6(h0, MAC0, "2001:2:0:1::70", "2001:2:0:2::71", 64, 1, &[1; 8]);
    let to_v4_0 = udp4(
        h1,
        MAC1,
        "198.19.77.1",
        "198.18.0.70",
        64,
        1,
        &[2; 18],
        false,
    );
    let to_v6_0 = udp6(h1, MAC1, "2001:2:0:2::71", "2001:2:0:1::70", 64, 1, &[2; 8]);
    // Port 0 is polled first: its packets create entries on port 1 and
    // solicit; the answers on port 1 come in the same round and release
    // them. Port 1's packets create entries on port 0.
    r.feed(vec![
        vec![to_v4_1.clone(), to_v6_1.clone()],
        vec![
            arp_reply(h1, "198.19.77.1", MAC1, "198.19.0.1"),
            solicited_na(h1, "2001:2:0:2::71", MAC1, "2001:2:0:2::1"),
            to_v4_0.clone(),
            to_v6_0.clone(),
        ],
    ]);
    r.w().poll_once(64);
    let out1 = r.sent(1);
    assert_eq!(out1.len(), 4, "ARP, NS, two forwarded: {out1:02x?}");
    assert_eq!(out1[2], forwarded4(&to_v4_1, MAC1, h1));
    assert_eq!(out1[3], forwarded6(&to_v6_1, MAC1, h1));
    assert_eq!(r.sent(0).len(), 2, "ARP and NS for port 0's new host");
    // Port 0's host answers; the next packets to it go straight out.
    r.feed(vec![
        vec![
            arp_reply(h0, "198.18.0.70", MAC0, "198.18.0.1"),
            solicited_na(h0, "2001:2:0:1::70", MAC0, "2001:2:0:1::1"),
        ],
        vec![to_v4_0.clone(), to_v6_0.clone()],
    ]);
    r.run();
    assert_frames(
        "sweep_after_p0",
        &r.sent(0),
        &[
            forwarded4(&to_v4_0, MAC0, h0),
            forwarded6(&to_v6_0, MAC0, h0),
        ],
    );
    assert_eq!(shared.neighbor_counts(), vec![2, 2]);
}

/// The same through an IPv4 /16: 70,000 random addresses of 198.19/16.
#[test]
fn an_ipv4_16_sweep_leaves_room_for_new_hosts() {
    let limits = NeighLimits {
        max_per_port: 256,
        gc_soft: 128,
        resolve_rate: 1000,
        ..NeighLimits::default()
    };
    let attacker = [2, 0, 0, 0, 0, 0x66];
    let mut seed = 0x1234_5678_9abc_def1u64;
    let sweep: Vec<Vec<u8>> = (0..70_000)
        .map(|_| {
            let r = rng(&mut seed);
            let dst = format!("198.19.{}.{}", (r >> 8) & 0xff, (r & 0xff).clamp(1, 254));
            udp4(attacker, MAC0, "198.18.0.66", &dst, 64, 1, &[0; 18], false)
        })
        .collect();
    let mut r = Rig::with_limits(SWEEP_CONFIG, vec![sweep], limits);
    let shared = r.router.shared();
    for _ in 0..2000 {
        r.w().poll_once(64);
        r.advance(5);
        assert!(shared.neighbor_counts()[1] <= 256);
        if r.w().inputs_exhausted() {
            break;
        }
    }
    let s = r.stats();
    assert!(
        s.drop_count(DropReason::NeighborTableFull) > 0,
        "{:?}",
        s.drops
    );
    // Right after the sweep the table is full of resolving entries; once
    // they fail and are collected a new host gets in.
    r.advance(10_000);
    r.w().poll_once(64);
    assert_eq!(shared.neighbor_counts()[1], 0);
    let h1 = [2, 0, 0, 0, 0, 0x71];
    let a = udp4(
        HOST0,
        MAC0,
        "198.18.0.2",
        "198.19.200.7",
        64,
        1,
        &[1; 18],
        false,
    );
    r.feed(vec![
        vec![a.clone()],
        vec![arp_reply(h1, "198.19.200.7", MAC1, "198.19.0.1")],
    ]);
    r.run();
    let out = r.sent(1);
    assert_eq!(out.len(), 2, "ARP request, then the packet: {out:02x?}");
    assert_eq!(out[1], forwarded4(&a, MAC1, h1));
}
