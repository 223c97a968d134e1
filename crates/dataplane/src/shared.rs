//! What workers share ([`Shared`]): the ports, the next-hop table and the
//! neighbour entries, read lock-free on the fast path, and the slow-path
//! entry points (a host entry for a connected destination, ARP/ND
//! learning, address defence, the periodic neighbour collection) that take
//! the control lock. [`crate::router`] builds it and is its single writer;
//! the neighbour model is described in [`crate::neighbor`].

use crate::control::neigh_table::PortHints;
use crate::control::Control;
use crate::drop::DropReason;
use crate::neighbor::{unicast_mac, Learn, NeighEntry, NeighLimits};
use fib::{NextHopId, NextHopReader, Prefix4, Prefix6, Target};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::Instant;

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

    /// True if `a` is the network or broadcast address of one of this
    /// port's IPv4 subnets (prefixes up to /30; /31 and /32 have none,
    /// RFC 3021).
    pub fn subnet_special_v4(&self, a: Ipv4Addr) -> bool {
        let a = u32::from(a);
        self.v4.iter().any(|(x, l)| {
            let m = fib::prefix::mask4(*l);
            *l <= 30 && u32::from(*x) & m == a & m && (a & !m == 0 || a & !m == !m)
        })
    }

    /// True if `a` is the Subnet-Router anycast address (RFC 4291 2.6.1)
    /// of one of this port's IPv6 subnets (prefixes up to /126; /127 has
    /// none, RFC 6164).
    pub fn subnet_special_v6(&self, a: Ipv6Addr) -> bool {
        let a = u128::from(a);
        self.v6.iter().any(|(x, l)| {
            let m = fib::prefix::mask6(*l);
            *l <= 126 && u128::from(*x) & m == a & m && a & !m == 0
        })
    }
}

/// How the neighbour policy classifies an address received on a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AddrClass {
    /// A host on one of the port's subnets: may have an entry.
    Neighbor,
    /// One of the router's own addresses (on any port).
    Own,
    /// Never a neighbour: unspecified, multicast, loopback, limited
    /// broadcast, a subnet's network/broadcast/Subnet-Router anycast.
    Special,
    /// Not on the port's subnets (may be answered, is not learned).
    OffLink,
}

/// The outcome of [`Shared::learn`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Learned {
    /// An entry holds the MAC now (updated or created).
    Updated,
    /// Nothing to update (no entry and none may be created, an ignored
    /// override, rate limit, table full).
    Ignored,
    /// The address is one of the router's own.
    Own,
    /// The address or the MAC can never be a neighbour's.
    Invalid,
}

/// Everything workers share, read-only on the fast path.
pub struct Shared {
    pub ports: Vec<PortCtx>,
    pub(crate) nh: NextHopReader,
    /// One entry per next-hop id (shared with the XDP fast path when it
    /// is on: see [`crate::neighbor::layout`]).
    pub(crate) neigh: fib::memory::Region<NeighEntry>,
    pub(crate) control: Mutex<Control>,
    pub(crate) epoch: Instant,
    pub icmp_rate: u32,
    pub hold_packets: u32,
    /// Reachable time: a confirmation older than this makes an entry STALE.
    pub neighbor_timeout_ms: u64,
    /// Per-port lock-free hints (rate limits, address defence).
    pub(crate) hints: Box<[PortHints]>,
    /// When the next periodic neighbour collection is due.
    pub(crate) gc_due_ms: AtomicU64,
    pub(crate) gc_interval_ms: u64,
    /// `[router] forwarding = "cross-connect"`: the output port of each
    /// input port (0<->1, 2<->3, ...); `None`: route.
    pub(crate) cross_connect: Option<Box<[usize]>>,
    /// `[router] tx_queues = "shared"`: one lock per port that a worker
    /// holds while it transmits there; `None`: per-worker queues, no lock.
    pub(crate) tx_locks: Option<Box<[std::sync::Mutex<()>]>>,
    /// `[kernel] local`: neighbours are the kernel's; what the workers
    /// would solicit is asked of it here (see [`crate::kernel_neigh`]).
    pub(crate) kernel: Option<crate::kernel_neigh::KernelRequests>,
}

impl Shared {
    pub(crate) fn control(&self) -> MutexGuard<'_, Control> {
        self.control.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The workers' clock: their `now_ms` counts from this instant (the
    /// XDP fast path ages neighbours on the same clock).
    pub fn epoch(&self) -> Instant {
        self.epoch
    }

    pub(crate) fn neigh(&self, id: NextHopId) -> &NeighEntry {
        &self.neigh[id.0 as usize]
    }

