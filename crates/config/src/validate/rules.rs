//! The rules on routes, next hops and static neighbours: one judgement
//! each, shared by the file's `[[route]]` and `[[neighbor]]`, the routes
//! file ([`crate::routes_file`]) and what is set at run time (`softrouter
//! ctl`, the kernel mirror), so a route is judged the same wherever it is
//! written.
use super::*;

/// The router's own address among `ports`, if `ip` is one: (port, subnet).
fn own_address(ports: &[Port], ip: IpAddr) -> Option<(&Port, &Cidr)> {
    ports
        .iter()
        .find_map(|p| p.addresses.iter().find(|a| a.addr == ip).map(|a| (p, a)))
}

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

/// The rules every route prefix obeys, in the TOML or in a routes file:
/// host bits clear, and not one the router owns: its own addresses (a
/// route there would take them over) or a connected subnet and anything
/// inside one (hosts there are reached directly, through ARP/ND).
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
pub(super) enum NeighborPart {
    Mac,
    Address,
}

/// A neighbour's checks once its address and port are known: a unicast
/// MAC, an address that is a host on the port's subnet.
pub(super) fn judge_neighbor(
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

pub(super) fn route(cx: &Ctx, r: &RawRoute, ports: &[Port]) -> Result<Route, ConfigError> {
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
