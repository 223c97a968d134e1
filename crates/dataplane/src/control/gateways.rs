//! Gateway next hops held by routes and static neighbours: reference
//! counts, per-source limits and release (issue 22: before this, every
//! gateway ever named stayed, so churn filled the next-hop table).
//!
//! Each `Gateway` next hop of a route or static neighbour counts who holds
//! it: every route whose target it is, every ECMP group it is a member of
//! (once per occurrence; a group in turn counts the routes that point to
//! it) and a static neighbour's setting. When the count falls to zero the
//! entry is released at once, through the path the neighbour collector
//! uses (host route, entry DEAD with a new incarnation, next-hop id reused
//! only after a grace period of every reader: the workers' QSBR and the
//! XDP tier's kernel grace period, see `fib::nexthop`). One exception
//! keeps what traffic still needs: an entry that holds a MAC and carried
//! traffic within the stale time becomes a dynamic entry of its port, as
//! if its host had been resolved for a connected destination, and ages
//! out like one (`neigh_table.rs`), so a route that flaps does not
//! lose its gateway's MAC.
//!
//! The host routes of dynamic neighbours are not references: a route that
//! replaces or removes one (which the validators refuse anyway) releases
//! nothing.
//!
//! Limits: each source may hold at most [`RouteSource::limit`] gateway
//! entries it created (an entry counts against the source whose route or
//! neighbour created it, until it is released), and no runtime source may
//! take the part of the table the dynamic neighbours are guaranteed
//! (`max_per_port` on every port). Refusals say which limit and how full.

use super::Control;
use crate::neighbor::{NeighEntry, STATE_REACHABLE, STATE_STALE, STATE_STATIC};
use anyhow::{bail, Result};
use config::Cidr;
use fib::{GroupId, NextHop, NextHopId, NextHopKind, Prefix4, Prefix6, Target};
use std::collections::HashSet;
use std::net::IpAddr;

/// Who asked for a route or a static neighbour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RouteSource {
    /// The configuration file (at start and on reload) and its routes file.
    Config,
    /// `softrouter ctl`.
    Ctl,
    /// The kernel routing-table mirror (`[kernel] routes`).
    Kernel,
}

impl RouteSource {
    pub const ALL: [RouteSource; 3] = [RouteSource::Config, RouteSource::Ctl, RouteSource::Kernel];

