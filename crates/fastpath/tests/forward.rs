//! The XDP fast path run on crafted frames (`BPF_PROG_TEST_RUN`) against
//! the workers' rules: what it forwards is rewritten exactly as a worker
//! would, through the same route and ECMP member; everything else is
//! punted, unchanged, and counted by reason.
//!
//! In a test run the frame arrives on the loopback device (ifindex 1), so
//! every port's egress is loopback too and the egress port is read from
//! the rewritten source MAC (each port has its own).

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use dataplane::neighbor::layout::{STATE_REACHABLE, STATE_SHIFT, STATE_STATIC};
use fastpath::{
    Clock, Counter, Counters, FastPath, PortSlot, Sizes, PORT_KERNEL_LOCAL, PORT_XDP_TX,
};
use fib::memory::{Region, Zeroed};
use fib::{
    lpm4, lpm6, Lpm4Config, Lpm4Reader, Lpm4Writer, Lpm6Config, Lpm6Reader, Lpm6Writer, NextHop,
    NextHopId, NextHopKind, NextHopReader, NextHopTable, NextHopWriter, Prefix4, Prefix6, Target,
};
use rand::{Rng, SeedableRng};

/// The dataplane's `NeighEntry` layout (dataplane::neighbor::layout).
#[repr(C, align(64))]
#[derive(Default)]
struct Neigh {
    word: AtomicU64,
    confirmed_ms: AtomicU64,
    solicited_ms: AtomicU64,
    since_ms: AtomicU64,
    used_ms: AtomicU64,
    life: AtomicU32,
    dynamic: AtomicU32,
}
// SAFETY: atomics only; zero is valid.
unsafe impl Zeroed for Neigh {}
const _: () = assert!(std::mem::size_of::<Neigh>() == 64);

const PORTS: u32 = 3;
const MTU: u16 = 1500;
const ROUTER_MAC: [u8; 6] = [2, 0, 0, 0, 0xaa, 0];
const HOST_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];

fn port_mac(p: u32) -> [u8; 6] {
    [2, 0, 0, 0, 0xaa, p as u8]
}

/// Neighbour `id`'s MAC: the id is readable from a forwarded frame.
fn neigh_mac(id: u32) -> [u8; 6] {
    [2, 0, 0, 0x11, (id >> 8) as u8, id as u8]
}

fn mac_u64(m: [u8; 6]) -> u64 {
    m.iter().fold(0, |a, &b| a << 8 | u64::from(b))
}

struct Bed {
    fp: FastPath,
    w4: Lpm4Writer,
    r4: Lpm4Reader,
    w6: Lpm6Writer,
    r6: Lpm6Reader,
    nhw: NextHopWriter,
    nhr: NextHopReader,
    neigh: Region<Neigh>,
}

fn root(test: &str) -> bool {
    // SAFETY: no arguments.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("{test}: skipped (BPF programs need root)");
    }
    root
}

impl Bed {
    fn new(lpm4_groups: u32, lpm6_groups: u32) -> Bed {
        let sizes = Sizes {
            lpm4_tbl8_groups: lpm4_groups,
            lpm6_tbl8_groups: lpm6_groups,
            next_hops: 1024,
            groups: 16,
            group_members: 64,
        };
        let fp = FastPath::load(sizes).expect("load the fast path");
        let mut mem = fp.memory();
        let (w4, r4) = lpm4::new_in(
            Lpm4Config {
                tbl8_groups: lpm4_groups,
            },
            &mut mem,
        )
        .unwrap();
        let (w6, r6) = lpm6::new_in(
            Lpm6Config {
                tbl8_groups: lpm6_groups,
            },
            &mut mem,
        )
        .unwrap();
        let (nhw, nhr) = NextHopTable::with_capacity_in(1024, 16, 64, &mut mem).unwrap();
        let neigh = mem.neighbours::<Neigh>().unwrap();
        assert!(!neigh.is_heap());
        fp.set_clock(Clock {
            epoch_ns: Clock::monotonic_ns(),
            offset_ms: 0,
            reachable_ms: 30_000,
        });
        let mut b = Bed {
            fp,
            w4,
            r4,
            w6,
            r6,
            nhw,
            nhr,
            neigh,
        };
        for p in 1..PORTS {
            b.port(p, port_mac(p), PORT_XDP_TX);
        }
        b.port(0, ROUTER_MAC, PORT_XDP_TX);
        b
    }

    /// Port `p` on loopback (ifindex 1). The ingress port (0) must be set
    /// last: it owns ifindex 1 for arriving frames.
    fn port(&mut self, p: u32, mac: [u8; 6], flags: u32) {
        let slot = PortSlot {
            mac,
            mtu: MTU,
            flags,
            _pad: 0,
        };
        self.fp.set_port(p, 1, slot).unwrap();
    }

