//! The OpenMetrics (Prometheus) endpoint: `GET /metrics` on
//! `[metrics] listen`.
//!
//! Every scrape takes one statistics snapshot (the same
//! [`schema::report::Report`] as `--stats-json`: per-worker counters
//! read with plain loads, no lock the workers take) and encodes it with
//! `prometheus-client`'s text encoder through a [`Collector`], so nothing
//! is kept between scrapes and the fast path never knows it was scraped.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use schema::report::Report;

use crate::serve::{Answer, Limits, Parsed, Refusal, Server, Service};

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
        let port_counter = |enc: &mut DescriptorEncoder,
                            name,
                            help,
                            f: fn(&schema::stats::PortCounters) -> u64| {
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
        gauges(
            &mut enc,
            "softrouter_memory_bytes",
            "Bytes of the big memory regions, by page kind (explicit/thp huge pages, small)",
            r.memory.iter().flat_map(|m| {
                [
                    ("explicit", m.huge_explicit_bytes),
                    ("thp", m.huge_thp_bytes),
                    ("small", m.small_bytes()),
                ]
                .map(|(pages, v)| {
                    (
                        [("region", m.region.clone()), ("pages", pages.to_string())],
                        v as i64,
                    )
                })
            }),
        )?;
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
    cp: &schema::report::ControlPlane,
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
    if let Some(nh) = &cp.next_hops {
        next_hops(enc, nh)?;
    }
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

/// The next-hop table: capacity, use by source and their limits, ids
/// waiting for a grace period, ECMP groups.
fn next_hops(enc: &mut DescriptorEncoder, nh: &schema::report::NextHopUse) -> std::fmt::Result {
    gauges(
        enc,
        "softrouter_next_hops",
        "Next hops in use by source (config, ctl, kernel: gateways of routes and static neighbours; neighbor: dynamic entries; port: connected and local)",
        nh.by_source
            .iter()
            .map(|(s, &n)| ([("source", s.clone())], n as i64)),
    )?;
    gauges(
        enc,
        "softrouter_next_hops_limit",
        "Next hops each source may hold",
        nh.limits
            .iter()
            .map(|(s, &n)| ([("source", s.clone())], n as i64)),
    )?;
    gauges(
        enc,
        "softrouter_next_hops_table",
        "The next-hop table: capacity, in use, released and waiting for a grace period",
        [
            ([("what", "capacity")], nh.capacity as i64),
            ([("what", "used")], nh.used as i64),
            ([("what", "retired")], nh.retired as i64),
        ],
    )?;
    gauges(
        enc,
        "softrouter_ecmp_groups",
        "ECMP groups in use and their capacity",
        [
            ([("what", "used")], nh.ecmp_groups as i64),
            ([("what", "capacity")], nh.ecmp_group_capacity as i64),
        ],
    )
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

/// Connections open at once; one more is answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 2048;

/// The longest request head (request line and headers) read.
pub const MAX_HEAD: usize = 16 * 1024;

/// The endpoint's limits (see [`crate::serve`]): a whole request head
/// within 5 s of connecting, the page taken within 10 s, a scrape started
/// within 5 s of its request (Prometheus's default scrape timeout is 10 s).
pub const LIMITS: Limits = Limits {
    max_connections: MAX_CONNECTIONS,
    request_deadline: Duration::from_secs(5),
    answer_deadline: Duration::from_secs(10),
    start_within: Duration::from_secs(5),
    threads: 2,
    queue: 16,
};

/// A listening metrics endpoint; stops when dropped, without waiting for
/// any client.
pub struct MetricsServer {
    addr: SocketAddr,
    _server: Server,
}

impl MetricsServer {
    /// Serve `GET /metrics` on `listen` (port 0: any free port).
    pub fn start(listen: SocketAddr, snapshot: Snapshot) -> Result<MetricsServer> {
        MetricsServer::start_with(listen, snapshot, LIMITS)
    }

    /// [`MetricsServer::start`] with other limits (tests use short ones).
    pub fn start_with(
        listen: SocketAddr,
        snapshot: Snapshot,
        limits: Limits,
    ) -> Result<MetricsServer> {
        let listener =
            TcpListener::bind(listen).with_context(|| format!("metrics: binding {listen}"))?;
        let addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let listener = mio::net::TcpListener::from_std(listener);
        let reg = registry(snapshot);
        let server = Server::start("sr-metrics", listener, Arc::new(Scrapes { reg }), limits)
            .context("metrics: starting its threads")?;
        Ok(MetricsServer {
            addr,
            _server: server,
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

/// HTTP/1.x on [`crate::serve`]: one request per connection, answered and
/// closed.
struct Scrapes {
    reg: Registry,
}

impl Service for Scrapes {
    type Job = ();

    fn max_request(&self) -> usize {
        MAX_HEAD
    }

    fn parse(&self, buf: &[u8], seen: usize) -> Parsed<()> {
        // The head ends at an empty line (whose first bytes may have been
        // seen); a body is never read.
        let end = (seen.saturating_sub(3)..buf.len()).find_map(|i| {
            let rest = &buf[i..];
            if rest.starts_with(b"\r\n\r\n") {
                Some(i + 4)
            } else if rest.starts_with(b"\n\n") {
                Some(i + 2)
            } else {
                None
            }
        });
        let Some(len) = end else {
            if buf.len() < MAX_HEAD {
                return Parsed::Incomplete;
            }
            return Parsed::Answer {
                len: buf.len(),
                bytes: http(
                    "431 Request Header Fields Too Large",
                    TEXT,
                    &format!("a request head longer than {MAX_HEAD} bytes\n"),
                ),
                close: true,
            };
        };
        let first = buf.split(|&b| b == b'\n').next().unwrap_or_default();
        let first = String::from_utf8_lossy(first);
        let mut parts = first.split_whitespace();
        let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        if method == "GET" && (path == "/metrics" || path.starts_with("/metrics?")) {
            Parsed::Request { len, job: () }
        } else {
            Parsed::Answer {
                len,
                bytes: http("404 Not Found", TEXT, "only GET /metrics here\n"),
                close: true,
            }
        }
    }

    fn run(&self, _: ()) -> Answer {
        Answer {
            bytes: http("200 OK", OPENMETRICS, &scrape(&self.reg)),
            close: true,
        }
    }

    fn refuse(&self, why: Refusal, message: &str) -> Vec<u8> {
        let status = match why {
            Refusal::Timeout => "408 Request Timeout",
            Refusal::Full | Refusal::Busy | Refusal::Late => "503 Service Unavailable",
        };
        http(status, TEXT, &format!("{message}\n"))
    }
}

const TEXT: &str = "text/plain; charset=utf-8";
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A whole HTTP/1.1 answer that closes the connection.
fn http(status: &str, ctype: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}
