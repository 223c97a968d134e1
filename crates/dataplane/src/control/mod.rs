//! The writer side of the routing state, [`Control`]: the FIB writers,
//! the next-hop table, the neighbour entries' index (`neigh_table.rs`)
//! and who holds each gateway next hop (`gateways.rs`). It lives behind
//! `Shared::control`, a mutex the fast path never takes; the
//! [`Router`](crate::Router) builds it and the slow path and the control
//! plane change it. It knows neither the router nor what workers share,
//! so both can use it.

pub(crate) mod gateways;
pub(crate) mod neigh_table;

use crate::neighbor::NeighEntry;
use anyhow::{anyhow, bail, Result};
use config::Cidr;
use fib::{
    Lpm4Writer, Lpm6Writer, NextHopId, NextHopKind, NextHopWriter, Prefix4, Prefix6, Target,
};
use gateways::{Gateways, RouteSource};
use neigh_table::NeighTable;
use std::collections::HashMap;
use std::net::IpAddr;

/// Next hops (and so neighbor entries) the table can hold.
pub const MAX_NEXT_HOPS: u32 = 1 << 16;

/// The writer side, behind `Shared::control` (a mutex the fast path never
/// takes).
pub struct Control {
    pub(crate) lpm4: Lpm4Writer,
    pub(crate) lpm6: Lpm6Writer,
    pub(crate) nh: NextHopWriter,
    /// Neighbor entry of each (port, address): gateways, static neighbors
    /// and host entries of connected destinations.
    pub(crate) hosts: HashMap<(usize, IpAddr), NextHopId>,
    /// Dynamic entries per port, their limits, rate limits and GC.
    pub(crate) neigh: NeighTable,
    /// Who holds each gateway next hop (routes, groups, static settings).
    pub(crate) gw: Gateways,
}

impl Control {
    /// The route of `ip`'s host prefix, if there is one.
    pub(crate) fn host_route(&self, ip: IpAddr) -> Option<Target> {
        match ip {
            IpAddr::V4(a) => self.lpm4.get(Prefix4::new(a, 32).unwrap()),
            IpAddr::V6(a) => self.lpm6.get(Prefix6::new(a, 128).unwrap()),
        }
    }

    /// A static neighbour's entry: a gateway next hop for `ip` itself,
    /// held once by the static setting, and a host route. Never over one
    /// of the router's own addresses.
    pub(crate) fn add_static(
        &mut self,
        neigh: &[NeighEntry],
        src: RouteSource,
        port: usize,
        ip: IpAddr,
        now_ms: u64,
    ) -> Result<NextHopId> {
        if let Some(t) = self.host_route(ip) {
            if !t.is_group()
                && self.nh.reader().get(NextHopId(t.index())).kind == NextHopKind::Local
            {
                bail!("{ip} is one of the router's own addresses");
            }
        }
        let id = self.gateway(neigh, src, port, ip)?;
        if !self.hold_static(id) {
            // Static already: the setting holds it once.
            self.release_id(neigh, now_ms, id, false);
        }
        let t = Target::next_hop(id);
        let host = match ip {
            IpAddr::V4(a) => self.lpm4.insert(Prefix4::new(a, 32).unwrap(), t),
            IpAddr::V6(a) => self.lpm6.insert(Prefix6::new(a, 128).unwrap(), t),
        };
        if let Err(e) = host {
            self.release_static(neigh, now_ms, id);
            return Err(e.into());
        }
        Ok(id)
    }

    pub(crate) fn insert(&mut self, prefix: Cidr, t: Target) -> Result<()> {
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
}
