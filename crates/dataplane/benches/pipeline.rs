//! One worker on `mem` ports forwarding 64-byte IPv4/UDP (78-byte IPv6)
//! frames to many destinations over the full routing table
//! (data/routes/full-table.txt.gz). Reports Mpps and cycles per packet per
//! stage from the worker's counters. Skips if the table is missing.
//!
//! `cargo bench -p softrouter-dataplane --bench pipeline`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dataplane::{Router, Worker};
use netio::mem::MemPort;
use netio::pcap_file::Capture;
use netio::{Pool, Port, PortInfo};
use std::net::IpAddr;
use std::path::Path;

const TABLE: &str = "/work/shared/data/routes/full-table.txt.gz";

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
"#;

fn setup(v6: bool) -> Option<Worker> {
    let prefixes = fib::routes_file::load_prefixes(TABLE).ok()?;
    let cfg = config::parse(CONFIG, Path::new("bench.toml")).unwrap();
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
    let gws4: Vec<IpAddr> = (2..6)
        .map(|i| format!("198.19.0.{i}").parse().unwrap())
        .collect();
    let gws6: Vec<IpAddr> = (2..6)
        .map(|i| format!("2001:2:0:2::{i}").parse().unwrap())
        .collect();
    for (i, g) in gws4.iter().chain(&gws6).enumerate() {
        router
            .set_neighbor(
                dataplane::RouteSource::Config,
                1,
                *g,
                [2, 0, 0, 0, 1, i as u8],
            )
            .unwrap();
    }
    let mut dsts = Vec::new();
    for (i, p) in prefixes.iter().enumerate() {
        let (gw, is6) = match p {
            fib::Prefix::V4(_) => (gws4[i % 4], false),
            fib::Prefix::V6(_) => (gws6[i % 4], true),
        };
        let cidr = config::Cidr {
            addr: p.addr(),
            len: p.len(),
        };
        if router
            .add_route(dataplane::RouteSource::Config, cidr, &[(gw, 1)])
            .is_ok()
            && is6 == v6
            && i % 97 == 0
        {
            dsts.push(p.addr());
        }
    }
    let mut cap = Capture::new();
    for (i, d) in dsts.iter().take(4096).enumerate() {
        let mut v = Vec::new();
        let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 2], infos[0].mac);
        match d {
            IpAddr::V4(a) => {
                let mut o = a.octets();
                o[3] |= 1;
                b.ipv4([198, 18, 0, 2], o, 64)
                    .udp(1000 + i as u16, 7)
                    .write(&mut v, &[0; 18])
                    .unwrap();
            }
            IpAddr::V6(a) => {
                let mut o = a.octets();
                o[15] |= 1;
                b.ipv6(
                    "2001:2:0:1::2"
                        .parse::<std::net::Ipv6Addr>()
                        .unwrap()
                        .octets(),
                    o,
                    64,
                )
                .udp(1000 + i as u16, 7)
                .write(&mut v, &[0; 16])
                .unwrap();
            }
        }
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
    // The router must outlive the bench: leak it (one per run).
    let w = Worker::new(0, router.shared(), pool, rx, tx);
    std::mem::forget(router);
    Some(w)
}

fn bench(c: &mut Criterion) {
    for (name, v6, len) in [("ipv4_64B", false, 64u64), ("ipv6_78B", true, 78)] {
        let Some(mut w) = setup(v6) else {
            eprintln!("{TABLE} missing: skipping");
            return;
        };
        let mut g = c.benchmark_group("pipeline");
        g.throughput(Throughput::Elements(256));
        let _ = len;
        g.bench_function(name, |b| b.iter(|| w.poll_once(256)));
        g.finish();
        let s = w.stats().snapshot();
        let (rx, p, tx) = s.cycles_per_packet();
        println!(
            "{name}: forwarded {} drops {:?}; cycles/packet rx {rx:.1} process {p:.1} tx {tx:.1} total {:.1}",
            s.forwarded,
            s.drops,
            rx + p + tx
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3)).warm_up_time(std::time::Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
