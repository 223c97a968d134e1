//! What `softrouter ctl ... show` reads: the routes and neighbours as the
//! single writer holds them. Read under the control lock on the control
//! side, never by a worker; a listing of a full table allocates, which is
//! fine there.

use std::net::IpAddr;

use config::Cidr;
use fib::{GroupId, NextHopId, NextHopKind, Prefix4, Prefix6, Target};

use crate::control::Control;
use crate::neighbor::{STATE_INCOMPLETE, STATE_REACHABLE, STATE_STALE, STATE_STATIC};
use crate::router::Router;

/// What a route does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteKind {
    /// Through these gateways (ECMP if several), each with its port.
    Forward(Vec<(IpAddr, usize)>),
    /// A subnet on this port.
    Connected(usize),
    /// One of the router's own addresses.
    Local,
    Blackhole,
}

/// A route as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteInfo {
    pub prefix: Cidr,
    pub kind: RouteKind,
}

/// A neighbour as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeighInfo {
    pub address: IpAddr,
    pub port: usize,
    /// `incomplete`, `reachable`, `stale`, `static` or `failed`.
    pub state: &'static str,
    pub mac: Option<[u8; 6]>,
    /// Created by traffic (the collector removes it) or permanent.
    pub dynamic: bool,
}

impl Control {
    fn kind(&self, t: Target) -> RouteKind {
        let r = self.nh.reader();
        let ids: Vec<NextHopId> = if t.is_group() {
            r.group_members(GroupId(t.index())).collect()
        } else {
            vec![NextHopId(t.index())]
        };
        let mut via = Vec::new();
        for id in ids {
            let nh = r.get(id);
            match nh.kind {
                NextHopKind::Gateway(ip) => via.push((ip, usize::from(nh.port))),
                NextHopKind::Connected => return RouteKind::Connected(usize::from(nh.port)),
                NextHopKind::Local => return RouteKind::Local,
                NextHopKind::Blackhole => return RouteKind::Blackhole,
            }
        }
        RouteKind::Forward(via)
    }

    /// A host route that only carries a dynamic neighbour entry (listed
    /// by `neigh show`, not by `route show`).
    fn is_neighbour_host(&self, neigh: &[crate::neighbor::NeighEntry], p: Cidr, t: Target) -> bool {
        p.len == p.max_len()
            && !t.is_group()
            && neigh
                .get(t.index() as usize)
                .is_some_and(|e| e.is_dynamic())
    }
}

impl Router {
    /// Every route (not the host routes of dynamic neighbours), IPv4
    /// first, each family by prefix.
    pub fn routes(&self) -> Vec<RouteInfo> {
        let s = self.shared();
        let c = s.control();
        let mut out: Vec<RouteInfo> = c
            .lpm4
            .routes()
            .map(|(p, t)| {
                (
                    Cidr {
                        addr: p.addr.into(),
                        len: p.len,
                    },
                    t,
                )
            })
            .chain(c.lpm6.routes().map(|(p, t)| {
                (
                    Cidr {
                        addr: p.addr.into(),
                        len: p.len,
                    },
                    t,
                )
            }))
            .filter(|&(p, t)| !c.is_neighbour_host(&s.neigh, p, t))
            .map(|(prefix, t)| RouteInfo {
                prefix,
                kind: c.kind(t),
            })
            .collect();
        out.sort_by_key(|r| (r.prefix.addr.is_ipv6(), r.prefix.addr, r.prefix.len));
        out
    }

    /// The route of exactly `prefix`, if one is installed (not the host
    /// route of a dynamic neighbour): one hash lookup under the control
    /// lock, where filtering [`routes`](Self::routes) held it for a listing
    /// of the whole table (90 ms at 100,000 routes).
    pub fn route(&self, prefix: Cidr) -> Option<RouteInfo> {
        let s = self.shared();
        let c = s.control();
        let t = match prefix.network() {
            IpAddr::V4(a) => c.lpm4.get(Prefix4::new(a, prefix.len)?),
            IpAddr::V6(a) => c.lpm6.get(Prefix6::new(a, prefix.len)?),
        }?;
        if c.is_neighbour_host(&s.neigh, prefix, t) {
            return None;
        }
        Some(RouteInfo {
            prefix: Cidr {
                addr: prefix.network(),
                len: prefix.len,
            },
            kind: c.kind(t),
        })
    }

    /// The route a packet to `addr` takes (longest match), if any.
    pub fn route_for(&self, addr: IpAddr) -> Option<RouteInfo> {
        let s = self.shared();
        let c = s.control();
        let found = match addr {
            IpAddr::V4(a) => (0..=32u8).rev().find_map(|len| {
                let p = Prefix4::new(a, len)?;
                c.lpm4.get(p).map(|t| {
                    (
                        Cidr {
                            addr: p.addr.into(),
                            len,
                        },
                        t,
                    )
                })
            }),
            IpAddr::V6(a) => (0..=128u8).rev().find_map(|len| {
                let p = Prefix6::new(a, len)?;
                c.lpm6.get(p).map(|t| {
                    (
                        Cidr {
                            addr: p.addr.into(),
                            len,
                        },
                        t,
                    )
                })
            }),
        }?;
        Some(RouteInfo {
            prefix: found.0,
            kind: c.kind(found.1),
        })
    }

    /// Every neighbour entry, by port and address.
    pub fn neighbors(&self) -> Vec<NeighInfo> {
        let s = self.shared();
        let c = s.control();
        let mut out: Vec<NeighInfo> = c
            .hosts
            .iter()
            .map(|(&(port, address), &id)| {
                let e = &s.neigh[id.0 as usize];
                let (state, mac) = (e.state(), e.mac());
                let name = match state {
                    STATE_INCOMPLETE => "incomplete",
                    STATE_REACHABLE => "reachable",
                    STATE_STALE => "stale",
                    STATE_STATIC => "static",
                    _ => "failed",
                };
                let mac =
                    matches!(state, STATE_REACHABLE | STATE_STALE | STATE_STATIC).then_some(mac);
                NeighInfo {
                    address,
                    port,
                    state: name,
                    mac,
                    dynamic: e.is_dynamic(),
                }
            })
            .collect();
        out.sort_by_key(|n| (n.port, n.address));
        out
    }
}
