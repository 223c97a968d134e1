//! The OpenMetrics (Prometheus) endpoint: `GET /metrics` on
//! `[metrics] listen`.
//!
//! Every scrape takes one statistics snapshot (the same
//! [`dataplane::report::Report`] as `--stats-json`: per-worker counters
//! read with plain loads, no lock the workers take) and encodes it with
//! `prometheus-client`'s text encoder through a [`Collector`], so nothing
//! is kept between scrapes and the fast path never knows it was scraped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use dataplane::report::Report;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

/// Where a scrape's snapshot comes from (`None`: the router is not up).
pub type Snapshot = Arc<dyn Fn() -> Option<Report> + Send + Sync>;

/// The router's statistics as metrics.
pub struct ReportCollector {
    snapshot: Snapshot,
}

impl std::fmt::Debug for ReportCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReportCollector")
    }
}

/// One counter family: (labels, value) rows under one name.
fn counters<L: prometheus_client::encoding::EncodeLabelSet>(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    rows: impl IntoIterator<Item = (L, u64)>,
) -> std::fmt::Result {
    let c = ConstCounter::new(0u64);
    let mut m = enc.encode_descriptor(name, help, None, c.metric_type())?;
    for (labels, v) in rows {
        ConstCounter::new(v).encode(m.encode_family(&labels)?)?;
    }
    Ok(())
}

impl Collector for ReportCollector {
    fn encode(&self, mut enc: DescriptorEncoder) -> std::fmt::Result {
        let Some(r) = (self.snapshot)() else {
            return Ok(());
        };
        let ports = || r.ports.iter();
        let port_counter =
            |enc: &mut DescriptorEncoder,
             name,
             help,
             f: fn(&dataplane::stats::PortCounters) -> u64| {
                counters(
                    enc,
                    name,
                    help,
                    ports().map(|p| ([("port", p.name.clone())], f(&p.counters))),
                )
            };
        port_counter(
            &mut enc,
            "softrouter_port_rx_packets",
            "Frames received (both tiers)",
            |c| c.rx_packets,
        )?;
        // The XDP tier's share, on the ports it serves.
        let tier = || ports().filter_map(|p| Some((p, p.fast_path.as_ref()?)));
        counters(
            &mut enc,
            "softrouter_fast_path_forwarded_packets",
            "Packets the XDP tier forwarded, by ingress port",
            tier().map(|(p, f)| ([("port", p.name.clone())], f.forwarded)),
        )?;
        counters(
            &mut enc,
            "softrouter_fast_path_punted_packets",
            "Frames the XDP tier handed to the workers, by port and reason",
            tier().flat_map(|(p, f)| {
                f.punted
                    .iter()
                    .map(|(k, v)| ([("port", p.name.clone()), ("reason", k.clone())], *v))
            }),
        )?;
        counters(
            &mut enc,
            "softrouter_fast_path_to_kernel_packets",
            "Frames the XDP tier passed to the kernel's stack ([kernel] local), by port",
            tier().map(|(p, f)| ([("port", p.name.clone())], f.to_kernel)),
        )?;
        port_counter(
            &mut enc,
            "softrouter_port_rx_bytes",
            "Bytes received (both tiers)",
            |c| c.rx_bytes,
        )?;
        port_counter(&mut enc, "softrouter_port_tx_packets", "Frames sent", |c| {
            c.tx_packets
        })?;
        port_counter(&mut enc, "softrouter_port_tx_bytes", "Bytes sent", |c| {
            c.tx_bytes
        })?;
        port_counter(
            &mut enc,
            "softrouter_port_forwarded_packets",
            "Packets forwarded, by ingress port",
            |c| c.forwarded,
        )?;
        port_counter(
            &mut enc,
            "softrouter_port_local_packets",
            "Packets for the router itself",
            |c| c.local,
        )?;
        counters(
            &mut enc,
            "softrouter_port_drops",
            "Frames dropped, by port, direction and reason",
            ports().flat_map(|p| {
                let input = p.counters.drops.iter().map(|(k, v)| ("in", k, *v));
                let output = p.counters.output_drops.iter().map(|(k, v)| ("out", k, *v));
                input.chain(output).map(|(dir, k, v)| {
                    (
                        [
                            ("port", p.name.clone()),
                            ("direction", dir.to_string()),
                            ("reason", k.to_string()),
                        ],
                        v,
                    )
                })
            }),
        )?;
        counters(
            &mut enc,
            "softrouter_worker_forwarded_packets",
            "Packets forwarded, by worker",
            r.per_worker
                .iter()
                .enumerate()
                .map(|(i, w)| ([("worker", i.to_string())], w.forwarded)),
        )?;
        let g = ConstGauge::new(0.0f64);
        let mut m = enc.encode_descriptor(
            "softrouter_cycles_per_packet",
            "CPU cycles per packet, by stage",
            None,
            g.metric_type(),
        )?;
        let c = &r.cycles_per_packet;
        for (stage, v) in [
            ("rx", c.rx),
            ("process", c.process),
            ("tx", c.tx),
            ("total", c.total),
        ] {
            ConstGauge::new(v).encode(m.encode_family(&[("stage", stage)])?)?;
        }
        let workers = ConstGauge::new(r.workers as i64);
        workers.encode(enc.encode_descriptor(
            "softrouter_workers",
            "Worker threads",
            None,
            workers.metric_type(),
        )?)?;
        if let Some(cp) = &r.control_plane {
            control_plane(&mut enc, cp)?;
        }
        Ok(())
    }
}

