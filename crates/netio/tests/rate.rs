//! Quick receive-rate measurement (ignored by default; run with
//! `cargo test -p softrouter-netio --release --test rate -- --ignored --nocapture`):
//! a kernel AF_PACKET sender (sendmmsg, qdisc bypass) blasts 64-byte frames
//! into one veth end; one core receives on the other end through each
//! backend. On a 2-core machine sender and receiver each get a core.

mod common;

use common::*;
use netio::afpacket::{AfPacketConfig, AfPacketPort, PacketTx};
use netio::afxdp::{AfXdpConfig, AfXdpPort, XdpMode};
use netio::{Burst, Pool, Port, TxQueue};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use testbed::{require_root, Netns, VethPair};

const SECS: f64 = 2.0;

fn sender(ns: String, iface: String, stop: Arc<AtomicBool>, sent: Arc<AtomicU64>) {
    in_netns(&ns, move || {
        let mut pool = Pool::new(256, 2048).unwrap();
        let mut tx = PacketTx::open(netio::ifinfo::ifindex(&iface).unwrap()).unwrap();
        let f = frame(1, 1, 0); // 54 bytes; padded to 60 below
        let mut bufs = Vec::with_capacity(64);
        while !stop.load(Ordering::Relaxed) {
            for i in 0..64u32 {
                let mut b = pool.alloc().unwrap();
                let room = pool.room_mut(b);
                room[..f.len()].copy_from_slice(&f);
                room[f.len()..60].fill(0);
                room[14 + 4..14 + 6].copy_from_slice(&(i as u16).to_be_bytes());
                b.len = 60;
                bufs.push(b);
            }
            let k = tx.tx_burst(&mut pool, &bufs);
            pool.free_all(&bufs[k..]);
            sent.fetch_add(k as u64, Ordering::Relaxed);
            bufs.clear();
        }
    });
}

#[derive(Clone, Copy, Debug)]
enum Backend {
    AfXdp(XdpMode),
    AfPacket,
}

fn measure(backend: Backend) {
    let ns = Netns::new("r").expect("netns");
    let _ = ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1");
    let v = VethPair::new(&ns, &ns, 1).expect("veth");
    let (a, b) = (v.a.clone(), v.b.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let nsn = ns.name().to_string();
    let (received, secs, desc) = in_netns(ns.name(), {
        let (stop, sent) = (stop.clone(), sent.clone());
        move || {
            let mut pool = Pool::new(32768, 2048).unwrap();
            let (port, xdp): (Box<dyn Port>, Option<AfXdpPort>) = match backend {
                Backend::AfXdp(mode) => {
                    let p = AfXdpPort::open(AfXdpConfig {
                        xdp_mode: mode,
                        // Deep rings: the worker competes for 2 cores.
                        fill_ring: 8192,
                        rx_ring: 8192,
                        ..AfXdpConfig::new(&a, 2048)
                    })
                    .unwrap();
                    let empty = netio::pcap_file::Capture::new();
                    let dummy = netio::mem::MemPort::from_capture("-", [0; 6], 1500, empty, 1);
                    (Box::new(dummy), Some(p))
                }
                Backend::AfPacket => (
                    Box::new(AfPacketPort::open(AfPacketConfig::new(&a)).unwrap()),
                    None,
                ),
            };
            let port: &dyn Port = match &xdp {
                Some(p) => p,
                None => &*port,
            };
            let mut rx = port.open_rx(0, &mut pool).unwrap();
            let stop2 = stop.clone();
            let s = std::thread::spawn(move || sender(nsn, b, stop2, sent));
            std::thread::sleep(Duration::from_millis(200));
            let mut burst = Burst::new();
            let mut n = 0u64;
            let t0 = Instant::now();
            while t0.elapsed().as_secs_f64() < SECS {
                let k = rx.rx_burst(&mut pool, &mut burst, netio::BURST_SIZE);
                n += k as u64;
                pool.free_all(burst.as_slice());
                burst.clear();
            }
            let secs = t0.elapsed().as_secs_f64();
            stop.store(true, Ordering::Relaxed);
            s.join().unwrap();
            let stats = xdp.as_ref().and_then(|p| p.rx_stats(0));
            rx.release(&mut pool);
            (n, secs, format!("{stats:?}"))
        }
    });
    eprintln!(
        "{backend:?}: received {:.3} Mpps on one core (sender offered {:.3} Mpps over the whole run); socket stats {desc}",
        received as f64 / secs / 1e6,
        sent.load(Ordering::Relaxed) as f64 / (secs + 0.2) / 1e6
    );
}

#[test]
#[ignore]
fn rx_rate() {
    if !require_root("rx_rate") {
        return;
    }
    for b in [
        Backend::AfXdp(XdpMode::Native),
        Backend::AfXdp(XdpMode::Generic),
        Backend::AfPacket,
    ] {
        measure(b);
    }
}
