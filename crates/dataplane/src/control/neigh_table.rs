//! The control side of the neighbour table: dynamic entries per port,
//! their bounds, rate limits and garbage collection (the model is described
//! in [`crate::neighbor`]). Everything here runs under the control lock.

use super::Control;
use crate::drop::DropReason;
use crate::neighbor::{GcView, NeighEntry, NeighLimits, FORCED_GC_IDLE_MS};
use fib::{NextHop, NextHopId, NextHopKind, Prefix4, Prefix6, Target};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::AtomicU64;

/// At most this many entries are removed by one periodic collection (it
/// runs on a worker thread; the rest waits for the next period).
const GC_MAX_REMOVALS: usize = 1024;

/// At the hard limit a forced collection (a scan of the port's entries)
/// runs at most this often; in between, new entries are refused.
const FORCED_GC_FULL_INTERVAL_MS: u64 = 100;

/// A token bucket of `rate` tokens per second with one second of burst,
/// in thousandths of a token.
pub(crate) struct Bucket {
    milli: u64,
    last_ms: u64,
    rate: u64,
}

impl Bucket {
    fn new(rate: u32) -> Bucket {
        Bucket {
            milli: u64::from(rate) * 1000,
            last_ms: 0,
            rate: u64::from(rate),
        }
    }

    /// Takes a token, or returns the milliseconds until one is available.
    pub(crate) fn take(&mut self, now_ms: u64) -> Result<(), u64> {
        let dt = now_ms.saturating_sub(self.last_ms);
        self.last_ms = self.last_ms.max(now_ms);
        self.milli = (self.milli + dt * self.rate).min(self.rate * 1000);
        if self.milli >= 1000 {
            self.milli -= 1000;
            Ok(())
        } else if self.rate == 0 {
            Err(1000)
        } else {
            Err((1000 - self.milli).div_ceil(self.rate).max(1))
        }
    }
}

/// Lock-free per-port hints read by workers before they take the lock.
#[derive(Default)]
pub(crate) struct PortHints {
    /// No new resolution on this port before this time (ms).
    pub resolve_closed: AtomicU64,
    /// No passively learned entry on this port before this time (ms).
    pub learn_closed: AtomicU64,
    /// Last defence of an address (+1), IPv4 and IPv6.
    pub defended: [AtomicU64; 2],
}

pub(crate) struct PortNeigh {
    /// Dynamic entries of this port.
    pub dynamic: HashMap<IpAddr, NextHopId>,
    pub resolve: Bucket,
    pub learn: Bucket,
    last_forced_ms: Option<u64>,
}

/// Dynamic entries of every port, with their limits.
pub(crate) struct NeighTable {
    pub limits: NeighLimits,
    pub ports: Vec<PortNeigh>,
    /// The port the next periodic collection starts with (round robin, so
    /// a busy port cannot use up every run's removal budget).
    gc_start: usize,
}

impl NeighTable {
    /// `limits` with `max_per_port` capped so that `ports` ports use at
    /// most half of the next-hop table, and the thresholds ordered.
    pub(crate) fn effective_limits(limits: NeighLimits, ports: usize) -> NeighLimits {
        let cap = (super::MAX_NEXT_HOPS / 2) / ports.max(1) as u32;
        let max = limits.max_per_port.min(cap).max(1);
        NeighLimits {
            max_per_port: max,
            gc_soft: limits.gc_soft.min(max),
            gc_min: limits.gc_min.min(limits.gc_soft).min(max),
            ..limits
        }
    }

    pub(crate) fn new(limits: NeighLimits, ports: usize) -> NeighTable {
        NeighTable {
            limits,
            ports: (0..ports)
                .map(|_| PortNeigh {
                    dynamic: HashMap::new(),
                    resolve: Bucket::new(limits.resolve_rate),
                    learn: Bucket::new(limits.learn_rate),
                    last_forced_ms: None,
                })
                .collect(),
            gc_start: 0,
        }
    }
}

fn host_prefix_target(c: &Control, ip: IpAddr) -> Option<Target> {
    c.host_route(ip)
}

