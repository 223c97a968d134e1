//! Every frame accounted, on every port: random mixes of valid, malformed,
//! TTL-expired, to-router, ARP, unroutable, unresolved and oversize frames
//! through pcap ports and through the mem backend; the identity
//! `received = forwarded + local + held + sum(drops)` (and `received =
//! rx_packets + port-side drops`) is checked on every port between rounds,
//! after the hold queues expire and after shutdown.

mod common;
use common::*;
use dataplane::{assert_accounting, StatsSnapshot, Worker};
use netio::mem::MemPort;
use netio::pcap_file::Capture;
use netio::{Pool, Port, QueueCounter};
use proptest::prelude::*;
use std::path::Path;

/// Router MAC and a source address on each port of `common::CONFIG`.
const PORTS: [([u8; 6], &str, &str); 3] = [
    (MAC0, "198.18.0.2", "2001:2:0:1::2"),
    (MAC1, "198.19.0.5", "2001:2:0:2::5"),
    (MAC2, "198.18.1.5", "2001:2:0:1::7"),
];
const OWN4: [&str; 3] = ["198.18.0.1", "198.19.0.1", "198.18.1.1"];
const OWN6: &str = "2001:2:0:1::1";

fn echo4(port: usize, dst: &str, ttl: u8) -> Vec<u8> {
    let (mac, src, _) = PORTS[port];
    let mut v = Vec::new();
    etherparse::PacketBuilder::ethernet2(HOST0, mac)
        .ipv4(ip4(src), ip4(dst), ttl)
        .icmpv4_echo_request(7, 1)
        .write(&mut v, b"every frame accounted")
        .unwrap();
    v
}

fn echo6(port: usize, dst: &str) -> Vec<u8> {
    let (mac, _, src) = PORTS[port];
    let mut v = Vec::new();
    etherparse::PacketBuilder::ethernet2(HOST0, mac)
        .ipv6(ip6(src), ip6(dst), 64)
        .icmpv6_echo_request(7, 1)
        .write(&mut v, b"every frame accounted")
        .unwrap();
    v
}

fn arp(port: usize, op: u8, target: &str) -> Vec<u8> {
    let (mac, src, _) = PORTS[port];
    let mut v = Vec::new();
    v.extend_from_slice(&[0xff; 6]);
    v.extend_from_slice(&HOST0);
    v.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, op]);
    v.extend_from_slice(&HOST0);
    v.extend_from_slice(&ip4(src));
    v.extend_from_slice(&if op == 2 { mac } else { [0; 6] });
    v.extend_from_slice(&ip4(target));
    v.resize(60, 0);
    v
}

/// Kinds of frames the tests mix.
const KINDS: u8 = 20;

