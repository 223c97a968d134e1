//! Live AF_PACKET tests on veth pairs inside private network namespaces.
//! Need root; skipped (with a message) otherwise.

mod common;

use common::*;
use netio::afpacket::{AfPacketConfig, AfPacketPort};
use netio::{Pool, Port};
use std::time::{Duration, Instant};
use testbed::{require_root, Netns, VethPair};

const N: u32 = 200;
const T: Duration = Duration::from_secs(5);

fn setup(queues: u32) -> (Netns, VethPair) {
    let ns = Netns::new("p").expect("netns");
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

#[test]
fn afpacket_roundtrip() {
    if !require_root("afpacket_roundtrip") {
        return;
    }
    let (ns, v) = setup(1);
    let (a, b) = (v.a.clone(), v.b.clone());
    in_netns(ns.name(), move || {
        let mut pool = Pool::new(1024, 2048).unwrap();
        let port = AfPacketPort::open(AfPacketConfig::new(&a)).expect("open");
        assert_eq!(port.info().rx_queues, 1);
        assert_eq!(port.info().mtu, 1500);
        let mut rx = port.open_rx(0, &mut pool).unwrap();
        let mut tx = port.open_tx(0, &mut pool).unwrap();
        let peer = RawSock::open(&b);
        for i in 0..N {
            peer.send(&frame(i, (i % 64) as u16, 100));
        }
        let got = recv_from_queue(rx.as_mut(), &mut pool, N as usize, T);
        check_seqs(&got, 0, N, 100);

        let bufs = fill_bufs(&mut pool, 1000, N, 300);
        assert_eq!(send_all(tx.as_mut(), &mut pool, &bufs), N as usize);
        let got = peer.recv_test_frames(N as usize, T);
        check_seqs(&got, 1000, N, 300);
        // PACKET_IGNORE_OUTGOING: our own transmissions never come back.
        let echo = recv_from_queue(rx.as_mut(), &mut pool, 1, Duration::from_millis(100));
        assert!(echo.is_empty(), "RX saw its own TX");
        rx.release(&mut pool);
        tx.release(&mut pool);
        assert_eq!(pool.available(), pool.frames() as usize, "buffers leaked");
        assert_eq!(port.stats().truncated, 0);
    });
}

/// Two fanout sockets (two workers' pools) split the flows; together they
/// see every frame exactly once.
#[test]
fn afpacket_two_fanout_queues() {
    if !require_root("afpacket_two_fanout_queues") {
        return;
    }
    let (ns, v) = setup(1);
    let (a, b) = (v.a.clone(), v.b.clone());
    let counts = in_netns(ns.name(), move || {
        let port = AfPacketPort::open(AfPacketConfig {
            queues: Some(2),
            ..AfPacketConfig::new(&a)
        })
        .expect("open");
        assert_eq!(port.info().rx_queues, 2);
        let mut pools = [Pool::new(512, 2048).unwrap(), Pool::new(512, 2048).unwrap()];
        let mut rxs = Vec::new();
        let mut txs = Vec::new();
        for (w, pool) in pools.iter_mut().enumerate() {
            rxs.push(port.open_rx(w as u16, pool).unwrap());
            txs.push(port.open_tx(w, pool).unwrap());
        }
        assert!(port.fanout_group().is_some());
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
                    N as usize,
                    Duration::from_millis(20),
                );
                counts[w] += g.len();
                got.extend(g);
            }
        }
        check_seqs(&got, 0, N, 50);
        assert!(
            counts[0] > 0 && counts[1] > 0,
            "fanout did not spread 64 flows: {counts:?}"
        );
        for w in 0..2 {
            let bufs = fill_bufs(&mut pools[w], 10_000 * (w as u32 + 1), N, 10);
            assert_eq!(send_all(txs[w].as_mut(), &mut pools[w], &bufs), N as usize);
        }
        let got = peer.recv_test_frames(2 * N as usize, T);
        assert_eq!(got.len(), 2 * N as usize);
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
    eprintln!("afpacket fanout: frames per queue {counts:?}");
}

/// The kernel strips a VLAN tag before packet taps; RX puts it back.
#[test]
fn afpacket_reinserts_vlan_tag() {
    if !require_root("afpacket_reinserts_vlan_tag") {
        return;
    }
    let (ns, v) = setup(1);
    let (a, b) = (v.a.clone(), v.b.clone());
    in_netns(ns.name(), move || {
        let mut pool = Pool::new(256, 2048).unwrap();
        let port = AfPacketPort::open(AfPacketConfig::new(&a)).expect("open");
        let mut rx = port.open_rx(0, &mut pool).unwrap();
        let peer = RawSock::open(&b);
        let plain = frame(7, 7, 40);
        let mut tagged = plain[..12].to_vec();
        tagged.extend_from_slice(&[0x81, 0x00, 0x20, 0x2a]); // PCP 1, VID 42
        tagged.extend_from_slice(&plain[12..]);
        peer.send(&tagged);
        let end = Instant::now() + T;
        let mut burst = netio::Burst::new();
        let mut seen = None;
        while seen.is_none() && Instant::now() < end {
            if rx.rx_burst(&mut pool, &mut burst, netio::BURST_SIZE) == 0 {
                netio::poll_in(rx.wait_fd().unwrap(), 20);
                continue;
            }
            for b in burst.as_slice() {
                let d = pool.data(*b);
                if d.len() == tagged.len() && d[12..14] == [0x81, 0x00] {
                    seen = Some(d.to_vec());
                }
            }
            pool.free_all(burst.as_slice());
            burst.clear();
        }
        assert_eq!(seen.as_deref(), Some(&tagged[..]), "tag not re-inserted");
        assert_eq!(port.stats().vlan_reinserted, 1);
        rx.release(&mut pool);
        assert_eq!(pool.available(), 256);
    });
}