    pub fn name(self) -> &'static str {
        match self {
            RouteSource::Config => "config",
            RouteSource::Ctl => "ctl",
            RouteSource::Kernel => "kernel",
        }
    }

    /// Gateway entries this source may hold. The configuration is checked
    /// against the whole table before the router starts (`check-config`);
    /// the run-time sources get a share each, far above honest use (a full
    /// Internet table names a few hundred next hops), so neither a
    /// runaway routing daemon nor a script can take the other's room.
    pub fn limit(self) -> Option<u32> {
        match self {
            RouteSource::Config => None,
            RouteSource::Ctl => Some(4096),
            RouteSource::Kernel => Some(16_384),
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The reference counts (see the module documentation), under the
/// control lock.
pub(crate) struct Gateways {
    /// Holders of each next-hop id (0 for dynamic and non-gateway ones).
    refs: Vec<u32>,
    /// Routes pointing to each ECMP group.
    group_refs: Vec<u32>,
    /// The source each held entry counts against.
    owner: Vec<RouteSource>,
    /// Held entries per source.
    per_source: [u32; 3],
    /// Entries set as static neighbours (each holds one reference).
    statics: HashSet<NextHopId>,
}

impl Gateways {
    pub(crate) fn new(next_hops: u32, groups: u32) -> Gateways {
        Gateways {
            refs: vec![0; next_hops as usize],
            group_refs: vec![0; groups as usize],
            owner: vec![RouteSource::Config; next_hops as usize],
            per_source: [0; 3],
            statics: HashSet::new(),
        }
    }

    /// Held entries per source.
    pub(crate) fn per_source(&self, s: RouteSource) -> u32 {
        self.per_source[s.index()]
    }
}

impl Control {
    /// The entry of gateway `ip` on `port`, holding one reference for the
    /// caller: an existing one (a dynamic entry becomes permanent) or a new
    /// one, within `src`'s limits.
    pub(crate) fn gateway(
        &mut self,
        neigh: &[NeighEntry],
        src: RouteSource,
        port: usize,
        ip: IpAddr,
    ) -> Result<NextHopId> {
        if let Some(&id) = self.hosts.get(&(port, ip)) {
            let i = id.0 as usize;
            if self.gw.refs[i] == 0 {
                // A dynamic entry: a route (or static setting) holds it now.
                self.check_room(src, ip)?;
                self.pin(neigh, port, ip);
                self.take(src, id);
            }
            self.gw.refs[i] += 1;
            return Ok(id);
        }
        self.check_room(src, ip)?;
        let id = self.nh.add(NextHop {
            port: port as u16,
            kind: NextHopKind::Gateway(ip),
        })?;
        // The id may be a reused one: a fresh, permanent entry.
        neigh[id.0 as usize].reset(false, 0, false);
        self.hosts.insert((port, ip), id);
        self.take(src, id);
        self.gw.refs[id.0 as usize] = 1;
        Ok(id)
    }

    fn take(&mut self, src: RouteSource, id: NextHopId) {
        self.gw.owner[id.0 as usize] = src;
        self.gw.per_source[src.index()] += 1;
    }

    /// Refuses a new entry for `src` beyond its limit, or (at run time)
    /// in the room kept for dynamic neighbours.
    fn check_room(&self, src: RouteSource, ip: IpAddr) -> Result<()> {
        let held = self.gw.per_source(src);
        if let Some(limit) = src.limit() {
            if held >= limit {
                bail!(
                    "next hop {ip}: {} routes and neighbours already hold {held} gateway next hops, their limit",
                    src.name()
                );
            }
            let dynamic: usize = self.neigh.ports.iter().map(|p| p.dynamic.len()).sum();
            let reserve = self.neigh.limits.max_per_port as usize * self.neigh.ports.len();
            let cap = self.nh.capacity();
            if self.nh.len() - dynamic + reserve >= cap {
                bail!(
                    "next hop {ip}: the next-hop table is full ({} of {cap} in use, {reserve} of them kept for neighbours on connected subnets)",
                    self.nh.len() - dynamic + reserve
                );
            }
        }
        Ok(())
    }

    /// Drops one hold of `t`; what nothing holds any more is released.
    pub(crate) fn release(&mut self, neigh: &[NeighEntry], now_ms: u64, t: Target) {
        if !t.is_group() {
            self.release_id(neigh, now_ms, NextHopId(t.index()), true);
            return;
        }
        let g = t.index() as usize;
        let Some(n) = self.gw.group_refs.get_mut(g) else {
            return;
        };
        if *n == 0 {
            return;
        }
        *n -= 1;
        if *n == 0 {
            if let Ok(members) = self.nh.remove_group(GroupId(g as u32)) {
                for m in members {
                    self.release_id(neigh, now_ms, m, true);
                }
            }
        }
    }

    /// Drops one hold of gateway `id`. At zero the entry goes, or, with
    /// `keep` and if traffic still uses its MAC, becomes dynamic.
    pub(crate) fn release_id(
        &mut self,
        neigh: &[NeighEntry],
        now_ms: u64,
        id: NextHopId,
        keep: bool,
    ) {
        let i = id.0 as usize;
        if self.gw.refs.get(i).copied().unwrap_or(0) == 0 {
            return;
        }
        self.gw.refs[i] -= 1;
        if self.gw.refs[i] > 0 {
            return;
        }
        self.gw.per_source[self.gw.owner[i].index()] -= 1;
        let NextHop {
            port,
            kind: NextHopKind::Gateway(ip),
        } = self.nh.reader().get(id)
        else {
            return;
        };
        let port = usize::from(port);
        let e = &neigh[i];
        let has_mac = matches!(e.state(), STATE_REACHABLE | STATE_STALE | STATE_STATIC);
        // A gateway's `used_ms` is 0 until a fast path sends to it.
        let used =
            e.used_ms() != 0 && now_ms.saturating_sub(e.used_ms()) < self.neigh.limits.stale_ms;
        let room = (self.neigh.ports[port].dynamic.len() as u32) < self.neigh.limits.gc_soft;
        if keep && has_mac && used && room {
            e.unpin();
            self.neigh.ports[port].dynamic.insert(ip, id);
        } else {
            self.remove_dynamic(neigh, port, ip, id);
        }
    }

    /// A route's target for `via`, holding one reference: the gateway's
    /// entry, or an ECMP group of the gateways' entries.
    pub(crate) fn route_target(
        &mut self,
        neigh: &[NeighEntry],
        src: RouteSource,
        ports: usize,
        via: &[(IpAddr, usize)],
        now_ms: u64,
    ) -> Result<Target> {
        if via.is_empty() {
            bail!("a route needs at least one next hop");
        }
        let mut ids = Vec::with_capacity(via.len());
        for &(ip, port) in via {
            let id = if port >= ports {
                Err(anyhow::anyhow!("next hop {ip}: no port {port}"))
            } else {
                self.gateway(neigh, src, port, ip)
            };
            match id {
                Ok(id) => ids.push(id),
                Err(e) => {
                    for id in ids {
                        self.release_id(neigh, now_ms, id, true);
                    }
                    return Err(e);
                }
            }
        }
        if ids.len() == 1 {
            return Ok(Target::next_hop(ids[0]));
        }
        let group = self.nh.add_group(&ids);
        if let Ok(g) = group {
            let n = &mut self.gw.group_refs[g.0 as usize];
            if *n == 0 {
                // A new group holds each of its members.
                for &id in &ids {
                    self.gw.refs[id.0 as usize] += 1;
                }
            }
            self.gw.group_refs[g.0 as usize] += 1;
        }
        // The members' own holds (the group holds them now).
        for &id in &ids {
            self.release_id(neigh, now_ms, id, true);
        }
        Ok(Target::group(group?))
    }

    /// True if `t` is held by the route of `prefix` (not the host route of
    /// a dynamic neighbour, nor a connected or local route).
    fn is_held(&self, prefix: Cidr, t: Target) -> bool {
        if t.is_group() {
            return true;
        }
        let host = prefix.len == prefix.max_len();
        match self.nh.reader().get(NextHopId(t.index())).kind {
            NextHopKind::Gateway(gw) => !(host && gw == prefix.addr),
            _ => false,
        }
    }

    /// Installs the route of `prefix` to `t` (which the caller holds),
    /// releasing the target it replaces; on failure releases `t`.
    pub(crate) fn set_route(
        &mut self,
        neigh: &[NeighEntry],
        now_ms: u64,
        prefix: Cidr,
        t: Target,
    ) -> Result<()> {
        let old = self.route_of(prefix);
        if let Err(e) = self.insert(prefix, t) {
            self.release(neigh, now_ms, t);
            return Err(e);
        }
        if let Some(o) = old.filter(|&o| self.is_held(prefix, o)) {
            self.release(neigh, now_ms, o);
        }
        Ok(())
    }

    /// Removes the route of `prefix`, releasing its target. Returns
    /// whether there was one.
    pub(crate) fn unset_route(
        &mut self,
        neigh: &[NeighEntry],
        now_ms: u64,
        prefix: Cidr,
    ) -> Result<bool> {
        let old = match prefix.network() {
            IpAddr::V4(a) => match Prefix4::new(a, prefix.len) {
                Some(p) => self.lpm4.remove(p)?,
                None => bail!("bad prefix {prefix}"),
            },
            IpAddr::V6(a) => match Prefix6::new(a, prefix.len) {
                Some(p) => self.lpm6.remove(p)?,
                None => bail!("bad prefix {prefix}"),
            },
        };
        let Some(t) = old else {
            return Ok(false);
        };
        if self.is_held(prefix, t) {
            self.release(neigh, now_ms, t);
        }
        Ok(true)
    }

    fn route_of(&self, prefix: Cidr) -> Option<Target> {
        match prefix.network() {
            IpAddr::V4(a) => self.lpm4.get(Prefix4::new(a, prefix.len)?),
            IpAddr::V6(a) => self.lpm6.get(Prefix6::new(a, prefix.len)?),
        }
    }

    /// Sets `id` as a static neighbour's entry (one hold, once).
    pub(crate) fn hold_static(&mut self, id: NextHopId) -> bool {
        self.gw.statics.insert(id)
    }

    /// Drops the static neighbour's hold of `id`, if it has one.
    pub(crate) fn release_static(&mut self, neigh: &[NeighEntry], now_ms: u64, id: NextHopId) {
        if self.gw.statics.remove(&id) {
            self.release_id(neigh, now_ms, id, false);
        }
    }

    /// Whether anything holds `id` (a route, a group or a static setting).
    pub(crate) fn is_held_id(&self, id: NextHopId) -> bool {
        self.gw.refs.get(id.0 as usize).is_some_and(|&n| n > 0)
    }
}
