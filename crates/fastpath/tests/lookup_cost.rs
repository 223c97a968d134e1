//! What the program costs per frame with the full Internet table in its
//! maps against a 10-route table (ignored: prints figures; run with
//! `cargo test --release -p softrouter-fastpath --test lookup_cost -- --ignored --nocapture`).
//!
//! Each frame is run once (`BPF_PROG_TEST_RUN` rewrites the frame in
//! place, so a repeated run would age the TTL into a punt); the kernel
//! times the program alone, and the mean over many distinct destinations
//! (each inside a random installed prefix, so the caches see the table's
//! spread) is the figure.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;

use aya::programs::{TestRun, TestRunOptions};
use fastpath::{Clock, FastPath, PortSlot, Sizes, PORT_XDP_TX};
use fib::{lpm4, lpm6, Lpm4Config, Lpm6Config, NextHop, NextHopKind, NextHopTable, Prefix, Target};
use rand::{Rng, SeedableRng};

const FRAMES: usize = 200_000;

fn run_mean_ns(fp: &mut FastPath, frames: &[Vec<u8>]) -> (f64, usize) {
    let prog = fp.program().unwrap();
    let mut out = vec![0u8; 256];
    let (mut ns, mut fwd) = (0u128, 0);
    for f in frames {
        let r = prog
            .test_run(TestRunOptions {
                data_in: Some(f),
                data_out: Some(&mut out),
                repeat: 1,
                ..TestRunOptions::new()
            })
            .unwrap();
        ns += r.duration.as_nanos();
        fwd += usize::from(r.return_value == bpf::XDP_REDIRECT);
    }
    (ns as f64 / frames.len() as f64, fwd)
}

fn frame(dst: std::net::IpAddr, sport: u16) -> Vec<u8> {
    let router = [2, 0, 0, 0, 0xaa, 0];
    let mut f = vec![0u8; 64];
    f[0..6].copy_from_slice(&router);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    match dst {
        std::net::IpAddr::V4(d) => {
            f.truncate(60);
            f[12..14].copy_from_slice(&[8, 0]);
            let ip = &mut f[14..];
            ip[0] = 0x45;
            ip[2..4].copy_from_slice(&46u16.to_be_bytes());
            ip[8] = 64;
            ip[9] = 17;
            ip[12..16].copy_from_slice(&[198, 18, 0, 2]);
            ip[16..20].copy_from_slice(&d.octets());
            let c = packet::checksum::finish(packet::checksum::sum(&ip[..20]));
            ip[10..12].copy_from_slice(&c.to_be_bytes());
            ip[20..22].copy_from_slice(&sport.to_be_bytes());
        }
        std::net::IpAddr::V6(d) => {
            f.resize(14 + 40 + 26, 0);
            f[12..14].copy_from_slice(&[0x86, 0xdd]);
            let ip = &mut f[14..];
            ip[0] = 0x60;
            ip[4..6].copy_from_slice(&26u16.to_be_bytes());
            ip[6] = 17;
            ip[7] = 64;
            ip[8..24].copy_from_slice(&"2001:2::2".parse::<Ipv6Addr>().unwrap().octets());
            ip[24..40].copy_from_slice(&d.octets());
            ip[40..42].copy_from_slice(&sport.to_be_bytes());
        }
    }
    f
}

