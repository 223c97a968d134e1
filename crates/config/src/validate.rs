//! From the raw, positioned form to a [`Config`]: every check that needs
//! more than the TOML grammar, each failing with the line of the value.
//!
//! The rules on routes and next hops ([`check_route_prefix`],
//! [`check_next_hop`]) are shared with the routes-file check
//! ([`crate::routes_file`]), so a route is judged the same wherever it is
//! written.

use crate::raw::*;
use crate::*;
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::ops::Range;
use std::path::{Component, Path, PathBuf};

type PortLookup<'a> = dyn Fn(&S<String>, &str) -> Result<usize, ConfigError> + 'a;

struct Ctx<'a> {
    text: &'a str,
    path: &'a Path,
}

impl Ctx<'_> {
    fn err<T>(&self, span: Range<usize>, msg: impl Into<String>) -> Result<T, ConfigError> {
        Err(ConfigError::at(self.path, self.text, span, msg))
    }

    /// An integer field within `range`.
    fn int(
        &self,
        v: &Option<S<i64>>,
        what: &str,
        range: std::ops::RangeInclusive<i64>,
        default: i64,
    ) -> Result<i64, ConfigError> {
        match v {
            None => Ok(default),
            Some(v) if range.contains(v.get_ref()) => Ok(*v.get_ref()),
            Some(v) => self.err(
                v.span(),
                format!(
                    "{what}: {} is out of range ({}..={})",
                    v.get_ref(),
                    range.start(),
                    range.end()
                ),
            ),
        }
    }

    /// A path relative to the configuration file's folder, with `.` and
    /// `..` resolved lexically (so two spellings of one file compare equal).
    fn path(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        let joined = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.path.parent().unwrap_or(Path::new(".")).join(p)
        };
        normalize(&joined)
    }
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

