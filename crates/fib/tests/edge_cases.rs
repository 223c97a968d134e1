//! Edge cases of both LPMs: /0, host routes, overlaps across the tbl24/tbl8
//! boundary, replace, remove re-exposing a shorter prefix, tbl8 reclamation.

use fib::{lpm4, lpm6, FibError, Lpm4Config, Lpm6Config, Prefix4, Prefix6, Target};

fn p4(s: &str) -> Prefix4 {
    s.parse().unwrap()
}
fn p6(s: &str) -> Prefix6 {
    s.parse().unwrap()
}
fn a4(s: &str) -> u32 {
    u32::from(s.parse::<std::net::Ipv4Addr>().unwrap())
}
fn a6(s: &str) -> u128 {
    u128::from(s.parse::<std::net::Ipv6Addr>().unwrap())
}
const T1: Target = Target(1);
const T2: Target = Target(2);
const T3: Target = Target(3);

#[test]
fn v4_default_and_host_routes() {
    let (mut w, r) = lpm4::new(Lpm4Config { tbl8_groups: 16 });
    assert_eq!(r.lookup(a4("198.18.0.1")), None);
    w.insert(p4("0.0.0.0/0"), T1).unwrap();
    assert_eq!(r.lookup(0), Some(T1));
    assert_eq!(r.lookup(u32::MAX), Some(T1));
    w.insert(p4("198.18.0.1/32"), T2).unwrap();
    assert_eq!(r.lookup(a4("198.18.0.1")), Some(T2));
    assert_eq!(r.lookup(a4("198.18.0.0")), Some(T1));
    assert_eq!(r.lookup(a4("198.18.0.2")), Some(T1));
    w.insert(p4("255.255.255.255/32"), T3).unwrap();
    assert_eq!(r.lookup(u32::MAX), Some(T3));
    assert_eq!(w.len(), 3);
    assert_eq!(w.remove(p4("0.0.0.0/0")).unwrap(), Some(T1));
    assert_eq!(r.lookup(a4("198.18.0.2")), None);
    assert_eq!(r.lookup(a4("198.18.0.1")), Some(T2));
    assert_eq!(w.remove(p4("198.18.0.1/32")).unwrap(), Some(T2));
    assert_eq!(w.remove(p4("255.255.255.255/32")).unwrap(), Some(T3));
    assert_eq!(r.lookup(a4("198.18.0.1")), None);
    assert!(w.is_empty());
    assert_eq!(w.memory().groups_in_use, 0);
}

#[test]
fn v4_overlaps_replace_remove() {
    let (mut w, r) = lpm4::new(Lpm4Config { tbl8_groups: 16 });
    w.insert(p4("198.18.0.0/24"), T1).unwrap();
    w.insert(p4("198.18.0.128/25"), T2).unwrap();
    assert_eq!(r.lookup(a4("198.18.0.1")), Some(T1));
    assert_eq!(r.lookup(a4("198.18.0.200")), Some(T2));
    // A shorter prefix inserted later must not hide the /25 or the /24.
    w.insert(p4("198.18.0.0/15"), T3).unwrap();
    assert_eq!(r.lookup(a4("198.18.0.200")), Some(T2));
    assert_eq!(r.lookup(a4("198.18.0.1")), Some(T1));
    assert_eq!(r.lookup(a4("198.19.1.1")), Some(T3));
    // Replace.
    w.insert(p4("198.18.0.128/25"), T1).unwrap();
    assert_eq!(r.lookup(a4("198.18.0.200")), Some(T1));
    assert_eq!(w.len(), 3);
    // Remove non-existent (also host bits ignored).
    assert_eq!(w.remove(p4("198.18.0.0/25")).unwrap(), None);
    assert_eq!(w.remove(p4("198.18.1.0/24")).unwrap(), None);
    // Remove the /24: its addresses fall back to the /15; the /25 stays.
    assert_eq!(w.remove(p4("198.18.0.0/24")).unwrap(), Some(T1));
    assert_eq!(r.lookup(a4("198.18.0.1")), Some(T3));
    assert_eq!(r.lookup(a4("198.18.0.200")), Some(T1));
    // Remove the /25: group folds back, whole /24 is the /15.
    assert_eq!(w.remove(p4("198.18.0.128/25")).unwrap(), Some(T1));
    assert_eq!(r.lookup(a4("198.18.0.200")), Some(T3));
    assert_eq!(w.memory().groups_in_use, 0);
    assert!(w
        .remove(Prefix4 {
            addr: "1.2.3.4".parse().unwrap(),
            len: 33
        })
        .is_err());
    assert!(w.insert(p4("198.18.0.0/24"), Target(1 << 30)).is_err());
}

