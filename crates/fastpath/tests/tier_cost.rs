//! What the tier's program costs per frame against the floor DUT's
//! (`crates/dut/bpf/floor.bpf.c`: a redirect with the MACs rewritten and
//! nothing else), per code path, on the same 64 B frames (issue 21 item
//! 3). Ignored: it prints figures; run it with `bench/fastpath/cost.sh`
//! (or `cargo test -p softrouter-fastpath --test tier_cost -- --ignored
//! --nocapture`).
//!
//! Why `BPF_PROG_TEST_RUN` with `repeat`: the kernel times the program
//! alone (ns per run over `repeat` runs), which other load on the machine
//! moves far less than a bench through veth. The program rewrites the
//! frame in place and a repeat runs it on the same bytes, so forwarded
//! frames start at TTL / hop limit 255, a call repeats fewer runs than
//! that, and the neighbours' MAC is the ingress port's: every run takes
//! the path named (each call checks its counter). The two programs are
//! called alternately (A/B), and each path's figure is the trimmed mean
//! of its calls beside the floor's calls next to them.
//!
//! With `TIERCOST_BASE=<fwd.bpf.o>` (`cost.sh --base REV` compiles one)
//! a base build of the program runs beside this one, on tables of its
//! own, call for call: a change to the program is measured against the
//! code before it in one run, not against a figure from another hour.
//! `TIERCOST_PATHS=ipv4 forward,punt l2` runs only the paths named.

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use aya::programs::{TestRun, TestRunOptions, Xdp};
use dataplane::neighbor::layout::{STATE_REACHABLE, STATE_SHIFT};
use dut::floor::{Floor, Hop};
use fastpath::{Clock, Counter, FastPath, PortSlot, Sizes, PORT_XDP_TX};
use fib::{lpm4, lpm6, Lpm4Config, Lpm6Config, NextHop, NextHopKind, NextHopTable, Target};

/// Runs per call: below the 254 a TTL of 255 allows before a punt.
const REPEAT: u32 = 250;
const ROUTER_MAC: [u8; 6] = [2, 0, 0, 0, 0xaa, 0];

fn root() -> bool {
    // SAFETY: no arguments.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("tier_cost: skipped (BPF programs need root)");
    }
    root
}

/// (ns per run as the kernel timed it, the program's verdict).
fn time(prog: &Xdp, frame: &[u8]) -> (u32, u32) {
    let mut out = vec![0u8; 256];
    let r = prog
        .test_run(TestRunOptions {
            data_in: Some(frame),
            data_out: Some(&mut out),
            repeat: REPEAT,
            ..TestRunOptions::new()
        })
        .expect("BPF_PROG_TEST_RUN");
    (r.duration.as_nanos() as u32, r.return_value)
}

/// 60 B (64 B on the wire): Ethernet, IPv4, UDP, to `dst`.
fn v4(dst: [u8; 4], ttl: u8) -> Vec<u8> {
    let mut f = vec![0u8; 60];
    f[0..6].copy_from_slice(&ROUTER_MAC);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    f[12..14].copy_from_slice(&[8, 0]);
    let ip = &mut f[14..];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&46u16.to_be_bytes());
    ip[8] = ttl;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[198, 18, 0, 2]);
    ip[16..20].copy_from_slice(&dst);
    let c = packet::checksum::finish(packet::checksum::sum(&ip[..20]));
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    ip[20..22].copy_from_slice(&1000u16.to_be_bytes());
    ip[22..24].copy_from_slice(&7u16.to_be_bytes());
    f
}