pub fn validate(raw: RawConfig, text: &str, path: &Path) -> Result<Config, ConfigError> {
    let cx = Ctx { text, path };
    let ports = raw
        .port
        .iter()
        .map(|p| port(&cx, p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut names = HashSet::new();
    for (p, raw_p) in ports.iter().zip(&raw.port) {
        if !names.insert(p.name.clone()) {
            return cx.err(
                raw_p.get_ref().name.span(),
                format!("port {:?}: name: another port has this name", p.name),
            );
        }
    }
    if ports.is_empty() {
        return cx.err(
            0..0,
            "no [[port]] defined: a router needs at least one port",
        );
    }
    check_overlapping_subnets(&cx, &ports, &raw.port)?;
    check_capture_files(&cx, &ports, &raw.port)?;

    let port_of = |name: &S<String>, what: &str| -> Result<usize, ConfigError> {
        ports
            .iter()
            .position(|p| &p.name == name.get_ref())
            .map_or_else(
                || {
                    cx.err(
                        name.span(),
                        format!("{what}: no port is named {}", excerpt(name.get_ref())),
                    )
                },
                Ok,
            )
    };

    // Where each route and neighbor was first given: (index, byte offset);
    // the line is counted only for an error.
    let line_at = |offset: usize| ConfigError::at(path, text, offset..offset, "").line;
    let mut routes: Vec<Route> = Vec::new();
    let mut first_route: HashMap<Cidr, (usize, usize)> = HashMap::new();
    for r in &raw.route {
        let route = route(&cx, r.get_ref(), &ports)?;
        let at = r.get_ref().prefix.span();
        if let Some(&(i, offset)) = first_route.get(&route.prefix) {
            if routes[i].via != route.via {
                return cx.err(
                    at,
                    format!(
                        "route {}: prefix: defined again with other next hops (first at line {})",
                        route.prefix,
                        line_at(offset)
                    ),
                );
            }
            continue; // the same route twice: once is enough
        }
        first_route.insert(route.prefix, (routes.len(), at.start));
        routes.push(route);
    }

    let mut neighbors: Vec<Neighbor> = Vec::new();
    let mut first_neighbor: HashMap<IpAddr, (usize, usize)> = HashMap::new();
    for n in &raw.neighbor {
        let n = n.get_ref();
        let address: IpAddr = n.address.get_ref().parse().or_else(|_| {
            cx.err(
                n.address.span(),
                format!(
                    "neighbor: address: {} is not an IP address",
                    excerpt(n.address.get_ref())
                ),
            )
        })?;
        let port = port_of(&n.port, &format!("neighbor {address}: port"))?;
        let this =
            judge_neighbor(&ports, address, n.mac.get_ref(), port).or_else(|(part, m)| {
                let span = match part {
                    NeighborPart::Mac => n.mac.span(),
                    NeighborPart::Address => n.address.span(),
                };
                cx.err(span, m)
            })?;
        if let Some(&(i, offset)) = first_neighbor.get(&address) {
            if neighbors[i] != this {
                return cx.err(
                    n.address.span(),
                    format!(
                        "neighbor {address}: address: defined again with another mac or port (first at line {})",
                        line_at(offset)
                    ),
                );
            }
            continue;
        }
        first_neighbor.insert(address, (neighbors.len(), n.address.span().start));
        neighbors.push(this);
    }

    let router = router(
        &cx,
        raw.router.as_ref().map(|r| r.get_ref()),
        &raw.queue,
        &port_of,
    )?;

    if router.forwarding == Forwarding::CrossConnect && ports.len() % 2 != 0 {
        let span = raw
            .router
            .as_ref()
            .and_then(|r| r.get_ref().forwarding.as_ref())
            .map_or(0..0, |f| f.span());
        return cx.err(
            span,
            format!(
                "router: forwarding: a cross-connect pairs ports 0-1, 2-3, ...; {} ports cannot be paired",
                ports.len()
            ),
        );
    }

    let routes_file = raw
        .routes_file
        .as_ref()
        .map(|f| cx.path(f.get_ref().path.get_ref()));
    if let (Some(p), Some(f)) = (&routes_file, &raw.routes_file) {
        if !p.is_file() {
            return cx.err(
                f.get_ref().path.span(),
                format!(
                    "routes_file: path: {} does not exist or is not a file",
                    p.display()
                ),
            );
        }
    }

    let control = control(&cx, raw.control.as_ref().map(|c| c.get_ref()))?;
    let metrics = match &raw.metrics {
        None => None,
        Some(m) => {
            let l = &m.get_ref().listen;
            match l.get_ref().parse::<std::net::SocketAddr>() {
                Ok(a) => Some(a),
                Err(_) => {
                    return cx.err(
                        l.span(),
                        format!(
                        "metrics: listen: {} is not an address and port (e.g. \"127.0.0.1:9469\")",
                        excerpt(l.get_ref())
                    ),
                    )
                }
            }
        }
    };

    let kernel_routes = match &raw.kernel {
        None => None,
        Some(k) => {
            let k = k.get_ref();
            let table = cx.int(&k.table, "kernel: table", 1..=0xffff_fffe, 254)? as u32;
            k.routes
                .as_ref()
                .is_some_and(|r| *r.get_ref())
                .then_some(table)
        }
    };

    let kernel_local = kernel_local(&cx, &raw, &router, &ports)?;

    Ok(Config {
        source: path.to_path_buf(),
        router,
        ports,
        routes,
        neighbors,
        routes_file,
        control,
        metrics,
        kernel_routes,
        kernel_local,
    })
}

/// `[kernel] local`: the XDP program is what hands the router's own
/// traffic to the kernel, so every port must be an `afxdp` port served by
/// the tier (a pcap or mem port has no kernel interface to share, and on
/// an afpacket port, or with the tier off, the workers would see ARP, ND
/// and TCP to the router besides the kernel).
fn kernel_local(
    cx: &Ctx,
    raw: &RawConfig,
    router: &Router,
    ports: &[Port],
) -> Result<bool, ConfigError> {
    let Some(local) = raw.kernel.as_ref().and_then(|k| k.get_ref().local.as_ref()) else {
        return Ok(false);
    };
    if !*local.get_ref() {
        return Ok(false);
    }
    if router.fast_path != FastPath::Xdp {
        return cx.err(
            local.span(),
            "kernel: local: needs the XDP tier ([router] fast_path = \"xdp\"), which hands \
             the kernel its share of the router's traffic",
        );
    }
    if let Some(p) = ports.iter().find(|p| p.driver != Driver::AfXdp) {
        return cx.err(
            local.span(),
            format!(
                "kernel: local: needs the XDP tier on every port, but port {:?} has driver {} \
                 (only afxdp ports share their addresses with the kernel)",
                p.name,
                format!("{:?}", p.driver).to_lowercase()
            ),
        );
    }
    Ok(true)
}

/// `[control]`: the socket (default [`DEFAULT_CONTROL_SOCKET`], `"off"`
/// for none, relative to the file's folder) and its group.
fn control(cx: &Ctx, raw: Option<&RawControl>) -> Result<Control, ConfigError> {
    let default = RawControl::default();
    let raw = raw.unwrap_or(&default);
    let socket = match &raw.socket {
        None => Some(PathBuf::from(DEFAULT_CONTROL_SOCKET)),
        Some(s) if s.get_ref() == "off" => None,
        Some(s) if s.get_ref().is_empty() => {
            return cx.err(
                s.span(),
                "control: socket: empty (a path, or \"off\" for none)",
            )
        }
        Some(s) => Some(cx.path(s.get_ref())),
    };
    let group = match &raw.group {
        Some(g) if g.get_ref().is_empty() || g.get_ref().contains(['/', ':', '\n']) => {
            return cx.err(
                g.span(),
                format!(
                    "control: group: {} is not a group name",
                    excerpt(g.get_ref())
                ),
            )
        }
        g => g.as_ref().map(|g| g.get_ref().clone()),
    };
    Ok(Control { socket, group })
}

fn router(
    cx: &Ctx,
    r: Option<&RawRouter>,
    queues: &[S<RawQueue>],
    port_of: &PortLookup,
) -> Result<Router, ConfigError> {
    let default = RawRouter::default();
    let r = r.unwrap_or(&default);
    let mode = match &r.mode {
        None => Mode::Adaptive,
        Some(m) => match m.get_ref().as_str() {
            "poll" => Mode::Poll,
            "interrupt" => Mode::Interrupt,
            "adaptive" => Mode::Adaptive,
            other => {
                return cx.err(
                    m.span(),
                    format!(
                        "router: mode: {} is not one of poll, interrupt, adaptive",
                        excerpt(other)
                    ),
                )
            }
        },
    };
    let forwarding = match &r.forwarding {
        None => Forwarding::Ip,
        Some(f) => match f.get_ref().as_str() {
            "ip" => Forwarding::Ip,
            "cross-connect" => Forwarding::CrossConnect,
            other => {
                return cx.err(
                    f.span(),
                    format!(
                        "router: forwarding: {} is not one of ip, cross-connect",
                        excerpt(other)
                    ),
                )
            }
        },
    };
    let tx_queues = match &r.tx_queues {
        None => TxQueues::PerWorker,
        Some(t) => match t.get_ref().as_str() {
            "per-worker" => TxQueues::PerWorker,
            "shared" => TxQueues::Shared,
            other => {
                return cx.err(
                    t.span(),
                    format!(
                        "router: tx_queues: {} is not one of per-worker, shared",
                        excerpt(other)
                    ),
                )
            }
        },
    };
    let fast_path = match &r.fast_path {
        // The XDP tier routes: a cross-connect has nothing for it to do.
        None if forwarding == Forwarding::CrossConnect => FastPath::Off,
        Some(m) if forwarding == Forwarding::CrossConnect && m.get_ref() == "xdp" => {
            return cx.err(
                m.span(),
                "router: fast_path: \"xdp\" routes in the driver; forwarding = \"cross-connect\" needs \"off\"",
            )
        }
        None => FastPath::Xdp,
        Some(m) => match m.get_ref().as_str() {
            "xdp" => FastPath::Xdp,
            "off" => FastPath::Off,
            other => {
                return cx.err(
                    m.span(),
                    format!(
                        "router: fast_path: {} is not one of xdp, off",
                        excerpt(other)
                    ),
                )
            }
        },
    };
    let hugepages = match &r.hugepages {
        None => HugePages::Auto,
        Some(h) => match h.get_ref().as_str() {
            "auto" => HugePages::Auto,
            "require" => HugePages::Require,
            "off" => HugePages::Off,
            other => {
                return cx.err(
                    h.span(),
                    format!(
                        "router: hugepages: {} is not one of auto, require, off",
                        excerpt(other)
                    ),
                )
            }
        },
    };
    let mut cores: Vec<usize> = Vec::new();
    if let Some(c) = &r.cores {
        for &core in c.get_ref() {
            if !(0..=1023).contains(&core) {
                return cx.err(
                    c.span(),
                    format!("router: cores: {core} is not a CPU number"),
                );
            }
            if cores.contains(&(core as usize)) {
                return cx.err(
                    c.span(),
                    format!(
                        "router: cores: core {core} is listed twice (two pinned workers on one core halve each other)"
                    ),
                );
            }
            cores.push(core as usize);
        }
    }
    // An explicit queue map defines the workers: one per distinct core.
    let mut queue_map = Vec::new();
    if !queues.is_empty() {
        if let Some(c) = &r.cores {
            return cx.err(
                c.span(),
                "router: cores: give either router.cores or [[queue]] entries, not both",
            );
        }
        let mut seen = HashSet::new();
        for q in queues {
            let q = q.get_ref();
            let port = port_of(&q.port, "queue: port")?;
            let queue = cx.int(&Some(q.queue.clone()), "queue: queue", 0..=1023, 0)? as u16;
            let core = cx.int(&Some(q.core.clone()), "queue: core", 0..=1023, 0)? as usize;
            if !seen.insert((port, queue)) {
                return cx.err(
                    q.queue.span(),
                    format!(
                        "queue: queue {queue} of port {:?} is assigned twice",
                        q.port.get_ref()
                    ),
                );
            }
            let worker = match cores.iter().position(|&c| c == core) {
                Some(w) => w,
                None => {
                    cores.push(core);
                    cores.len() - 1
                }
            };
            queue_map.push(QueueMap {
                port,
                queue,
                worker,
            });
        }
    }
    let workers_default = if cores.is_empty() {
        1
    } else {
        cores.len() as i64
    };
    let workers = cx.int(&r.workers, "router: workers", 1..=64, workers_default)? as usize;
    if !cores.is_empty() && workers != cores.len() {
        let span = r.workers.as_ref().map(|w| w.span()).unwrap_or(0..0);
        return cx.err(
            span,
            format!(
                "router: workers: {workers} workers but {} cores are given",
                cores.len()
            ),
        );
    }
    let frame_size = cx.int(&r.frame_size, "router: frame_size", 2048..=65536, 2048)?;
    if (frame_size as u64).count_ones() != 1 {
        return cx.err(
            r.frame_size.as_ref().unwrap().span(),
            format!("router: frame_size: {frame_size} is not a power of two"),
        );
    }
    Ok(Router {
        workers,
        cores,
        queue_map,
        mode,
        forwarding,
        tx_queues,
        fast_path,
        budget: cx.int(&r.budget, "router: budget", 1..=65536, 64)? as u32,
        icmp_rate: cx.int(&r.icmp_rate, "router: icmp_rate", 0..=1_000_000, 1000)? as u32,
        hold_packets: cx.int(&r.hold_packets, "router: hold_packets", 0..=4096, 16)? as u32,
        neighbor_timeout_s: cx.int(
            &r.neighbor_timeout,
            "router: neighbor_timeout",
            1..=86400,
            300,
        )? as u32,
        pool_frames: cx.int(&r.pool_frames, "router: pool_frames", 1024..=1 << 22, 16384)? as u32,
        frame_size: frame_size as u32,
        ipv4_tbl8_groups: opt_int(
            cx,
            &r.ipv4_tbl8_groups,
            "router: ipv4_tbl8_groups",
            256..=1 << 24,
        )?,
        ipv6_tbl8_groups: opt_int(
            cx,
            &r.ipv6_tbl8_groups,
            "router: ipv6_tbl8_groups",
            256..=1 << 22,
        )?,
        hugepages,
    })
}

/// An optional integer key: `None` if absent, else checked as
/// [`Ctx::int`] does.
fn opt_int(
    cx: &Ctx,
    v: &Option<S<i64>>,
    what: &str,
    range: std::ops::RangeInclusive<i64>,
) -> Result<Option<u32>, ConfigError> {
    match v {
        None => Ok(None),
        Some(_) => Ok(Some(cx.int(v, what, range, 0)? as u32)),
    }
}

/// Why `c` cannot be an interface address, if it cannot.
fn bad_interface_address(c: &Cidr) -> Option<&'static str> {
    if c.len == 0 {
        return Some("a /0 subnet would make every address on-link");
    }
    if c.addr.is_unspecified() {
        return Some("the unspecified address is no host's");
    }
    if c.addr.is_multicast() {
        return Some("a multicast address is no host's");
    }
    if c.addr.is_loopback() {
        return Some("loopback addresses (127/8, ::1) never leave a host");
    }
    if c.addr == IpAddr::from([255, 255, 255, 255]) {
        return Some("the limited broadcast address is no host's");
    }
    if c.is_subnet_router_anycast(c.addr) {
        return Some(
            "it is the subnet's Subnet-Router anycast address (RFC 4291 2.6.1), every router's on the link (use a host address, or /127 for a point-to-point link)",
        );
    }
    if c.is_network_or_broadcast(c.addr) {
        return Some(if c.addr == c.network() {
            "it is the subnet's network address (use a host address, or /31 for a point-to-point link)"
        } else {
            "it is the subnet's broadcast address (use a host address, or /31 for a point-to-point link)"
        });
    }
    None
}

fn port(cx: &Ctx, p: &S<RawPort>) -> Result<Port, ConfigError> {
    let p = p.get_ref();
    let name = p.name.get_ref().clone();
    if name.is_empty() || name.len() > 32 {
        return cx.err(p.name.span(), "port: name: must be 1 to 32 characters");
    }
    let field = |f: &str| format!("port {name:?}: {f}");
    let driver = match p.driver.get_ref().as_str() {
        "pcap" => Driver::Pcap,
        "mem" => Driver::Mem,
        "afxdp" => Driver::AfXdp,
        "afpacket" => Driver::AfPacket,
        other => {
            return cx.err(
                p.driver.span(),
                format!(
                    "{}: {} is not one of pcap, mem, afxdp, afpacket",
                    field("driver"),
                    excerpt(other)
                ),
            )
        }
    };
    let live = matches!(driver, Driver::AfXdp | Driver::AfPacket);
    let only = |v: bool, span: Option<Range<usize>>, f: &str, drivers: &str| {
        if let (true, Some(span)) = (v, span) {
            return cx.err(span, format!("{}: only for driver {drivers}", field(f)));
        }
        Ok(())
    };
    only(
        live,
        p.rx_pcap.as_ref().map(|v| v.span()),
        "rx_pcap",
        "pcap or mem",
    )?;
    only(
        driver != Driver::Pcap,
        p.tx_pcap.as_ref().map(|v| v.span()),
        "tx_pcap",
        "pcap",
    )?;
    only(
        !live,
        p.iface.as_ref().map(|v| v.span()),
        "iface",
        "afxdp or afpacket",
    )?;
    only(
        driver != Driver::AfXdp,
        p.xdp_mode.as_ref().map(|v| v.span()),
        "xdp_mode",
        "afxdp",
    )?;
    only(
        driver != Driver::AfXdp,
        p.zero_copy.as_ref().map(|v| v.span()),
        "zero_copy",
        "afxdp",
    )?;
    if live && p.iface.is_none() {
        return cx.err(
            p.driver.span(),
            format!(
                "{}: driver {:?} needs iface",
                field("iface"),
                p.driver.get_ref()
            ),
        );
    }
    if let Some(i) = &p.iface {
        let s = i.get_ref();
        // IFNAMSIZ is 16 with the terminating NUL.
        if s.is_empty() || s.len() > 15 || s.contains(['/', ' ', '\0']) || s == "." || s == ".." {
            return cx.err(
                i.span(),
                format!(
                    "{}: {} is not an interface name",
                    field("iface"),
                    excerpt(s)
                ),
            );
        }
    }
    let mac = match &p.mac {
        Some(m) => {
            let mac = parse_mac(m.get_ref()).map_or_else(
                || {
                    cx.err(
                        m.span(),
                        format!(
                            "{}: {} is not a MAC address",
                            field("mac"),
                            excerpt(m.get_ref())
                        ),
                    )
                },
                Ok,
            )?;
            if !is_unicast_mac(&mac) {
                return cx.err(
                    m.span(),
                    format!(
                        "{}: {} is a multicast or all-zero MAC address, not a port's",
                        field("mac"),
                        m.get_ref()
                    ),
                );
            }
            Some(mac)
        }
        None if !live => {
            return cx.err(
                p.name.span(),
                format!(
                    "{}: driver {:?} needs a mac",
                    field("mac"),
                    p.driver.get_ref()
                ),
            )
        }
        None => None,
    };
    let mut addresses: Vec<Cidr> = Vec::new();
    for a in &p.addresses {
        let c: Cidr = a
            .get_ref()
            .parse()
            .or_else(|e| cx.err(a.span(), format!("{}: {e}", field("addresses"))))?;
        if let Some(why) = bad_interface_address(&c) {
            return cx.err(
                a.span(),
                format!(
                    "{}: {c} cannot be an interface address: {why}",
                    field("addresses")
                ),
            );
        }
        if addresses.iter().any(|b| b.addr == c.addr) {
            return cx.err(
                a.span(),
                format!("{}: {} is listed twice", field("addresses"), c.addr),
            );
        }
        addresses.push(c);
    }
    let mtu = match &p.mtu {
        None => None,
        Some(_) => Some(cx.int(&p.mtu, &field("mtu"), 68..=9702, 1500)? as u16),
    };
    if let (Some(m), Some(span)) = (mtu, p.mtu.as_ref().map(|m| m.span())) {
        if m < 1280 && addresses.iter().any(|a| a.addr.is_ipv6()) {
            return cx.err(
                span,
                format!("{}: IPv6 needs an MTU of at least 1280", field("mtu")),
            );
        }
    }
    let xdp_mode = match p
        .xdp_mode
        .as_ref()
        .map(|m| (m.get_ref().as_str(), m.span()))
    {
        None | Some(("auto", _)) => XdpMode::Auto,
        Some(("native", _)) => XdpMode::Native,
        Some(("generic", _)) => XdpMode::Generic,
        Some((other, span)) => {
            return cx.err(
                span,
                format!(
                    "{}: {} is not one of auto, native, generic",
                    field("xdp_mode"),
                    excerpt(other)
                ),
            )
        }
    };
    let ring_size = cx.int(&p.ring_size, &field("ring_size"), 64..=65536, 2048)?;
    if (ring_size as u64).count_ones() != 1 {
        return cx.err(
            p.ring_size.as_ref().unwrap().span(),
            format!("{}: {ring_size} is not a power of two", field("ring_size")),
        );
    }
    Ok(Port {
        name: p.name.get_ref().clone(),
        driver,
        rx_pcap: p.rx_pcap.as_ref().map(|v| cx.path(v.get_ref())),
        tx_pcap: p.tx_pcap.as_ref().map(|v| cx.path(v.get_ref())),
        iface: p.iface.as_ref().map(|v| v.get_ref().clone()),
        mac,
        addresses,
        mtu,
        queues: match &p.queues {
            None => None,
            Some(_) => Some(cx.int(&p.queues, &field("queues"), 1..=1024, 1)? as u16),
        },
        xdp_mode,
        zero_copy: p.zero_copy.as_ref().map(|z| *z.get_ref()),
        ring_size: ring_size as u32,
    })
}

/// Two ports on the same subnet would make the egress port of a next hop
/// ambiguous.
fn check_overlapping_subnets(
    cx: &Ctx,
    ports: &[Port],
    raw: &[S<RawPort>],
) -> Result<(), ConfigError> {
    for (i, p) in ports.iter().enumerate() {
        for (k, a) in p.addresses.iter().enumerate() {
            for q in &ports[..i] {
                if let Some(b) = q
                    .addresses
                    .iter()
                    .find(|b| b.contains(a.addr) || a.contains(b.addr))
                {
                    return cx.err(
                        raw[i].get_ref().addresses[k].span(),
                        format!(
                            "port {:?}: addresses: {a} overlaps {b} of port {:?}",
                            p.name, q.name
                        ),
                    );
                }
            }
        }
    }
    Ok(())
}

/// Every output capture is written by one port, and none is another's
/// input (it would be truncated before it is read).
fn check_capture_files(cx: &Ctx, ports: &[Port], raw: &[S<RawPort>]) -> Result<(), ConfigError> {
    for (i, p) in ports.iter().enumerate() {
        let Some(tx) = &p.tx_pcap else { continue };
        let span = raw[i].get_ref().tx_pcap.as_ref().unwrap().span();
        for (k, q) in ports.iter().enumerate() {
            if k < i && q.tx_pcap.as_ref() == Some(tx) {
                return cx.err(
                    span,
                    format!(
                        "port {:?}: tx_pcap: {} is also port {:?}'s tx_pcap (two ports cannot write one capture)",
                        p.name,
                        tx.display(),
                        q.name
                    ),
                );
            }
            if q.rx_pcap.as_ref() == Some(tx) {
                return cx.err(
                    span,
                    format!(
                        "port {:?}: tx_pcap: {} is port {:?}'s rx_pcap (it would be overwritten)",
                        p.name,
                        tx.display(),
                        q.name
                    ),
                );
            }
        }
    }
    Ok(())
}

/// The router's own address among `ports`, if `ip` is one: (port, subnet).
fn own_address(ports: &[Port], ip: IpAddr) -> Option<(&Port, &Cidr)> {
    ports
        .iter()
        .find_map(|p| p.addresses.iter().find(|a| a.addr == ip).map(|a| (p, a)))
}

/// The rules every route prefix obeys, in the TOML or in a routes file:
/// host bits clear, and not one the router owns: its own addresses (a
/// route there would take them over) or a connected subnet and anything
/// inside one (hosts there are reached directly, through ARP/ND).
/// A route given at run time (`softrouter ctl route add`), judged as a
/// `[[route]]` of `cfg` is: the same checks and messages, without a line.
pub fn runtime_route(cfg: &Config, prefix: &str, via: &[IpAddr]) -> Result<Route, String> {
    let prefix: Cidr = prefix.parse().map_err(|e| format!("route: prefix: {e}"))?;
    check_runtime_route(cfg, prefix, via)
}

/// [`runtime_route`] for a parsed prefix (the kernel mirror's routes).
pub fn check_runtime_route(cfg: &Config, prefix: Cidr, via: &[IpAddr]) -> Result<Route, String> {
    judge_route(&cfg.ports, prefix, via).map_err(|(_, m)| m)
}

/// Whether a route for `prefix` may be set or removed at run time (a
/// drop route from the kernel, `softrouter ctl route del`): the prefix
/// rules of [`runtime_route`], so the router's own addresses and
/// connected subnets stay its own.
pub fn check_runtime_prefix(cfg: &Config, prefix: Cidr) -> Result<(), String> {
    check_route_prefix(&cfg.ports, &prefix).map_err(|m| format!("route {prefix}: prefix: {m}"))
}

/// The part of a route a message is about (for its position in a file).
enum RoutePart {
    Prefix,
    Via,
    Hop(usize),
}

/// A route's checks once its prefix and next hops are parsed: the route,
/// or what is wrong and where.
fn judge_route(
    ports: &[Port],
    prefix: Cidr,
    hops: &[IpAddr],
) -> Result<Route, (RoutePart, String)> {
    check_route_prefix(ports, &prefix)
        .map_err(|m| (RoutePart::Prefix, format!("route {prefix}: prefix: {m}")))?;
    if hops.is_empty() {
        return Err((
            RoutePart::Via,
            format!("route {prefix}: via: needs at least one next hop"),
        ));
    }
    let mut via: Vec<(IpAddr, usize)> = Vec::new();
    for (i, &hop) in hops.iter().enumerate() {
        let at = |m: String| (RoutePart::Hop(i), format!("route {prefix}: via: {m}"));
        if hop.is_ipv4() != prefix.addr.is_ipv4() {
            return Err(at(format!("{hop} is not of the prefix's address family")));
        }
        let port = check_next_hop(ports, hop).map_err(at)?;
        if via.iter().any(|&(h, _)| h == hop) {
            return Err(at(format!("{hop} is listed twice")));
        }
        via.push((hop, port));
    }
    Ok(Route { prefix, via })
}

pub(crate) fn check_route_prefix(ports: &[Port], prefix: &Cidr) -> Result<(), String> {
    if !prefix.is_network() {
        return Err(format!(
            "host bits are set (did you mean {}/{}?)",
            prefix.network(),
            prefix.len
        ));
    }
    if prefix.len == prefix.max_len() {
        if let Some((p, _)) = own_address(ports, prefix.addr) {
            return Err(format!(
                "{} is the router's own address (port {:?})",
                prefix.addr, p.name
            ));
        }
    }
    for p in ports {
        if let Some(a) = p.addresses.iter().find(|a| a.subnet().covers(prefix)) {
            let how = if prefix.len == a.len { "" } else { "inside " };
            return Err(format!(
                "{prefix} is {how}port {:?}'s connected subnet {} (its hosts are reached directly)",
                p.name,
                a.subnet()
            ));
        }
    }
    Ok(())
}

/// The rules every next hop obeys: on a port's subnet (the port it is
/// reached through is returned), and not the router itself, a subnet's
/// network or broadcast address or an IPv6 subnet's Subnet-Router anycast
/// address.
pub(crate) fn check_next_hop(ports: &[Port], hop: IpAddr) -> Result<usize, String> {
    if let Some((p, _)) = own_address(ports, hop) {
        return Err(format!(
            "{hop} is the router's own address (port {:?})",
            p.name
        ));
    }
    for (i, p) in ports.iter().enumerate() {
        if let Some(a) = p.addresses.iter().find(|a| a.contains(hop)) {
            if a.is_network_or_broadcast(hop) {
                return Err(format!(
                    "{hop} is the network or broadcast address of port {:?}'s subnet {}",
                    p.name,
                    a.subnet()
                ));
            }
            if a.is_subnet_router_anycast(hop) {
                return Err(format!(
                    "{hop} is the Subnet-Router anycast address of port {:?}'s subnet {} (RFC 4291 2.6.1: no host's)",
                    p.name,
                    a.subnet()
                ));
            }
            return Ok(i);
        }
    }
    Err(format!("{hop} is on no port's subnet"))
}

/// A static neighbour given at run time (`softrouter ctl neigh add`),
/// judged as a `[[neighbor]]` of `cfg` is: the same checks and messages,
/// without a line. One judgement for both, so `ctl` cannot set what the
/// file refuses (a subnet's broadcast address, which the router would then
/// forward directed broadcasts to).
pub fn runtime_neighbor(
    cfg: &Config,
    address: IpAddr,
    mac: &str,
    port: &str,
) -> Result<Neighbor, String> {
    let port = cfg.port_index(port).ok_or_else(|| {
        format!(
            "neighbor {address}: port: no port is named {}",
            excerpt(port)
        )
    })?;
    judge_neighbor(&cfg.ports, address, mac, port).map_err(|(_, m)| m)
}

/// The part of a neighbour a message is about.
enum NeighborPart {
    Mac,
    Address,
}

/// A neighbour's checks once its address and port are known: a unicast
/// MAC, an address that is a host on the port's subnet.
fn judge_neighbor(
    ports: &[Port],
    address: IpAddr,
    mac: &str,
    port: usize,
) -> Result<Neighbor, (NeighborPart, String)> {
    let m = parse_mac(mac).ok_or_else(|| {
        (
            NeighborPart::Mac,
            format!(
                "neighbor {address}: mac: {} is not a MAC address",
                excerpt(mac)
            ),
        )
    })?;
    if !is_unicast_mac(&m) {
        return Err((
            NeighborPart::Mac,
            format!("neighbor {address}: mac: {mac} is not a unicast MAC address"),
        ));
    }
    check_neighbor_address(ports, port, address).map_err(|e| {
        (
            NeighborPart::Address,
            format!("neighbor {address}: address: {e}"),
        )
    })?;
    Ok(Neighbor {
        address,
        mac: m,
        port,
    })
}

/// A static neighbor is a host on a subnet of the port it is given for.
fn check_neighbor_address(ports: &[Port], port: usize, ip: IpAddr) -> Result<(), String> {
    let at = check_next_hop(ports, ip).map_err(|m| {
        if m.ends_with("on no port's subnet") {
            format!(
                "{ip} is not on a subnet of port {:?} (a static neighbor must be on-link)",
                ports[port].name
            )
        } else {
            m
        }
    })?;
    if at != port {
        return Err(format!(
            "{ip} is on port {:?}'s subnet, not on port {:?}'s",
            ports[at].name, ports[port].name
        ));
    }
    Ok(())
}

fn route(cx: &Ctx, r: &RawRoute, ports: &[Port]) -> Result<Route, ConfigError> {
    let prefix: Cidr = r
        .prefix
        .get_ref()
        .parse()
        .or_else(|e| cx.err(r.prefix.span(), format!("route: prefix: {e}")))?;
    let mut hops = Vec::new();
    for v in r.via.get_ref() {
        let hop: IpAddr = v.get_ref().parse().or_else(|_| {
            cx.err(
                v.span(),
                format!(
                    "route {prefix}: via: {} is not an IP address",
                    excerpt(v.get_ref())
                ),
            )
        })?;
        hops.push(hop);
    }
    judge_route(ports, prefix, &hops).or_else(|(part, m)| {
        let span = match part {
            RoutePart::Prefix => r.prefix.span(),
            RoutePart::Via => r.via.span(),
            RoutePart::Hop(i) => r.via.get_ref()[i].span(),
        };
        cx.err(span, m)
    })
}
