//! The router's shared state ([`Shared`]) and its single writer ([`Router`]).
//!
//! Workers read the FIB (DIR-24-8 / multibit trie), the next-hop table and
//! the neighbor entries lock-free. All writes (route changes, host entries
//! for connected destinations, the mapping from a neighbor's address to its
//! entry) go through [`Control`], behind a mutex that the fast path never
//! takes: only the slow path (first packet to a new connected host, ARP/ND
//! learning) and the control plane do.

use crate::neighbor::NeighEntry;
use anyhow::{anyhow, bail, Context, Result};
use config::Cidr;
use fib::{
    lpm4, lpm6, Lpm4Config, Lpm4Writer, Lpm6Config, Lpm6Writer, NextHop, NextHopId, NextHopKind,
    NextHopReader, NextHopTable, NextHopWriter, Prefix4, Prefix6, Target,
};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// Next hops (and so neighbor entries) the table can hold.
pub const MAX_NEXT_HOPS: u32 = 1 << 16;
const MAX_GROUPS: u32 = 1 << 12;
const MAX_GROUP_MEMBERS: u32 = 1 << 16;

/// What a worker needs to know about a port.
#[derive(Clone, Debug)]
pub struct PortCtx {
    pub name: String,
    pub mac: [u8; 6],
    pub mtu: u16,
    /// The port's addresses with their prefix lengths.
    pub v4: Vec<(Ipv4Addr, u8)>,
    pub v6: Vec<(Ipv6Addr, u8)>,
}

impl PortCtx {
    /// Source address for ICMP errors and solicitations on this port: the
    /// address on `peer`'s subnet if any, else the first one.
    pub fn v4_for(&self, peer: Ipv4Addr) -> Option<Ipv4Addr> {
        let on_subnet = self.v4.iter().find(|(a, l)| {
            let m = fib::prefix::mask4(*l);
            u32::from(*a) & m == u32::from(peer) & m
        });
        on_subnet.or(self.v4.first()).map(|(a, _)| *a)
    }

    pub fn v6_for(&self, peer: Ipv6Addr) -> Option<Ipv6Addr> {
        let on_subnet = self.v6.iter().find(|(a, l)| {
            let m = fib::prefix::mask6(*l);
            u128::from(*a) & m == u128::from(peer) & m
        });
        on_subnet.or(self.v6.first()).map(|(a, _)| *a)
    }

    pub fn has_v4(&self, a: Ipv4Addr) -> bool {
        self.v4.iter().any(|(x, _)| *x == a)
    }

    pub fn has_v6(&self, a: Ipv6Addr) -> bool {
        self.v6.iter().any(|(x, _)| *x == a)
    }

    /// True if `a` is on one of this port's IPv4 subnets.
    pub fn on_link_v4(&self, a: Ipv4Addr) -> bool {
        self.v4.iter().any(|(x, l)| {
            let m = fib::prefix::mask4(*l);
            u32::from(*x) & m == u32::from(a) & m
        })
    }

    pub fn on_link_v6(&self, a: Ipv6Addr) -> bool {
        (a.segments()[0] & 0xffc0) == 0xfe80
            || self.v6.iter().any(|(x, l)| {
                let m = fib::prefix::mask6(*l);
                u128::from(*x) & m == u128::from(a) & m
            })
    }
}

/// The writer side, behind [`Shared::control`].
pub struct Control {
    pub(crate) lpm4: Lpm4Writer,
    pub(crate) lpm6: Lpm6Writer,
    pub(crate) nh: NextHopWriter,
    /// Neighbor entry of each (port, address): gateways, static neighbors
    /// and host entries of connected destinations.
    pub(crate) hosts: HashMap<(usize, IpAddr), NextHopId>,
}

/// Everything workers share, read-only on the fast path.
pub struct Shared {
    pub ports: Vec<PortCtx>,
    pub(crate) nh: NextHopReader,
    pub(crate) neigh: Box<[NeighEntry]>,
    pub(crate) control: Mutex<Control>,
    pub(crate) epoch: Instant,
    pub icmp_rate: u32,
    pub hold_packets: u32,
    pub neighbor_timeout_ms: u64,
}

impl Shared {
    pub(crate) fn control(&self) -> MutexGuard<'_, Control> {
        self.control.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn neigh(&self, id: NextHopId) -> &NeighEntry {
        &self.neigh[id.0 as usize]
    }

    /// The neighbor entry of `ip` on `port`, creating a host entry (next
    /// hop + host route) if `create` and `ip` is on the port's subnet.
    /// Slow path: takes the control lock.
    pub(crate) fn host_entry(&self, port: usize, ip: IpAddr, create: bool) -> Option<NextHopId> {
        let mut c = self.control();
        if let Some(&id) = c.hosts.get(&(port, ip)) {
            return Some(id);
        }
        if !create {
            return None;
        }
        let p = self.ports.get(port)?;
        let on_link = match ip {
            IpAddr::V4(a) => p.on_link_v4(a),
            IpAddr::V6(a) => p.on_link_v6(a),
        };
        if !on_link {
            return None;
        }
        c.add_host(port, ip).ok()
    }