/// A frame of kind `kind % KINDS` arriving on `port`; `seed` varies
/// addresses and sizes, `junk` is raw material for malformed frames.
fn frame(port: usize, kind: u8, seed: u16, junk: &[u8]) -> Vec<u8> {
    let (mac, src, src6) = PORTS[port];
    let b = (seed % 250) as u8 + 1;
    let payload = vec![seed as u8; 18 + (seed as usize % 64)];
    match kind % KINDS {
        // Routed through a static neighbor on p1 (ECMP for /18).
        0 => udp4(
            HOST0,
            mac,
            src,
            &format!("198.19.{}.{b}", 128 + b / 2),
            64,
            seed,
            &payload,
            false,
        ),
        1 => udp4(
            HOST0,
            mac,
            src,
            &format!("198.19.{}.{b}", 64 + b % 64),
            64,
            seed,
            &payload,
            true,
        ),
        2 => udp6(
            HOST0,
            mac,
            src6,
            &format!("2001:2:0:8000::{seed:x}"),
            64,
            seed,
            &payload,
        ),
        // To the router: echo (answered), UDP (port unreachable).
        3 => echo4(port, OWN4[port], 64),
        4 => echo6(port, OWN6),
        5 => udp4(HOST0, mac, src, OWN4[port], 64, seed, &payload, false),
        // TTL / hop limit expires here.
        6 => udp4(HOST0, mac, src, "198.19.200.1", 1, seed, &payload, false),
        7 => udp6(HOST0, mac, src6, "2001:2:0:8000::1", 1, seed, &payload),
        // No route.
        8 => udp4(
            HOST0,
            mac,
            src,
            &format!("198.19.5.{b}"),
            64,
            seed,
            &payload,
            false,
        ),
        9 => udp6(
            HOST0,
            mac,
            src6,
            &format!("2001:3::{seed:x}"),
            64,
            seed,
            &payload,
        ),
        // ARP: for the router, for someone else, a reply.
        10 => arp(port, 1, OWN4[port]),
        11 => arp(port, 1, "198.19.0.200"),
        12 => arp(port, 2, OWN4[port]),
        // A connected host nobody answers for: held, then unresolved.
        13 => udp4(
            HOST0,
            mac,
            src,
            &format!("198.19.0.{}", 100 + b % 8),
            64,
            seed,
            &payload,
            false,
        ),
        // Larger than p2's MTU (576): fragmented, or "fragmentation needed".
        14 => udp4(
            HOST0,
            mac,
            src,
            "198.18.64.9",
            64,
            seed,
            &[3; 1000],
            seed.is_multiple_of(2),
        ),
        // Malformed: junk after our MAC, a truncated frame, a bad checksum.
        15 => {
            let mut v = mac.to_vec();
            v.extend_from_slice(junk);
            v
        }
        16 => {
            let v = udp4(HOST0, mac, src, "198.19.200.1", 64, seed, &payload, false);
            v[..(seed as usize % v.len())].to_vec()
        }
        17 => {
            let mut v = udp4(HOST0, mac, src, "198.19.200.1", 64, seed, &payload, false);
            v[24] ^= 0x5a;
            v
        }
        // Not for us at layer 2.
        18 => udp4(
            HOST0,
            [2, 9, 9, 9, 9, 9],
            src,
            "198.19.200.1",
            64,
            seed,
            &payload,
            false,
        ),
        // Too large for any buffer (a 2048-byte frame holds 1792).
        _ => {
            let mut v = udp4(HOST0, mac, src, "198.19.200.1", 64, seed, &[1; 1400], false);
            v.resize(1793 + seed as usize % 3000, 0);
            v
        }
    }
}

fn traffic() -> impl Strategy<Value = Vec<Vec<(u8, u16, Vec<u8>)>>> {
    let one = (
        0..KINDS,
        any::<u16>(),
        proptest::collection::vec(any::<u8>(), 0..80),
    );
    proptest::collection::vec(proptest::collection::vec(one, 0..120), 3)
}

fn frames(t: &[Vec<(u8, u16, Vec<u8>)>]) -> Vec<Vec<Vec<u8>>> {
    t.iter()
        .enumerate()
        .map(|(p, fs)| fs.iter().map(|(k, s, j)| frame(p, *k, *s, j)).collect())
        .collect()
}