/// A freed tbl8 group is not reused until every reader handle has passed a
/// quiescent point, and is reused after.
#[test]
fn v4_tbl8_reuse_waits_for_quiescent_readers() {
    let (mut w, r) = lpm4::new(Lpm4Config { tbl8_groups: 1 });
    let r2 = r.clone();
    w.insert(p4("198.18.0.0/25"), T1).unwrap();
    assert!(matches!(
        w.insert(p4("198.18.1.0/25"), T2),
        Err(FibError::Tbl8Exhausted { capacity: 1 })
    ));
    w.remove(p4("198.18.0.0/25")).unwrap();
    assert_eq!(w.memory().groups_pending, 1);
    assert!(
        w.insert(p4("198.18.1.0/25"), T2).is_err(),
        "reused before any reader was quiescent"
    );
    r.quiescent();
    assert!(
        w.insert(p4("198.18.1.0/25"), T2).is_err(),
        "reused before r2 was quiescent"
    );
    r2.quiescent();
    w.insert(p4("198.18.1.0/25"), T2).unwrap();
    assert_eq!(r2.lookup(a4("198.18.1.1")), Some(T2));
    assert_eq!(r2.lookup(a4("198.18.0.1")), None);
    // Dropping an idle handle also unblocks reuse.
    w.remove(p4("198.18.1.0/25")).unwrap();
    r.quiescent();
    drop(r2);
    w.insert(p4("198.18.2.0/26"), T3).unwrap();
    assert_eq!(r.lookup(a4("198.18.2.1")), Some(T3));
}

#[test]
fn v4_bulk_matches_single() {
    let (mut w, r) = lpm4::new(Lpm4Config { tbl8_groups: 16 });
    w.insert(p4("198.18.0.0/15"), T1).unwrap();
    w.insert(p4("198.18.0.64/26"), T2).unwrap();
    let addrs: Vec<u32> = (0..200u32).map(|i| a4("198.17.255.200") + i * 3).collect();
    let mut out = vec![None; addrs.len()];
    r.lookup_bulk(&addrs, &mut out);
    for (a, o) in addrs.iter().zip(&out) {
        assert_eq!(*o, r.lookup(*a));
    }
    assert!(out.contains(&Some(T2)) && out.contains(&None));
}

