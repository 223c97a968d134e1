//! Lookups per second on the full table, for random addresses the table
//! covers (each address drawn inside a random installed prefix), one at a
//! time and in bursts of 64. Skips if the shared table is missing.
//!
//! `cargo bench -p softrouter-fib -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fib::{lpm4, lpm6, Lpm4Config, Lpm6Config, Prefix, Target};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const BURST: usize = 64;
/// Far more addresses than fit in cache, so lookups miss as they would with
/// real traffic spread over the table.
const N_ADDRS: usize = 1 << 20;

fn lookups(c: &mut Criterion) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/routes/full-table.txt.gz");
    let Ok(prefixes) = fib::routes_file::load_prefixes(&path) else {
        eprintln!("SKIP fib lookup bench: {} not found", path.display());
        return;
    };
    let (mut w4, r4) = lpm4::new(Lpm4Config { tbl8_groups: 4096 });
    let (mut w6, r6) = lpm6::new(Lpm6Config {
        tbl8_groups: 1 << 17,
    });
    let (mut v4, mut v6) = (Vec::new(), Vec::new());
    for (i, p) in prefixes.iter().enumerate() {
        let t = Target(i as u32 % 1024);
        match *p {
            Prefix::V4(p) => {
                w4.insert(p, t).unwrap();
                v4.push(p);
            }
            Prefix::V6(p) => {
                w6.insert(p, t).unwrap();
                v6.push(p);
            }
        }
    }
    let mut rng = SmallRng::seed_from_u64(1);
    let a4: Vec<u32> = (0..N_ADDRS)
        .map(|_| {
            let p = v4[rng.gen_range(0..v4.len())];
            p.bits() | (rng.gen::<u32>() & !fib::prefix::mask4(p.len))
        })
        .collect();
    let a6: Vec<u128> = (0..N_ADDRS)
        .map(|_| {
            let p = v6[rng.gen_range(0..v6.len())];
            p.bits() | (rng.gen::<u128>() & !fib::prefix::mask6(p.len))
        })
        .collect();

    let mut g = c.benchmark_group("fib");
    g.throughput(Throughput::Elements(BURST as u64));
    let mut out = [None; BURST];

    let mut i = 0;
    g.bench_function("lpm4/single", |b| {
        b.iter(|| {
            let chunk = &a4[i..i + BURST];
            i = (i + BURST) % N_ADDRS;
            for (o, &a) in out.iter_mut().zip(chunk) {
                *o = r4.lookup(a);
            }
            black_box(&out);
        })
    });
    g.bench_function("lpm4/bulk64", |b| {
        b.iter(|| {
            r4.lookup_bulk(&a4[i..i + BURST], &mut out);
            i = (i + BURST) % N_ADDRS;
            black_box(&out);
        })
    });
    g.bench_function("lpm6/single", |b| {
        b.iter(|| {
            let chunk = &a6[i..i + BURST];
            i = (i + BURST) % N_ADDRS;
            for (o, &a) in out.iter_mut().zip(chunk) {
                *o = r6.lookup(a);
            }
            black_box(&out);
        })
    });
    g.bench_function("lpm6/bulk64", |b| {
        b.iter(|| {
            r6.lookup_bulk(&a6[i..i + BURST], &mut out);
            i = (i + BURST) % N_ADDRS;
            black_box(&out);
        })
    });
    g.finish();
    drop((w4, w6));
}

criterion_group!(benches, lookups);
criterion_main!(benches);