fn checked(w: &mut Worker) -> StatsSnapshot {
    w.refresh_port_counters();
    let s = w.stats().snapshot();
    assert_accounting(&s);
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Pcap ports: every input frame is received (or counted oversize) on
    /// its port, and the identity holds between rounds, after the hold
    /// queues gave up and after shutdown.
    #[test]
    fn pcap_ports_account_for_every_frame(
        t in traffic(),
        budgets in proptest::collection::vec(1u32..200, 1..8),
    ) {
        let inputs = frames(&t);
        let mut r = Rig::new(CONFIG, inputs.clone());
        for b in &budgets {
            let before = checked(r.w());
            r.w().poll_once(*b);
            let after = checked(r.w());
            // The budget is per RX queue (one per port here): a queue is
            // never asked for more frames than the round has left.
            for (p, a) in after.ports.iter().enumerate() {
                prop_assert!(a.rx_packets - before.ports[p].rx_packets <= u64::from(*b));
            }
        }
        r.run();
        // Unresolved neighbors: retries, then give up.
        for _ in 0..6 {
            r.w().advance_clock(1000);
            r.w().poll_once(64);
            checked(r.w());
        }
        let s = checked(r.w());
        prop_assert_eq!(s.held, 0);
        for (p, input) in inputs.iter().enumerate() {
            prop_assert_eq!(s.ports[p].received, input.len() as u64, "port {}", p);
            let big = input.iter().filter(|f| f.len() > 1792).count() as u64;
            prop_assert_eq!(
                s.ports[p].drops.get(QueueCounter::RxOversize.name()).copied().unwrap_or(0),
                big
            );
        }
        let w = r.worker.take().unwrap();
        let stats = w.stats();
        let pool = w.shutdown();
        prop_assert_eq!(pool.available(), pool.frames() as usize, "buffers leaked");
        assert_accounting(&stats.snapshot());
    }

    /// The mem backend replays its capture forever: frames are held at
    /// snapshot time and the identity holds anyway; shutdown counts what
    /// is still held.
    #[test]
    fn mem_ports_account_for_every_frame(
        t in traffic(),
        rounds in 1usize..40,
        budget in 1u32..300,
    ) {
        let cfg = config::parse(CONFIG, Path::new("test.toml")).unwrap();
        let infos = infos(&cfg);
        let router = dataplane::Router::new(&cfg, &infos).unwrap();
        let inputs = frames(&t);
        let ports: Vec<MemPort> = infos
            .iter()
            .zip(&inputs)
            .map(|(i, fs)| {
                let mut c = Capture::new();
                for f in fs {
                    c.push(f);
                }
                MemPort::from_capture(&i.name, i.mac, i.mtu, c, 1)
            })
            .collect();
        let mut pool = Pool::new(1024, 2048).unwrap();
        let rx = ports
            .iter()
            .enumerate()
            .map(|(i, p)| (i, p.open_rx(0, &mut pool).unwrap()))
            .collect();
        let tx = ports.iter().map(|p| p.open_tx(0, &mut pool).unwrap()).collect();
        let mut w = Worker::new(0, router.shared(), pool, rx, tx);
        for i in 0..rounds {
            w.poll_once(budget);
            if i % 7 == 3 {
                w.advance_clock(1500);
            }
            let s = checked(&mut w);
            for (p, input) in inputs.iter().enumerate() {
                if input.iter().all(|f| f.len() > 1792) {
                    prop_assert_eq!(s.ports[p].rx_packets, 0);
                }
            }
        }
        let stats = w.stats();
        let pool = w.shutdown();
        prop_assert_eq!(pool.available(), pool.frames() as usize, "buffers leaked");
        let s = stats.snapshot();
        assert_accounting(&s);
        prop_assert_eq!(s.held, 0);
    }
}

/// The per-port identity by input port, on a fixed mix: what p0 received
/// and p1 sent is p0's, the ICMP error p0 caused is output of p0.
#[test]
fn counts_are_by_input_port() {
    let to_p1 = frame(0, 0, 5, &[]);
    let ttl = frame(0, 6, 5, &[]);
    let echo = frame(1, 3, 1, &[]);
    let big = frame(2, 19, 0, &[]);
    let mut r = Rig::new(CONFIG, vec![vec![to_p1, ttl], vec![echo], vec![big]]);
    r.run();
    let s = r.stats();
    let p = &s.ports;
    assert_eq!((p[0].received, p[0].forwarded, p[0].local), (2, 1, 0));
    assert_eq!(p[0].drops.get("ttl_exceeded"), Some(&1));
    assert_eq!((p[1].received, p[1].forwarded, p[1].local), (1, 0, 1));
    assert_eq!((p[2].received, p[2].rx_packets), (1, 0));
    assert_eq!(p[2].drops.get("rx_oversize"), Some(&1));
    // p1 sent the forwarded frame and the echo reply, p0 the time exceeded.
    assert_eq!((p[0].tx_packets, p[1].tx_packets), (1, 2));
}

