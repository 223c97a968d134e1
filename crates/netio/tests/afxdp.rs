//! Live AF_XDP tests on veth pairs inside private network namespaces.
//! Need root; skipped (with a message) otherwise.

mod common;

use common::*;
use netio::afxdp::{AfXdpConfig, AfXdpPort, XdpMode, ZeroCopy};
use netio::{Pool, Port};
use std::time::{Duration, Instant};
use testbed::{require_root, Netns, VethPair};

const N: u32 = 200;
const T: Duration = Duration::from_secs(5);

/// A namespace (IPv6 off, so no ND noise) with a veth pair inside it.
fn setup(queues: u32) -> (Netns, VethPair) {
    let ns = Netns::new("x").expect("netns");
    let _ = ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1");
    let _ = ns.sysctl("net.ipv6.conf.default.disable_ipv6", "1");
    let v = VethPair::new(&ns, &ns, queues).expect("veth");
    (ns, v)
}

fn check_seqs(got: &[Vec<u8>], first: u32, n: u32, pad: usize) {
    let mut seqs: Vec<u32> = got.iter().map(|f| seq_of(f).unwrap()).collect();
    seqs.sort_unstable();
    assert_eq!(
        seqs,
        (first..first + n).collect::<Vec<_>>(),
        "frames lost or duplicated"
    );
    for f in got {
        let s = seq_of(f).unwrap();
        assert_eq!(f, &frame(s, (s % 64) as u16, pad), "frame {s} corrupted");
    }
}

fn roundtrip(mode: XdpMode) {
    let (ns, v) = setup(1);
    let (a, b) = (v.a.clone(), v.b.clone());
    let report = in_netns(ns.name(), move || {
        let mut pool = Pool::new(1024, 2048).unwrap();
        let port = AfXdpPort::open(AfXdpConfig {
            xdp_mode: mode,
            ..AfXdpConfig::new(&a, 2048)
        })
        .expect("open afxdp port");
        assert!(
            has_xdp(&a),
            "program not shown while attached:\n{}",
            ip_link_show(&a)
        );
        assert_eq!(port.info().rx_queues, 1);
        let mut rx = port.open_rx(0, &mut pool).unwrap();
        let mut tx = port.open_tx(0, &mut pool).unwrap();
        assert_eq!(port.tx_paths().shared_rx_socket, 1);
        let peer = RawSock::open(&b);

        // Peer -> AF_XDP.
        for i in 0..N {
            peer.send(&frame(i, (i % 64) as u16, 100));
        }
        let got = recv_from_queue(rx.as_mut(), &mut pool, N as usize, T);
        check_seqs(&got, 0, N, 100);

        // AF_XDP -> peer.
        let bufs = fill_bufs(&mut pool, 1000, N, 300);
        assert_eq!(send_all(tx.as_mut(), &mut pool, &bufs), N as usize);
        let got = peer.recv_test_frames(N as usize, T);
        check_seqs(&got, 1000, N, 300);
        assert_eq!(tx.in_flight(), 0);

        rx.release(&mut pool);
        tx.release(&mut pool);
        assert_eq!(pool.available(), pool.frames() as usize, "buffers leaked");
        let desc = port.describe();
        assert_ne!(port.mode(), XdpMode::Auto);
        drop((rx, tx));
        drop(port);
        assert!(
            !has_xdp(&a),
            "program still attached after drop:\n{}",
            ip_link_show(&a)
        );
        desc
    });
    eprintln!("{report}");
}

#[test]
fn afxdp_generic_roundtrip() {
    if !require_root("afxdp_generic_roundtrip") {
        return;
    }
    roundtrip(XdpMode::Generic);
}

#[test]
fn afxdp_native_roundtrip() {
    if !require_root("afxdp_native_roundtrip") {
        return;
    }
    roundtrip(XdpMode::Native);
}

