//! The per-stage cycle counters are taken on one poll round with packets
//! in 16 (`worker.rs`, `STAGE_SAMPLE`): the first such round, the 17th,
//! the 33rd, ...; rounds without packets neither count nor use up a
//! sample.

mod common;
use common::*;

#[test]
fn stage_cycles_cover_one_round_with_packets_in_sixteen() {
    let frames: Vec<Vec<u8>> = (0..80)
        .map(|i| {
            udp4(
                HOST0,
                MAC0,
                "198.18.0.2",
                "198.19.128.9",
                64,
                i,
                &[0; 18],
                true,
            )
        })
        .collect();
    let mut rig = Rig::new(CONFIG, vec![frames]);
    // 40 rounds of 2 frames (p0's budget; p1 and p2 receive nothing):
    // rounds 1, 17 and 33 are timed; then 10 empty rounds, the 41st
    // timed but without packets to count.
    for _ in 0..40 {
        assert_eq!(rig.w().poll_once(2), 2);
    }
    for _ in 0..10 {
        assert_eq!(rig.w().poll_once(2), 0);
    }
    let s = rig.stats();
    assert_eq!(s.forwarded, 80, "{:?}", s.drops);
    assert_eq!(s.cycles.packets, 3 * 2);
    assert!(s.cycles.process > 0);
}
