//! The router's single writer ([`Router`]) of what workers share
//! ([`Shared`]).
//!
//! Workers read the FIB (DIR-24-8 / multibit trie), the next-hop table and
//! the neighbor entries lock-free. All writes (route changes, host entries
//! for connected destinations, the mapping from a neighbor's address to its
//! entry, neighbour garbage collection) go through
//! `Control` (`control/mod.rs`), behind a
//! mutex that the fast path never takes: only the slow path (first packet
//! to a new connected host, ARP/ND learning, the periodic neighbour GC) and
//! the control plane do. The neighbour model is described in
//! [`crate::neighbor`].

mod kernel;

use crate::control::gateways::{Gateways, RouteSource};
use crate::control::neigh_table::{NeighTable, PortHints};
use crate::control::Control;
use crate::neighbor::{unicast_mac, NeighEntry, NeighLimits};
use crate::shared::{PortCtx, Shared};
use anyhow::{anyhow, bail, Context, Result};
use config::Cidr;
use fib::memory::{Heap, Region, TableMemory};
use fib::{
    lpm4, lpm6, Lpm4Config, Lpm6Config, NextHop, NextHopId, NextHopKind, NextHopTable, Prefix4,
    Prefix6, Target,
};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::AtomicU64;

/// The neighbour entries' region name in [`hugemem::report`] (the XDP
/// tier's map of the same table is also called `neigh`).
const NEIGH_REGION: &str = "neigh";
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub use crate::control::MAX_NEXT_HOPS;
const MAX_GROUPS: u32 = 1 << 12;
const MAX_GROUP_MEMBERS: u32 = 1 << 16;

/// The router's control state: the single writer of FIB, next hops and
/// neighbors.
pub struct Router {
    shared: Arc<Shared>,
}

/// The tables' capacities, decided from the configuration before any
/// table memory is taken: the XDP fast path sizes its maps from them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableSizes {
    pub lpm4_tbl8_groups: u32,
    pub lpm6_tbl8_groups: u32,
    pub next_hops: u32,
    pub groups: u32,
    pub group_members: u32,
}

/// A router about to be built: the configuration read (routes file
/// included) and the table sizes known, no table memory taken yet. Two
/// steps so that the memory can come from somewhere sized by
/// [`RouterPlan::sizes`] (the XDP fast path's maps).
pub struct RouterPlan<'a> {
    cfg: &'a config::Config,
    limits: NeighLimits,
    file_routes: Vec<(Cidr, IpAddr)>,
    sizes: TableSizes,
}