impl Control {
    /// Creates a dynamic entry for `ip` on `port` (the caller checked the
    /// address policy and the rate limit): a next hop, a fresh entry and a
    /// host route. At the port's limit a forced collection makes room
    /// first. `resolving`: the entry starts resolving now (traffic);
    /// otherwise it is about to learn a MAC (ARP request / NS to us).
    pub(crate) fn create_dynamic(
        &mut self,
        neigh: &[NeighEntry],
        port: usize,
        ip: IpAddr,
        now_ms: u64,
        reachable_ms: u64,
        resolving: bool,
    ) -> Result<NextHopId, DropReason> {
        if host_prefix_target(self, ip).is_some() {
            // A more specific route (or our own address) owns the host
            // prefix: never shadow it.
            return Err(DropReason::NeighborTableFull);
        }
        let lim = self.neigh.limits;
        let pn = &self.neigh.ports[port];
        let count = pn.dynamic.len() as u32;
        let since_forced = pn
            .last_forced_ms
            .map_or(u64::MAX, |t| now_ms.saturating_sub(t));
        if (count >= lim.max_per_port && since_forced >= FORCED_GC_FULL_INTERVAL_MS)
            || (count >= lim.gc_soft && since_forced >= FORCED_GC_IDLE_MS)
        {
            self.forced_gc(neigh, port, now_ms, reachable_ms);
        }
        if self.neigh.ports[port].dynamic.len() as u32 >= lim.max_per_port {
            return Err(DropReason::NeighborTableFull);
        }
        let id = self
            .nh
            .add(NextHop {
                port: port as u16,
                kind: NextHopKind::Gateway(ip),
            })
            .map_err(|_| DropReason::NeighborTableFull)?;
        let e = &neigh[id.0 as usize];
        e.reset(true, now_ms, resolving);
        let t = Target::next_hop(id);
        let inserted = match ip {
            IpAddr::V4(a) => self.lpm4.insert(Prefix4::new(a, 32).unwrap(), t),
            IpAddr::V6(a) => self.lpm6.insert(Prefix6::new(a, 128).unwrap(), t),
        };
        if inserted.is_err() {
            e.retire();
            let _ = self.nh.retire(id);
            return Err(DropReason::NeighborTableFull);
        }
        self.hosts.insert((port, ip), id);
        self.neigh.ports[port].dynamic.insert(ip, id);
        Ok(id)
    }

    /// Makes the dynamic entry of `ip` on `port` (if any) permanent.
    pub(crate) fn pin(&mut self, neigh: &[NeighEntry], port: usize, ip: IpAddr) {
        if let Some(pn) = self.neigh.ports.get_mut(port) {
            if let Some(id) = pn.dynamic.remove(&ip) {
                neigh[id.0 as usize].pin();
            }
        }
    }

    /// Removes a dynamic entry: its host route (if it is still the entry's),
    /// the entry (DEAD, new incarnation) and its next-hop id (reused after
    /// a grace period).
    pub(crate) fn remove_dynamic(
        &mut self,
        neigh: &[NeighEntry],
        port: usize,
        ip: IpAddr,
        id: NextHopId,
    ) {
        if host_prefix_target(self, ip) == Some(Target::next_hop(id)) {
            let _ = match ip {
                IpAddr::V4(a) => self.lpm4.remove(Prefix4::new(a, 32).unwrap()).map(|_| ()),
                IpAddr::V6(a) => self.lpm6.remove(Prefix6::new(a, 128).unwrap()).map(|_| ()),
            };
        }
        self.hosts.remove(&(port, ip));
        self.neigh.ports[port].dynamic.remove(&ip);
        neigh[id.0 as usize].retire();
        let _ = self.nh.retire(id);
    }

    /// Forced collection on `port` (at the hard limit, or above the soft
    /// one): evicts failed entries, then entries unused for
    /// [`FORCED_GC_IDLE_MS`] (least recently used first), down to the
    /// soft limit. Entries in use or resolving stay.
    fn forced_gc(&mut self, neigh: &[NeighEntry], port: usize, now_ms: u64, reachable_ms: u64) {
        let lim = self.neigh.limits;
        let pn = &mut self.neigh.ports[port];
        pn.last_forced_ms = Some(now_ms);
        let count = pn.dynamic.len();
        let target = (lim.gc_soft as usize).min(lim.max_per_port as usize - 1);
        let want = count.saturating_sub(target).max(1);
        // (class, -idle): failed first, then the longest unused.
        let mut cand: Vec<(u8, u64, IpAddr, NextHopId)> = pn
            .dynamic
            .iter()
            .filter_map(
                |(&ip, &id)| match neigh[id.0 as usize].gc_view(now_ms, reachable_ms) {
                    GcView::Failed(t) => Some((0, u64::MAX - t, ip, id)),
                    GcView::Idle(t) if t >= FORCED_GC_IDLE_MS => Some((1, u64::MAX - t, ip, id)),
                    _ => None,
                },
            )
            .collect();
        let n = want.min(cand.len());
        if n == 0 {
            return;
        }
        if n < cand.len() {
            cand.select_nth_unstable(n - 1);
        }
        for &(_, _, ip, id) in &cand[..n] {
            self.remove_dynamic(neigh, port, ip, id);
        }
    }