    /// A gateway next hop on `port` whose neighbour is in `state`.
    fn gateway(&mut self, port: u16, state: u64) -> NextHopId {
        let gw = Ipv4Addr::new(198, 18, port as u8, 1 + self.nhw.len() as u8);
        let id = self
            .nhw
            .add(NextHop {
                port,
                kind: NextHopKind::Gateway(gw.into()),
            })
            .unwrap();
        let e = &self.neigh[id.0 as usize];
        e.word
            .store(mac_u64(neigh_mac(id.0)) | state << STATE_SHIFT, Relaxed);
        id
    }

    fn other(&mut self, kind: NextHopKind) -> NextHopId {
        self.nhw.add(NextHop { port: 1, kind }).unwrap()
    }

    fn run(&mut self, frame: &[u8]) -> (u32, Vec<u8>) {
        bpf::run_once(self.fp.program().unwrap(), frame)
    }

    fn counters(&self, port: u32) -> Counters {
        self.fp.counters(port).unwrap()
    }
}

fn checksum(hdr: &[u8]) -> u16 {
    packet::checksum::finish(packet::checksum::sum(hdr))
}

/// An Ethernet/IPv4/UDP frame from the host to `dst`, TTL 64, `pad`
/// bytes of Ethernet padding after the packet.
fn v4(dst: Ipv4Addr, sport: u16, ttl: u8, payload: usize, pad: usize) -> Vec<u8> {
    let total = 20 + 8 + payload;
    let mut f = vec![0u8; 14 + total + pad];
    f[0..6].copy_from_slice(&ROUTER_MAC);
    f[6..12].copy_from_slice(&HOST_MAC);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut f[14..];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    ip[6] = 0x40;
    ip[8] = ttl;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[198, 18, 0, 2]);
    ip[16..20].copy_from_slice(&dst.octets());
    let c = checksum(&ip[..20]);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    ip[20..22].copy_from_slice(&sport.to_be_bytes());
    ip[22..24].copy_from_slice(&7u16.to_be_bytes());
    ip[24..26].copy_from_slice(&((8 + payload) as u16).to_be_bytes());
    f
}

/// An Ethernet/IPv6/UDP frame from the host to `dst`, hop limit `hops`.
fn v6(dst: Ipv6Addr, sport: u16, hops: u8, payload: usize) -> Vec<u8> {
    let plen = 8 + payload;
    let mut f = vec![0u8; 14 + 40 + plen];
    f[0..6].copy_from_slice(&ROUTER_MAC);
    f[6..12].copy_from_slice(&HOST_MAC);
    f[12..14].copy_from_slice(&0x86ddu16.to_be_bytes());
    let ip = &mut f[14..];
    ip[0] = 0x60;
    ip[4..6].copy_from_slice(&(plen as u16).to_be_bytes());
    ip[6] = 17;
    ip[7] = hops;
    ip[8..24].copy_from_slice(&"2001:2::2".parse::<Ipv6Addr>().unwrap().octets());
    ip[24..40].copy_from_slice(&dst.octets());
    ip[40..42].copy_from_slice(&sport.to_be_bytes());
    ip[42..44].copy_from_slice(&7u16.to_be_bytes());
    f
}

fn p4(s: &str) -> Prefix4 {
    s.parse().unwrap()
}

fn p6(s: &str) -> Prefix6 {
    s.parse().unwrap()
}