#[test]
fn afxdp_auto_roundtrip() {
    if !require_root("afxdp_auto_roundtrip") {
        return;
    }
    roundtrip(XdpMode::Auto);
}

/// Two workers (two pools) each receive on one queue of a 2-queue veth and
/// transmit on their own socket; `finish()` detaches the program even while
/// queues are still open.
#[test]
fn afxdp_two_queues_two_workers() {
    if !require_root("afxdp_two_queues_two_workers") {
        return;
    }
    for mode in [XdpMode::Native, XdpMode::Generic] {
        two_queues(mode);
    }
}

fn two_queues(mode: XdpMode) {
    let (ns, v) = setup(2);
    let (a, b) = (v.a.clone(), v.b.clone());
    let counts = in_netns(ns.name(), move || {
        let port = AfXdpPort::open(AfXdpConfig {
            xdp_mode: mode,
            ..AfXdpConfig::new(&a, 2048)
        })
        .expect("open");
        assert_eq!(port.real_queues(), 2);
        assert_eq!(port.info().rx_queues, 2);
        // 1024 frames: 256 on each fill ring, room for all N on one queue.
        let mut pools = [
            Pool::new(1024, 2048).unwrap(),
            Pool::new(1024, 2048).unwrap(),
        ];
        let mut rxs = Vec::new();
        let mut txs = Vec::new();
        for (w, pool) in pools.iter_mut().enumerate() {
            rxs.push(port.open_rx(w as u16, pool).unwrap());
            txs.push(port.open_tx(w, pool).unwrap());
        }
        assert_eq!(port.tx_paths().shared_rx_socket, 2);
        let peer = RawSock::open(&b);
        for i in 0..N {
            peer.send(&frame(i, (i % 64) as u16, 50));
        }
        let mut got = Vec::new();
        let mut counts = [0usize; 2];
        let end = Instant::now() + T;
        while got.len() < N as usize && Instant::now() < end {
            for w in 0..2 {
                let g = recv_from_queue(
                    rxs[w].as_mut(),
                    &mut pools[w],
                    64,
                    Duration::from_millis(20),
                );
                counts[w] += g.len();
                got.extend(g);
            }
        }
        check_seqs(&got, 0, N, 50);

        for w in 0..2 {
            let bufs = fill_bufs(&mut pools[w], 10_000 * (w as u32 + 1), N, 10);
            assert_eq!(send_all(txs[w].as_mut(), &mut pools[w], &bufs), N as usize);
        }
        let got = peer.recv_test_frames(2 * N as usize, T);
        assert_eq!(got.len(), 2 * N as usize);
        port.finish().unwrap();
        assert!(!has_xdp(&a), "finish() left the program attached");
        for (w, pool) in pools.iter_mut().enumerate() {
            rxs[w].release(pool);
            txs[w].release(pool);
            assert_eq!(
                pool.available(),
                pool.frames() as usize,
                "worker {w} leaked"
            );
        }
        counts
    });
    eprintln!("2-queue veth, {mode} XDP: frames per RX queue {counts:?}");
}