    /// How the neighbour policy sees `ip` received on (or destined to a
    /// host on) `port`.
    pub(crate) fn classify(&self, port: usize, ip: IpAddr) -> AddrClass {
        let Some(p) = self.ports.get(port) else {
            return AddrClass::OffLink;
        };
        match ip {
            IpAddr::V4(a) => {
                if self.ports.iter().any(|p| p.has_v4(a)) {
                    AddrClass::Own
                } else if a.is_unspecified()
                    || a.is_multicast()
                    || a.is_loopback()
                    || a.is_broadcast()
                    || u32::from(a) >> 28 == 0xf
                    || p.subnet_special_v4(a)
                {
                    AddrClass::Special
                } else if p.on_link_v4(a) {
                    AddrClass::Neighbor
                } else {
                    AddrClass::OffLink
                }
            }
            IpAddr::V6(a) => {
                if self.ports.iter().any(|p| p.has_v6(a)) {
                    AddrClass::Own
                } else if a.is_unspecified()
                    || a.is_multicast()
                    || a.is_loopback()
                    || p.subnet_special_v6(a)
                {
                    AddrClass::Special
                } else if p.on_link_v6(a) {
                    AddrClass::Neighbor
                } else {
                    AddrClass::OffLink
                }
            }
        }
    }

    /// The entry of connected destination `ip` on `port`, creating a
    /// dynamic host entry (rate-limited, bounded) if there is none.
    /// Slow path: takes the control lock, except when the port's
    /// resolution rate limit is known to be exhausted.
    pub(crate) fn connected_entry(
        &self,
        port: usize,
        ip: IpAddr,
        now_ms: u64,
    ) -> Result<NextHopId, DropReason> {
        let hints = self.hints.get(port).ok_or(DropReason::BadPort)?;
        if now_ms < hints.resolve_closed.load(Ordering::Relaxed) {
            return Err(DropReason::NeighborRateLimited);
        }
        let mut c = self.control();
        if let Some(&id) = c.hosts.get(&(port, ip)) {
            // A gateway (or a host whose route was removed) reached as a
            // connected destination: give it a host route, so the next
            // packet finds it without the lock.
            if c.host_route(ip).is_none() {
                let t = Target::next_hop(id);
                let _ = match ip {
                    IpAddr::V4(a) => c.lpm4.insert(Prefix4::new(a, 32).unwrap(), t),
                    IpAddr::V6(a) => c.lpm6.insert(Prefix6::new(a, 128).unwrap(), t),
                };
            }
            return Ok(id);
        }
        match self.classify(port, ip) {
            AddrClass::Neighbor => {}
            AddrClass::Special if ip.is_ipv4() => return Err(DropReason::DirectedBroadcast),
            AddrClass::Special => return Err(DropReason::SubnetRouterAnycast),
            // A route change raced with the lookup: not a neighbour.
            AddrClass::Own | AddrClass::OffLink => return Err(DropReason::NoRoute),
        }
        if let Err(wait) = c.neigh.ports[port].resolve.take(now_ms) {
            hints.resolve_closed.store(now_ms + wait, Ordering::Relaxed);
            return Err(DropReason::NeighborRateLimited);
        }
        c.create_dynamic(
            &self.neigh,
            port,
            ip,
            now_ms,
            self.neighbor_timeout_ms,
            true,
        )
    }

    /// Learns `mac` for `ip` on `port` as `how` allows, after the address
    /// policy of [`crate::neighbor`]: never the router's own or a special
    /// address, never a multicast or zero MAC, only on-link addresses.
    pub(crate) fn learn(
        &self,
        port: usize,
        ip: IpAddr,
        mac: [u8; 6],
        how: Learn,
        now_ms: u64,
    ) -> Learned {
        match self.classify(port, ip) {
            AddrClass::Neighbor => {}
            AddrClass::Own => return Learned::Own,
            AddrClass::Special => return Learned::Invalid,
            AddrClass::OffLink => return Learned::Ignored,
        }
        if !unicast_mac(mac) {
            return Learned::Invalid;
        }
        let hints = &self.hints[port];
        let mut c = self.control();
        let id = match c.hosts.get(&(port, ip)) {
            Some(&id) => id,
            None => {
                // Link-local neighbours are never given host routes (the
                // FIB is shared by all ports); they exist only as gateways.
                let link_local = matches!(ip, IpAddr::V6(a) if a.segments()[0] & 0xffc0 == 0xfe80);
                if !how.create || link_local || now_ms < hints.learn_closed.load(Ordering::Relaxed)
                {
                    return Learned::Ignored;
                }
                if let Err(wait) = c.neigh.ports[port].learn.take(now_ms) {
                    hints.learn_closed.store(now_ms + wait, Ordering::Relaxed);
                    return Learned::Ignored;
                }
                match c.create_dynamic(
                    &self.neigh,
                    port,
                    ip,
                    now_ms,
                    self.neighbor_timeout_ms,
                    false,
                ) {
                    Ok(id) => id,
                    Err(_) => return Learned::Ignored,
                }
            }
        };
        drop(c);
        if self.neigh(id).learn(mac, how, now_ms) {
            Learned::Updated
        } else {
            Learned::Ignored
        }
    }

