//! The full Internet table (about 1.06M prefixes) against the reference
//! LPM: 2 million random lookups, half of them inside installed prefixes;
//! then remove a random 10% and compare again. Skips with a message if the
//! shared data file is missing.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::time::Instant;

use fib::{lpm4, lpm6, Lpm4Config, Lpm6Config, Prefix, Prefix4, Prefix6, ReferenceLpm, Target};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

const LOOKUPS: usize = 2_000_000;

fn table_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/routes/full-table.txt.gz")
}

fn target_of(p: &Prefix) -> Target {
    let mut h = DefaultHasher::new();
    p.hash(&mut h);
    Target((h.finish() % 1024) as u32)
}

/// Half uniformly random addresses, half random addresses inside random
/// installed prefixes.
fn addrs4(rng: &mut SmallRng, v4: &[Prefix4], n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                rng.gen()
            } else {
                let p = v4[rng.gen_range(0..v4.len())];
                p.bits() | (rng.gen::<u32>() & !fib::prefix::mask4(p.len))
            }
        })
        .collect()
}

fn addrs6(rng: &mut SmallRng, v6: &[Prefix6], n: usize) -> Vec<u128> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                // Uniform over 2000::/3 (uniform over all of 2^128 would
                // nearly never hit a route).
                0x2000_u128 << 112 | rng.gen::<u128>() >> 3
            } else {
                let p = v6[rng.gen_range(0..v6.len())];
                p.bits() | (rng.gen::<u128>() & !fib::prefix::mask6(p.len))
            }
        })
        .collect()
}

fn compare(
    r4: &fib::Lpm4Reader,
    r6: &fib::Lpm6Reader,
    reference: &ReferenceLpm,
    a4: &[u32],
    a6: &[u128],
) -> (usize, usize) {
    let mut hits = (0, 0);
    for &a in a4 {
        let want = reference.lookup4(a);
        assert_eq!(r4.lookup(a), want, "IPv4 {}", std::net::Ipv4Addr::from(a));
        hits.0 += want.is_some() as usize;
    }
    for &a in a6 {
        let want = reference.lookup6(a);
        assert_eq!(r6.lookup(a), want, "IPv6 {}", std::net::Ipv6Addr::from(a));
        hits.1 += want.is_some() as usize;
    }
    let mut out = vec![None; a4.len()];
    r4.lookup_bulk(a4, &mut out);
    assert!(a4.iter().zip(&out).all(|(&a, &o)| o == r4.lookup(a)));
    let mut out = vec![None; a6.len()];
    r6.lookup_bulk(a6, &mut out);
    assert!(a6.iter().zip(&out).all(|(&a, &o)| o == r6.lookup(a)));
    hits
}

#[test]
fn full_table_matches_reference() {
    let path = table_path();
    if !path.exists() {
        eprintln!("SKIP full_table: {} not found", path.display());
        return;
    }
    let t0 = Instant::now();
    let prefixes = fib::routes_file::load_prefixes(&path).expect("load full table");
    let (mut v4, mut v6) = (Vec::new(), Vec::new());
    for p in &prefixes {
        match *p {
            Prefix::V4(p) => v4.push(p),
            Prefix::V6(p) => v6.push(p),
        }
    }
    eprintln!(
        "loaded {} IPv4 + {} IPv6 prefixes in {:?}",
        v4.len(),
        v6.len(),
        t0.elapsed()
    );
    assert!(v4.len() > 900_000 && v6.len() > 160_000);

    let t = Instant::now();
    let (mut w4, r4) = lpm4::new(Lpm4Config { tbl8_groups: 4096 });
    let (mut w6, r6) = lpm6::new(Lpm6Config {
        tbl8_groups: 1 << 18,
    });
    let mut reference = ReferenceLpm::new();
    for p in &prefixes {
        let tg = target_of(p);
        match *p {
            Prefix::V4(p) => {
                w4.insert(p, tg).unwrap();
                reference.insert4(p, tg);
            }
            Prefix::V6(p) => {
                w6.insert(p, tg).unwrap();
                reference.insert6(p, tg);
            }
        }
    }
    assert_eq!((w4.len(), w6.len()), reference.len());
    eprintln!("inserted in {:?} (lpm + reference)", t.elapsed());
    let (m4, m6) = (w4.memory(), w6.memory());
    eprintln!(
        "IPv4 memory: {m4:?} = {:.1} MiB readers",
        m4.reader_bytes as f64 / (1 << 20) as f64
    );
    eprintln!(
        "IPv6 memory: {m6:?} = {:.1} MiB readers",
        m6.reader_bytes as f64 / (1 << 20) as f64
    );

    let mut rng = SmallRng::seed_from_u64(0x5eed);
    let t = Instant::now();
    let a4 = addrs4(&mut rng, &v4, LOOKUPS);
    let a6 = addrs6(&mut rng, &v6, LOOKUPS);
    let hits = compare(&r4, &r6, &reference, &a4, &a6);
    eprintln!(
        "compared {} + {} lookups ({hits:?} hits) in {:?}",
        a4.len(),
        a6.len(),
        t.elapsed()
    );
    assert!(hits.0 > LOOKUPS / 2 && hits.1 > a6.len() / 2);

    // Remove a random 10%.
    let t = Instant::now();
    let mut all = prefixes.clone();
    all.shuffle(&mut rng);
    for p in &all[..all.len() / 10] {
        let (got, want) = match *p {
            Prefix::V4(p) => (w4.remove(p).unwrap(), reference.remove4(p)),
            Prefix::V6(p) => (w6.remove(p).unwrap(), reference.remove6(p)),
        };
        assert_eq!(got, want, "remove {p}");
    }
    assert_eq!((w4.len(), w6.len()), reference.len());
    eprintln!("removed {} in {:?}", all.len() / 10, t.elapsed());
    let a4 = addrs4(&mut rng, &v4, LOOKUPS);
    let a6 = addrs6(&mut rng, &v6, LOOKUPS);
    let t = Instant::now();
    let hits = compare(&r4, &r6, &reference, &a4, &a6);
    eprintln!("compared again ({hits:?} hits) in {:?}", t.elapsed());
    eprintln!("IPv4 memory after removal: {:?}", w4.memory());
    eprintln!("IPv6 memory after removal: {:?}", w6.memory());
    eprintln!("full_table total {:?}", t0.elapsed());
}