/// One queue, two workers: worker 1 has no socket of its own and gets the
/// AF_PACKET TX path. With `queues = 1` on a 2-queue veth, worker 1 gets a
/// TX-only AF_XDP socket on queue 1 instead.
#[test]
fn afxdp_tx_fallbacks() {
    if !require_root("afxdp_tx_fallbacks") {
        return;
    }
    for (veth_queues, expect_tx_only) in [(1, false), (2, true)] {
        let (ns, v) = setup(veth_queues);
        let (a, b) = (v.a.clone(), v.b.clone());
        in_netns(ns.name(), move || {
            let port = AfXdpPort::open(AfXdpConfig {
                queues: Some(1),
                ..AfXdpConfig::new(&a, 2048)
            })
            .expect("open");
            let mut p0 = Pool::new(512, 2048).unwrap();
            let mut p1 = Pool::new(512, 2048).unwrap();
            let mut rx0 = port.open_rx(0, &mut p0).unwrap();
            let mut tx0 = port.open_tx(0, &mut p0).unwrap();
            let mut tx1 = port.open_tx(1, &mut p1).unwrap();
            let paths = port.tx_paths();
            assert_eq!(paths.shared_rx_socket, 1);
            assert_eq!(paths.tx_only_socket, expect_tx_only as u32, "{paths:?}");
            assert_eq!(paths.af_packet, !expect_tx_only as u32, "{paths:?}");
            let peer = RawSock::open(&b);
            let bufs = fill_bufs(&mut p1, 0, N, 64);
            assert_eq!(send_all(tx1.as_mut(), &mut p1, &bufs), N as usize);
            let bufs = fill_bufs(&mut p0, N, N, 64);
            assert_eq!(send_all(tx0.as_mut(), &mut p0, &bufs), N as usize);
            let got = peer.recv_test_frames(2 * N as usize, T);
            check_seqs(&got, 0, 2 * N, 64);
            rx0.release(&mut p0);
            tx0.release(&mut p0);
            tx1.release(&mut p1);
            assert_eq!(p0.available(), 512);
            assert_eq!(p1.available(), 512);
        });
    }
}

/// One worker receives on two ports with one pool: the second socket binds
/// with XDP_SHARED_UMEM. Frames received on one port are forwarded out of
/// the other without a copy.
#[test]
fn afxdp_two_ports_share_one_umem() {
    if !require_root("afxdp_two_ports_share_one_umem") {
        return;
    }
    let ns = Netns::new("x").expect("netns");
    let _ = ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1");
    let _ = ns.sysctl("net.ipv6.conf.default.disable_ipv6", "1");
    let v1 = VethPair::new(&ns, &ns, 1).expect("veth");
    let v2 = VethPair::new(&ns, &ns, 1).expect("veth");
    let (a1, b1, a2, b2) = (v1.a.clone(), v1.b.clone(), v2.a.clone(), v2.b.clone());
    in_netns(ns.name(), move || {
        let mut pool = Pool::new(1024, 2048).unwrap();
        let p1 = AfXdpPort::open(AfXdpConfig::new(&a1, 2048)).expect("port 1");
        let p2 = AfXdpPort::open(AfXdpConfig::new(&a2, 2048)).expect("port 2");
        let mut rx1 = p1.open_rx(0, &mut pool).unwrap();
        let owner = pool.umem_owner().expect("first socket registered the UMEM");
        let mut rx2 = p2.open_rx(0, &mut pool).unwrap();
        let owner2 = pool.umem_owner().unwrap();
        assert!(
            std::sync::Arc::ptr_eq(&owner, &owner2),
            "second socket re-registered"
        );
        drop((owner, owner2));
        let mut tx1 = p1.open_tx(0, &mut pool).unwrap();
        let mut tx2 = p2.open_tx(0, &mut pool).unwrap();
        let (peer1, peer2) = (RawSock::open(&b1), RawSock::open(&b2));
        for i in 0..N {
            peer1.send(&frame(i, 1, 20));
        }
        // Forward port 1 -> port 2 in place.
        let mut moved = 0;
        let end = Instant::now() + T;
        let mut burst = netio::Burst::new();
        while moved < N as usize && Instant::now() < end {
            // A maximum below the burst size: the ring is peeked for no more.
            let n = rx1.rx_burst(&mut pool, &mut burst, 7);
            assert!(n <= 7 && burst.len() == n, "{n} frames for a maximum of 7");
            if n == 0 {
                netio::poll_in(rx1.wait_fd().unwrap(), 20);
                continue;
            }
            let k = tx2.tx_burst(&mut pool, burst.as_slice());
            pool.free_all(&burst.as_slice()[k..]);
            moved += burst.len();
            burst.clear();
            tx2.flush(&mut pool);
        }
        while tx2.in_flight() > 0 && Instant::now() < end {
            tx2.flush(&mut pool);
        }
        let got = peer2.recv_test_frames(N as usize, T);
        assert_eq!(got.len(), N as usize);
        // And the other way, to check port 2's RX on the shared UMEM.
        for i in 0..N {
            peer2.send(&frame(i, 2, 20));
        }
        let got = recv_from_queue(rx2.as_mut(), &mut pool, N as usize, T);
        assert_eq!(got.len(), N as usize);
        let _ = peer1;
        for q in [&mut rx1, &mut rx2] {
            q.release(&mut pool);
        }
        for q in [&mut tx1, &mut tx2] {
            q.release(&mut pool);
        }
        assert_eq!(pool.available(), pool.frames() as usize);
    });
}