    /// Confirms the entry of `ip` on `port` without a new MAC (a solicited
    /// NA without a Target Link-Layer Address option). Returns how the
    /// policy classified the address.
    pub(crate) fn confirm(&self, port: usize, ip: IpAddr, now_ms: u64) -> AddrClass {
        let class = self.classify(port, ip);
        if class == AddrClass::Neighbor {
            let id = self.control().hosts.get(&(port, ip)).copied();
            if let Some(id) = id {
                self.neigh(id).confirm(now_ms);
            }
        }
        class
    }

    /// True if the caller may defend `port`'s address of this family now
    /// (at most once per [`crate::neighbor::DEFEND_INTERVAL_MS`]).
    pub(crate) fn try_defend(&self, port: usize, v6: bool, now_ms: u64) -> bool {
        let a = &self.hints[port].defended[v6 as usize];
        let last = a.load(Ordering::Relaxed);
        if last != 0 && now_ms + 1 < last + crate::neighbor::DEFEND_INTERVAL_MS {
            return false;
        }
        a.compare_exchange(last, now_ms + 1, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    /// Runs the periodic neighbour collection if it is due and nobody else
    /// is running it or holding the control lock (never waits).
    pub(crate) fn maybe_gc(&self, now_ms: u64) {
        let due = self.gc_due_ms.load(Ordering::Relaxed);
        if now_ms < due
            || self
                .gc_due_ms
                .compare_exchange(
                    due,
                    now_ms + self.gc_interval_ms,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_err()
        {
            return;
        }
        let mut c = match self.control.try_lock() {
            Ok(c) => c,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        c.gc(&self.neigh, now_ms, self.neighbor_timeout_ms);
    }

    /// Dynamic neighbour entries on each port (tests, statistics).
    pub fn neighbor_counts(&self) -> Vec<usize> {
        let c = self.control();
        c.neigh.ports.iter().map(|p| p.dynamic.len()).collect()
    }

    /// Live next hops and retired ones awaiting their grace period.
    pub fn next_hops(&self) -> (usize, usize) {
        let c = self.control();
        (c.nh.len(), c.nh.retired())
    }

    /// The effective neighbour limits.
    pub fn neighbor_limits(&self) -> NeighLimits {
        self.control().neigh.limits
    }

    /// Runs one neighbour collection now (tests).
    #[doc(hidden)]
    pub fn collect_neighbors(&self, now_ms: u64) -> usize {
        let mut c = self.control();
        c.gc(&self.neigh, now_ms, self.neighbor_timeout_ms)
    }
}

impl Shared {
    /// A reader of the next-hop table (to register for its grace periods).
    pub fn next_hop_reader(&self) -> fib::NextHopReader {
        self.nh.clone()
    }

    /// `ip` on `port` answered with `mac` and a fast path sent to it at
    /// `now_ms` (tests).
    #[doc(hidden)]
    pub fn neighbor_seen(&self, port: usize, ip: IpAddr, mac: [u8; 6], now_ms: u64) -> bool {
        let how = crate::neighbor::Learn {
            create: false,
            confirm: true,
            overrides: true,
        };
        let learned = self.learn(port, ip, mac, how, now_ms) == Learned::Updated;
        if let Some(&id) = self.control().hosts.get(&(port, ip)) {
            self.neigh(id).touch(now_ms);
        }
        learned
    }

    /// The next-hop table's use (statistics, metrics).
    pub fn next_hop_use(&self) -> crate::report::NextHopUse {
        let c = self.control();
        let dynamic: usize = c.neigh.ports.iter().map(|p| p.dynamic.len()).sum();
        let mut by_source: std::collections::BTreeMap<String, u64> = crate::RouteSource::ALL
            .iter()
            .map(|&s| (s.name().to_string(), u64::from(c.gw.per_source(s))))
            .collect();
        by_source.insert("neighbor".into(), dynamic as u64);
        let held: u64 = by_source.values().sum();
        by_source.insert("port".into(), (c.nh.len() as u64).saturating_sub(held));
        let mut limits: std::collections::BTreeMap<String, u64> = crate::RouteSource::ALL
            .iter()
            .filter_map(|&s| Some((s.name().to_string(), u64::from(s.limit()?))))
            .collect();
        limits.insert(
            "neighbor".into(),
            u64::from(c.neigh.limits.max_per_port) * c.neigh.ports.len() as u64,
        );
        crate::report::NextHopUse {
            capacity: c.nh.capacity() as u64,
            used: c.nh.len() as u64,
            retired: c.nh.retired() as u64,
            by_source,
            limits,
            ecmp_groups: c.nh.groups() as u64,
            ecmp_group_capacity: c.nh.group_capacity() as u64,
        }
    }
}
