//! Every frame accounted on live ports (veth; `afxdp` and `afpacket`): a
//! worker with tiny rings is hit by a burst of mixed traffic while it is
//! not polling, so the kernel drops; afterwards every frame sent is in one
//! bucket of the port, the kernel's drops under their own reason
//! (`xdp_rx_ring_full`, `afpacket_tp_drops`), and the identity holds on the
//! snapshot taken at the end of a round, after more traffic with the worker
//! running, after random traffic (the property test's live half: random
//! frames, well-formed and malformed, in random bursts, the worker polling
//! or not at random; `SR_ACCOUNTING_SEED` replays a run) and after
//! shutdown.
//!
//! Needs root; skipped with a message otherwise.

use dataplane::{assert_accounting, Router, SnapshotChecks, StatsSnapshot, Worker};
use netio::{Pool, Port, QueueCounter};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use testbed::{require_root, Netns, VethPair};

const PEER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0x02];

/// The router's addressing; the port itself is opened by the test.
const CONFIG: &str = r#"
[router]
workers = 1
hold_packets = 4
icmp_rate = 1000000
pool_frames = 2048

[[port]]
name = "p0"
driver = "pcap"
mac = "02:00:00:00:00:10"
addresses = ["198.18.0.1/24"]

[[route]]
prefix = "198.19.0.0/16"
via = ["198.18.0.2"]

[[neighbor]]
address = "198.18.0.2"
mac = "02:00:00:00:00:02"
port = "p0"

# No control socket: tests run routers side by side.
[control]
socket = "off"
"#;

fn in_netns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let path = format!("/var/run/netns/{ns}");
    std::thread::spawn(move || {
        let file = std::fs::File::open(&path).expect("open netns file");
        // SAFETY: setns on a valid netns fd; affects this thread only.
        let r = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(r, 0, "setns: {}", std::io::Error::last_os_error());
        f()
    })
    .join()
    .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// A raw AF_PACKET socket on the far end of the veth, for sending.
struct Peer(OwnedFd);

impl Peer {
    fn open(iface: &str) -> Peer {
        let ifindex = netio::ifinfo::ifindex(iface).expect("ifindex");
        // SAFETY: plain socket calls, checked.
        unsafe {
            let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0);
            assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
            let fd = OwnedFd::from_raw_fd(fd);
            let mut sa: libc::sockaddr_ll = std::mem::zeroed();
            sa.sll_family = libc::AF_PACKET as u16;
            sa.sll_ifindex = ifindex as i32;
            let r = libc::bind(
                fd.as_raw_fd(),
                (&sa as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            );
            assert_eq!(r, 0, "bind: {}", std::io::Error::last_os_error());
            Peer(fd)
        }
    }