#[test]
fn afxdp_second_program_is_busy() {
    if !require_root("afxdp_second_program_is_busy") {
        return;
    }
    let (ns, v) = setup(1);
    let a = v.a.clone();
    in_netns(ns.name(), move || {
        let _p = AfXdpPort::open(AfXdpConfig::new(&a, 2048)).expect("open");
        let e = AfXdpPort::open(AfXdpConfig::new(&a, 2048))
            .err()
            .expect("second attach must fail")
            .to_string();
        assert!(e.contains("busy"), "{e}");
        eprintln!("second attach: {e}");
    });
}

#[test]
fn afxdp_missing_interface_is_named() {
    let e = AfXdpPort::open(AfXdpConfig::new("srnosuch0", 2048))
        .err()
        .expect("must fail")
        .to_string();
    assert!(e.contains("srnosuch0") && e.contains("not found"), "{e}");
}

#[test]
fn afxdp_zero_copy_on_veth() {
    if !require_root("afxdp_zero_copy_on_veth") {
        return;
    }
    let (ns, v) = setup(1);
    let a = v.a.clone();
    let r = in_netns(ns.name(), move || {
        let mut pool = Pool::new(256, 2048).unwrap();
        let port = AfXdpPort::open(AfXdpConfig {
            zero_copy: ZeroCopy::On,
            ..AfXdpConfig::new(&a, 2048)
        })
        .expect("open");
        match port.open_rx(0, &mut pool) {
            Ok(mut q) => {
                q.release(&mut pool);
                format!("zero-copy bound: {}", port.describe())
            }
            Err(e) => format!("zero-copy refused: {e}"),
        }
    });
    eprintln!("veth {r}");
}

/// Queues must be opened from the port's namespace: from another one the
/// interface index could name a different device.
#[test]
fn afxdp_queue_from_other_namespace_is_refused() {
    if !require_root("afxdp_queue_from_other_namespace_is_refused") {
        return;
    }
    let (ns, v) = setup(1);
    let a = v.a.clone();
    let port = in_netns(ns.name(), move || {
        AfXdpPort::open(AfXdpConfig::new(&a, 2048)).expect("open")
    });
    let mut pool = Pool::new(256, 2048).unwrap();
    let e = port
        .open_rx(0, &mut pool)
        .err()
        .expect("must fail")
        .to_string();
    assert!(e.contains("namespace"), "{e}");
    assert_eq!(pool.available(), 256);
}