    /// Periodic collection: removes entries failed for `failed_keep_ms`
    /// and, on ports above `gc_min`, entries unused for `stale_ms`.
    /// Returns how many were removed.
    pub(crate) fn gc(&mut self, neigh: &[NeighEntry], now_ms: u64, reachable_ms: u64) -> usize {
        let lim = self.neigh.limits;
        let mut removed = 0;
        let n_ports = self.neigh.ports.len();
        let start = self.neigh.gc_start;
        self.neigh.gc_start = (start + 1) % n_ports.max(1);
        'ports: for port in (0..n_ports).map(|i| (start + i) % n_ports) {
            let pn = &self.neigh.ports[port];
            if pn.dynamic.is_empty() {
                continue;
            }
            let mut count = pn.dynamic.len();
            let victims: Vec<(IpAddr, NextHopId, bool)> = pn
                .dynamic
                .iter()
                .filter_map(
                    |(&ip, &id)| match neigh[id.0 as usize].gc_view(now_ms, reachable_ms) {
                        GcView::Failed(t) if t >= lim.failed_keep_ms => Some((ip, id, true)),
                        GcView::Idle(t) if t >= lim.stale_ms => Some((ip, id, false)),
                        _ => None,
                    },
                )
                .collect();
            for (ip, id, failed) in victims {
                if removed >= GC_MAX_REMOVALS {
                    break 'ports;
                }
                if !failed && count <= lim.gc_min as usize {
                    continue;
                }
                self.remove_dynamic(neigh, port, ip, id);
                count -= 1;
                removed += 1;
            }
        }
        // Give retired next-hop ids back early (cheap; add() would also
        // reclaim when the fresh ones run out).
        self.nh.reclaim();
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_rate_and_burst() {
        let mut b = Bucket::new(10);
        for _ in 0..10 {
            assert!(b.take(0).is_ok());
        }
        assert_eq!(b.take(0), Err(100));
        assert_eq!(b.take(50), Err(50));
        assert!(b.take(100).is_ok());
        assert!(b.take(100).is_err());
        // Never more than one second of burst.
        for _ in 0..10 {
            assert!(b.take(100_000).is_ok());
        }
        assert!(b.take(100_000).is_err());
        let mut z = Bucket::new(0);
        assert_eq!(z.take(5), Err(1000));
    }

    #[test]
    fn limits_are_capped_and_ordered() {
        let l = NeighTable::effective_limits(
            NeighLimits {
                max_per_port: 1 << 20,
                ..NeighLimits::default()
            },
            4,
        );
        assert_eq!(l.max_per_port, crate::router::MAX_NEXT_HOPS / 2 / 4);
        let l = NeighTable::effective_limits(
            NeighLimits {
                max_per_port: 10,
                ..NeighLimits::default()
            },
            2,
        );
        assert_eq!((l.gc_min, l.gc_soft, l.max_per_port), (10, 10, 10));
    }

    use crate::neighbor::{Learn, Use};
    use crate::router::{Router, MAX_NEXT_HOPS};
    use crate::shared::Learned;
    use crate::RouteSource;
    use std::net::{Ipv4Addr, Ipv6Addr};

    const CONFIG: &str = r#"
[[port]]
name = "p0"
driver = "pcap"
mac = "02:00:00:00:00:10"
addresses = ["198.18.0.1/24", "2001:2:0:1::1/64"]

[[port]]
name = "p1"
driver = "pcap"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/16", "2001:2:0:2::1/64"]

[[route]]
prefix = "198.20.0.0/16"
via = ["198.18.0.2"]
"#;

