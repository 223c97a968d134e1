//! The metrics endpoint over HTTP: what a Prometheus scrape sees.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};

use control::metrics::MetricsServer;
use dataplane::report::{Cycles, PortReport, Report};
use dataplane::stats::WorkerStats;
use dataplane::DropReason;

fn report(rx: u64) -> Report {
    let w = WorkerStats::new(0, 2, &[(0, 0)]);
    w.ports[0].rx_packets.add(rx);
    w.ports[0].forwarded.add(rx - 1);
    w.drop_on(0, DropReason::NoRoute, 1);
    w.ports[1].tx_packets.add(rx - 1);
    let s = w.snapshot();
    Report {
        control_plane: Some(dataplane::report::ControlPlane {
            routes_v4: 7,
            routes_v6: 3,
            neighbors: [("reachable".to_string(), 2), ("static".to_string(), 1)].into(),
            kernel_sync: Some(dataplane::report::KernelSyncState {
                following: true,
                installed: 4,
                skipped: 1,
                resyncs: 0,
            }),
            next_hops: Some(dataplane::report::NextHopUse {
                capacity: 65536,
                used: 9,
                retired: 2,
                by_source: [("kernel".to_string(), 3), ("port".to_string(), 4)].into(),
                limits: [("kernel".to_string(), 16384)].into(),
                ecmp_groups: 1,
                ecmp_group_capacity: 4096,
            }),
        }),
        version: "0.1.0".into(),
        elapsed_s: 1.0,
        workers: 1,
        mode: "poll".into(),
        fast_path: "off".into(),
        ports: vec![
            PortReport {
                // The XDP tier's share on the ingress port.
                fast_path: Some(dataplane::report::FastPathPort {
                    forwarded: 3,
                    punted: [("ttl".to_string(), 2)].into(),
                    ..Default::default()
                }),
                ..PortReport::new("in".into(), s.ports[0].clone())
            },
            PortReport::new("out".into(), s.ports[1].clone()),
        ],
        drops: [("no_route".to_string(), 1)].into(),
        cycles_per_packet: Cycles {
            rx: 20.0,
            process: 30.0,
            tx: 10.0,
            total: 60.0,
        },
        sleeps: 0,
        notes: vec![],
        totals: s.clone(),
        per_worker: vec![s],
        memory: vec![dataplane::report::MemoryRegion {
            region: "lpm4_tbl24".into(),
            mappings: 1,
            bytes: 64 << 20,
            huge_explicit_bytes: 0,
            huge_thp_bytes: 60 << 20,
        }],
    }
}

fn get(addr: std::net::SocketAddr, path: &str) -> String {
    let mut c = TcpStream::connect(addr).unwrap();
    write!(c, "GET {path} HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n").unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    s
}

#[test]
fn a_scrape_shows_the_snapshot_of_that_moment() {
    let rx = Arc::new(Mutex::new(5u64));
    let src = rx.clone();
    let server = MetricsServer::start(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(move || Some(report(*src.lock().unwrap()))),
    )
    .unwrap();
    let page = get(server.addr(), "/metrics");
    assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
    assert!(
        page.contains("Content-Type: application/openmetrics-text"),
        "{page}"
    );
    for line in [
        "softrouter_port_rx_packets_total{port=\"in\"} 5",
        "softrouter_port_tx_packets_total{port=\"out\"} 4",
        "softrouter_port_forwarded_packets_total{port=\"in\"} 4",
        "softrouter_port_drops_total{port=\"in\",direction=\"in\",reason=\"no_route\"} 1",
        "softrouter_worker_forwarded_packets_total{worker=\"0\"} 4",
        "softrouter_cycles_per_packet{stage=\"total\"} 60.0",
        "softrouter_workers 1",
        "softrouter_memory_bytes{region=\"lpm4_tbl24\",pages=\"thp\"} 62914560",
        "softrouter_memory_bytes{region=\"lpm4_tbl24\",pages=\"small\"} 4194304",
        "softrouter_memory_bytes{region=\"lpm4_tbl24\",pages=\"explicit\"} 0",
        "softrouter_fast_path_forwarded_packets_total{port=\"in\"} 3",
        "softrouter_fast_path_punted_packets_total{port=\"in\",reason=\"ttl\"} 2",
        "softrouter_routes{family=\"ipv4\"} 7",
        "softrouter_routes{family=\"ipv6\"} 3",
        "softrouter_neighbors{state=\"reachable\"} 2",
        "softrouter_neighbors{state=\"static\"} 1",
        "softrouter_kernel_sync_following 1",
        "softrouter_kernel_sync_routes{what=\"installed\"} 4",
        "softrouter_kernel_sync_routes{what=\"skipped\"} 1",
        "softrouter_kernel_sync_resyncs_total 0",
        "softrouter_next_hops{source=\"kernel\"} 3",
        "softrouter_next_hops_limit{source=\"kernel\"} 16384",
        "softrouter_next_hops_table{what=\"used\"} 9",
        "softrouter_next_hops_table{what=\"retired\"} 2",
        "softrouter_ecmp_groups{what=\"capacity\"} 4096",
        "# EOF",
    ] {
        assert!(page.contains(line), "missing {line:?} in\n{page}");
    }
    *rx.lock().unwrap() = 9;
    assert!(
        get(server.addr(), "/metrics").contains("softrouter_port_rx_packets_total{port=\"in\"} 9")
    );
    assert!(get(server.addr(), "/").starts_with("HTTP/1.1 404"));
}

#[test]
fn a_router_not_up_yet_is_an_empty_page() {
    let server = MetricsServer::start("127.0.0.1:0".parse().unwrap(), Arc::new(|| None)).unwrap();
    let page = get(server.addr(), "/metrics");
    assert!(
        page.starts_with("HTTP/1.1 200 OK") && page.ends_with("# EOF\n"),
        "{page}"
    );
    assert!(!page.contains("softrouter_"));
}