#[test]
fn forwards_through_a_reachable_gateway_rewritten_as_a_worker_would() {
    if !root("forwards_through_a_reachable_gateway_rewritten_as_a_worker_would") {
        return;
    }
    let mut b = Bed::new(16, 64);
    let id = b.gateway(2, STATE_REACHABLE);
    b.w4.insert(p4("198.19.0.0/16"), Target::next_hop(id))
        .unwrap();
    b.w6.insert(p6("2001:2:0:100::/56"), Target::next_hop(id))
        .unwrap();

    let f = v4(Ipv4Addr::new(198, 19, 1, 2), 1000, 64, 18, 0);
    let (act, out) = b.run(&f);
    assert_eq!(act, bpf::XDP_REDIRECT);
    let mut want = f.clone();
    want[0..6].copy_from_slice(&neigh_mac(id.0));
    want[6..12].copy_from_slice(&port_mac(2));
    want[14 + 8] = 63;
    want[14 + 10..14 + 12].fill(0);
    let c = checksum(&want[14..34]);
    want[14 + 10..14 + 12].copy_from_slice(&c.to_be_bytes());
    assert_eq!(out, want, "IPv4: TTL, checksum (as recomputed) and MACs");

    let f = v6("2001:2:0:1ff::9".parse().unwrap(), 1000, 64, 18);
    let (act, out) = b.run(&f);
    assert_eq!(act, bpf::XDP_REDIRECT);
    let mut want = f.clone();
    want[0..6].copy_from_slice(&neigh_mac(id.0));
    want[6..12].copy_from_slice(&port_mac(2));
    want[14 + 7] = 63;
    assert_eq!(out, want, "IPv6: hop limit and MACs");

    // Ethernet padding beyond the packet is not forwarded (the workers
    // send the packet's own length).
    let f = v4(Ipv4Addr::new(198, 19, 1, 2), 1000, 64, 0, 12);
    let (act, out) = b.run(&f);
    assert_eq!((act, out.len()), (bpf::XDP_REDIRECT, f.len() - 12));

    let (i, o) = (b.counters(0), b.counters(2));
    assert_eq!(i.get(Counter::RxForwarded), 3);
    // As received: 60 (IPv4), 80 (IPv6), 54 (IPv4 with 12 bytes of padding).
    assert_eq!(i.get(Counter::RxForwardedBytes), 60 + 80 + 54);
    assert_eq!((o.get(Counter::Tx), i.punted()), (3, 0));
    // A STATIC neighbour is as good, and the forward touched the entry.
    let s = b.gateway(1, STATE_STATIC);
    b.w4.insert(p4("198.19.7.0/24"), Target::next_hop(s))
        .unwrap();
    b.fp.set_clock(Clock {
        epoch_ns: Clock::monotonic_ns() - 5_000_000_000,
        offset_ms: 0,
        reachable_ms: 30_000,
    });
    let (act, _) = b.run(&v4(Ipv4Addr::new(198, 19, 7, 1), 1, 64, 18, 0));
    assert_eq!(act, bpf::XDP_REDIRECT);
    let used = b.neigh[s.0 as usize].used_ms.load(Relaxed);
    assert!((4_900..6_000).contains(&used), "used_ms {used}");
}