/// Counts test frames in `rx` (waiting up to `quiet` after the last one),
/// freeing every buffer.
fn drain_count(rx: &mut dyn netio::RxQueue, pool: &mut Pool, quiet: Duration) -> usize {
    let mut n = 0;
    let mut last = Instant::now();
    let mut burst = netio::Burst::new();
    while last.elapsed() < quiet {
        if rx.rx_burst(pool, &mut burst, netio::BURST_SIZE) == 0 {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        n += burst
            .as_slice()
            .iter()
            .filter(|b| seq_of(pool.data(**b)).is_some())
            .count();
        pool.free_all(burst.as_slice());
        burst.clear();
        last = Instant::now();
    }
    n
}

/// A burst into a socket nobody reads: the kernel drops, and the queue's
/// counters (`XDP_STATISTICS`) say why. With a fill ring deeper than the RX
/// ring the RX ring fills (`xdp_rx_ring_full`); with a shallow fill ring
/// the kernel finds no free frame (`xdp_rx_dropped`, and
/// `xdp_rx_fill_ring_empty_descs` as the event). Every frame sent is
/// either received or counted. Then frames left in the ring at release
/// are counted (`rx_unread_at_shutdown`).
#[test]
fn afxdp_kernel_drops_are_counted() {
    if !require_root("afxdp_kernel_drops_are_counted") {
        return;
    }
    use netio::QueueCounter as Q;
    for (rx_ring, fill_ring, reason) in [(64, 256, Q::XdpRxRingFull), (256, 64, Q::XdpRxDropped)] {
        let (ns, v) = setup(1);
        let (a, b) = (v.a.clone(), v.b.clone());
        in_netns(ns.name(), move || {
            let mut pool = Pool::new(1024, 2048).unwrap();
            let port = AfXdpPort::open(AfXdpConfig {
                xdp_mode: XdpMode::Generic,
                rx_ring,
                fill_ring,
                ..AfXdpConfig::new(&a, 2048)
            })
            .expect("open afxdp port");
            let mut rx = port.open_rx(0, &mut pool).unwrap();
            let peer = RawSock::open(&b);
            let sent = 2000u32;
            for i in 0..sent {
                peer.send(&frame(i, (i % 64) as u16, 100));
            }
            std::thread::sleep(Duration::from_millis(200));
            let before = rx.counters();
            let got = drain_count(rx.as_mut(), &mut pool, Duration::from_millis(300));
            let c = rx.counters();
            eprintln!("rx_ring {rx_ring} fill {fill_ring}: received {got} of {sent}, {c:?}");
            assert!(c.get(reason) > 0, "{reason:?} counted: {c:?}");
            assert_eq!(before.get(reason), c.get(reason), "cumulative, not reset");
            let lost = c.total(netio::CounterKind::RxDrop);
            assert_eq!(
                got as u64 + lost,
                u64::from(sent),
                "every frame received or counted"
            );
            if reason == Q::XdpRxDropped {
                assert!(c.get(Q::XdpRxFillRingEmptyDescs) > 0, "{c:?}");
            }
            assert_eq!(
                port.rx_stats(0).map(|s| s.rx_ring_full),
                Some(c.get(Q::XdpRxRingFull))
            );

            // Frames the worker never read when it stopped.
            for i in 0..10 {
                peer.send(&frame(i, 0, 100));
            }
            std::thread::sleep(Duration::from_millis(100));
            rx.release(&mut pool);
            assert_eq!(rx.counters().get(Q::RxUnreadAtShutdown), 10);
            assert_eq!(pool.available(), pool.frames() as usize, "buffers leaked");
        });
    }
}

/// An interface whose MTU is larger than the UMEM frames can hold is
/// rejected when its queue opens, with a message that says what to change.
#[test]
fn afxdp_mtu_larger_than_frames_is_rejected() {
    if !require_root("afxdp_mtu_larger_than_frames_is_rejected") {
        return;
    }
    let (ns, v) = setup(1);
    let a = v.a.clone();
    ns.ip(&["link", "set", "dev", &a, "mtu", "3000"]).unwrap();
    in_netns(ns.name(), move || {
        let mut pool = Pool::new(256, 2048).unwrap();
        let port = AfXdpPort::open(AfXdpConfig {
            xdp_mode: XdpMode::Generic,
            ..AfXdpConfig::new(&a, 2048)
        })
        .expect("open afxdp port");
        let e = port
            .open_rx(0, &mut pool)
            .err()
            .expect("rejected")
            .to_string();
        assert!(e.contains("MTU 3000") && e.contains("frame_size"), "{e}");
    });
}