    /// Learns `mac` for `ip` on `port` if there is an entry (or creates
    /// one when `create`). Returns true if an entry was updated.
    pub(crate) fn learn(
        &self,
        port: usize,
        ip: IpAddr,
        mac: [u8; 6],
        create: bool,
        now_ms: u64,
    ) -> bool {
        if mac[0] & 1 != 0 || mac == [0; 6] {
            return false;
        }
        match self.host_entry(port, ip, create) {
            Some(id) => {
                self.neigh(id).learn(mac, now_ms);
                true
            }
            None => false,
        }
    }
}

impl Control {
    fn gateway(&mut self, port: usize, ip: IpAddr) -> Result<NextHopId> {
        let id = self.nh.find_or_add(NextHop {
            port: port as u16,
            kind: NextHopKind::Gateway(ip),
        })?;
        self.hosts.insert((port, ip), id);
        Ok(id)
    }

    /// A host entry: a gateway next hop for `ip` itself and a host route.
    fn add_host(&mut self, port: usize, ip: IpAddr) -> Result<NextHopId> {
        let id = self.gateway(port, ip)?;
        let t = Target::next_hop(id);
        match ip {
            IpAddr::V4(a) => self.lpm4.insert(Prefix4::new(a, 32).unwrap(), t)?,
            IpAddr::V6(a) => self.lpm6.insert(Prefix6::new(a, 128).unwrap(), t)?,
        }
        Ok(id)
    }

    fn insert(&mut self, prefix: Cidr, t: Target) -> Result<()> {
        match prefix.network() {
            IpAddr::V4(a) => self.lpm4.insert(
                Prefix4::new(a, prefix.len).ok_or_else(|| anyhow!("bad prefix {prefix}"))?,
                t,
            )?,
            IpAddr::V6(a) => self.lpm6.insert(
                Prefix6::new(a, prefix.len).ok_or_else(|| anyhow!("bad prefix {prefix}"))?,
                t,
            )?,
        }
        Ok(())
    }

    fn route_target(&mut self, ports: usize, via: &[(IpAddr, usize)]) -> Result<Target> {
        if via.is_empty() {
            bail!("a route needs at least one next hop");
        }
        let mut ids = Vec::with_capacity(via.len());
        for &(ip, port) in via {
            if port >= ports {
                bail!("next hop {ip}: no port {port}");
            }
            ids.push(self.gateway(port, ip)?);
        }
        Ok(if ids.len() == 1 {
            Target::next_hop(ids[0])
        } else {
            Target::group(self.nh.add_group(&ids)?)
        })
    }
}

/// The router's control state: the single writer of FIB, next hops and
/// neighbors.
pub struct Router {
    shared: Arc<Shared>,
}

