//! From the raw, positioned form to a [`Config`]: every check that needs
//! more than the TOML grammar, each failing with the line of the value.
//!
//! Here: the whole file in order ([`validate`]), `[kernel]` and
//! `[control]`. By what they check: `router` (`[router]`, `[[queue]]`),
//! `port` (`[[port]]` and the rules between ports) and `rules` (routes,
//! next hops and static neighbours; [`check_route_prefix`] and
//! [`check_next_hop`] are shared with the routes-file check,
//! [`crate::routes_file`], and the run-time checks with `softrouter ctl`,
//! so a route is judged the same wherever it is written).

mod port;
mod router;
mod rules;

use crate::raw::*;
use crate::*;
use port::{check_capture_files, check_overlapping_subnets, port};
use router::router;
pub(crate) use rules::{check_next_hop, check_route_prefix};
pub use rules::{check_runtime_prefix, check_runtime_route, runtime_neighbor, runtime_route};
use rules::{judge_neighbor, route, NeighborPart};
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

/// The whole file: each section by its own function, in the order an
/// error is reported (ports first: the routes, neighbours and queues name
/// them).
pub fn validate(raw: RawConfig, text: &str, path: &Path) -> Result<Config, ConfigError> {
    let cx = Ctx { text, path };
    let ports = ports(&cx, &raw.port)?;
    let port_of = |name: &S<String>, what: &str| port_index(&cx, &ports, name, what);
    let routes = routes(&cx, &raw.route, &ports)?;
    let neighbors = neighbors(&cx, &raw.neighbor, &ports, &port_of)?;
    let router = router(
        &cx,
        raw.router.as_ref().map(|r| r.get_ref()),
        &raw.queue,
        &port_of,
    )?;
    check_cross_connect(&cx, &raw, &router, ports.len())?;
    let routes_file = routes_file(&cx, &raw)?;
    let control = control(&cx, raw.control.as_ref().map(|c| c.get_ref()))?;
    let metrics = metrics(&cx, &raw)?;
    let kernel_routes = kernel_routes(&cx, &raw)?;
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

/// `[[port]]`: each port, their names unique, at least one, subnets that
/// do not overlap, capture files not shared.
fn ports(cx: &Ctx, raw: &[S<RawPort>]) -> Result<Vec<Port>, ConfigError> {
    let ports = raw
        .iter()
        .map(|p| port(cx, p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut names = HashSet::new();
    for (p, raw_p) in ports.iter().zip(raw) {
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
    check_overlapping_subnets(cx, &ports, raw)?;
    check_capture_files(cx, &ports, raw)?;
    Ok(ports)
}

/// The index of the port `name` names (`what` says where, for the error).
fn port_index(
    cx: &Ctx,
    ports: &[Port],
    name: &S<String>,
    what: &str,
) -> Result<usize, ConfigError> {
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
}

/// Line of byte `offset`, for an error that points back at an earlier
/// definition.
fn line_at(cx: &Ctx, offset: usize) -> usize {
    ConfigError::at(cx.path, cx.text, offset..offset, "").line
}

/// `[[route]]`: each route; one given twice is kept once, one given again
/// with other next hops is an error naming the first.
fn routes(cx: &Ctx, raw: &[S<RawRoute>], ports: &[Port]) -> Result<Vec<Route>, ConfigError> {
    // Where each route was first given: (index, byte offset).
    let mut routes: Vec<Route> = Vec::new();
    let mut first_route: HashMap<Cidr, (usize, usize)> = HashMap::new();
    for r in raw {
        let route = route(cx, r.get_ref(), ports)?;
        let at = r.get_ref().prefix.span();
        if let Some(&(i, offset)) = first_route.get(&route.prefix) {
            if routes[i].via != route.via {
                return cx.err(
                    at,
                    format!(
                        "route {}: prefix: defined again with other next hops (first at line {})",
                        route.prefix,
                        line_at(cx, offset)
                    ),
                );
            }
            continue; // the same route twice: once is enough
        }
        first_route.insert(route.prefix, (routes.len(), at.start));
        routes.push(route);
    }
    Ok(routes)
}

/// `[[neighbor]]`: each static neighbour; as routes, one given twice is
/// kept once, one given again otherwise is an error naming the first.
fn neighbors(
    cx: &Ctx,
    raw: &[S<RawNeighbor>],
    ports: &[Port],
    port_of: &PortLookup,
) -> Result<Vec<Neighbor>, ConfigError> {
    let mut neighbors: Vec<Neighbor> = Vec::new();
    let mut first_neighbor: HashMap<IpAddr, (usize, usize)> = HashMap::new();
    for n in raw {
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
        let this = judge_neighbor(ports, address, n.mac.get_ref(), port).or_else(|(part, m)| {
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
                        line_at(cx, offset)
                    ),
                );
            }
            continue;
        }
        first_neighbor.insert(address, (neighbors.len(), n.address.span().start));
        neighbors.push(this);
    }
    Ok(neighbors)
}

/// `[router] forwarding = "cross-connect"` pairs ports 0-1, 2-3...: an
/// even number of them.
fn check_cross_connect(
    cx: &Ctx,
    raw: &RawConfig,
    router: &Router,
    ports: usize,
) -> Result<(), ConfigError> {
    if router.forwarding == Forwarding::CrossConnect && !ports.is_multiple_of(2) {
        let span = raw
            .router
            .as_ref()
            .and_then(|r| r.get_ref().forwarding.as_ref())
            .map_or(0..0, |f| f.span());
        return cx.err(
            span,
            format!(
                "router: forwarding: a cross-connect pairs ports 0-1, 2-3, ...; {ports} ports cannot be paired"
            ),
        );
    }
    Ok(())
}

/// `[routes_file] path`: relative to the configuration file; it must be
/// a file.
fn routes_file(cx: &Ctx, raw: &RawConfig) -> Result<Option<PathBuf>, ConfigError> {
    let Some(f) = &raw.routes_file else {
        return Ok(None);
    };
    let p = cx.path(f.get_ref().path.get_ref());
    if !p.is_file() {
        return cx.err(
            f.get_ref().path.span(),
            format!(
                "routes_file: path: {} does not exist or is not a file",
                p.display()
            ),
        );
    }
    Ok(Some(p))
}

/// `[metrics] listen`: an address and port.
fn metrics(cx: &Ctx, raw: &RawConfig) -> Result<Option<std::net::SocketAddr>, ConfigError> {
    let Some(m) = &raw.metrics else {
        return Ok(None);
    };
    let l = &m.get_ref().listen;
    match l.get_ref().parse::<std::net::SocketAddr>() {
        Ok(a) => Ok(Some(a)),
        Err(_) => cx.err(
            l.span(),
            format!(
                "metrics: listen: {} is not an address and port (e.g. \"127.0.0.1:9469\")",
                excerpt(l.get_ref())
            ),
        ),
    }
}

/// `[kernel] table` and `routes`: the kernel table to mirror routes into,
/// when `routes` is on.
fn kernel_routes(cx: &Ctx, raw: &RawConfig) -> Result<Option<u32>, ConfigError> {
    let Some(k) = &raw.kernel else {
        return Ok(None);
    };
    let k = k.get_ref();
    let table = cx.int(&k.table, "kernel: table", 1..=0xffff_fffe, 254)? as u32;
    Ok(k.routes
        .as_ref()
        .is_some_and(|r| *r.get_ref())
        .then_some(table))
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
