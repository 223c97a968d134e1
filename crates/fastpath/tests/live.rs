//! The XDP fast path on a live veth wire, and side by side with the Linux
//! kernel forwarding on the same wire.
//!
//! ```text
//!  tester ns                 DUT ns
//!  a0 (generator) ------> d0   [fast path, or kernel forwarding]
//!  a1 (counter)   <------ d1
//! ```
//!
//! The generator and counter are the bench's (softrouter-tester): XDP
//! live frames out of a0, an XDP counter on a1. The DUT's receive work
//! (d0's NAPI thread) runs on CPU 0, the tester's on CPU 1.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::mpsc;
use std::time::Duration;

use dataplane::neighbor::layout::{STATE_SHIFT, STATE_STATIC};
use fastpath::{Clock, FastPath, PortSlot, Sizes, PORT_XDP_TX};
use fib::memory::Region;
use fib::{lpm4, lpm6, Lpm4Config, Lpm6Config, NextHop, NextHopKind, NextHopTable, Target};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use testbed::napi::{thread_napi, NapiPolicy};
use testbed::{Netns, VethPair};
use tester::count::Counter;
use tester::gen::{Frame, Generator, Phase, Plan, Port};

struct Wire {
    tns: Netns,
    dns: Netns,
    v0: VethPair,
    v1: VethPair,
}

impl Wire {
    fn new() -> Wire {
        let tns = Netns::new("fpt").unwrap();
        let dns = Netns::new("fpd").unwrap();
        let v0 = VethPair::new(&tns, &dns, 1).unwrap();
        let v1 = VethPair::new(&dns, &tns, 1).unwrap();
        Wire { tns, dns, v0, v1 }
    }

    fn mac(&self, ns: &Netns, dev: &str) -> [u8; 6] {
        testbed::link::read_mac(Some(ns.name()), dev).unwrap()
    }
}

fn enter(ns: &Netns) {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(format!("/run/netns/{}", ns.name())).unwrap();
    // SAFETY: setns on a valid netns fd; affects this thread only.
    assert_eq!(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) }, 0);
}

fn ifindex(name: &str) -> u32 {
    let c = std::ffi::CString::new(name).unwrap();
    // SAFETY: valid C string.
    unsafe { libc::if_nametoindex(c.as_ptr()) }
}

/// The ifindexes of `names` in namespace `ns`.
fn indexes_in(ns: &Netns, names: &[&String]) -> Vec<u32> {
    std::thread::scope(|s| {
        s.spawn(|| {
            enter(ns);
            names.iter().map(|n| ifindex(n)).collect()
        })
        .join()
        .unwrap()
    })
}