    fn router(limits: NeighLimits) -> Router {
        let cfg = config::parse(CONFIG, std::path::Path::new("t.toml")).unwrap();
        let infos: Vec<netio::PortInfo> = cfg
            .ports
            .iter()
            .map(|p| netio::PortInfo {
                name: p.name.clone(),
                mac: p.mac.unwrap(),
                mtu: 1500,
                rx_queues: 1,
            })
            .collect();
        Router::with_neighbor_limits(&cfg, &infos, limits).unwrap()
    }

    const CONFIRM: Learn = Learn {
        create: false,
        confirm: true,
        overrides: true,
    };

    fn xorshift(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    /// Table level: 100,000 random addresses of a connected IPv6 /64 (port
    /// 0) and 100,000 of an IPv4 /16 (port 1), one of each per simulated
    /// millisecond, with the collector running as workers would run it and
    /// a reader passing quiescent points. More entries are created than
    /// the next-hop table has ids, so ids must be released and reused; the
    /// bounds hold throughout, and afterwards new hosts on both ports are
    /// resolved. Next-hop ids of expired neighbours are not reused while a
    /// registered reader has not passed a quiescent point.
    #[test]
    fn sweeps_are_bounded_and_ids_are_reused_after_grace_periods() {
        let r = router(NeighLimits {
            resolve_rate: 100_000,
            ..NeighLimits::default()
        });
        let sh = r.shared();
        let max = sh.neighbor_limits().max_per_port as usize;
        let reader = sh.nh.register();
        let (base, _) = sh.next_hops();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut created = 0usize;
        let mut full = 0usize;
        let mut owner: HashMap<NextHopId, IpAddr> = HashMap::new();
        let mut reused = 0usize;
        let mut now = 0u64;
        for i in 0..100_000u64 {
            now = 1 + i;
            let x = xorshift(&mut seed);
            let v6 = IpAddr::V6(Ipv6Addr::from(
                0x2001_0002_0000_0001u128 << 64 | u128::from(x),
            ));
            let v4 = IpAddr::V4(Ipv4Addr::from(
                0xc613_0000 | (x as u32 & 0xffff).clamp(1, 0xfffe),
            ));
            for (port, ip) in [(0, v6), (1, v4)] {
                match sh.connected_entry(port, ip, now) {
                    Ok(id) => match owner.insert(id, ip) {
                        Some(prev) if prev == ip => {}
                        prev => {
                            // A new entry: it starts resolving.
                            assert_eq!(sh.neigh(id).lookup(now, 1000), Use::Hold);
                            reused += prev.is_some() as usize;
                            created += 1;
                        }
                    },
                    Err(DropReason::NeighborTableFull) => full += 1,
                    // 198.19.0.1 is the router's own (no entry).
                    Err(DropReason::NoRoute) => assert_eq!(ip, IpAddr::from([198, 19, 0, 1])),
                    Err(e) => panic!("{ip}: {e:?}"),
                }
            }
            sh.maybe_gc(now);
            reader.quiescent();
            let n = sh.neighbor_counts();
            assert!(n[0] <= max && n[1] <= max, "{n:?}");
            if i % 1000 == 0 {
                let (live, _) = sh.next_hops();
                assert!(live <= base + 2 * max);
            }
        }
        assert!(created > MAX_NEXT_HOPS as usize, "{created} created");
        assert!(reused > 0, "ids reused");
        assert!(full > 0, "the bound was reached");

        // A reader that does not pass a quiescent point holds back reuse:
        // what the collector retires now stays retired.
        sh.control().nh.reclaim();
        assert_eq!(
            sh.next_hops().1,
            0,
            "the reader passed all earlier retirements"
        );
        now += 10_000;
        let removed = sh.collect_neighbors(now);
        assert!(removed > 0);
        sh.control().nh.reclaim();
        assert_eq!(sh.next_hops().1, removed, "not reclaimed before quiescence");
        reader.quiescent();
        sh.control().nh.reclaim();
        assert_eq!(sh.next_hops().1, 0);
        now += 10_000;
        while sh.collect_neighbors(now) > 0 {}
        assert_eq!(sh.neighbor_counts(), vec![0, 0]);
        assert_eq!(sh.next_hops().0, base);

        // New hosts on both ports.
        for (port, ip) in [
            (0, "198.18.0.77".parse().unwrap()),
            (0, "2001:2:0:1::77".parse().unwrap()),
            (1, "198.19.5.5".parse().unwrap()),
            (1, "2001:2:0:2::5".parse().unwrap()),
        ] {
            let id = sh.connected_entry(port, ip, now).unwrap();
            let mac = [2, 0, 0, 0, 0, 0x77];
            assert_eq!(sh.learn(port, ip, mac, CONFIRM, now), Learned::Updated);
            assert_eq!(sh.neigh(id).lookup(now, 1000), Use::Send(mac));
        }
    }

    /// Entries in use are never evicted, idle ones are; a gateway that
    /// was a dynamic entry becomes permanent.
    #[test]
    fn forced_collection_spares_entries_in_use() {
        let r = router(NeighLimits {
            gc_min: 0,
            max_per_port: 8,
            gc_soft: 4,
            resolve_rate: 1000,
            ..NeighLimits::default()
        });
        let sh = r.shared();
        let mac = [2, 0, 0, 0, 0, 1];
        let ip = |i: u8| IpAddr::V4(Ipv4Addr::new(198, 18, 0, 10 + i));
        let mut ids = Vec::new();
        for i in 0..8 {
            let id = sh.connected_entry(0, ip(i), 0).unwrap();
            assert_eq!(sh.learn(0, ip(i), mac, CONFIRM, 0), Learned::Updated);
            ids.push(id);
        }
        assert_eq!(
            sh.connected_entry(0, ip(100), 100),
            Err(DropReason::NeighborTableFull),
            "all in use within the last 5 s"
        );
        // Entries 0..3 keep being used; the others go idle.
        for t in (1000..=7000).step_by(1000) {
            for &id in &ids[..4] {
                assert!(matches!(sh.neigh(id).lookup(t, 60_000), Use::Send(_)));
                sh.neigh(id).touch(t);
            }
        }
        let new = sh.connected_entry(0, ip(100), 7000).unwrap();
        let n = sh.neighbor_counts()[0];
        assert!(n <= 5, "evicted idle entries down to gc_soft: {n}");
        for (i, &id) in ids.iter().enumerate() {
            let alive = sh.neigh(id).lookup(7000, 60_000) != Use::Failed;
            assert_eq!(alive, i < 4, "entry {i}");
        }
        assert_ne!(sh.neigh(new).lookup(7000, 60_000), Use::Failed);
        // A route via a dynamic neighbour pins it.
        r.add_route(
            RouteSource::Config,
            "198.21.0.0/16".parse().unwrap(),
            &[(ip(0), 0)],
        )
        .unwrap();
        assert_eq!(sh.neighbor_counts()[0], n - 1);
        assert_eq!(sh.collect_neighbors(10_000_000), n - 1);
        assert!(matches!(
            sh.neigh(ids[0]).lookup(10_000_000, 60_000),
            Use::Probe(_)
        ));
    }

    #[test]
    fn own_and_special_addresses_are_never_entries() {
        let r = router(NeighLimits::default());
        let sh = r.shared();
        let mac = [2, 0, 0, 0, 0, 1];
        let learn_all = Learn {
            create: true,
            confirm: true,
            overrides: true,
        };
        for (port, ip, want) in [
            (0, "198.18.0.1", Learned::Own),
            (1, "198.18.0.1", Learned::Own),
            (0, "2001:2:0:2::1", Learned::Own),
            (0, "198.18.0.0", Learned::Invalid),
            (0, "198.18.0.255", Learned::Invalid),
            (1, "198.19.255.255", Learned::Invalid),
            (0, "2001:2:0:1::", Learned::Invalid),
            (0, "224.0.0.1", Learned::Invalid),
            (0, "255.255.255.255", Learned::Invalid),
            (0, "0.0.0.0", Learned::Invalid),
            (0, "ff02::1", Learned::Invalid),
            (0, "198.19.0.2", Learned::Ignored),
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(
                sh.learn(port, ip, mac, learn_all, 0),
                want,
                "{ip} on {port}"
            );
        }
        let ok: IpAddr = "198.18.0.9".parse().unwrap();
        for bad_mac in [[0xff; 6], [0; 6], [1, 0, 0x5e, 0, 0, 1]] {
            assert_eq!(sh.learn(0, ok, bad_mac, learn_all, 0), Learned::Invalid);
        }
        assert_eq!(sh.neighbor_counts(), vec![0, 0]);
        assert!(r
            .set_neighbor(RouteSource::Config, 0, "198.18.0.1".parse().unwrap(), mac)
            .is_err());
    }
}
