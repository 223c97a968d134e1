//! After warm-up, forwarding 100k packets on `mem` ports allocates nothing.

use dataplane::{Router, SnapshotChecks, Worker};
use netio::mem::MemPort;
use netio::pcap_file::Capture;
use netio::{Pool, Port, PortInfo};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

struct Counting;
static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

const CONFIG: &str = r#"
[[port]]
name = "p0"
driver = "mem"
mac = "02:00:00:00:00:10"
addresses = ["198.18.0.1/24", "2001:2:0:1::1/64"]

[[port]]
name = "p1"
driver = "mem"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/24", "2001:2:0:2::1/64"]

[[route]]
prefix = "198.19.128.0/17"
via = ["198.19.0.2", "198.19.0.3"]

[[route]]
prefix = "2001:2:0:8000::/49"
via = ["2001:2:0:2::2"]

[[neighbor]]
address = "198.19.0.2"
mac = "02:00:00:00:00:22"
port = "p1"

[[neighbor]]
address = "198.19.0.3"
mac = "02:00:00:00:00:23"
port = "p1"

[[neighbor]]
address = "2001:2:0:2::2"
mac = "02:00:00:00:00:22"
port = "p1"
"#;

#[test]
fn forwarding_allocates_nothing() {
    let cfg = config::parse(CONFIG, Path::new("t.toml")).unwrap();
    let infos: Vec<PortInfo> = cfg
        .ports
        .iter()
        .map(|p| PortInfo {
            name: p.name.clone(),
            mac: p.mac.unwrap(),
            mtu: 1500,
            rx_queues: 1,
        })
        .collect();
    let router = Router::new(&cfg, &infos).unwrap();
    let mut cap = Capture::new();
    for i in 0..64u8 {
        let mut v = Vec::new();
        etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 2], infos[0].mac)
            .ipv4([198, 18, 0, 2], [198, 19, 128 + i, i], 64)
            .udp(1000 + u16::from(i), 7)
            .write(&mut v, &[0; 18])
            .unwrap();
        cap.push(&v);
        let mut v = Vec::new();
        etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 2], infos[0].mac)
            .ipv6(
                "2001:2:0:1::2"
                    .parse::<std::net::Ipv6Addr>()
                    .unwrap()
                    .octets(),
                "2001:2:0:8000::9"
                    .parse::<std::net::Ipv6Addr>()
                    .unwrap()
                    .octets(),
                64,
            )
            .udp(1000, 7)
            .write(&mut v, &[0; 4])
            .unwrap();
        cap.push(&v);
    }
    let p0 = MemPort::from_capture("p0", infos[0].mac, 1500, cap, 1);
    let p1 = MemPort::from_capture("p1", infos[1].mac, 1500, Capture::new(), 1);
    let mut pool = Pool::new(4096, 2048).unwrap();
    let rx = vec![(0, p0.open_rx(0, &mut pool).unwrap())];
    let tx = vec![
        p0.open_tx(0, &mut pool).unwrap(),
        p1.open_tx(0, &mut pool).unwrap(),
    ];
    let mut w = Worker::new(0, router.shared(), pool, rx, tx);
    for _ in 0..100 {
        w.poll_once(256);
    }
    let before = w.stats().snapshot().forwarded;
    COUNTING.store(true, Ordering::SeqCst);
    let mut n = 0;
    while n < 100_000 {
        n += w.poll_once(256);
    }
    COUNTING.store(false, Ordering::SeqCst);
    let s = w.stats().snapshot();
    assert_eq!(s.forwarded - before, n as u64, "{:?}", s.drops);
    assert_eq!(
        ALLOCS.load(Ordering::SeqCst),
        0,
        "allocations on the fast path"
    );
    s.check_identity().unwrap();
}