/// 78 B, the bench's smallest IPv6 frame: Ethernet, IPv6, UDP, to
/// 2001:2:0:1ii::9 (port ii of the testbed's plan).
fn v6(port: u8, hops: u8) -> Vec<u8> {
    let mut f = vec![0u8; 78];
    f[0..6].copy_from_slice(&ROUTER_MAC);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    f[12..14].copy_from_slice(&[0x86, 0xdd]);
    let ip = &mut f[14..];
    ip[0] = 0x60;
    ip[4..6].copy_from_slice(&24u16.to_be_bytes());
    ip[6] = 17;
    ip[7] = hops;
    ip[8..12].copy_from_slice(&[0x20, 0x01, 0, 2]);
    ip[23] = 2;
    ip[24..32].copy_from_slice(&[0x20, 0x01, 0, 2, 0, 0, 1, port]);
    ip[39] = 9;
    ip[40..42].copy_from_slice(&1000u16.to_be_bytes());
    ip[42..44].copy_from_slice(&7u16.to_be_bytes());
    f
}

/// The tier with the testbed's plan: 198.19.i.0/24 and 2001:2:0:1ii::/64
/// via a REACHABLE gateway on port i (1, 2), and a route for each other
/// outcome; every port on loopback (ifindex 1), port 0 the ingress.
fn tier(object: Option<&[u8]>) -> FastPath {
    let sizes = Sizes {
        lpm4_tbl8_groups: 16,
        lpm6_tbl8_groups: 64,
        next_hops: 64,
        groups: 1,
        group_members: 1,
    };
    let mut fp = match object {
        Some(o) => FastPath::load_object(o, sizes),
        None => FastPath::load(sizes),
    }
    .expect("load the fast path");
    let mut mem = fp.memory();
    let (mut w4, _r4) = lpm4::new_in(Lpm4Config { tbl8_groups: 16 }, &mut mem).unwrap();
    let (mut w6, _r6) = lpm6::new_in(Lpm6Config { tbl8_groups: 64 }, &mut mem).unwrap();
    let (mut nhw, _nhr) = NextHopTable::with_capacity_in(64, 1, 1, &mut mem).unwrap();
    let neigh: fib::memory::Region<[AtomicU64; 8]> = mem.neighbours().unwrap();
    let mut gateway = |port: u16, state: u64| {
        let id = nhw
            .add(NextHop {
                port,
                kind: NextHopKind::Gateway(Ipv4Addr::new(198, 18, port as u8, 1).into()),
            })
            .unwrap();
        // The neighbour's MAC is port 0's: a forwarded frame is again
        // addressed to the router, so the next repeat takes the same path.
        let mac = ROUTER_MAC.iter().fold(0u64, |a, &b| a << 8 | u64::from(b));
        neigh[id.0 as usize][0].store(mac | state << STATE_SHIFT, Relaxed);
        // Confirmed "in the future": REACHABLE however long the run takes.
        neigh[id.0 as usize][1].store(u64::MAX / 2, Relaxed);
        Target::next_hop(id)
    };
    let (p1, p2) = (gateway(1, STATE_REACHABLE), gateway(2, STATE_REACHABLE));
    let (unresolved, small, no_xdp) = (
        gateway(1, 0),
        gateway(3, STATE_REACHABLE),
        gateway(4, STATE_REACHABLE),
    );
    let mut other = |kind| Target::next_hop(nhw.add(NextHop { port: 1, kind }).unwrap());
    let (local, connected, blackhole) = (
        other(NextHopKind::Local),
        other(NextHopKind::Connected),
        other(NextHopKind::Blackhole),
    );
    for (net, t) in [
        ("198.19.1.0/24", p1),
        ("198.19.2.0/24", p2),
        ("198.19.10.0/24", unresolved),
        ("198.19.11.0/24", local),
        ("198.19.12.0/24", connected),
        ("198.19.13.0/24", blackhole),
        ("198.19.14.0/24", small),
        ("198.19.15.0/24", no_xdp),
    ] {
        w4.insert(net.parse().unwrap(), t).unwrap();
    }
    w6.insert("2001:2:0:101::/64".parse().unwrap(), p1).unwrap();
    w6.insert("2001:2:0:102::/64".parse().unwrap(), p2).unwrap();
    drop(mem);
    fp.set_clock(Clock {
        epoch_ns: Clock::monotonic_ns(),
        offset_ms: 0,
        reachable_ms: 30_000,
    });
    // Port 3's MTU is below the frames' 46 bytes of IP; port 4 takes no
    // XDP frames. Port 0 last: it owns ifindex 1 for arriving frames.
    for (p, mtu, flags) in [
        (1, 1500, PORT_XDP_TX),
        (2, 1500, PORT_XDP_TX),
        (3, 40, PORT_XDP_TX),
        (4, 1500, 0),
        (0, 1500, PORT_XDP_TX),
    ] {
        let mut mac = ROUTER_MAC;
        mac[5] = p as u8;
        let slot = PortSlot {
            mac,
            mtu,
            flags,
            _pad: 0,
        };
        fp.set_port(p, 1, slot).unwrap();
    }
    fp
}

