//! `[router] tx_queues = "shared"` (paper 002's shared TX ring, kept to
//! show its cost): the same frames leave the same way as with per-worker
//! queues, and two workers on one port take its lock in turn without
//! losing or duplicating a frame.

mod common;

use common::*;

fn shared(cfg: &str) -> String {
    cfg.replace("workers = 1", "workers = 1\ntx_queues = \"shared\"")
}

fn frames() -> Vec<Vec<u8>> {
    (0..40u16)
        .map(|i| {
            udp4(
                HOST0,
                MAC0,
                "198.18.0.2",
                "198.19.128.9",
                64,
                1000 + i,
                b"x",
                false,
            )
        })
        .collect()
}

#[test]
fn shared_tx_forwards_exactly_as_per_worker_queues() {
    let mut a = Rig::new(CONFIG, vec![frames(), vec![], vec![]]);
    a.run();
    let mut b = Rig::new(&shared(CONFIG), vec![frames(), vec![], vec![]]);
    b.run();
    let (sa, sb) = (a.sent(1), b.sent(1));
    assert_eq!(sa.len(), 40, "the route's gateway is a static neighbour");
    assert_eq!(sa, sb);
    assert_eq!(a.stats().ports[1].tx_packets, b.stats().ports[1].tx_packets);
}

#[test]
fn tx_queues_takes_only_its_two_values() {
    let bad = CONFIG.replace("workers = 1", "workers = 1\ntx_queues = \"one\"");
    let e = config::parse(&bad, std::path::Path::new("r.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("r.toml:") && e.contains("per-worker, shared"),
        "{e}"
    );
}

/// Two workers on their own threads, one router, both transmitting on
/// port 1 through its shared lock: every frame of each leaves once.
#[test]
fn two_workers_take_the_shared_lock_in_turn() {
    use netio::pcap::PcapPort;
    use netio::pcap_file::Capture;
    use netio::{Pool, Port};
    use std::sync::Arc;
    let cfg = config::parse(&shared(CONFIG), std::path::Path::new("r.toml")).unwrap();
    let router = dataplane::Router::new(&cfg, &infos(&cfg)).unwrap();
    const N: usize = 20_000;
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let ports: Vec<Arc<PcapPort>> = infos(&cfg)
                .iter()
                .enumerate()
                .map(|(i, info)| {
                    let mut c = Capture::new();
                    if i == 0 {
                        let f = &frames()[0];
                        for _ in 0..N {
                            c.push(f);
                        }
                    }
                    Arc::new(PcapPort::in_memory(&info.name, info.mac, info.mtu, c))
                })
                .collect();
            let shared = router.shared();
            std::thread::spawn(move || {
                let mut pool = Pool::new(1024, 2048).unwrap();
                let rx = ports
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (i, p.open_rx(0, &mut pool).unwrap()))
                    .collect();
                let tx = ports
                    .iter()
                    .map(|p| p.open_tx(0, &mut pool).unwrap())
                    .collect();
                let mut w = dataplane::Worker::new(0, shared, pool, rx, tx);
                while !(w.inputs_exhausted() && w.pending() == 0) {
                    w.poll_once(64);
                }
                let stats = w.stats();
                drop(w.shutdown());
                (ports[1].take_sent().len(), stats.snapshot())
            })
        })
        .collect();
    for h in workers {
        let (sent, s) = h.join().unwrap();
        dataplane::assert_accounting(&s);
        assert_eq!(sent, N, "{s:?}");
    }
}