#[test]
fn punts_what_the_workers_must_decide_unchanged_and_counted() {
    if !root("punts_what_the_workers_must_decide_unchanged_and_counted") {
        return;
    }
    let mut b = Bed::new(16, 64);
    let ok = b.gateway(1, STATE_REACHABLE);
    let incomplete = b.gateway(1, 0);
    let stale = b.gateway(1, 3);
    let to_port2 = b.gateway(2, STATE_REACHABLE);
    let local = b.other(NextHopKind::Local);
    let connected = b.other(NextHopKind::Connected);
    let blackhole = b.other(NextHopKind::Blackhole);
    for (net, id) in [
        ("198.19.1.0/24", ok),
        ("198.19.2.0/24", incomplete),
        ("198.19.3.0/24", stale),
        ("198.19.4.0/24", local),
        ("198.19.5.0/24", connected),
        ("198.19.6.0/24", blackhole),
        ("198.19.7.0/24", to_port2),
    ] {
        b.w4.insert(p4(net), Target::next_hop(id)).unwrap();
    }
    b.w6.insert(p6("2001:2::/32"), Target::next_hop(ok))
        .unwrap();
    b.w6.insert(p6("fe80::/10"), Target::next_hop(ok)).unwrap();
    let dst = |n: u8| Ipv4Addr::new(198, 19, n, 9);
    let with = |mut f: Vec<u8>, edit: &dyn Fn(&mut Vec<u8>)| {
        edit(&mut f);
        f
    };
    let fix4 = |f: &mut Vec<u8>| {
        f[24..26].fill(0);
        let c = checksum(&f[14..34]);
        f[24..26].copy_from_slice(&c.to_be_bytes());
    };
    let base = v4(dst(1), 1, 64, 18, 0);
    let cases: Vec<(&str, Vec<u8>, Counter)> = vec![
        ("TTL 1", v4(dst(1), 1, 1, 18, 0), Counter::PuntTtl),
        (
            "broadcast MAC",
            with(base.clone(), &|f| f[0..6].fill(0xff)),
            Counter::PuntL2,
        ),
        (
            "another host's MAC",
            with(base.clone(), &|f| f[5] = 9),
            Counter::PuntL2,
        ),
        (
            "group source MAC",
            with(base.clone(), &|f| f[6] = 3),
            Counter::PuntL2,
        ),
        (
            "ARP",
            with(base.clone(), &|f| f[12..14].copy_from_slice(&[8, 6])),
            Counter::PuntNotIp,
        ),
        (
            "802.1Q",
            with(base.clone(), &|f| f[12..14].copy_from_slice(&[0x81, 0])),
            Counter::PuntNotIp,
        ),
        (
            "bad checksum",
            with(base.clone(), &|f| f[24] ^= 1),
            Counter::PuntHeader,
        ),
        (
            "options",
            with(base.clone(), &|f| {
                f[14] = 0x46;
                fix4(f)
            }),
            Counter::PuntHeader,
        ),
        ("truncated", base[..14 + 19].to_vec(), Counter::PuntHeader),
        (
            "length beyond the frame",
            with(base.clone(), &|f| {
                f[17] += 1;
                fix4(f)
            }),
            Counter::PuntHeader,
        ),
        (
            "martian source",
            with(base.clone(), &|f| {
                f[26] = 127;
                fix4(f)
            }),
            Counter::PuntHeader,
        ),
        (
            "multicast destination",
            v4(Ipv4Addr::new(224, 0, 0, 5), 1, 64, 18, 0),
            Counter::PuntHeader,
        ),
        (
            "no route",
            v4(Ipv4Addr::new(198, 18, 200, 1), 1, 64, 18, 0),
            Counter::PuntNoRoute,
        ),
        (
            "unresolved neighbour",
            v4(dst(2), 1, 64, 18, 0),
            Counter::PuntNeigh,
        ),
        (
            "stale neighbour",
            v4(dst(3), 1, 64, 18, 0),
            Counter::PuntNeigh,
        ),
        (
            "for the router",
            v4(dst(4), 1, 64, 18, 0),
            Counter::PuntLocal,
        ),
        (
            "connected host",
            v4(dst(5), 1, 64, 18, 0),
            Counter::PuntConnected,
        ),
        (
            "blackhole",
            v4(dst(6), 1, 64, 18, 0),
            Counter::PuntBlackhole,
        ),
        (
            "beyond the MTU",
            v4(dst(1), 1, 64, 1500 - 28 + 1, 0),
            Counter::PuntMtu,
        ),
        (
            "IPv6 hop limit 1",
            v6("2001:2::9".parse().unwrap(), 1, 1, 18),
            Counter::PuntTtl,
        ),
        (
            "IPv6 link-local",
            v6("fe80::9".parse().unwrap(), 1, 64, 18),
            Counter::PuntHeader,
        ),
        (
            "IPv6 hop-by-hop",
            with(v6("2001:2::9".parse().unwrap(), 1, 64, 18), &|f| f[20] = 0),
            Counter::PuntHeader,
        ),
        (
            "IPv6 zero payload length",
            with(v6("2001:2::9".parse().unwrap(), 1, 64, 18), &|f| {
                f[18..20].fill(0)
            }),
            Counter::PuntHeader,
        ),
        (
            "IPv6 beyond the MTU",
            v6("2001:2::9".parse().unwrap(), 1, 64, 1500 - 48 + 1),
            Counter::PuntMtu,
        ),
    ];
    for (what, f, reason) in &cases {
        let before = b.counters(0);
        let (act, out) = b.run(f);
        assert_eq!(
            act,
            bpf::XDP_PASS,
            "{what}: punted (no socket: to the stack)"
        );
        assert_eq!(&out, f, "{what}: unchanged");
        let after = b.counters(0);
        assert_eq!(
            after.get(*reason),
            before.get(*reason) + 1,
            "{what}: counted as {reason:?}"
        );
        assert_eq!(after.punted(), before.punted() + 1, "{what}: counted once");
    }
    // The forwardable frame is forwarded, so the punts above are the edits'.
    assert_eq!(b.run(&base).0, bpf::XDP_REDIRECT);
    // A reachable neighbour confirmed longer ago than the reachable time
    // is the workers' (they probe it).
    b.fp.set_clock(Clock {
        epoch_ns: Clock::monotonic_ns(),
        offset_ms: 60_000,
        reachable_ms: 30_000,
    });
    assert_eq!(b.run(&base).0, bpf::XDP_PASS);
    assert_eq!(b.counters(0).get(Counter::PuntNeigh), 3);
    // An egress port that cannot take XDP frames: through the workers.
    b.fp.set_clock(Clock {
        epoch_ns: Clock::monotonic_ns(),
        offset_ms: 0,
        reachable_ms: 30_000,
    });
    b.port(2, port_mac(2), 0);
    b.port(0, ROUTER_MAC, PORT_XDP_TX);
    assert_eq!(b.run(&v4(dst(7), 1, 64, 18, 0)).0, bpf::XDP_PASS);
    assert_eq!(b.counters(0).get(Counter::PuntEgress), 1);
    assert_eq!(b.run(&base).0, bpf::XDP_REDIRECT);
}