fn pin(cpu: usize) {
    // SAFETY: pinning this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// The fast path serving d0 (port 0) and d1 (port 1), with 198.19.0.0/16
/// through a STATIC neighbour at a1's MAC, counting egress drops
/// (`watch_egress`); runs in the DUT namespace until `stop` says so.
/// `aliases`: more ports (2, 3, ...) at these ifindexes, for interfaces
/// of other namespaces whose indexes a router port could have. Returns
/// every port's counters.
fn fast_path_dut(
    w: &Wire,
    aliases: Vec<u32>,
    ready: mpsc::Sender<()>,
    stop: mpsc::Receiver<()>,
) -> std::thread::JoinHandle<Vec<fastpath::Counters>> {
    let (dns, d0, d1) = (w.dns.name().to_string(), w.v0.b.clone(), w.v1.a.clone());
    let (m0, m1, a1) = (
        w.mac(&w.dns, &d0),
        w.mac(&w.dns, &d1),
        w.mac(&w.tns, &w.v1.b),
    );
    std::thread::spawn(move || {
        let f = std::fs::File::open(format!("/run/netns/{dns}")).unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: as in `enter`.
        assert_eq!(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) }, 0);
        let sizes = Sizes {
            lpm4_tbl8_groups: 16,
            lpm6_tbl8_groups: 16,
            next_hops: 16,
            groups: 1,
            group_members: 1,
        };
        let mut fp = FastPath::load(sizes).unwrap();
        let mut mem = fp.memory();
        let (mut w4, _r4) = lpm4::new_in(Lpm4Config { tbl8_groups: 16 }, &mut mem).unwrap();
        let (_w6, _r6) = lpm6::new_in(Lpm6Config { tbl8_groups: 16 }, &mut mem).unwrap();
        let (mut nhw, _nhr) = NextHopTable::with_capacity_in(16, 1, 1, &mut mem).unwrap();
        let neigh: Region<[AtomicU64; 8]> = mem.neighbours().unwrap();
        let id = nhw
            .add(NextHop {
                port: 1,
                kind: NextHopKind::Gateway(Ipv4Addr::new(198, 18, 1, 2).into()),
            })
            .unwrap();
        let mac = a1.iter().fold(0u64, |a, &b| a << 8 | u64::from(b));
        neigh[id.0 as usize][0].store(mac | STATE_STATIC << STATE_SHIFT, Relaxed);
        w4.insert("198.19.0.0/16".parse().unwrap(), Target::next_hop(id))
            .unwrap();
        fp.set_clock(Clock {
            epoch_ns: Clock::monotonic_ns(),
            offset_ms: 0,
            reachable_ms: 30_000,
        });
        for (port, dev, mac) in [(1u32, &d1, m1), (0, &d0, m0)] {
            let slot = PortSlot {
                mac,
                mtu: 1500,
                flags: PORT_XDP_TX,
                _pad: 0,
            };
            fp.set_port(port, ifindex(dev), slot).unwrap();
        }
        for (i, &index) in aliases.iter().enumerate() {
            let slot = PortSlot {
                mac: [2, 0, 0, 0, 0, i as u8],
                mtu: 1500,
                flags: 0,
                _pad: 0,
            };
            fp.set_port(2 + i as u32, index, slot).unwrap();
        }
        fp.watch_egress().unwrap();
        fp.attach(&d0, aya::programs::XdpMode::default()).unwrap();
        fp.attach(&d1, aya::programs::XdpMode::default()).unwrap();
        ready.send(()).unwrap();
        let _ = stop.recv();
        (0..2 + aliases.len() as u32)
            .map(|p| fp.counters(p).unwrap())
            .collect()
    })
}

/// `traffic` run through the fast path DUT on `w` (ports at `aliases`
/// too, see [`fast_path_dut`]): its result and every port's counters.
fn with_fast_path<T>(
    w: &Wire,
    aliases: Vec<u32>,
    traffic: impl FnOnce() -> T,
) -> (T, Vec<fastpath::Counters>) {
    let (ready_tx, ready) = mpsc::channel();
    let (stop, stop_rx) = mpsc::channel();
    let dut = fast_path_dut(w, aliases, ready_tx, stop_rx);
    ready.recv().unwrap();
    let out = traffic();
    stop.send(()).unwrap();
    (out, dut.join().unwrap())
}

/// The kernel forwarding on the same wire (GRO on d0 so it takes the
/// generator's XDP frames, as the bench's Linux DUT).
fn kernel_dut(w: &Wire) {
    let (d0, d1) = (&w.v0.b, &w.v1.a);
    let a1 = testbed::link::format_mac(&w.mac(&w.tns, &w.v1.b));
    w.dns.add_addr(d0, "198.18.0.1/24").unwrap();
    w.dns.add_addr(d1, "198.18.1.1/24").unwrap();
    w.dns.set_forwarding(true).unwrap();
    w.dns
        .ip(&[
            "neigh",
            "replace",
            "198.18.1.2",
            "lladdr",
            &a1,
            "dev",
            d1,
            "nud",
            "permanent",
        ])
        .unwrap();
    w.dns.add_route("198.19.0.0/16", "198.18.1.2").unwrap();
    w.dns.run(&["ethtool", "-K", d0, "gro", "on"]).unwrap();
}

