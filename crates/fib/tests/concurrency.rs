//! A reader thread looks up while the writer inserts and removes. Every
//! target encodes the prefix it was installed for, so the reader can check
//! that each answer is a target some route covering the address had (never
//! garbage, never a target installed only for other addresses). The tbl8
//! pool is tiny, so groups are freed and reused all the time: this also
//! checks the quiescent-state reclamation.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use fib::{lpm4, lpm6, Lpm4Config, Lpm6Config, Prefix4, Prefix6, Target};

/// Overlapping prefixes in and around 198.18.0.0/15, many longer than /24
/// so that tbl8 groups come and go.
fn prefixes4() -> Vec<Prefix4> {
    let mut v = vec![Prefix4::new([198, 18, 0, 0].into(), 15).unwrap()];
    for i in 0..16u8 {
        v.push(Prefix4::new([198, 18, i, 0].into(), 24).unwrap());
        v.push(Prefix4::new([198, 18, i, 128].into(), 25).unwrap());
        v.push(Prefix4::new([198, 18, i, 64].into(), 26).unwrap());
        v.push(Prefix4::new([198, 18, i, 7].into(), 32).unwrap());
    }
    v
}

fn prefixes6() -> Vec<Prefix6> {
    let base = 0x2001_0002_u128 << 96;
    let mut v = vec![Prefix6::new(base.into(), 32).unwrap()];
    for i in 0..16u128 {
        v.push(Prefix6::new((base | i << 80).into(), 48).unwrap());
        v.push(Prefix6::new((base | i << 80 | 1 << 79).into(), 49).unwrap());
        v.push(Prefix6::new((base | i << 80 | 0x42).into(), 128).unwrap());
    }
    v
}

/// Target for prefix `i`, version `k`: the prefix index is recoverable.
fn target(i: usize, k: u32) -> Target {
    Target((k % 1000) << 10 | i as u32)
}

#[test]
fn v4_reader_never_sees_foreign_targets() {
    let prefixes = Arc::new(prefixes4());
    let (mut w, r) = lpm4::new(Lpm4Config { tbl8_groups: 3 });
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (prefixes, stop) = (prefixes.clone(), stop.clone());
        thread::spawn(move || {
            let mut n = 0u64;
            let mut rng = 0x1234_5678_u32;
            while !stop.load(Ordering::Relaxed) {
                for _ in 0..64 {
                    rng ^= rng << 13;
                    rng ^= rng >> 17;
                    rng ^= rng << 5;
                    let addr = 0xc612_0000 | (rng & 0x0fff);
                    if let Some(t) = r.lookup(addr) {
                        let i = (t.0 & 0x3ff) as usize;
                        assert!(
                            i < prefixes.len() && prefixes[i].contains(addr),
                            "{addr:#x} -> {t:?}"
                        );
                    }
                    n += 1;
                }
                r.quiescent();
            }
            n
        })
    };
    let start = Instant::now();
    let mut k = 0u32;
    let mut rng = 42u64;
    let mut updates = 0u64;
    while start.elapsed() < Duration::from_secs(2) {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let i = (rng >> 33) as usize % prefixes.len();
        k += 1;
        if rng & 1 == 0 {
            // May fail while groups wait for the reader's grace period.
            let _ = w.insert(prefixes[i], target(i, k));
        } else {
            w.remove(prefixes[i]).unwrap();
        }
        updates += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let lookups = reader.join().unwrap();
    assert!(lookups > 100_000 && updates > 10_000, "{lookups} {updates}");
}

#[test]
fn v6_reader_never_sees_foreign_targets() {
    let prefixes = Arc::new(prefixes6());
    let (mut w, r) = lpm6::new(Lpm6Config { tbl8_groups: 24 });
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (prefixes, stop) = (prefixes.clone(), stop.clone());
        thread::spawn(move || {
            let mut n = 0u64;
            let mut rng = 0x1234_5678_u32;
            while !stop.load(Ordering::Relaxed) {
                for _ in 0..64 {
                    rng ^= rng << 13;
                    rng ^= rng >> 17;
                    rng ^= rng << 5;
                    let x = u128::from(rng);
                    let addr = 0x2001_0002_u128 << 96 | (x & 0x1f) << 79 | ((x >> 8 & 1) * 0x42);
                    if let Some(t) = r.lookup(addr) {
                        let i = (t.0 & 0x3ff) as usize;
                        assert!(
                            i < prefixes.len() && prefixes[i].contains(addr),
                            "{addr:#x} -> {t:?}"
                        );
                    }
                    n += 1;
                }
                r.quiescent();
            }
            n
        })
    };
    let start = Instant::now();
    let mut k = 0u32;
    let mut rng = 7u64;
    let mut updates = 0u64;
    while start.elapsed() < Duration::from_secs(2) {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let i = (rng >> 33) as usize % prefixes.len();
        k += 1;
        if rng & 1 == 0 {
            let _ = w.insert(prefixes[i], target(i, k));
        } else {
            w.remove(prefixes[i]).unwrap();
        }
        updates += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let lookups = reader.join().unwrap();
    assert!(lookups > 100_000 && updates > 10_000, "{lookups} {updates}");
}