/// `[kernel] local` (PORT_KERNEL_LOCAL): the kernel's stack takes the
/// router's traffic the workers do not answer (TCP, UDP, echo replies,
/// even at TTL 1, as eBGP and OSPF send it), ARP, ND, multicast and
/// link-local unicast; echo requests stay the workers'; forwarding does
/// not change. Without the flag the same frames are punted as before.
#[test]
fn kernel_local_passes_the_kernels_share_and_keeps_echo() {
    if !root("kernel_local_passes_the_kernels_share_and_keeps_echo") {
        return;
    }
    let mut b = Bed::new(16, 64);
    let gw = b.gateway(1, STATE_REACHABLE);
    let local = b.other(NextHopKind::Local);
    b.w4.insert(p4("198.19.1.0/24"), Target::next_hop(gw))
        .unwrap();
    b.w4.insert(p4("198.18.0.1/32"), Target::next_hop(local))
        .unwrap();
    b.w6.insert(p6("2001:2::1/128"), Target::next_hop(local))
        .unwrap();
    let me = Ipv4Addr::new(198, 18, 0, 1);
    let me6: Ipv6Addr = "2001:2::1".parse().unwrap();
    // IPv4 with protocol `proto`, the first two bytes after the header
    // being `word` (ICMP type and code).
    let v4p = |proto: u8, word: u16, ttl: u8| {
        let mut f = v4(me, word, ttl, 18, 0);
        f[14 + 9] = proto;
        f[24..26].fill(0);
        let c = checksum(&f[14..34]);
        f[24..26].copy_from_slice(&c.to_be_bytes());
        f
    };
    let v6p = |dst: Ipv6Addr, next: u8, word: u16| {
        let mut f = v6(dst, word, 64, 18);
        f[14 + 6] = next;
        f
    };
    let multicast = |mut f: Vec<u8>, mac: [u8; 6]| {
        f[0..6].copy_from_slice(&mac);
        f
    };
    let mut arp = v4(me, 1, 64, 18, 0);
    arp[12..14].copy_from_slice(&[8, 6]);
    let ospf = {
        let mut f = v4(Ipv4Addr::new(224, 0, 0, 5), 1, 1, 18, 0);
        f[14 + 9] = 89;
        f[24..26].fill(0);
        let c = checksum(&f[14..34]);
        f[24..26].copy_from_slice(&c.to_be_bytes());
        multicast(f, [1, 0, 0x5e, 0, 0, 5])
    };
    let kernel: Vec<(&str, Vec<u8>, Counter)> = vec![
        ("TCP (BGP)", v4p(6, 179, 64), Counter::PuntLocal),
        ("TCP at TTL 1 (eBGP)", v4p(6, 179, 1), Counter::PuntTtl),
        ("UDP", v4p(17, 5000, 64), Counter::PuntLocal),
        ("echo reply", v4p(1, 0, 64), Counter::PuntLocal),
        (
            "ARP request",
            multicast(arp.clone(), [0xff; 6]),
            Counter::PuntL2,
        ),
        ("ARP reply", arp, Counter::PuntNotIp),
        ("OSPF hello", ospf, Counter::PuntL2),
        ("IPv6 TCP", v6p(me6, 6, 179), Counter::PuntLocal),
        (
            "IPv6 NS",
            multicast(
                v6p("ff02::1:ff00:1".parse().unwrap(), 58, 135 << 8),
                [0x33, 0x33, 0xff, 0, 0, 1],
            ),
            Counter::PuntL2,
        ),
        (
            "IPv6 link-local unicast",
            v6p("fe80::1".parse().unwrap(), 6, 179),
            Counter::PuntHeader,
        ),
    ];
    let workers: Vec<(&str, Vec<u8>, Counter)> = vec![
        ("echo request", v4p(1, 8 << 8, 64), Counter::PuntLocal),
        (
            "IPv6 echo request",
            v6p(me6, 58, 128 << 8),
            Counter::PuntLocal,
        ),
        (
            "another host's MAC",
            multicast(v4p(6, 179, 64), [2, 0, 0, 0, 0, 9]),
            Counter::PuntL2,
        ),
    ];
    for flags in [PORT_XDP_TX, PORT_XDP_TX | PORT_KERNEL_LOCAL] {
        b.port(0, ROUTER_MAC, flags);
        let on = flags & PORT_KERNEL_LOCAL != 0;
        for (what, f, reason) in kernel.iter().chain(&workers) {
            let to_kernel = on && kernel.iter().any(|k| k.0 == *what);
            let before = b.counters(0);
            let (act, out) = b.run(f);
            assert_eq!(act, bpf::XDP_PASS, "{what}");
            assert_eq!(&out, f, "{what}: unchanged");
            let after = b.counters(0);
            let (k, p) = (Counter::ToKernel, *reason);
            assert_eq!(
                (after.get(k) - before.get(k), after.get(p) - before.get(p)),
                if to_kernel { (1, 0) } else { (0, 1) },
                "{what}, kernel local {on}: to the kernel, else punted as {reason:?}"
            );
        }
        let (act, _) = b.run(&v4(Ipv4Addr::new(198, 19, 1, 9), 1, 64, 18, 0));
        assert_eq!(act, bpf::XDP_REDIRECT, "kernel local {on}: forwarding");
    }
}