/// One gauge family: (labels, value) rows under one name.
fn gauges<L: prometheus_client::encoding::EncodeLabelSet>(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    rows: impl IntoIterator<Item = (L, i64)>,
) -> std::fmt::Result {
    let g = ConstGauge::new(0i64);
    let mut m = enc.encode_descriptor(name, help, None, g.metric_type())?;
    for (labels, v) in rows {
        ConstGauge::new(v).encode(m.encode_family(&labels)?)?;
    }
    Ok(())
}

/// Routes, neighbours by state, and the kernel mirror.
fn control_plane(
    enc: &mut DescriptorEncoder,
    cp: &dataplane::report::ControlPlane,
) -> std::fmt::Result {
    gauges(
        enc,
        "softrouter_routes",
        "Routes installed (connected and local included)",
        [
            ([("family", "ipv4")], cp.routes_v4 as i64),
            ([("family", "ipv6")], cp.routes_v6 as i64),
        ],
    )?;
    gauges(
        enc,
        "softrouter_neighbors",
        "Neighbour entries by state",
        cp.neighbors
            .iter()
            .map(|(s, &n)| ([("state", s.clone())], n as i64)),
    )?;
    if let Some(k) = &cp.kernel_sync {
        let following = ConstGauge::new(i64::from(k.following));
        following.encode(enc.encode_descriptor(
            "softrouter_kernel_sync_following",
            "1 while the kernel routing table is followed",
            None,
            following.metric_type(),
        )?)?;
        gauges(
            enc,
            "softrouter_kernel_sync_routes",
            "Kernel routes installed, and seen but not taken",
            [
                ([("what", "installed")], k.installed as i64),
                ([("what", "skipped")], k.skipped as i64),
            ],
        )?;
        let resyncs = ConstCounter::new(k.resyncs);
        resyncs.encode(enc.encode_descriptor(
            "softrouter_kernel_sync_resyncs",
            "Times kernel events were lost and the table dumped again",
            None,
            resyncs.metric_type(),
        )?)?;
    }
    Ok(())
}

/// The registry for `snapshot`.
pub fn registry(snapshot: Snapshot) -> Registry {
    let mut reg = Registry::default();
    reg.register_collector(Box::new(ReportCollector { snapshot }));
    reg
}

/// The text of one scrape.
pub fn scrape(reg: &Registry) -> String {
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, reg).expect("encoding into a String");
    out
}

/// A listening metrics endpoint; stops when dropped.
pub struct MetricsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Serve `GET /metrics` on `listen` (port 0: any free port).
    pub fn start(listen: SocketAddr, snapshot: Snapshot) -> Result<MetricsServer> {
        let listener =
            TcpListener::bind(listen).with_context(|| format!("metrics: binding {listen}"))?;
        let addr = listener.local_addr()?;
        let reg = registry(snapshot);
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("sr-metrics".into())
                .spawn(move || {
                    for conn in listener.incoming() {
                        if stop.load(Ordering::Acquire) {
                            break;
                        }
                        if let Ok(c) = conn {
                            let _ = answer(c, &reg);
                        }
                    }
                })?
        };
        Ok(MetricsServer {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One HTTP/1.x request, answered and closed.
fn answer(c: TcpStream, reg: &Registry) -> std::io::Result<()> {
    c.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut r = BufReader::new(c.try_clone()?);
    let mut request = String::new();
    r.by_ref().take(8192).read_line(&mut request)?;
    // Skip the headers (bounded).
    let mut line = String::new();
    for _ in 0..100 {
        line.clear();
        if r.by_ref().take(8192).read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
    }
    let mut parts = request.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (status, ctype, body) =
        if method == "GET" && (path == "/metrics" || path.starts_with("/metrics?")) {
            (
                "200 OK",
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
                scrape(reg),
            )
        } else {
            (
                "404 Not Found",
                "text/plain; charset=utf-8",
                "only GET /metrics here\n".to_string(),
            )
        };
    let mut w = c;
    write!(
        w,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}
