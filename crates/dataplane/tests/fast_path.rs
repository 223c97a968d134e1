//! The burst's shortcuts (`input::plain_v4`, `cx::Egress`) skip only
//! what is the same for every packet of a route: a packet that differs
//! (TTL, size, link-layer broadcast) after one of its route was forwarded
//! in the same burst still meets every check, and the packets after it
//! are forwarded as before.

mod common;
use common::*;
use dataplane::DropReason;

/// A UDP packet from p0's host to 198.18.64.9 (route via 198.18.1.2 on
/// p2, MTU 576).
fn to_p2(ttl: u8, payload: usize, df: bool, seed: u16) -> Vec<u8> {
    let data: Vec<u8> = (0..payload).map(|i| (i as u16 ^ seed) as u8).collect();
    udp4(
        HOST0,
        MAC0,
        "198.18.0.2",
        "198.18.64.9",
        ttl,
        seed,
        &data,
        df,
    )
}

#[test]
fn packets_of_a_route_already_sent_in_the_burst_are_still_checked() {
    let first = to_p2(64, 18, true, 1);
    let ttl1 = to_p2(1, 18, true, 2);
    let too_big_df = to_p2(64, 1000, true, 3);
    let too_big = to_p2(64, 1200, false, 4);
    let mut broadcast = to_p2(64, 18, true, 5);
    broadcast[..6].copy_from_slice(&[0xff; 6]);
    let last = to_p2(64, 18, true, 6);
    let burst = vec![
        first.clone(),
        ttl1,
        too_big_df,
        too_big,
        broadcast,
        last.clone(),
    ];
    let mut r = Rig::new(CONFIG, vec![burst]);
    r.run();
    let out = r.sent(2);
    assert_eq!(out.len(), 5, "first, 3 fragments, last");
    assert_frames(
        "fast_path_ends",
        &[out[0].clone(), out[4].clone()],
        &[forwarded4(&first, MAC2, NB2), forwarded4(&last, MAC2, NB2)],
    );
    for f in &out[1..4] {
        assert!(f.len() - 14 <= 576);
        assert_eq!(&f[..12], &[NB2, MAC2].concat()[..]);
        assert_eq!(f[22], 63, "TTL decremented once");
    }
    // Time exceeded and fragmentation needed, back to the host.
    assert_eq!(r.sent(0).len(), 2);
    let s = r.stats();
    assert_eq!(s.drop_count(DropReason::TtlExceeded), 1);
    assert_eq!(s.drop_count(DropReason::FragNeeded), 1);
    assert_eq!(s.drop_count(DropReason::L2BroadcastNotLocal), 1);
    assert_eq!((s.forwarded, s.fragmented, s.fragments), (3, 1, 3));
}