/// Random routes (next hops and ECMP groups) and destinations: every
/// forwarded frame took the route and member the workers would take
/// (`fib` lookup, `resolve` with the dataplane's flow hash), and a frame
/// is punted exactly when the workers have no gateway route for it.
#[test]
fn random_routes_and_flows_take_the_workers_next_hop() {
    if !root("random_routes_and_flows_take_the_workers_next_hop") {
        return;
    }
    let mut b = Bed::new(256, 1024);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    let hops: Vec<NextHopId> = (0..24)
        .map(|i| b.gateway(1 + (i % 2) as u16, STATE_REACHABLE))
        .collect();
    let mut targets: Vec<Target> = hops.iter().map(|&h| Target::next_hop(h)).collect();
    for n in [2usize, 3, 5, 8] {
        let members: Vec<NextHopId> = (0..n).map(|i| hops[(i * 5 + n) % hops.len()]).collect();
        targets.push(Target::group(b.nhw.add_group(&members).unwrap()));
    }
    for _ in 0..400 {
        let len = rng.gen_range(8..=32u8);
        let a = 0xc612_0000u32 | rng.gen_range(0..0x2_0000u32);
        let a = if rng.gen_bool(0.5) {
            a
        } else {
            unicast(&mut rng)
        };
        let t = targets[rng.gen_range(0..targets.len())];
        b.w4.insert(Prefix4::new(Ipv4Addr::from(a), len).unwrap(), t)
            .unwrap();
        let len6 = rng.gen_range(16..=64u8);
        let a6 = (0x2001_0002u128 << 96) | u128::from(rng.gen::<u64>()) << 32;
        b.w6.insert(Prefix6::new(Ipv6Addr::from(a6), len6).unwrap(), t)
            .unwrap();
    }
    let (mut fwd, mut punt) = (0, 0);
    for i in 0..3000u32 {
        let sport = rng.gen::<u16>();
        let (f, want) = if i % 2 == 0 {
            let d = if rng.gen_bool(0.7) {
                0xc612_0000u32 | rng.gen_range(0..0x2_0000u32)
            } else {
                unicast(&mut rng)
            };
            let f = v4(Ipv4Addr::from(d), sport, 64, 18, 0);
            let want = b.r4.lookup(d).map(|t| {
                b.nhr
                    .resolve(t, fib::flow_hash_v4(0xc612_0002, d, 17, sport, 7))
            });
            (f, want)
        } else {
            let d = (0x2001_0002u128 << 96) | u128::from(rng.gen::<u64>()) << 32 | 9;
            let src = u128::from("2001:2::2".parse::<Ipv6Addr>().unwrap());
            let f = v6(Ipv6Addr::from(d), sport, 64, 18);
            let want =
                b.r6.lookup(d)
                    .map(|t| b.nhr.resolve(t, fib::flow_hash_v6(src, d, 17, sport, 7)));
            (f, want)
        };
        let (act, out) = b.run(&f);
        match want {
            Some(id) => {
                assert_eq!(act, bpf::XDP_REDIRECT, "frame {i}");
                assert_eq!(out[0..6], neigh_mac(id.0), "frame {i}: next hop");
                let port = b.nhr.get(id).port as u32;
                assert_eq!(out[6..12], port_mac(port), "frame {i}: egress port");
                fwd += 1;
            }
            None => {
                assert_eq!(act, bpf::XDP_PASS, "frame {i}");
                punt += 1;
            }
        }
    }
    assert!(fwd > 1000 && punt > 100, "{fwd} forwarded, {punt} punted");
    assert_eq!(b.counters(0).get(Counter::PuntNoRoute), punt);
}

/// A random forwardable IPv4 destination (not 0/8, 127/8 or beyond 223/8).
fn unicast(rng: &mut impl Rng) -> u32 {
    loop {
        let a = rng.gen_range(0x0100_0000..0xe000_0000u32);
        if a >> 24 != 127 {
            return a;
        }
    }
}