impl<'a> RouterPlan<'a> {
    /// Reads the routes file and sizes the tables. `limits.max_per_port`
    /// is capped so that all ports' dynamic entries fit in half of the
    /// next-hop table; the tbl8 pools are sized for that many host routes
    /// on top of the configured routes.
    pub fn new(cfg: &'a config::Config, limits: NeighLimits) -> Result<RouterPlan<'a>> {
        let file_routes = match &cfg.routes_file {
            Some(path) => load_routes_file(path)?,
            None => Vec::new(),
        };
        let v6_routes = file_routes.iter().filter(|r| r.0.addr.is_ipv6()).count();
        let limits = NeighTable::effective_limits(limits, cfg.ports.len());
        // Host routes: an IPv4 host needs at most one tbl8 group (its /24),
        // an IPv6 host one per 8 bits between its subnet's prefix (or /24)
        // and /128.
        let (mut host_groups4, mut host_groups6) = (0u32, 0u32);
        for p in &cfg.ports {
            let per6 = p
                .addresses
                .iter()
                .filter(|a| a.addr.is_ipv6())
                .map(|a| (128 - u32::from(a.len.max(24))).div_ceil(8))
                .max()
                .unwrap_or(0);
            let has4 = p.addresses.iter().any(|a| a.addr.is_ipv4());
            host_groups4 += limits.max_per_port * has4 as u32;
            host_groups6 += limits.max_per_port * per6;
        }
        let lpm6_groups = if v6_routes > 1000 { 1 << 18 } else { 1 << 14 };
        let r = &cfg.router;
        let sizes = TableSizes {
            lpm4_tbl8_groups: r.ipv4_tbl8_groups.unwrap_or((1 << 13) + host_groups4),
            lpm6_tbl8_groups: r.ipv6_tbl8_groups.unwrap_or(lpm6_groups + host_groups6),
            next_hops: MAX_NEXT_HOPS,
            groups: MAX_GROUPS,
            group_members: MAX_GROUP_MEMBERS,
        };
        Ok(RouterPlan {
            cfg,
            limits,
            file_routes,
            sizes,
        })
    }

    pub fn sizes(&self) -> TableSizes {
        self.sizes
    }

    /// Builds the router with every table on the heap.
    pub fn build(self, ports: &[netio::PortInfo]) -> Result<Router> {
        let neigh = Region::heap(NEIGH_REGION, self.sizes.next_hops as usize)?;
        self.build_in(ports, &mut Heap, neigh)
    }

    /// Builds the FIB (connected subnets, the router's own addresses as
    /// Local /32 and /128, static routes with ECMP groups, the routes
    /// file), next hops and static neighbours from the validated config
    /// and the ports' actual info, with the tables in `mem` and the
    /// neighbour entries in `neigh` (at least [`TableSizes::next_hops`]).
    pub fn build_in<M: TableMemory>(
        self,
        ports: &[netio::PortInfo],
        mem: &mut M,
        neigh: Region<NeighEntry>,
    ) -> Result<Router> {
        let RouterPlan {
            cfg,
            limits,
            file_routes,
            sizes,
        } = self;
        if ports.len() != cfg.ports.len() {
            bail!(
                "{} ports configured but {} opened",
                cfg.ports.len(),
                ports.len()
            );
        }
        if neigh.len() < sizes.next_hops as usize {
            bail!(
                "{} neighbour entries for {} next hops",
                neigh.len(),
                sizes.next_hops
            );
        }
        let (lpm4, _) = lpm4::new_in(
            Lpm4Config {
                tbl8_groups: sizes.lpm4_tbl8_groups,
            },
            mem,
        )?;
        let (lpm6, _) = lpm6::new_in(
            Lpm6Config {
                tbl8_groups: sizes.lpm6_tbl8_groups,
            },
            mem,
        )?;
        let (nhw, nhr) = NextHopTable::with_capacity_in(
            sizes.next_hops,
            sizes.groups,
            sizes.group_members,
            mem,
        )?;
        let mut c = Control {
            lpm4,
            lpm6,
            nh: nhw,
            hosts: HashMap::new(),
            neigh: NeighTable::new(limits, cfg.ports.len()),
            gw: Gateways::new(sizes.next_hops, sizes.groups),
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
        let mut statics = Vec::new();
        for n in &cfg.neighbors {
            let id = c
                .add_static(&neigh, RouteSource::Config, n.port, n.address, 0)
                .with_context(|| format!("neighbor {}", n.address))?;
            statics.push((id, n.mac));
        }
        for r in &cfg.routes {
            let t = c
                .route_target(&neigh, RouteSource::Config, ports.len(), &r.via, 0)
                .with_context(|| format!("route {}", r.prefix))?;
            c.set_route(&neigh, 0, r.prefix, t)
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
            let t = c.route_target(&neigh, RouteSource::Config, ports.len(), &[(*gw, port)], 0)?;
            c.set_route(&neigh, 0, *prefix, t)
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
            hints: (0..cfg.ports.len()).map(|_| PortHints::default()).collect(),
            gc_due_ms: AtomicU64::new(0),
            gc_interval_ms: limits.gc_interval_ms.max(1),
            cross_connect: (cfg.router.forwarding == config::Forwarding::CrossConnect)
                .then(|| (0..cfg.ports.len()).map(|i| i ^ 1).collect()),
            tx_locks: (cfg.router.tx_queues == config::TxQueues::Shared)
                .then(|| (0..cfg.ports.len()).map(|_| Default::default()).collect()),
            kernel: cfg
                .kernel_local
                .then(crate::kernel_neigh::KernelRequests::new),
        });
        Ok(Router { shared })
    }
}

impl Router {
    /// Builds the router from a validated config and the ports' actual
    /// info, every table on the heap, with the default neighbour limits
    /// (see [`RouterPlan`] for the steps).
    pub fn new(cfg: &config::Config, ports: &[netio::PortInfo]) -> Result<Router> {
        Router::with_neighbor_limits(cfg, ports, NeighLimits::default())
    }

    /// [`Router::new`] with explicit neighbour limits.
    pub fn with_neighbor_limits(
        cfg: &config::Config,
        ports: &[netio::PortInfo],
        limits: NeighLimits,
    ) -> Result<Router> {
        RouterPlan::new(cfg, limits)?.build(ports)
    }

    /// A registration for a reader outside this process (the XDP fast
    /// path) with the FIB's and next-hop table's grace periods.
    pub fn external_reader(&self) -> fib::ExternalReader {
        let c = self.shared.control();
        fib::ExternalReader::new(&c.lpm4.reader(), &c.lpm6.reader(), &self.shared.nh)
    }

    pub fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    /// Adds or replaces a route (ECMP if several next hops) for `src`.
    /// Workers see either the old or the new target, never a mix; the
    /// gateways the old target held and nothing else holds are released
    /// (see `control/gateways.rs`).
    pub fn add_route(&self, src: RouteSource, prefix: Cidr, via: &[(IpAddr, usize)]) -> Result<()> {
        if !prefix.is_network() {
            bail!("{prefix} has host bits set");
        }
        let now_ms = self.now_ms();
        let sh = &*self.shared;
        let mut c = sh.control();
        let t = c.route_target(&sh.neigh, src, sh.ports.len(), via, now_ms)?;
        c.set_route(&sh.neigh, now_ms, prefix, t)?;
        if let Some(k) = &self.shared.kernel {
            // `[kernel] local`: unresolved gateways are the kernel's to
            // resolve, asked at once rather than on the first packet.
            for &(ip, port) in via {
                let e = self.shared.neigh(c.hosts[&(port, ip)]);
                if e.state() == crate::neighbor::STATE_INCOMPLETE && e.try_solicit(now_ms) {
                    k.request(port, ip);
                }
            }
        }
        Ok(())
    }