/// Send `frames` 64-byte frames (paced at `rate`, or flat out) from a0 to
/// d0 in test-run batches of `batch`, and count them at a1: (sent,
/// received, seconds of sending).
fn send(w: &Wire, frames: u64, rate: Option<f64>, batch: u32) -> (u64, u64, f64) {
    let (a0, a1) = (w.v0.a.clone(), w.v1.b.clone());
    let d0mac = w.mac(&w.dns, &w.v0.b);
    let a0mac = w.mac(&w.tns, &a0);
    thread_napi(&w.dns, &w.v0.b, &[0], NapiPolicy::Fifo(40)).unwrap();
    let tns_ref = &w.tns;
    std::thread::scope(|s| {
        s.spawn(|| {
            pin(1);
            enter(tns_ref);
            let c = Counter::new(1, frames + 1024, &[ifindex(&a1)]).unwrap();
            thread_napi(tns_ref, &a1, &[1], NapiPolicy::Fifo(50)).unwrap();
            let mut g = Generator::new(1, 1).unwrap();
            let flow = packet::test_frame::Flow {
                dst_mac: d0mac,
                src_mac: a0mac,
                src_ip: IpAddr::V4(Ipv4Addr::new(198, 18, 0, 2)),
                dst_ip: IpAddr::V4(Ipv4Addr::new(198, 19, 0, 2)),
                src_port: 1024,
                dst_port: 7,
                stream: 0,
            };
            let mut buf = vec![0u8; 64];
            let l = packet::test_frame::build(&flow, 64, 0, &mut buf).unwrap();
            buf.truncate(l.buf_len);
            g.set_frame(0, 0, &Frame::from_layout(&buf, &l)).unwrap();
            let plan = Plan {
                ports: vec![Port {
                    ifindex: ifindex(&a0),
                    streams: vec![0],
                }],
                phases: vec![Phase {
                    frames,
                    rate_fps: rate,
                }],
                schedule: vec![0],
                batch,
                grace: Duration::from_millis(200),
                lead: Duration::from_millis(1),
                latency_every: tester::gen::latency_every(rate),
                catchup_frames: tester::gen::CATCHUP_FRAMES,
            };
            c.set_latency_every(plan.latency_every).unwrap();
            let sent = g.run(&plan).unwrap();
            c.drain(
                sent.sent,
                Duration::from_millis(5),
                Duration::from_millis(100),
                Duration::from_secs(2),
            );
            let got = c.read(&sent.stream_frames);
            let secs = (sent.last_ns - sent.first_ns) as f64 / 1e9;
            (sent.sent, got.received, secs)
        })
        .join()
        .unwrap()
    })
}

#[test]
fn forwards_on_a_veth_wire_without_loss_at_a_low_rate() {
    if !testbed::require_root("forwards_on_a_veth_wire_without_loss_at_a_low_rate") {
        return;
    }
    // 20 kfps: the DUT's 256-frame ring then holds 12.8 ms, longer than
    // the host's usual pauses of this 2-vCPU VM's vCPUs (up to ~7 ms,
    // several a second on a busy day; at 50 kfps, 5.1 ms, both attempts
    // of one test run lost 25 and 467 frames in the rings). Three times
    // at most, on a fresh wire, and only when every lost frame is one a
    // veth ring refused (never seen by the DUT's program, or counted as
    // refused on egress): a fast path that loses frames itself loses
    // them every time.
    const FRAMES: u64 = 10_000;
    for attempt in 1..=3 {
        let w = Wire::new();
        let ((sent, received, _), c) =
            with_fast_path(&w, Vec::new(), || send(&w, FRAMES, Some(20_000.0), 64));
        let (c0, c1) = (&c[0], &c[1]);
        eprintln!("d0 {c0:?}\nd1 {c1:?}");
        // Every frame the program sent out arrived, or the egress ring
        // refused it and the fast path counted that.
        let egress_accounted =
            received + c1.get(fastpath::Counter::XmitDrops) == c1.get(fastpath::Counter::Tx);
        if attempt < 3 && received < FRAMES && egress_accounted {
            eprintln!("{received} of {sent} came back, the rest lost in a veth ring: once more");
            continue;
        }
        assert_eq!((sent, received), (FRAMES, FRAMES));
        assert_eq!(c0.get(fastpath::Counter::RxForwarded), FRAMES);
        assert_eq!(c1.get(fastpath::Counter::Tx), FRAMES);
        return;
    }
}