/// What the writer retires is reused only after the kernel's grace period
/// for the program ([`fastpath::grace_period`]).
#[test]
fn retired_groups_are_reused_after_the_kernels_grace_period() {
    if !root("retired_groups_are_reused_after_the_kernels_grace_period") {
        return;
    }
    let mut b = Bed::new(1, 1);
    let id = b.gateway(1, STATE_REACHABLE);
    let kernel = fib::ExternalReader::new(&b.r4, &b.r6, &b.nhr);
    b.w4.insert(p4("198.19.1.0/25"), Target::next_hop(id))
        .unwrap();
    b.w4.remove(p4("198.19.1.0/25")).unwrap();
    b.r4.quiescent();
    assert!(b
        .w4
        .insert(p4("198.19.2.0/25"), Target::next_hop(id))
        .is_err());
    fastpath::grace_period(&kernel).expect("membarrier");
    b.w4.insert(p4("198.19.2.0/25"), Target::next_hop(id))
        .unwrap();
    assert_eq!(
        b.run(&v4(Ipv4Addr::new(198, 19, 2, 1), 1, 64, 18, 0)).0,
        bpf::XDP_REDIRECT
    );
}

/// Random damage to valid frames (bytes flipped, cut short, grown): the
/// program never panics the verifier's way (every run returns), every
/// frame is either punted unchanged and counted once, or forwarded exactly
/// as the workers would forward that frame: checksum valid before and
/// after, TTL / hop limit above 1 and decremented, the workers' next hop.
#[test]
fn damaged_frames_are_punted_or_forwarded_correctly() {
    if !root("damaged_frames_are_punted_or_forwarded_correctly") {
        return;
    }
    let mut b = Bed::new(16, 64);
    let id = b.gateway(1, STATE_REACHABLE);
    b.w4.insert(p4("198.16.0.0/12"), Target::next_hop(id))
        .unwrap();
    b.w6.insert(p6("2001:2::/32"), Target::next_hop(id))
        .unwrap();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
    let seeds = [
        v4(Ipv4Addr::new(198, 19, 0, 2), 9, 64, 18, 0),
        v6("2001:2:0:1::2".parse().unwrap(), 9, 64, 18),
    ];
    let (mut forwarded, mut punted) = (0, 0);
    for i in 0..20_000 {
        let mut f = seeds[i % 2].clone();
        for _ in 0..rng.gen_range(1..4) {
            match rng.gen_range(0..10) {
                // A test run needs an Ethernet header's worth.
                0 => f.truncate(rng.gen_range(14..f.len().max(15))),
                1 => f.extend((0..rng.gen_range(1..40)).map(|_| rng.gen::<u8>())),
                _ if !f.is_empty() => {
                    // Mostly the headers, where the decisions are.
                    let at = rng.gen_range(0..f.len().min(64));
                    f[at] ^= 1 << rng.gen_range(0..8);
                }
                _ => {}
            }
        }
        let before = b.counters(0);
        let (act, out) = b.run(&f);
        let after = b.counters(0);
        match act {
            bpf::XDP_PASS => {
                assert_eq!(out, f, "frame {i}: punted unchanged");
                assert_eq!(
                    after.punted(),
                    before.punted() + 1,
                    "frame {i}: counted once"
                );
                punted += 1;
            }
            bpf::XDP_REDIRECT => {
                assert_eq!(
                    out[0..12],
                    [neigh_mac(id.0), port_mac(1)].concat(),
                    "frame {i}"
                );
                assert_eq!(f[0..6], ROUTER_MAC, "frame {i}: was for the router");
                assert_eq!(f[6] & 1, 0, "frame {i}: unicast source");
                if f[12..14] == [8, 0] {
                    assert_eq!(f[14], 0x45, "frame {i}");
                    assert_eq!(checksum(&f[14..34]), 0, "frame {i}: valid checksum in");
                    assert_eq!(checksum(&out[14..34]), 0, "frame {i}: valid checksum out");
                    let total = usize::from(u16::from_be_bytes([f[16], f[17]]));
                    assert!(f[22] > 1 && out[22] == f[22] - 1, "frame {i}: TTL");
                    assert_eq!(out.len(), 14 + total, "frame {i}: length");
                    let d = u32::from_be_bytes(f[30..34].try_into().unwrap());
                    assert!(b.r4.lookup(d).is_some(), "frame {i}: routed");
                    assert_eq!(out[34..], f[34..14 + total], "frame {i}: payload");
                } else {
                    assert_eq!(f[12..14], [0x86, 0xdd], "frame {i}");
                    assert_eq!(f[14] >> 4, 6, "frame {i}");
                    let plen = usize::from(u16::from_be_bytes([f[18], f[19]]));
                    assert!(plen > 0 && f[21] > 1 && out[21] == f[21] - 1, "frame {i}");
                    assert_eq!(out.len(), 54 + plen, "frame {i}: length");
                    let d = u128::from_be_bytes(f[38..54].try_into().unwrap());
                    assert!(b.r6.lookup(d).is_some(), "frame {i}: routed");
                    assert_eq!(out[22..], f[22..54 + plen], "frame {i}: rest");
                }
                assert_eq!(after.punted(), before.punted(), "frame {i}");
                forwarded += 1;
            }
            other => panic!("frame {i}: action {other}"),
        }
    }
    assert!(
        forwarded > 2000 && punted > 2000,
        "{forwarded} forwarded, {punted} punted"
    );
}