fn floor() -> Floor {
    let mut f = Floor::load().expect("load the floor program");
    for p in 0..5u8 {
        let hop = Hop {
            dst: [2, 0, 0, 0, 0x7e, p],
            src: [2, 0, 0, 0, 0xd0, p],
            valid: 1,
        };
        f.set_port(u32::from(p), 1, hop).unwrap();
    }
    f
}

/// The mean of the middle half: the kernel's ns are whole numbers, and a
/// call now and then is interrupted.
fn trimmed_mean(v: &mut [u32]) -> f64 {
    v.sort_unstable();
    let q = v.len() / 4;
    let mid = &v[q..v.len() - q];
    mid.iter().map(|&x| f64::from(x)).sum::<f64>() / mid.len() as f64
}

#[test]
#[ignore]
fn tier_vs_floor_per_path() {
    if !root() {
        return;
    }
    let rounds: usize = std::env::var("TIERCOST_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let base_obj = std::env::var_os("TIERCOST_BASE")
        .map(|p| std::fs::read(&p).unwrap_or_else(|e| panic!("TIERCOST_BASE {p:?}: {e}")));
    let mut tiers = vec![("tier", tier(None))];
    if let Some(o) = &base_obj {
        tiers.push(("base", tier(Some(o))));
    }
    let mut floor = floor();
    let dst = |n: u8| [198, 19, n, 9];
    let fwd4 = v4(dst(1), 255);
    let fwd6 = v6(1, 255);
    let edit = |mut f: Vec<u8>, e: &dyn Fn(&mut Vec<u8>)| {
        e(&mut f);
        f
    };
    // (path, frame, the counter each run must count on); the floor runs
    // the forwarded frames of the same family.
    let paths: Vec<(&str, Vec<u8>, Counter)> = vec![
        ("ipv4 forward", fwd4.clone(), Counter::RxForwarded),
        ("ipv6 forward", fwd6.clone(), Counter::RxForwarded),
        (
            "punt l2",
            edit(fwd4.clone(), &|f| f[5] = 9),
            Counter::PuntL2,
        ),
        (
            "punt not_ip",
            edit(fwd4.clone(), &|f| f[12..14].copy_from_slice(&[8, 6])),
            Counter::PuntNotIp,
        ),
        (
            "punt header",
            edit(fwd4.clone(), &|f| f[24] ^= 1),
            Counter::PuntHeader,
        ),
        ("punt ttl", v4(dst(1), 1), Counter::PuntTtl),
        ("punt no_route", v4(dst(200), 64), Counter::PuntNoRoute),
        ("punt neighbour", v4(dst(10), 64), Counter::PuntNeigh),
        ("punt local", v4(dst(11), 64), Counter::PuntLocal),
        ("punt connected", v4(dst(12), 64), Counter::PuntConnected),
        ("punt blackhole", v4(dst(13), 64), Counter::PuntBlackhole),
        ("punt mtu", v4(dst(14), 64), Counter::PuntMtu),
        ("punt egress", v4(dst(15), 64), Counter::PuntEgress),
        ("punt ipv6 hop limit", v6(1, 1), Counter::PuntTtl),
    ];
    // TIERCOST_PATHS=<name>,<name>: only those paths (a hacked build of
    // the program as the base may take others differently).
    let only = std::env::var("TIERCOST_PATHS").ok();
    let paths: Vec<_> = paths
        .into_iter()
        .filter(|(what, _, _)| {
            only.as_ref()
                .is_none_or(|o| o.split(',').any(|n| n == *what))
        })
        .collect();
    // The harness alone: the floor on a bare Ethernet header returns at
    // its first bounds check (the kernel's loop, the dispatcher and the
    // timer are in every figure).
    let empty = fwd4[..14].to_vec();
    let mut t_ns = vec![vec![Vec::new(); paths.len()]; tiers.len()];
    let (mut f4_ns, mut f6_ns, mut e_ns) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (ns, verdict) = time(floor.program().unwrap(), &fwd4);
        assert_eq!(verdict, bpf::XDP_REDIRECT, "the floor forwards IPv4");
        f4_ns.push(ns);
        for (i, (what, frame, counter)) in paths.iter().enumerate() {
            // Tier and base in turn, the first of the two alternating.
            let mut both: Vec<_> = tiers.iter_mut().zip(t_ns.iter_mut()).collect();
            if round % 2 == 1 {
                both.reverse();
            }
            for ((name, tier), t_ns) in both {
                let before = tier.counters(0).unwrap().get(*counter);
                let (ns, verdict) = time(tier.program().unwrap(), frame);
                let want = if *counter == Counter::RxForwarded {
                    bpf::XDP_REDIRECT
                } else {
                    bpf::XDP_PASS
                };
                assert_eq!(
                    verdict,
                    want,
                    "{name} {what}: {:?}",
                    tier.counters(0).unwrap()
                );
                let after = tier.counters(0).unwrap().get(*counter);
                assert_eq!(
                    after - before,
                    u64::from(REPEAT),
                    "{name} {what}: every run on its path"
                );
                t_ns[i].push(ns);
            }
        }
        let (ns, verdict) = time(floor.program().unwrap(), &fwd6);
        assert_eq!(verdict, bpf::XDP_REDIRECT, "the floor forwards IPv6");
        f6_ns.push(ns);
        let (ns, verdict) = time(floor.program().unwrap(), &empty);
        assert_eq!(verdict, bpf::XDP_PASS, "the floor passes a bare header");
        e_ns.push(ns);
    }
    let (f4, f6, e) = (
        trimmed_mean(&mut f4_ns),
        trimmed_mean(&mut f6_ns),
        trimmed_mean(&mut e_ns),
    );
    println!(
        "tier_cost: ns per run (BPF_PROG_TEST_RUN, repeat {REPEAT}, {rounds} calls each, \
         trimmed mean), tier{} and floor calls interleaved; harness alone {e:.1} ns",
        if tiers.len() > 1 { ", base" } else { "" }
    );
    print!(
        "{:<20} {:>7} {:>7} {:>6} {:>11} {:>11} {:>6}",
        "path", "tier", "floor", "ratio", "tier-harn", "floor-harn", "ratio"
    );
    if tiers.len() > 1 {
        print!(" {:>9} {:>10}", "base-harn", "tier/base");
    }
    println!();
    let mut t_ns = t_ns.into_iter();
    let (mut tier_ns, mut base_ns) = (t_ns.next().unwrap(), t_ns.next());
    for (i, (what, _, _)) in paths.iter().enumerate() {
        let t = trimmed_mean(&mut tier_ns[i]);
        let f = if what.contains("ipv6") { f6 } else { f4 };
        print!(
            "{what:<20} {t:>7.1} {f:>7.1} {:>6.2} {:>11.1} {:>11.1} {:>6.2}",
            t / f,
            t - e,
            f - e,
            (t - e) / (f - e)
        );
        if let Some(b) = base_ns.as_mut() {
            let b = trimmed_mean(&mut b[i]);
            print!(" {:>9.1} {:>10.3}", b - e, (t - e) / (b - e));
        }
        println!();
    }
}
