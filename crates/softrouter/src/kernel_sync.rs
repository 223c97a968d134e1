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

use crate::controller::Configured;
use anyhow::{Context, Result};
use config::{Cidr, Config};
use control::kernel::{KernelRoute, KernelRoutes, RouteAction, RouteEvent};
use dataplane::Router;
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Mirrors the kernel table (and with `[kernel] local` its neighbours)
/// while it lives.
pub struct KernelSync {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// The route mirror's state (the neighbour follower has none yet).
    status: Arc<SyncStatus>,
}

/// What the mirror reports (metrics, `ctl stats`), written by its thread.
#[derive(Default)]
pub struct SyncStatus {
    following: AtomicBool,
    installed: AtomicU64,
    skipped: AtomicU64,
    resyncs: AtomicU64,
}

impl SyncStatus {
    pub fn state(&self) -> dataplane::report::KernelSyncState {
        dataplane::report::KernelSyncState {
            following: self.following.load(Ordering::Relaxed),
            installed: self.installed.load(Ordering::Relaxed),
            skipped: self.skipped.load(Ordering::Relaxed),
            resyncs: self.resyncs.load(Ordering::Relaxed),
        }
    }
}

/// What the mirror holds and maps.
struct Mirror {
    router: Arc<Router>,
    /// ifindex -> router port.
    ports: HashMap<u32, usize>,
    /// Prefixes the configuration routes (never touched; a reload changes
    /// the set, under its lock).
    configured: Configured,
    /// Prefixes installed from the kernel.
    installed: HashSet<Cidr>,
    skipped: u64,
    status: Arc<SyncStatus>,
}

impl KernelSync {
    /// With `[kernel] local`, follows the kernel's neighbours
    /// (`crate::kernel_neigh`); with `routes`, dumps the table into
    /// `router`, then follows it. Returns when the dumps are applied, so
    /// the router starts with them. Neighbours first: the dumped routes'
    /// gateways then find their MACs known. `configured`: the file's
    /// prefixes, which the mirror never touches.
    pub fn start(cfg: &Config, router: Arc<Router>, configured: Configured) -> Result<KernelSync> {
        // Built first, so a failure below stops what already runs.
        let mut k = KernelSync {
            stop: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
            status: Arc::new(SyncStatus::default()),
        };
        if cfg.kernel_local {
            let t = crate::kernel_neigh::start(cfg, router.clone(), k.stop.clone())?;
            k.threads.push(t);
        }
        if let Some(table) = cfg.kernel_routes {
            let t = Self::routes(
                cfg,
                table,
                router,
                configured,
                k.status.clone(),
                k.stop.clone(),
            )?;
            k.threads.push(t);
        }
        Ok(k)
    }

    /// The route mirror's state.
    pub fn status(&self) -> Arc<SyncStatus> {
        self.status.clone()
    }

    fn routes(
        cfg: &Config,
        table: u32,
        router: Arc<Router>,
        configured: Configured,
        status: Arc<SyncStatus>,
        stop: Arc<AtomicBool>,
    ) -> Result<JoinHandle<()>> {
        let mut src = KernelRoutes::open(table).context("following the kernel routing table")?;
        let ports = cfg
            .ports
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((netio::ifinfo::ifindex(p.iface.as_deref()?).ok()?, i)))
            .collect();
        let mut m = Mirror {
            router,
            ports,
            configured,
            installed: HashSet::new(),
            skipped: 0,
            status: status.clone(),
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
        m.publish();
        status.following.store(true, Ordering::Relaxed);
        std::thread::Builder::new()
            .name("kernel-sync".into())
            .spawn(move || {
                m.follow(&mut src, &stop);
                m.status.following.store(false, Ordering::Relaxed);
            })
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
    /// Makes the counts visible to the status readers.
    fn publish(&self) {
        let s = &self.status;
        s.installed
            .store(self.installed.len() as u64, Ordering::Relaxed);
        s.skipped.store(self.skipped, Ordering::Relaxed);
    }

    fn follow(&mut self, src: &mut KernelRoutes, stop: &AtomicBool) {
        // Changes are logged as a sum once a second: a routing daemon's
        // full table is a million events.
        let (mut added, mut removed, mut since) = (0u64, 0u64, Instant::now());
        while !stop.load(Ordering::Relaxed) {
            if added + removed > 0 && since.elapsed() >= Duration::from_secs(1) {
                tracing::info!(
                    added,
                    removed,
                    installed = self.installed.len(),
                    "kernel routes followed: {added} added or replaced, {removed} removed"
                );
                (added, removed, since) = (0, 0, Instant::now());
            }
            self.publish();
            let events = match src.poll(Duration::from_millis(100)) {
                Ok(e) => e,
                Err(e) => {
                    tracing::error!("kernel route sync stopped: {e}");
                    return;
                }
            };
            for ev in events {
                match ev {
                    RouteEvent::Add(r) => added += u64::from(self.add(&r)),
                    RouteEvent::Del((addr, len)) => {
                        removed += 1;
                        self.del(Cidr { addr, len })
                    }
                    RouteEvent::Resync => match src.dump() {
                        Ok(routes) => {
                            self.status.resyncs.fetch_add(1, Ordering::Relaxed);
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
        let set = self.configured.clone();
        let configured = set.lock().unwrap_or_else(|e| e.into_inner());
        if configured.contains(&prefix) {
            // The file's route wins (one a reload made configured is no
            // longer the kernel's to remove).
            self.installed.remove(&prefix);
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
            self.remove_installed(prefix);
            return false;
        }
        match self
            .router
            .add_route(dataplane::RouteSource::Kernel, prefix, &via)
        {
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
        let set = self.configured.clone();
        let configured = set.lock().unwrap_or_else(|e| e.into_inner());
        if !configured.contains(&prefix) {
            self.remove_installed(prefix);
        } else {
            self.installed.remove(&prefix);
        }
    }

    /// Removes `prefix` from the router if the kernel put it there (the
    /// caller holds the configured set's lock and checked it).
    fn remove_installed(&mut self, prefix: Cidr) {
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
