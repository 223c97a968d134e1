//! `[kernel] routes = true`: softrouter mirrors a kernel routing table of
//! its namespace, so `ip route`, BIRD or FRR drive it with no plugin (the
//! daemons program the kernel table as for the kernel's own forwarding;
//! design and ordering in `control::kernel`).
//!
//! What is mirrored: routes whose next hops have a gateway on an
//! interface that is one of softrouter's live ports (ECMP as a group).
//! What is not, and why:
//! - routes without a gateway (the kernel's connected routes, `dev X`):
//!   softrouter's connected subnets come from its own port addresses;
//! - routes through interfaces softrouter does not own;
//! - `blackhole`, `unreachable`, `prohibit` (not yet: counted and logged);
//! - a prefix the configuration routes itself: the configuration wins,
//!   and a kernel delete never removes a configured route.
//!
//! One thread applies the dump, then every change, through the router's
//! single writer (the same calls `softrouter ctl route` makes).
//!
//! With `[kernel] local` a sibling thread follows the kernel's neighbours
//! (`crate::kernel_neigh`, docs/control.md).

use anyhow::{Context, Result};
use config::{Cidr, Config};
use control::kernel::{KernelRoute, KernelRoutes, RouteAction, RouteEvent};
use dataplane::Router;
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Mirrors the kernel table (and with `[kernel] local` its neighbours)
/// while it lives.
pub struct KernelSync {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

/// What the mirror holds and maps.
struct Mirror {
    router: Arc<Router>,
    /// ifindex -> router port.
    ports: HashMap<u32, usize>,
    /// Prefixes the configuration routes (never touched).
    configured: HashSet<Cidr>,
    /// Prefixes installed from the kernel.
    installed: HashSet<Cidr>,
    skipped: u64,
}

impl KernelSync {
    /// With `[kernel] local`, follows the kernel's neighbours
    /// (`crate::kernel_neigh`); with `routes`, dumps the table into
    /// `router`, then follows it. Returns when the dumps are applied, so
    /// the router starts with them. Neighbours first: the dumped routes'
    /// gateways then find their MACs known.
    pub fn start(cfg: &Config, router: Arc<Router>) -> Result<KernelSync> {
        // Built first, so a failure below stops what already runs.
        let mut k = KernelSync {
            stop: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
        };
        if cfg.kernel_local {
            let t = crate::kernel_neigh::start(cfg, router.clone(), k.stop.clone())?;
            k.threads.push(t);
        }
        if let Some(table) = cfg.kernel_routes {
            let t = Self::routes(cfg, table, router, k.stop.clone())?;
            k.threads.push(t);
        }
        Ok(k)
    }

    fn routes(
        cfg: &Config,
        table: u32,
        router: Arc<Router>,
        stop: Arc<AtomicBool>,
    ) -> Result<JoinHandle<()>> {
        let mut src = KernelRoutes::open(table).context("following the kernel routing table")?;
        let ports = cfg
            .ports
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((netio::ifinfo::ifindex(p.iface.as_deref()?).ok()?, i)))
            .collect();
        let configured = cfg.routes.iter().map(|r| r.prefix).collect();
        let mut m = Mirror {
            router,
            ports,
            configured,
            installed: HashSet::new(),
            skipped: 0,
        };
        let t = Instant::now();
        let routes = src.dump().context("dumping the kernel routing table")?;
        let n = routes.len();
        m.reconcile(routes);
        tracing::info!(
            table,
            routes = m.installed.len(),
            seen = n,
            skipped = m.skipped,
            "kernel routes mirrored in {:.3} s",
            t.elapsed().as_secs_f64()
        );
        std::thread::Builder::new()
            .name("kernel-sync".into())
            .spawn(move || m.follow(&mut src, &stop))
            .context("spawning the kernel route sync")
    }
}

impl Drop for KernelSync {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Mirror {
    fn follow(&mut self, src: &mut KernelRoutes, stop: &AtomicBool) {
        while !stop.load(Ordering::Relaxed) {
            let events = match src.poll(Duration::from_millis(100)) {
                Ok(e) => e,
                Err(e) => {
                    tracing::error!("kernel route sync stopped: {e}");
                    return;
                }
            };
            for ev in events {
                match ev {
                    RouteEvent::Add(r) => {
                        self.add(&r);
                    }
                    RouteEvent::Del((addr, len)) => self.del(Cidr { addr, len }),
                    RouteEvent::Resync => match src.dump() {
                        Ok(routes) => {
                            tracing::warn!("kernel route events lost: table dumped again");
                            self.reconcile(routes);
                        }
                        Err(e) => tracing::error!("kernel route sync: dump failed: {e}"),
                    },
                }
            }
        }
    }

    /// Installs `routes` and removes what was installed before and is not
    /// among them.
    fn reconcile(&mut self, routes: Vec<KernelRoute>) {
        let mut seen = HashSet::new();
        for r in &routes {
            if self.add(r) {
                seen.insert(cidr(r));
            }
        }
        let gone: Vec<Cidr> = self.installed.difference(&seen).copied().collect();
        for p in gone {
            self.del(p);
        }
    }

    /// Installs `r` if softrouter can route it; true if installed.
    fn add(&mut self, r: &KernelRoute) -> bool {
        let prefix = cidr(r);
        if self.configured.contains(&prefix) {
            return false;
        }
        let via: Vec<(IpAddr, usize)> = match &r.action {
            RouteAction::Forward(hops) => hops
                .iter()
                .filter_map(|h| Some((h.gateway?, *self.ports.get(&h.ifindex)?)))
                .collect(),
            RouteAction::Blackhole | RouteAction::Unreachable => Vec::new(),
        };
        if via.is_empty() {
            // Connected, foreign interface or a drop route: not ours. A
            // route we had installed under this prefix goes.
            self.skipped += 1;
            self.del(prefix);
            return false;
        }
        match self.router.add_route(prefix, &via) {
            Ok(()) => {
                self.installed.insert(prefix);
                true
            }
            Err(e) => {
                self.skipped += 1;
                tracing::warn!("kernel route {prefix}: not installed: {e:#}");
                false
            }
        }
    }

    fn del(&mut self, prefix: Cidr) {
        if self.installed.remove(&prefix) {
            if let Err(e) = self.router.remove_route(prefix) {
                tracing::warn!("kernel route {prefix}: not removed: {e:#}");
            }
        }
    }
}

fn cidr(r: &KernelRoute) -> Cidr {
    Cidr {
        addr: r.prefix.0,
        len: r.prefix.1,
    }
}