/// The egress drop counter counts what the router's own redirects lost,
/// and nothing of another namespace's. The tester's generator redirects
/// out of a0 in the tester's namespace, flat out in batches of 256, so
/// d0's 256-frame ring refuses frames at its flushes. The router has
/// ports at the tester's own ifindexes too (an index means a device only
/// within its namespace, and the bench's namespaces reuse them): before
/// the namespace check, those refusals were counted as the router's
/// egress drops on such a port.
#[test]
fn egress_drops_are_the_routers_own() {
    if !testbed::require_root("egress_drops_are_the_routers_own") {
        return;
    }
    for attempt in 1..=3 {
        let w = Wire::new();
        let tester_indexes = indexes_in(&w.tns, &[&w.v0.a, &w.v1.b]);
        let router_indexes = indexes_in(&w.dns, &[&w.v0.b, &w.v1.a]);
        // A tester index that is a router port's already collides.
        let aliases: Vec<u32> = tester_indexes
            .iter()
            .copied()
            .filter(|i| !router_indexes.contains(i))
            .collect();
        let ((sent, received, _), c) =
            with_fast_path(&w, aliases, || send(&w, 1_000_000, None, 256));
        let drops = |p: usize| c[p].get(fastpath::Counter::XmitDrops);
        let refused_at_d0 = sent - c[0].get(fastpath::Counter::RxForwarded);
        eprintln!(
            "sent {sent}, refused entering d0 {refused_at_d0}, received {received}; \
             egress drops per port {:?}",
            (0..c.len()).map(drops).collect::<Vec<_>>()
        );
        if refused_at_d0 == 0 && attempt < 3 {
            eprintln!("d0 refused nothing: once more");
            continue;
        }
        assert!(refused_at_d0 > 0, "d0's ring never refused a frame");
        for p in 0..c.len() {
            if p != 1 {
                assert_eq!(drops(p), 0, "port {p}: another namespace's drops");
            }
        }
        // Every frame redirected to d1 reached a1 or was counted.
        assert_eq!(c[1].get(fastpath::Counter::Tx), received + drops(1));
        return;
    }
}

/// Flat-out 64 B bursts through the fast path and through the kernel:
/// forwarded frames per second of sending, side by side (prints).
#[test]
#[ignore]
fn fast_path_vs_kernel_flat_out() {
    const N: u64 = 2_000_000;
    let w = Wire::new();
    let (xdp, c) = with_fast_path(&w, Vec::new(), || send(&w, N, None, 64));
    eprintln!("fast path counters (d0, d1): {c:?}");
    std::thread::sleep(Duration::from_millis(200));
    let w = Wire::new();
    kernel_dut(&w);
    let kernel = send(&w, N, None, 64);
    let rate = |(s, r, secs): (u64, u64, f64)| {
        eprintln!(
            "  sent {s} in {secs:.3} s ({:.2} Mfps offered), received {r} ({:.1} %): {:.3} Mpps forwarded",
            s as f64 / secs / 1e6,
            r as f64 * 100.0 / s as f64,
            r as f64 / secs / 1e6
        );
        r as f64 / secs
    };
    eprintln!("fast path:");
    let x = rate(xdp);
    eprintln!("kernel:");
    let k = rate(kernel);
    eprintln!("ratio fast path / kernel: {:.2}", x / k);
}