    fn send(&self, f: &[u8]) {
        loop {
            // SAFETY: sending a live buffer on a bound socket.
            let r = unsafe { libc::send(self.0.as_raw_fd(), f.as_ptr().cast(), f.len(), 0) };
            if r == f.len() as isize {
                return;
            }
            let e = std::io::Error::last_os_error();
            assert!(
                matches!(e.raw_os_error(), Some(libc::ENOBUFS) | Some(libc::EAGAIN)),
                "send: {e}"
            );
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

fn udp(mac: [u8; 6], src: [u8; 4], dst: [u8; 4], ttl: u8, n: u16) -> Vec<u8> {
    let mut v = Vec::new();
    etherparse::PacketBuilder::ethernet2(PEER_MAC, mac)
        .ipv4(src, dst, ttl)
        .udp(1000 + n % 512, 9)
        .write(&mut v, &[n as u8; 40])
        .unwrap();
    v
}

/// Frame `i` of a mix: forwarded (hairpin through the static neighbor),
/// echo to the router, TTL expired, no route, bad checksum, ARP for the
/// router, a connected host nobody answers for (held, then unresolved),
/// another host's MAC.
fn mixed(mac: [u8; 6], i: u32) -> Vec<u8> {
    let n = i as u16;
    let me = [198, 18, 0, 2];
    match i % 10 {
        0..=2 => udp(mac, me, [198, 19, (n >> 8) as u8, n as u8], 64, n),
        3 => {
            let mut v = Vec::new();
            etherparse::PacketBuilder::ethernet2(PEER_MAC, mac)
                .ipv4(me, [198, 18, 0, 1], 64)
                .icmpv4_echo_request(1, n)
                .write(&mut v, b"accounted")
                .unwrap();
            v
        }
        4 => udp(mac, me, [198, 19, 0, 1], 1, n),
        5 => udp(mac, me, [10, 0, 0, 1], 64, n),
        6 => {
            let mut v = udp(mac, me, [198, 19, 0, 1], 64, n);
            v[24] ^= 0xff;
            v
        }
        7 => {
            let mut v = vec![0xff; 6];
            v.extend_from_slice(&PEER_MAC);
            v.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1]);
            v.extend_from_slice(&PEER_MAC);
            v.extend_from_slice(&me);
            v.extend_from_slice(&[0; 6]);
            v.extend_from_slice(&[198, 18, 0, 1]);
            v.resize(60, 0);
            v
        }
        8 => udp(mac, me, [198, 18, 0, 99], 64, n),
        _ => udp([2, 9, 9, 9, 9, 9], me, [198, 19, 0, 1], 64, n),
    }
}

/// A random frame for the router at `mac`: one of [`mixed`]'s kinds, or a
/// malformed one (random bytes behind our MAC, an IPv4 header with a
/// random byte changed, a frame cut short, a length field that lies, a
/// VLAN tag, IPv6 the port has no address for, a group destination).
/// Never shorter than an Ethernet header or longer than the MTU allows:
/// the kernel would refuse to send it.
fn random_frame(rng: &mut SmallRng, mac: [u8; 6]) -> Vec<u8> {
    let n: u16 = rng.gen();
    let me = [198, 18, 0, 2];
    let mut v = match rng.gen_range(0..8) {
        0..=2 => mixed(mac, rng.gen()),
        3 => {
            let len = rng.gen_range(14..=1514);
            let mut v: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            v[..6].copy_from_slice(&mac);
            v
        }
        4 => {
            let mut v = udp(mac, me, [198, 19, 1, n as u8], 64, n);
            let i = rng.gen_range(14..34);
            v[i] = rng.gen();
            v
        }
        5 => {
            let mut v = mixed(mac, rng.gen());
            v.truncate(rng.gen_range(14..=v.len()));
            v
        }
        6 => {
            let mut v = udp(mac, me, [198, 19, 2, n as u8], 64, n);
            let lie: u16 = rng.gen_range(0..3000);
            v[16..18].copy_from_slice(&lie.to_be_bytes());
            v
        }
        _ => {
            let mut v = Vec::new();
            etherparse::PacketBuilder::ethernet2(PEER_MAC, mac)
                .ipv6(
                    [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
                    {
                        let mut d = [0; 16];
                        d[..4].copy_from_slice(&[0x20, 0x01, 0, 2]);
                        d[15] = n as u8;
                        d
                    },
                    64,
                )
                .udp(1000, 9)
                .write(&mut v, &[0; 20])
                .unwrap();
            v
        }
    };
    match rng.gen_range(0..10) {
        // 802.1Q, VLAN 5. The kernel drops a tagged frame too short for
        // its tag and inner EtherType before any socket sees it (it never
        // reaches the router), so the frame is padded.
        0 => {
            v.splice(12..12, [0x81, 0x00, 0x00, 0x05]);
            v.resize(v.len().clamp(60, 1514), 0);
        }
        // Broadcast, IPv4 or IPv6 multicast.
        1 => {
            let group = [[0xff; 6], [1, 0, 0x5e, 0, 0, 1], [0x33, 0x33, 0, 0, 0, 1]];
            v[..6].copy_from_slice(&group[rng.gen_range(0..3)]);
        }
        _ => {}
    }
    v
}

/// Random traffic: `rounds` bursts of random frames; after each the
/// worker polls until the link is quiet, polls a little, or not at all
/// (so the kernel's rings overflow). The identity holds on every
/// snapshot, and once drained the port has received every frame sent.
/// Returns the number of frames sent.
fn random_traffic(
    driver: &str,
    w: &mut Worker,
    peer: &Peer,
    mac: [u8; 6],
    before: u64,
    rounds: usize,
) -> u64 {
    let seed = std::env::var("SR_ACCOUNTING_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("{driver}: random traffic, SR_ACCOUNTING_SEED={seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut sent = 0u64;
    for round in 0..rounds {
        let n = rng.gen_range(1..=500);
        for _ in 0..n {
            peer.send(&random_frame(&mut rng, mac));
        }
        sent += n;
        let drained = match rng.gen_range(0..3) {
            0 => false,
            1 => {
                for _ in 0..rng.gen_range(1..8) {
                    w.poll_once(rng.gen_range(1..=64));
                }
                false
            }
            _ => {
                std::thread::sleep(Duration::from_millis(5));
                poll_until_quiet(w, Duration::from_millis(30));
                true
            }
        };
        let s = checked(w);
        if drained || round + 1 == rounds {
            if !drained {
                std::thread::sleep(Duration::from_millis(5));
                poll_until_quiet(w, Duration::from_millis(30));
            }
            let s = if drained { s } else { checked(w) };
            assert_eq!(
                s.ports[0].received,
                before + sent,
                "{driver}: every random frame received or counted (SR_ACCOUNTING_SEED={seed}, round {round}): {:?}",
                s.ports[0]
            );
        }
    }
    sent
}

/// Polls until `quiet` passed without a frame.
fn poll_until_quiet(w: &mut Worker, quiet: Duration) {
    let mut last = Instant::now();
    while last.elapsed() < quiet {
        if w.poll_once(64) > 0 {
            last = Instant::now();
        } else {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

fn checked(w: &mut Worker) -> StatsSnapshot {
    // What softrouter's statistics writer does: a snapshot taken by the
    // worker at the end of a round, with the kernel counters read for it.
    let stats = w.stats();
    let ticket = stats.request_snapshot();
    w.poll_once(64);
    let s = stats.wait_snapshot(ticket, Duration::from_secs(1));
    assert_accounting(&s);
    s
}

fn scenario(driver: &'static str) {
    let ns = Netns::new("acct").expect("netns");
    let _ = ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1");
    let _ = ns.sysctl("net.ipv6.conf.default.disable_ipv6", "1");
    let v = VethPair::new(&ns, &ns, 1).expect("veth");
    let (a, b) = (v.a.clone(), v.b.clone());
    in_netns(ns.name(), move || {
        let mut pool = Pool::new(2048, 2048).unwrap();
        let (port, reason): (Arc<dyn Port>, QueueCounter) = match driver {
            "afxdp" => {
                let mut c = netio::afxdp::AfXdpConfig::new(&a, 2048);
                c.xdp_mode = netio::afxdp::XdpMode::Generic;
                c.rx_ring = 64;
                c.fill_ring = 512;
                (
                    Arc::new(netio::afxdp::AfXdpPort::open(c).expect("afxdp port")),
                    QueueCounter::XdpRxRingFull,
                )
            }
            _ => {
                let mut c = netio::afpacket::AfPacketConfig::new(&a);
                c.block_size = 4096;
                c.block_nr = 2;
                (
                    Arc::new(netio::afpacket::AfPacketPort::open(c).expect("afpacket port")),
                    QueueCounter::AfPacketTpDrops,
                )
            }
        };
        let mac = port.info().mac;
        let cfg = config::parse(CONFIG, Path::new("accounting.toml")).unwrap();
        let router = Router::new(&cfg, &[port.info().clone()]).unwrap();
        let rx = vec![(0, port.open_rx(0, &mut pool).unwrap())];
        let tx = vec![port.open_tx(0, &mut pool).unwrap()];
        let mut w = Worker::new(0, router.shared(), pool, rx, tx);
        let peer = Peer::open(&b);

        // A burst while the worker does not poll: the tiny ring overflows.
        let burst = 3000u32;
        for i in 0..burst {
            peer.send(&mixed(mac, i));
        }
        std::thread::sleep(Duration::from_millis(100));
        poll_until_quiet(&mut w, Duration::from_millis(300));
        let s = checked(&mut w);
        let p = &s.ports[0];
        eprintln!(
            "{driver}: burst of {burst}: received {}, rx_packets {}, forwarded {}, local {}, \
             held {}, drops {:?}",
            p.received, p.rx_packets, p.forwarded, p.local, p.held, p.drops
        );
        assert!(
            s.queue_count(reason) > 0,
            "{driver}: kernel drops counted as {reason:?}"
        );
        assert_eq!(
            p.received,
            u64::from(burst),
            "{driver}: every frame of the burst"
        );
        assert!(p.forwarded > 0 && p.local > 0, "{driver}: {p:?}");

        // Real traffic with the worker running.
        let paced = 2000u32;
        for i in 0..paced {
            peer.send(&mixed(mac, i));
            if i % 16 == 0 {
                w.poll_once(64);
            }
        }
        poll_until_quiet(&mut w, Duration::from_millis(300));
        checked(&mut w);
        // The hold queues give up on 198.18.0.99.
        for _ in 0..6 {
            w.advance_clock(1000);
            w.poll_once(64);
        }
        let s = checked(&mut w);
        assert_eq!(s.held, 0);
        assert_eq!(s.ports[0].received, u64::from(burst + paced), "{driver}");
        assert!(s.drop_count(dataplane::DropReason::NeighborUnresolved) > 0);

        let sent = u64::from(burst + paced);
        let sent = sent + random_traffic(driver, &mut w, &peer, mac, sent, 40);
        let s = checked(&mut w);
        eprintln!(
            "{driver}: after random traffic: received {}, drops {:?}",
            s.ports[0].received, s.ports[0].drops
        );

        // Shutdown: frames still in the ring are counted too.
        for i in 0..7 {
            peer.send(&mixed(mac, i * 10));
        }
        std::thread::sleep(Duration::from_millis(100));
        let stats = w.stats();
        let pool = w.shutdown();
        assert_eq!(
            pool.available(),
            pool.frames() as usize,
            "{driver}: buffers leaked"
        );
        let s = stats.snapshot();
        assert_accounting(&s);
        assert_eq!(
            s.queue_count(QueueCounter::RxUnreadAtShutdown),
            7,
            "{driver}"
        );
        assert_eq!(s.ports[0].received, sent + 7, "{driver}");
        drop(port);
    });
}

#[test]
fn afxdp_every_frame_accounted_with_kernel_drops() {
    if !require_root("afxdp accounting") {
        return;
    }
    scenario("afxdp");
}

#[test]
fn afpacket_every_frame_accounted_with_kernel_drops() {
    if !require_root("afpacket accounting") {
        return;
    }
    scenario("afpacket");
}