    /// Adds or replaces a route that drops what it matches (a kernel
    /// `blackhole`, `unreachable` or `prohibit` route: dropped and
    /// counted as `blackhole`), through the one shared blackhole next hop.
    pub fn add_blackhole(&self, prefix: Cidr) -> Result<()> {
        if !prefix.is_network() {
            bail!("{prefix} has host bits set");
        }
        let now_ms = self.now_ms();
        let sh = &*self.shared;
        let mut c = sh.control();
        let id = c.nh.find_or_add(NextHop {
            port: 0,
            kind: NextHopKind::Blackhole,
        })?;
        // Through `set_route`, so that the route it replaces releases its
        // gateways (the shared blackhole next hop holds no count).
        c.set_route(&sh.neigh, now_ms, prefix, Target::next_hop(id))
    }

    /// Routes installed, IPv4 and IPv6 (every kind).
    pub fn route_counts(&self) -> (usize, usize) {
        let c = self.shared.control();
        (c.lpm4.len(), c.lpm6.len())
    }

    /// Whether a route for exactly `prefix` is installed (of any kind).
    pub fn has_route(&self, prefix: Cidr) -> bool {
        let c = self.shared.control();
        match prefix.network() {
            IpAddr::V4(a) => Prefix4::new(a, prefix.len).is_some_and(|p| c.lpm4.get(p).is_some()),
            IpAddr::V6(a) => Prefix6::new(a, prefix.len).is_some_and(|p| c.lpm6.get(p).is_some()),
        }
    }

    /// Removes the route of `prefix` (whoever installed it), releasing
    /// the gateways nothing else holds.
    pub fn remove_route(&self, prefix: Cidr) -> Result<()> {
        let now_ms = self.now_ms();
        let mut c = self.shared.control();
        if !c.unset_route(&self.shared.neigh, now_ms, prefix)? {
            bail!("no route {prefix}");
        }
        Ok(())
    }

    /// The workers' clock now.
    fn now_ms(&self) -> u64 {
        self.shared.epoch.elapsed().as_millis() as u64
    }

    /// Removes the neighbour entries for `ip` (on every port that has
    /// one): a dynamic entry goes with its host route, as the collector
    /// removes it; a static setting is dropped, and the entry goes with it
    /// unless a route's gateway, which then forgets its MAC and is
    /// resolved again on its next use. Returns how many entries there
    /// were.
    pub fn remove_neighbor(&self, ip: IpAddr) -> Result<usize> {
        let now_ms = self.now_ms();
        let neigh = &self.shared.neigh;
        let mut c = self.shared.control();
        let found: Vec<(usize, NextHopId)> = c
            .hosts
            .iter()
            .filter(|(&(_, a), _)| a == ip)
            .map(|(&(port, _), &id)| (port, id))
            .collect();
        if found.is_empty() {
            bail!("no neighbour {ip}");
        }
        for &(port, id) in &found {
            let e = &neigh[id.0 as usize];
            if e.is_dynamic() {
                c.remove_dynamic(neigh, port, ip, id);
                continue;
            }
            c.release_static(neigh, now_ms, id);
            if c.is_held_id(id) {
                e.reset(false, now_ms, false);
            }
        }
        Ok(found.len())
    }

    /// Sets a static neighbour for `src` (configuration, `ctl`).
    pub fn set_neighbor(
        &self,
        src: RouteSource,
        port: usize,
        ip: IpAddr,
        mac: [u8; 6],
    ) -> Result<()> {
        if port >= self.shared.ports.len() {
            bail!("no port {port}");
        }
        if !unicast_mac(mac) {
            bail!("{ip}: a neighbour's MAC must be unicast and non-zero");
        }
        let now_ms = self.now_ms();
        let id = self
            .shared
            .control()
            .add_static(&self.shared.neigh, src, port, ip, now_ms)?;
        self.shared.neigh(id).set_static(mac);
        Ok(())
    }
}

/// Reads a routes file of `prefix next-hop` lines (the format of
/// `fib::routes_file`; `.gz` is decompressed).
fn load_routes_file(path: &std::path::Path) -> Result<Vec<(Cidr, IpAddr)>> {
    // Streamed line by line (the file was validated, line lengths
    // bounded, by `config::routes_file::check` before this runs).
    let f = std::fs::File::open(path).with_context(|| format!("{}", path.display()))?;
    let reader: Box<dyn std::io::Read> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(flate2::read::GzDecoder::new(f))
    } else {
        Box::new(f)
    };
    let routes = fib::routes_file::parse(reader).map_err(|e| anyhow!("{}: {e}", path.display()))?;
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
