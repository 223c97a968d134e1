//! The programs on crafted frames with plain (non-live) BPF_PROG_TEST_RUN:
//! deterministic checks of stamping, checksums and every counter. Root
//! only (skipped otherwise).

use super::count_prog::*;
use super::sys::{self, ArrayMap};
use super::*;
use crate::frame::{build, checksums_ok, parse, Flow, FLAG_LEARNING};

fn root() -> bool {
    // SAFETY: trivial libc call.
    unsafe { libc::geteuid() == 0 }
}

fn flow(v6: bool, stream: u32) -> Flow {
    let (s, d): (std::net::IpAddr, std::net::IpAddr) = if v6 {
        (
            "2001:2::2".parse().unwrap(),
            "2001:2:0:101::2".parse().unwrap(),
        )
    } else {
        ("198.18.0.2".parse().unwrap(), "198.19.1.2".parse().unwrap())
    };
    Flow {
        dst_mac: [2, 0, 0, 0, 0, 1],
        src_mac: [2, 0, 0, 0, 0, 2],
        src_ip: s,
        dst_ip: d,
        src_port: 0xC020,
        dst_port: 7,
        stream,
    }
}

fn frame(v6: bool, stream: u32, size: usize, flags: u32) -> Vec<u8> {
    let mut b = vec![0u8; 2048];
    let l = build(&flow(v6, stream), size, flags, &mut b).unwrap();
    b.truncate(l.buf_len);
    b
}

#[test]
fn generator_stamps_sequence_time_and_checksum() {
    if !root() {
        return;
    }
    let seq = ArrayMap::new("t_seq", 8, 4).unwrap();
    let prog = sys::load_xdp("t_gen", &gen_prog::program(seq.fd())).unwrap();
    for (v6, size) in [
        (false, 64),
        (false, 128),
        (true, 78),
        (true, 1518),
        (false, 1518),
    ] {
        seq.set(3, 41);
        let mut f = frame(v6, 3, size, 0);
        for k in 0..3u64 {
            let t0 = mono_ns();
            let (act, out) = sys::run_once(&prog, &f).unwrap();
            assert_eq!(act, asm::XDP_TX as u32, "{v6} {size}");
            assert_eq!(out.len(), f.len());
            assert!(checksums_ok(&out), "{v6} {size}");
            let p = parse(&out).unwrap();
            assert_eq!((p.stream, p.seq), (3, 41 + k), "{v6} {size}");
            let ts = if p.short {
                crate::analyzer::extend32(t0, p.tx_ns as u32)
            } else {
                p.tx_ns
            };
            assert!(ts >= t0 && ts < mono_ns() + 1, "{v6} {size}");
            // Feed the stamped frame back: pages are not re-initialised.
            f = out;
        }
        assert_eq!(seq.get(3), 44);
    }
}

struct Counter {
    glob: ArrayMap,
    stats: ArrayMap,
    _bits: ArrayMap,
    prog: OwnedFd,
}

fn counter(wps: u32) -> Counter {
    let glob = ArrayMap::new("t_glob", G_WORDS * 8, 1).unwrap();
    let stats = ArrayMap::new("t_stats", ST_WORDS * 8, 2).unwrap();
    let bits = ArrayMap::new("t_bits", 8, 2 * wps as usize).unwrap();
    glob.set(G_LAT_MIN, u64::MAX);
    let m = CountMaps {
        glob: glob.fd(),
        stats: stats.fd(),
        bits: bits.fd(),
        words_per_stream: wps,
    };
    let prog = sys::load_xdp("t_count", &count_prog::program(&m)).unwrap();
    Counter {
        glob,
        stats,
        _bits: bits,
        prog,
    }
}

fn stamped(v6: bool, stream: u32, size: usize, seq: u64, ts: u64) -> Vec<u8> {
    let mut b = vec![0u8; 2048];
    let l = build(&flow(v6, stream), size, 0, &mut b).unwrap();
    l.patch(&mut b, seq, ts);
    b.truncate(l.buf_len);
    b
}

#[test]
fn counter_counts_like_the_analyzer() {
    if !root() {
        return;
    }
    for (v6, size) in [(false, 64), (false, 256), (true, 78), (true, 200)] {
        let c = counter(2); // 128 sequence numbers per stream
        let now = mono_ns();
        // 0 1 2 5 4 (reordered) 2 (dup, reordered) 200 (beyond) on stream 1.
        for q in [0u64, 1, 2, 5, 4, 2, 200] {
            let f = stamped(v6, 1, size, q, now - 10_000);
            let (act, _) = sys::run_once(&c.prog, &f).unwrap();
            assert_eq!(act, asm::XDP_DROP as u32);
        }
        let st = |w| c.stats.get(ST_WORDS + w);
        assert_eq!(st(ST_RECEIVED), 7, "{v6} {size}");
        assert_eq!(st(ST_DUPLICATES), 1);
        assert_eq!(st(ST_REORDERED), 2);
        assert_eq!(st(ST_BEYOND), 1);
        assert_eq!(st(ST_HIGH1), 6);
        assert_eq!(c.glob.get(G_LAT_COUNT), 6);
        let lat_min = c.glob.get(G_LAT_MIN);
        assert!((10_000..10_000_000).contains(&lat_min), "{lat_min}");
        // Unknown stream, learning, non-test (ARP-like, wrong port).
        let f = stamped(v6, 7, size, 0, now);
        assert_eq!(sys::run_once(&c.prog, &f).unwrap().0, asm::XDP_DROP as u32);
        assert_eq!(c.glob.get(G_UNKNOWN), 1);
        if size >= 128 {
            let f = frame(v6, 0, size, FLAG_LEARNING);
            assert_eq!(sys::run_once(&c.prog, &f).unwrap().0, asm::XDP_DROP as u32);
            assert_eq!(c.glob.get(G_LEARNING), 1);
        }
        let mut f = stamped(v6, 0, size, 0, now);
        let l4 = if v6 { 54 } else { 34 };
        f[l4 + 3] = 9;
        assert_eq!(sys::run_once(&c.prog, &f).unwrap().0, asm::XDP_PASS as u32);
        let arp = [0xffu8; 60];
        assert_eq!(
            sys::run_once(&c.prog, &arp).unwrap().0,
            asm::XDP_PASS as u32
        );
        assert_eq!(c.glob.get(G_NON_TEST), 2);
        assert_eq!(c.stats.get(ST_RECEIVED), 0);
    }
}

#[test]
fn latency_histogram_matches_the_bucket_function() {
    if !root() {
        return;
    }
    let c = counter(4);
    let now = mono_ns();
    let lats = [1_000u64, 2_000, 50_000, 1_000_000];
    for (q, l) in lats.iter().enumerate() {
        let f = stamped(false, 0, 128, q as u64, now - l);
        sys::run_once(&c.prog, &f).unwrap();
    }
    let t = mono_ns() - now;
    for (q, l) in lats.iter().enumerate() {
        let b = bucket(*l);
        let seen: u64 = (b..=bucket(l + t)).map(|x| c.glob.get(G_BUCKETS + x)).sum();
        assert!(seen >= 1, "latency {l} (+{t}) not in buckets {b}..; q {q}");
    }
    assert_eq!(c.glob.get(G_LAT_COUNT), 4);
}