/// (IPv4 ns, IPv6 ns) per frame with `prefixes` installed, destinations
/// inside them.
fn measure(prefixes: &[Prefix]) -> ((f64, usize), (f64, usize)) {
    let sizes = Sizes {
        lpm4_tbl8_groups: 1024,
        lpm6_tbl8_groups: 1 << 16,
        next_hops: 16,
        groups: 1,
        group_members: 1,
    };
    let mut fp = FastPath::load(sizes).unwrap();
    let mut mem = fp.memory();
    let (mut w4, _r4) = lpm4::new_in(Lpm4Config { tbl8_groups: 1024 }, &mut mem).unwrap();
    let (mut w6, _r6) = lpm6::new_in(
        Lpm6Config {
            tbl8_groups: 1 << 16,
        },
        &mut mem,
    )
    .unwrap();
    let (mut nhw, _nhr) = NextHopTable::with_capacity_in(16, 1, 1, &mut mem).unwrap();
    let neigh: fib::memory::Region<[std::sync::atomic::AtomicU64; 8]> = mem.neighbours().unwrap();
    let id = nhw
        .add(NextHop {
            port: 1,
            kind: NextHopKind::Gateway(Ipv4Addr::new(198, 18, 1, 1).into()),
        })
        .unwrap();
    neigh[id.0 as usize][0].store(
        0x0200_0000_0001 | 2 << 48,
        std::sync::atomic::Ordering::Relaxed,
    );
    fp.set_clock(Clock {
        epoch_ns: 0,
        offset_ms: 0,
        reachable_ms: 30_000,
    });
    for p in [1u32, 0] {
        let slot = PortSlot {
            mac: [2, 0, 0, 0, 0xaa, p as u8],
            mtu: 1500,
            flags: PORT_XDP_TX,
            _pad: 0,
        };
        fp.set_port(p, 1, slot).unwrap();
    }
    let t = Target::next_hop(id);
    for p in prefixes {
        match p {
            Prefix::V4(p) => w4.insert(*p, t).unwrap(),
            Prefix::V6(p) => w6.insert(*p, t).unwrap(),
        };
    }
    let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
    let v4: Vec<_> = prefixes
        .iter()
        .filter_map(|p| {
            if let Prefix::V4(p) = p {
                Some(*p)
            } else {
                None
            }
        })
        .collect();
    let v6: Vec<_> = prefixes
        .iter()
        .filter_map(|p| {
            if let Prefix::V6(p) = p {
                Some(*p)
            } else {
                None
            }
        })
        .collect();
    let f4: Vec<_> = (0..FRAMES)
        .map(|_| {
            let p = v4[rng.gen_range(0..v4.len())];
            let a = p.bits() | (rng.gen::<u32>() & !fib::prefix::mask4(p.len));
            frame(Ipv4Addr::from(a).into(), rng.gen())
        })
        .filter(|f| f[30] != 127 && f[30] < 224 && f[30] != 0)
        .collect();
    let f6: Vec<_> = (0..FRAMES)
        .map(|_| {
            let p = v6[rng.gen_range(0..v6.len())];
            let a = p.bits() | (rng.gen::<u128>() & !fib::prefix::mask6(p.len));
            frame(Ipv6Addr::from(a).into(), rng.gen())
        })
        .filter(|f| f[38] != 0xff && !(f[38] == 0xfe && f[39] & 0xc0 == 0x80))
        .collect();
    (run_mean_ns(&mut fp, &f4), run_mean_ns(&mut fp, &f6))
}

#[test]
#[ignore]
fn lookup_cost_full_table_vs_ten_routes() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/routes/full-table.txt.gz");
    let Ok(full) = fib::routes_file::load_prefixes(&path) else {
        eprintln!("lookup_cost: skipped ({} missing)", path.display());
        return;
    };
    let ten: Vec<Prefix> = [
        "198.18.0.0/15",
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.0.2.0/24",
        "203.0.113.0/24",
        "2001:2::/48",
        "2001:db8::/32",
        "2001:2:0:100::/56",
        "fc00::/7",
        "2001:2:0:1::/64",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect();
    let (s4, s6) = measure(&ten);
    let (f4, f6) = measure(&full);
    eprintln!(
        "program ns/frame (forwarded of {FRAMES}): IPv4 10 routes {:.1} ({}), full {:.1} ({}), ratio {:.2}; \
         IPv6 10 routes {:.1} ({}), full {:.1} ({}), ratio {:.2}",
        s4.0, s4.1, f4.0, f4.1, f4.0 / s4.0, s6.0, s6.1, f6.0, f6.1, f6.0 / s6.0
    );
    assert!(s4.1 > 0 && f4.1 > 0 && s6.1 > 0 && f6.1 > 0);
}