impl Router {
    /// Builds the FIB (connected subnets, the router's own addresses as
    /// Local /32 and /128, static routes with ECMP groups, the routes
    /// file), next hops and static neighbors from a validated config and
    /// the ports' actual info.
    pub fn new(cfg: &config::Config, ports: &[netio::PortInfo]) -> Result<Router> {
        if ports.len() != cfg.ports.len() {
            bail!(
                "{} ports configured but {} opened",
                cfg.ports.len(),
                ports.len()
            );
        }
        let file_routes = match &cfg.routes_file {
            Some(path) => load_routes_file(path)?,
            None => Vec::new(),
        };
        let v6_routes = file_routes.iter().filter(|r| r.0.addr.is_ipv6()).count();
        let lpm6_groups = if v6_routes > 1000 { 1 << 18 } else { 1 << 14 };
        let (lpm4, _) = lpm4::new(Lpm4Config {
            tbl8_groups: 1 << 13,
        });
        let (lpm6, _) = lpm6::new(Lpm6Config {
            tbl8_groups: lpm6_groups,
        });
        let (nhw, nhr) = NextHopTable::with_capacity(MAX_NEXT_HOPS, MAX_GROUPS, MAX_GROUP_MEMBERS);
        let mut c = Control {
            lpm4,
            lpm6,
            nh: nhw,
            hosts: HashMap::new(),
        };
        let mut pctx = Vec::new();
        for (i, (p, info)) in cfg.ports.iter().zip(ports).enumerate() {
            let mut v4 = Vec::new();
            let mut v6 = Vec::new();
            let connected = c.nh.find_or_add(NextHop {
                port: i as u16,
                kind: NextHopKind::Connected,
            })?;
            let local = c.nh.find_or_add(NextHop {
                port: i as u16,
                kind: NextHopKind::Local,
            })?;
            for a in &p.addresses {
                let subnet = Cidr {
                    addr: a.network(),
                    len: a.len,
                };
                c.insert(subnet, Target::next_hop(connected))
                    .with_context(|| format!("port {}: subnet {subnet}", p.name))?;
                let host = Cidr {
                    addr: a.addr,
                    len: a.max_len(),
                };
                c.insert(host, Target::next_hop(local))?;
                match a.addr {
                    IpAddr::V4(x) => v4.push((x, a.len)),
                    IpAddr::V6(x) => v6.push((x, a.len)),
                }
            }
            pctx.push(PortCtx {
                name: info.name.clone(),
                mac: info.mac,
                mtu: info.mtu,
                v4,
                v6,
            });
        }
        let neigh: Box<[NeighEntry]> = (0..MAX_NEXT_HOPS).map(|_| NeighEntry::default()).collect();
        let mut statics = Vec::new();
        for n in &cfg.neighbors {
            let id = c
                .add_host(n.port, n.address)
                .with_context(|| format!("neighbor {}", n.address))?;
            statics.push((id, n.mac));
        }
        for r in &cfg.routes {
            let t = c
                .route_target(ports.len(), &r.via)
                .with_context(|| format!("route {}", r.prefix))?;
            c.insert(r.prefix, t)
                .with_context(|| format!("route {}", r.prefix))?;
        }
        for (prefix, gw) in &file_routes {
            let port = pctx
                .iter()
                .position(|p| match gw {
                    IpAddr::V4(a) => p.on_link_v4(*a),
                    IpAddr::V6(a) => p.on_link_v6(*a),
                })
                .ok_or_else(|| anyhow!("routes file: {prefix} via {gw}: on no port's subnet"))?;
            let t = c.route_target(ports.len(), &[(*gw, port)])?;
            c.insert(*prefix, t)
                .with_context(|| format!("routes file: {prefix}"))?;
        }
        for (id, mac) in statics {
            neigh[id.0 as usize].set_static(mac);
        }
        let shared = Arc::new(Shared {
            ports: pctx,
            nh: nhr,
            neigh,
            control: Mutex::new(c),
            epoch: Instant::now(),
            icmp_rate: cfg.router.icmp_rate,
            hold_packets: cfg.router.hold_packets,
            neighbor_timeout_ms: u64::from(cfg.router.neighbor_timeout_s) * 1000,
        });
        Ok(Router { shared })
    }

    pub fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    /// Adds or replaces a route (ECMP if several next hops). Workers see
    /// either the old or the new target, never a mix.
    pub fn add_route(&self, prefix: Cidr, via: &[(IpAddr, usize)]) -> Result<()> {
        if !prefix.is_network() {
            bail!("{prefix} has host bits set");
        }
        let mut c = self.shared.control();
        let t = c.route_target(self.shared.ports.len(), via)?;
        c.insert(prefix, t)
    }

    pub fn remove_route(&self, prefix: Cidr) -> Result<()> {
        let mut c = self.shared.control();
        let removed = match prefix.network() {
            IpAddr::V4(a) => c
                .lpm4
                .remove(Prefix4::new(a, prefix.len).ok_or_else(|| anyhow!("bad prefix"))?)?
                .is_some(),
            IpAddr::V6(a) => c
                .lpm6
                .remove(Prefix6::new(a, prefix.len).ok_or_else(|| anyhow!("bad prefix"))?)?
                .is_some(),
        };
        if !removed {
            bail!("no route {prefix}");
        }
        Ok(())
    }

    /// Sets a static neighbor at run time (tests, control plane).
    pub fn set_neighbor(&self, port: usize, ip: IpAddr, mac: [u8; 6]) -> Result<()> {
        let id = {
            let mut c = self.shared.control();
            match c.hosts.get(&(port, ip)) {
                Some(&id) => id,
                None => c.add_host(port, ip)?,
            }
        };
        self.shared.neigh(id).set_static(mac);
        Ok(())
    }
}

/// Reads a routes file of `prefix next-hop` lines (the format of
/// `fib::routes_file`; `.gz` is decompressed).
fn load_routes_file(path: &std::path::Path) -> Result<Vec<(Cidr, IpAddr)>> {
    use std::io::Read;
    let mut text = Vec::new();
    let f = std::fs::File::open(path).with_context(|| format!("{}", path.display()))?;
    if path.extension().is_some_and(|e| e == "gz") {
        flate2::read::GzDecoder::new(f).read_to_end(&mut text)?;
    } else {
        std::io::BufReader::new(f).read_to_end(&mut text)?;
    }
    let routes =
        fib::routes_file::parse(&text[..]).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    Ok(routes
        .into_iter()
        .map(|(p, nh)| {
            (
                Cidr {
                    addr: p.addr(),
                    len: p.len(),
                },
                nh,
            )
        })
        .collect())
}