#[test]
fn afpacket_missing_interface_is_named() {
    let e = AfPacketPort::open(AfPacketConfig::new("srnosuch1"))
        .err()
        .expect("must fail")
        .to_string();
    assert!(e.contains("srnosuch1") && e.contains("not found"), "{e}");
}

/// A burst into a tiny ring nobody reads: the kernel drops and
/// `PACKET_STATISTICS` says so (`afpacket_tp_drops`, accumulated: the
/// kernel resets its counter on every read). Every frame sent is received
/// or counted; frames left in the ring at release are counted.
#[test]
fn afpacket_kernel_drops_are_counted() {
    if !require_root("afpacket_kernel_drops_are_counted") {
        return;
    }
    use netio::QueueCounter as Q;
    let (ns, v) = setup(1);
    let (a, b) = (v.a.clone(), v.b.clone());
    in_netns(ns.name(), move || {
        let mut pool = Pool::new(1024, 2048).unwrap();
        let port = AfPacketPort::open(AfPacketConfig {
            block_size: 4096,
            block_nr: 2,
            ..AfPacketConfig::new(&a)
        })
        .expect("open");
        let mut rx = port.open_rx(0, &mut pool).unwrap();
        let peer = RawSock::open(&b);
        let sent = 1000u32;
        for i in 0..sent {
            peer.send(&frame(i, (i % 64) as u16, 100));
        }
        std::thread::sleep(Duration::from_millis(100));
        let first = rx.counters();
        assert!(first.get(Q::AfPacketTpDrops) > 0, "{first:?}");
        let mut got = 0u64;
        let end = Instant::now() + Duration::from_millis(500);
        let mut burst = netio::Burst::new();
        while Instant::now() < end {
            // A maximum below the frames per block: a burst stops inside a
            // block and the next one resumes there (nothing skipped: the
            // count below adds up).
            let n = rx.rx_burst(&mut pool, &mut burst, 3);
            assert!(n <= 3 && burst.len() == n, "{n} frames for a maximum of 3");
            got += burst
                .as_slice()
                .iter()
                .filter(|b| seq_of(pool.data(**b)).is_some())
                .count() as u64;
            pool.free_all(burst.as_slice());
            burst.clear();
        }
        let c = rx.counters();
        assert!(
            c.get(Q::AfPacketTpDrops) >= first.get(Q::AfPacketTpDrops),
            "accumulated"
        );
        eprintln!("received {got} of {sent}, {c:?}");
        assert_eq!(got + c.total(netio::CounterKind::RxDrop), u64::from(sent));

        for i in 0..5 {
            peer.send(&frame(i, 0, 100));
        }
        std::thread::sleep(Duration::from_millis(100));
        rx.release(&mut pool);
        assert_eq!(rx.counters().get(Q::RxUnreadAtShutdown), 5);
        assert_eq!(pool.available(), pool.frames() as usize, "buffers leaked");
    });
}

/// Issue 12, "jumbo frames on a port whose MTU is larger than its buffers
/// (accepted without a warning)": an interface whose MTU needs more room
/// than a pool buffer has is rejected when its RX queue opens, with a
/// message that says what to change (as AF_XDP and the pcap ports do).
#[test]
fn afpacket_mtu_larger_than_buffers_is_rejected() {
    if !require_root("afpacket_mtu_larger_than_buffers_is_rejected") {
        return;
    }
    let (ns, v) = setup(1);
    let a = v.a.clone();
    ns.ip(&["link", "set", "dev", &a, "mtu", "3000"]).unwrap();
    in_netns(ns.name(), move || {
        let mut pool = Pool::new(256, 2048).unwrap();
        let port = AfPacketPort::open(AfPacketConfig::new(&a)).expect("open");
        let e = port
            .open_rx(0, &mut pool)
            .err()
            .expect("rejected")
            .to_string();
        assert!(e.contains("MTU 3000") && e.contains("frame_size"), "{e}");
        // With buffers that hold it, the same interface opens.
        let mut big = Pool::new(64, 4096).unwrap();
        assert!(port.open_rx(0, &mut big).is_ok());
    });
}