#[test]
fn v6_default_host_and_overlaps() {
    let (mut w, r) = lpm6::new(Lpm6Config { tbl8_groups: 64 });
    assert_eq!(r.lookup(a6("2001:2::1")), None);
    w.insert(p6("::/0"), T1).unwrap();
    assert_eq!(r.lookup(0), Some(T1));
    assert_eq!(r.lookup(u128::MAX), Some(T1));
    w.insert(p6("2001:2::1/128"), T2).unwrap();
    assert_eq!(r.lookup(a6("2001:2::1")), Some(T2));
    assert_eq!(r.lookup(a6("2001:2::2")), Some(T1));
    w.insert(p6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128"), T3)
        .unwrap();
    assert_eq!(r.lookup(u128::MAX), Some(T3));
    w.insert(p6("2001:2::/48"), T3).unwrap();
    w.insert(p6("2001:2::/49"), T2).unwrap();
    w.insert(p6("2001::/16"), T1).unwrap();
    assert_eq!(r.lookup(a6("2001:2::5")), Some(T2));
    assert_eq!(r.lookup(a6("2001:2:0:8000::5")), Some(T3));
    assert_eq!(r.lookup(a6("2001:3::5")), Some(T1));
    // replace, remove non-existent, remove re-exposing
    w.insert(p6("2001:2::/48"), T1).unwrap();
    assert_eq!(r.lookup(a6("2001:2:0:8000::5")), Some(T1));
    assert_eq!(w.remove(p6("2001:2::/47")).unwrap(), None);
    assert_eq!(w.remove(p6("2001:2::/49")).unwrap(), Some(T2));
    assert_eq!(r.lookup(a6("2001:2::5")), Some(T1));
    assert_eq!(w.remove(p6("2001:2::1/128")).unwrap(), Some(T2));
    assert_eq!(r.lookup(a6("2001:2::1")), Some(T1));
    assert_eq!(w.remove(p6("2001:2::/48")).unwrap(), Some(T1));
    assert_eq!(w.remove(p6("::/0")).unwrap(), Some(T1));
    assert_eq!(r.lookup(a6("2001:2::1")), Some(T1)); // the /16
    assert_eq!(r.lookup(a6("3000::1")), None);
    assert_eq!(
        w.remove(p6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128"))
            .unwrap(),
        Some(T3)
    );
    assert_eq!(w.remove(p6("2001::/16")).unwrap(), Some(T1));
    assert!(w.is_empty());
    // Every group folded back.
    assert_eq!(w.memory().groups_in_use, 0);
    let mut out = [None; 2];
    r.lookup_bulk(&[a6("2001:2::1"), 0], &mut out);
    assert_eq!(out, [None, None]);
}

#[test]
fn v6_groups_exhausted_leaves_table_unchanged() {
    let (mut w, r) = lpm6::new(Lpm6Config { tbl8_groups: 4 });
    w.insert(p6("2001:2::/40"), T1).unwrap(); // groups for bits 24..32, 32..40
    w.insert(p6("2001:2::/48"), T2).unwrap(); // + bits 40..48
    assert_eq!(w.memory().groups_in_use, 3);
    // A /128 in an empty /24 needs 13 groups: it gets one, then fails, and
    // must give that one back (not leave a chain of useless groups).
    assert!(matches!(
        w.insert(p6("3000::1/128"), T3),
        Err(FibError::Tbl8Exhausted { capacity: 4 })
    ));
    assert_eq!(w.memory().groups_in_use, 3);
    assert_eq!(w.len(), 2);
    assert_eq!(r.lookup(a6("3000::1")), None);
    assert_eq!(r.lookup(a6("2001:2::1")), Some(T2));
    assert_eq!(r.lookup(a6("2001:2:1::1")), Some(T1));
}

/// The threading contract the dataplane relies on, checked at compile time.
#[test]
fn handle_traits() {
    fn send<T: Send>() {}
    fn send_sync_clone<T: Send + Sync + Clone>() {}
    send::<fib::Lpm4Writer>();
    send::<fib::Lpm6Writer>();
    send::<fib::NextHopWriter>();
    send_sync_clone::<fib::Lpm4Reader>();
    send_sync_clone::<fib::Lpm6Reader>();
    send_sync_clone::<fib::NextHopReader>();
}

/// A reader outside the process (the XDP fast path) holds back reuse until
/// a grace period that began after the retirement has passed: one that
/// began before it does not count.
#[test]
fn external_reader_reuse_waits_for_a_grace_period_begun_after_the_retirement() {
    let (mut w, r) = lpm4::new(Lpm4Config { tbl8_groups: 1 });
    let (_w6, r6) = fib::lpm6::new(fib::Lpm6Config { tbl8_groups: 1 });
    let (_nw, nr) = fib::NextHopTable::with_capacity(1, 1, 1);
    let kernel = fib::ExternalReader::new(&r, &r6, &nr);
    w.insert(p4("198.18.0.0/25"), T1).unwrap();
    let early = kernel.start();
    w.remove(p4("198.18.0.0/25")).unwrap();
    r.quiescent();
    kernel.passed(&early);
    assert!(
        w.insert(p4("198.18.1.0/25"), T2).is_err(),
        "reused after a grace period that began before the retirement"
    );
    let later = kernel.start();
    kernel.passed(&later);
    w.insert(p4("198.18.1.0/25"), T2).unwrap();
    // Passing an old start again does not move the reader backwards.
    w.remove(p4("198.18.1.0/25")).unwrap();
    r.quiescent();
    let after = kernel.start();
    kernel.passed(&after);
    kernel.passed(&early);
    w.insert(p4("198.18.2.0/26"), T3).unwrap();
}

/// Tables built in memory handed out by a `TableMemory` (as the XDP tier's
/// mapped BPF arrays are) are asked for by name and read like heap ones.
#[test]
fn tables_in_provided_memory_are_asked_for_by_name() {
    use fib::memory::{names, Region, TableMemory, Zeroed};
    #[derive(Default)]
    struct Recorder(Vec<(&'static str, usize)>);
    impl TableMemory for Recorder {
        fn region<T: Zeroed>(
            &mut self,
            name: &'static str,
            len: usize,
        ) -> Result<Region<T>, FibError> {
            self.0.push((name, len));
            Region::heap(name, len)
        }
    }
    let mut mem = Recorder::default();
    let (mut w, r) = lpm4::new_in(Lpm4Config { tbl8_groups: 3 }, &mut mem).unwrap();
    let (_w6, _r6) = fib::lpm6::new_in(fib::Lpm6Config { tbl8_groups: 5 }, &mut mem).unwrap();
    let (_nw, _nr) = fib::NextHopTable::with_capacity_in(7, 2, 4, &mut mem).unwrap();
    assert_eq!(
        mem.0,
        [
            (names::LPM4_TBL24, 1 << 24),
            (names::LPM4_TBL8, 3 * 256),
            (names::LPM6_TBL24, 1 << 24),
            (names::LPM6_TBL8, 5 * 256),
            (names::NH_DESC, 7),
            (names::NH_GW_HI, 7),
            (names::NH_GW_LO, 7),
            (names::NH_GROUPS, 2),
            (names::NH_MEMBERS, 4),
        ]
    );
    w.insert(p4("198.18.0.0/15"), T1).unwrap();
    w.insert(p4("198.18.0.64/26"), T2).unwrap();
    assert_eq!(r.lookup(a4("198.18.0.65")), Some(T2));
    assert_eq!(r.lookup(a4("198.19.0.1")), Some(T1));
    // A provider that refuses is an error, not a panic.
    struct Refuse;
    impl TableMemory for Refuse {
        fn region<T: Zeroed>(
            &mut self,
            name: &'static str,
            _: usize,
        ) -> Result<Region<T>, FibError> {
            Err(FibError::Memory(format!("no room for {name}")))
        }
    }
    assert!(matches!(
        lpm4::new_in(Lpm4Config::default(), &mut Refuse),
        Err(FibError::Memory(_))
    ));
}

#[test]
fn writers_list_their_routes() {
    let (mut w, _r) = lpm4::new(Lpm4Config { tbl8_groups: 4 });
    w.insert(p4("198.18.0.0/15"), T1).unwrap();
    w.insert(p4("198.18.0.64/26"), T2).unwrap();
    w.insert(p4("0.0.0.0/0"), T3).unwrap();
    let mut got: Vec<_> = w.routes().collect();
    got.sort();
    assert_eq!(
        got,
        [
            (p4("0.0.0.0/0"), T3),
            (p4("198.18.0.0/15"), T1),
            (p4("198.18.0.64/26"), T2)
        ]
    );
    let (mut w6, _r6) = lpm6::new(Lpm6Config { tbl8_groups: 16 });
    w6.insert(p6("2001:2::/48"), T1).unwrap();
    w6.remove(p6("2001:2::/48")).unwrap();
    w6.insert(p6("2001:2:0:1::/64"), T2).unwrap();
    assert_eq!(
        w6.routes().collect::<Vec<_>>(),
        [(p6("2001:2:0:1::/64"), T2)]
    );
}
