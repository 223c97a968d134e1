//! Random insert/remove sequences against the reference LPM, then lookups
//! biased to the edges and insides of the prefixes involved.

use fib::{lpm4, lpm6, Lpm4Config, Lpm6Config, Prefix4, Prefix6, ReferenceLpm, Target};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op<P> {
    Insert(P, u32),
    /// Remove a random prefix (usually not installed).
    Remove(P),
    /// Remove the n-th (mod count) prefix inserted so far: removals that
    /// hit, including ones that must re-expose a shorter covering prefix.
    RemoveInserted(usize),
}

/// Prefixes clustered in a few regions so that they overlap a lot, with
/// lengths spread over 0..=32 and weighted around the /24 boundary.
fn prefix4() -> impl Strategy<Value = Prefix4> + Clone {
    let base = prop_oneof![
        Just(0xc612_0000u32),
        Just(0xc613_ff00),
        Just(0),
        any::<u32>()
    ];
    let len = prop_oneof![0u8..=32, 20u8..=28, 29u8..=32];
    // Mostly a few bits flipped in a few places, so that prefixes nest
    // several deep; sometimes anything.
    let noise = prop_oneof![
        3 => any::<u8>().prop_map(|n| {
            let n = u32::from(n);
            (n & 3) << 4 | (n >> 2 & 3) << 12 | (n >> 4 & 3) << 20 | (n >> 6) << 26
        }),
        1 => any::<u32>(),
    ];
    (base, noise, len).prop_map(|(b, noise, len)| Prefix4::new((b ^ noise).into(), len).unwrap())
}

fn prefix6() -> impl Strategy<Value = Prefix6> + Clone {
    let base = prop_oneof![
        Just(0x2001_0002_0000_u128 << 80),
        Just(0x2001_0db8_u128 << 96),
        Just(0u128),
        any::<u128>()
    ];
    let len = prop_oneof![0u8..=128, 20u8..=56, 120u8..=128];
    let noise = prop_oneof![
        3 => any::<u8>().prop_map(|n| {
            let n = u128::from(n);
            (n & 3) << 120 | (n >> 2 & 3) << 84 | (n >> 4 & 3) << 78 | (n >> 6) << 4
        }),
        1 => any::<u128>(),
    ];
    (base, noise, len).prop_map(|(b, noise, len)| Prefix6::new((b ^ noise).into(), len).unwrap())
}

fn ops<P: Clone + std::fmt::Debug>(
    p: impl Strategy<Value = P> + Clone,
) -> impl Strategy<Value = Vec<Op<P>>> {
    let op = prop_oneof![
        3 => (p.clone(), 0u32..1000).prop_map(|(p, t)| Op::Insert(p, t)),
        1 => p.prop_map(Op::Remove),
        2 => any::<usize>().prop_map(Op::RemoveInserted),
    ];
    prop::collection::vec(op, 1..80)
}

/// Addresses at and around the ends of each prefix, plus a few inside.
fn probes4(prefixes: &[Prefix4], extra: &[u32]) -> Vec<u32> {
    let mut v = extra.to_vec();
    for p in prefixes {
        let lo = p.bits();
        let hi = lo | !fib::prefix::mask4(p.len);
        v.extend([
            lo,
            hi,
            lo.wrapping_sub(1),
            hi.wrapping_add(1),
            lo + (hi - lo) / 2,
            lo | 0x80,
        ]);
    }
    v
}

fn probes6(prefixes: &[Prefix6], extra: &[u128]) -> Vec<u128> {
    let mut v = extra.to_vec();
    for p in prefixes {
        let lo = p.bits();
        let hi = lo | !fib::prefix::mask6(p.len);
        v.extend([
            lo,
            hi,
            lo.wrapping_sub(1),
            hi.wrapping_add(1),
            lo + (hi - lo) / 2,
            lo | 1 << 80,
        ]);
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn lpm4_matches_reference(ops in ops(prefix4()), extra in prop::collection::vec(any::<u32>(), 32)) {
        let (mut w, r) = lpm4::new(Lpm4Config { tbl8_groups: 128 });
        let mut reference = ReferenceLpm::new();
        let mut seen = Vec::new();
        for op in &ops {
            match *op {
                Op::Insert(p, t) => {
                    w.insert(p, Target(t)).unwrap();
                    reference.insert4(p, Target(t));
                    seen.push(p);
                }
                Op::Remove(p) => {
                    prop_assert_eq!(w.remove(p).unwrap(), reference.remove4(p));
                    seen.push(p);
                }
                Op::RemoveInserted(n) => {
                    let p = seen.get(n % seen.len().max(1)).copied();
                    if let Some(p) = p {
                        prop_assert_eq!(w.remove(p).unwrap(), reference.remove4(p));
                    }
                }
            }
            // Lets freed groups be reused within the sequence.
            r.quiescent();
            prop_assert_eq!(w.len(), reference.len().0);
            // Check around the prefix just changed, so that a wrong
            // intermediate state cannot be hidden by later operations.
            for a in probes4(&seen[seen.len().saturating_sub(1)..], &[]) {
                prop_assert_eq!(r.lookup(a), reference.lookup4(a), "addr {} after {:?}", std::net::Ipv4Addr::from(a), op);
            }
        }
        let probes = probes4(&seen, &extra);
        let mut bulk = vec![None; probes.len()];
        r.lookup_bulk(&probes, &mut bulk);
        for (&a, &b) in probes.iter().zip(&bulk) {
            let want = reference.lookup4(a);
            prop_assert_eq!(r.lookup(a), want, "addr {}", std::net::Ipv4Addr::from(a));
            prop_assert_eq!(b, want);
        }
    }

    #[test]
    fn lpm6_matches_reference(ops in ops(prefix6()), extra in prop::collection::vec(any::<u128>(), 32)) {
        let (mut w, r) = lpm6::new(Lpm6Config { tbl8_groups: 2048 });
        let mut reference = ReferenceLpm::new();
        let mut seen = Vec::new();
        for op in &ops {
            match *op {
                Op::Insert(p, t) => {
                    w.insert(p, Target(t)).unwrap();
                    reference.insert6(p, Target(t));
                    seen.push(p);
                }
                Op::Remove(p) => {
                    prop_assert_eq!(w.remove(p).unwrap(), reference.remove6(p));
                    seen.push(p);
                }
                Op::RemoveInserted(n) => {
                    let p = seen.get(n % seen.len().max(1)).copied();
                    if let Some(p) = p {
                        prop_assert_eq!(w.remove(p).unwrap(), reference.remove6(p));
                    }
                }
            }
            r.quiescent();
            prop_assert_eq!(w.len(), reference.len().1);
            for a in probes6(&seen[seen.len().saturating_sub(1)..], &[]) {
                prop_assert_eq!(r.lookup(a), reference.lookup6(a), "addr {} after {:?}", std::net::Ipv6Addr::from(a), op);
            }
        }
        let probes = probes6(&seen, &extra);
        let mut bulk = vec![None; probes.len()];
        r.lookup_bulk(&probes, &mut bulk);
        for (&a, &b) in probes.iter().zip(&bulk) {
            let want = reference.lookup6(a);
            prop_assert_eq!(r.lookup(a), want, "addr {}", std::net::Ipv6Addr::from(a));
            prop_assert_eq!(b, want);
        }
        // Removing everything folds every group back.
        for p in seen {
            w.remove(p).unwrap();
        }
        prop_assert_eq!(w.memory().groups_in_use, 0);
    }
}