/// The ingress port cache (`in_slots`, one slot per ifindex modulo
/// `IN_SLOTS`) loses an interface to another whose ifindex shares its
/// slot; that interface's frames are still the router's (found in the
/// hash), forwarded and counted on its port. In a network namespace of
/// this thread's own, where a veth end takes ifindex 1 + IN_SLOTS
/// beside loopback's 1.
#[test]
fn an_interface_that_lost_its_cache_slot_is_still_served() {
    if !root("an_interface_that_lost_its_cache_slot_is_still_served") {
        return;
    }
    std::thread::spawn(|| {
        // SAFETY: plain syscall; the namespace is this thread's alone and
        // goes with it.
        assert_eq!(unsafe { libc::unshare(libc::CLONE_NEWNET) }, 0);
        let other = 1 + fastpath::layout::IN_SLOTS as u32;
        let ok = std::process::Command::new("ip")
            .args([
                "link",
                "add",
                "srslot",
                "index",
                &other.to_string(),
                "type",
                "veth",
                "peer",
                "srslot-p",
            ])
            .status()
            .expect("ip");
        assert!(ok.success(), "ip link add ... index {other} type veth");
        let mut b = Bed::new(16, 64);
        let id = b.gateway(2, STATE_REACHABLE);
        b.w4.insert(p4("198.19.0.0/16"), Target::next_hop(id))
            .unwrap();
        let f = v4(Ipv4Addr::new(198, 19, 1, 2), 1000, 64, 18, 0);
        assert_eq!(b.run(&f).0, bpf::XDP_REDIRECT, "port 0 in its slot");
        // Port 1 on the other interface takes slot 1 from loopback (port 0).
        let slot = PortSlot {
            mac: port_mac(1),
            mtu: MTU,
            flags: PORT_XDP_TX,
            _pad: 0,
        };
        b.fp.set_port(1, other, slot).unwrap();
        let (act, out) = b.run(&f);
        assert_eq!(act, bpf::XDP_REDIRECT, "port 0 without its slot");
        assert_eq!(out[6..12], port_mac(2), "through port 2");
        assert_eq!(b.counters(0).get(Counter::RxForwarded), 2);
        assert_eq!(b.counters(1).get(Counter::RxForwarded), 0);
    })
    .join()
    .unwrap();
}

/// The program reads the coarse clock once a jiffy per CPU and keeps it
/// between (`coarse_ns` in `bpf/fwd.bpf.c`): frames a second apart still
/// see a second pass (the neighbour entry's `used_ms` moves on by it).
#[test]
fn the_programs_clock_moves_between_frames() {
    if !root("the_programs_clock_moves_between_frames") {
        return;
    }
    let mut b = Bed::new(16, 64);
    let id = b.gateway(1, STATE_STATIC);
    b.w4.insert(p4("198.19.0.0/16"), Target::next_hop(id))
        .unwrap();
    let f = v4(Ipv4Addr::new(198, 19, 1, 2), 1000, 64, 18, 0);
    b.fp.set_clock(Clock {
        epoch_ns: Clock::monotonic_ns() - 5_000_000_000,
        offset_ms: 0,
        reachable_ms: 30_000,
    });
    assert_eq!(b.run(&f).0, bpf::XDP_REDIRECT);
    let first = b.neigh[id.0 as usize].used_ms.load(Relaxed);
    std::thread::sleep(std::time::Duration::from_millis(1_300));
    assert_eq!(b.run(&f).0, bpf::XDP_REDIRECT);
    let second = b.neigh[id.0 as usize].used_ms.load(Relaxed);
    assert!(
        (1_200..5_000).contains(&(second - first)),
        "used_ms {first} then {second}, 1.3 s later"
    );
}