/// Packets held for one neighbour from two input ports and released in
/// the same round are counted forwarded on their own input ports: the
/// worker adds `forwarded` to a port's counter once per burst and when the
/// input port changes, and a release from the hold queues changes it
/// between two packets.
#[test]
fn released_packets_count_on_their_input_ports() {
    let host = "198.19.0.7";
    let hmac = [2, 0, 0, 0, 0, 0x77];
    let a = udp4(HOST0, MAC0, "198.18.0.2", host, 64, 1, &[0; 18], false);
    let c = udp4(HOST0, MAC2, "198.18.1.5", host, 64, 2, &[0; 18], false);
    let echo = echo4(1, OWN4[1], 64);
    let reply = arp_frame(hmac, MAC1, 2, hmac, host, MAC1, OWN4[1]);
    let mut r = Rig::new(CONFIG, vec![vec![a], vec![echo, reply], vec![c]]);
    // One frame per port: p0's and p2's packets wait for the host.
    r.w().poll_once(1);
    let s = r.stats();
    assert_eq!((s.ports[0].held, s.ports[2].held), (1, 1));
    // The ARP reply, then both released in one round.
    r.run();
    let s = r.stats();
    let p = &s.ports;
    assert_eq!((p[0].forwarded, p[1].forwarded, p[2].forwarded), (1, 0, 1));
    assert_eq!((p[0].held, p[2].held), (0, 0));
    let to_host = r.sent(1).iter().filter(|f| f[..6] == hmac).count();
    assert_eq!(to_host, 2);
}

/// Snapshots of a worker running on another thread (what softrouter's
/// statistics writer takes on SIGUSR1) are consistent: the identity holds
/// in every one of them, held packets included. A direct read of the
/// counters of a running worker could count a frame received and not yet
/// in any bucket.
#[test]
fn snapshots_of_a_running_worker_balance() {
    let cfg = config::parse(CONFIG, Path::new("test.toml")).unwrap();
    let infos = infos(&cfg);
    let router = dataplane::Router::new(&cfg, &infos).unwrap();
    let mut c = Capture::new();
    for (i, k) in (0..KINDS).cycle().take(200).enumerate() {
        c.push(&frame(0, k, i as u16, &[0x86, 0xdd, 0x60]));
    }
    let p0 = MemPort::from_capture("p0", infos[0].mac, 1500, c, 1);
    let others: Vec<MemPort> = infos[1..]
        .iter()
        .map(|i| MemPort::from_capture(&i.name, i.mac, i.mtu, Capture::new(), 1))
        .collect();
    let mut pool = Pool::new(2048, 2048).unwrap();
    let rx = vec![(0, p0.open_rx(0, &mut pool).unwrap())];
    let mut tx = vec![p0.open_tx(0, &mut pool).unwrap()];
    for p in &others {
        tx.push(p.open_tx(0, &mut pool).unwrap());
    }
    let mut w = Worker::new(0, router.shared(), pool, rx, tx);
    let stats = w.stats();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s2 = stop.clone();
    let t = std::thread::spawn(move || {
        let mut rounds = 0u64;
        while !s2.load(std::sync::atomic::Ordering::Relaxed) {
            w.poll_once(64);
            rounds += 1;
            if rounds.is_multiple_of(500) {
                w.advance_clock(700);
            }
        }
        w.shutdown()
    });
    let mut held_seen = false;
    for _ in 0..300 {
        let ticket = stats.request_snapshot();
        let s = stats.wait_snapshot(ticket, std::time::Duration::from_secs(5));
        assert_accounting(&s);
        held_seen |= s.held > 0;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let pool = t.join().unwrap();
    assert_eq!(pool.available(), pool.frames() as usize);
    let s = stats.snapshot();
    assert_accounting(&s);
    assert!(s.rx_packets() > 1000, "the worker ran: {}", s.rx_packets());
    assert!(held_seen, "some snapshot caught packets in a hold queue");
}
