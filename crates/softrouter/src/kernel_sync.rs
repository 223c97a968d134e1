//! `[kernel] routes = true`: softrouter mirrors a kernel routing table of
//! its namespace, so `ip route`, BIRD or FRR drive it with no plugin (the
//! daemons program the kernel table as for the kernel's own forwarding;
//! design and ordering in `control::kernel`).
//!
//! The mirror keeps every route the kernel keeps (`control::kernel_fib`:
//! metrics, types, multipath, next-hop objects) and installs per prefix
//! the one the kernel uses, if softrouter can route it:
//! - through next hops with a gateway on one of softrouter's live ports
//!   (ECMP as a group; next hops through other interfaces are left out);
//! - `blackhole`, `unreachable`, `prohibit` as blackhole routes (dropped
//!   and counted as `blackhole`);
//! - judged by the configuration's own rules (`config::check_runtime_route`):
//!   never over the router's own addresses or connected subnets, never
//!   via the router itself.
//!
//! What it cannot take is refused (counted as `skipped`, the reason
//! logged at most once a second) and a route it had installed for that
//! prefix removed: the kernel no longer uses it. A prefix the
//! configuration routes itself is never touched: the configuration wins,
//! and a kernel delete never removes a configured route.
//!
//! One thread applies the dump, then every change, through the router's
//! single writer (the same calls `softrouter ctl route` makes). After
//! lost events it dumps again and applies only what differs.
//!
//! With `[kernel] local` a sibling thread follows the kernel's neighbours
//! (`crate::kernel_neigh`, docs/control.md).

use anyhow::{Context, Result};
use config::{Cidr, Config};
use control::kernel::{KernelRoutes, RouteAction, RouteEvent};
use control::kernel_fib::{KernelFib, Prefix};
use dataplane::Router;
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The prefixes the configuration file routes: the kernel route sync
/// never touches them, and a reload changes them. Its lock is held while
/// either changes the router, so a reload and the sync never interleave
/// on one prefix.
pub type Configured = Arc<Mutex<HashSet<Cidr>>>;

/// The configured prefixes of `cfg`, to share between the control and the
/// kernel route sync.
pub fn configured(cfg: &Config) -> Configured {
    Arc::new(Mutex::new(cfg.routes.iter().map(|r| r.prefix).collect()))
}

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
    /// The configuration at start: its ports (which never change while
    /// running) are what the routes are judged against.
    cfg: Config,
    /// ifindex -> router port.
    ports: HashMap<u32, usize>,
    /// Prefixes the configuration routes (never touched; a reload changes
    /// the set, under its lock).
    configured: Configured,
    /// Every route of the followed table.
    fib: KernelFib,
    /// Prefixes installed from the kernel.
    installed: HashSet<Cidr>,
    skipped: u64,
    /// Refusals not logged yet, and when the last was (at most one line
    /// a second: a daemon's table can hold many).
    unlogged: u64,
    logged_at: Option<Instant>,
    status: Arc<SyncStatus>,
}

/// What softrouter installs for the kernel's route.
enum Install {
    Via(Vec<(IpAddr, usize)>),
    Drop,
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
            cfg: cfg.clone(),
            ports,
            configured,
            fib: KernelFib::default(),
            installed: HashSet::new(),
            skipped: 0,
            unlogged: 0,
            logged_at: None,
            status: status.clone(),
        };
        let t = Instant::now();
        let table_now = src.dump().context("dumping the kernel routing table")?;
        m.reconcile(KernelFib::from_table(table_now));
        tracing::info!(
            table,
            routes = m.installed.len(),
            seen = m.fib.len(),
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
        let (mut changed, mut since) = (0u64, Instant::now());
        while !stop.load(Ordering::Relaxed) {
            if changed > 0 && since.elapsed() >= Duration::from_secs(1) {
                tracing::info!(
                    changed,
                    installed = self.installed.len(),
                    kernel_routes = self.fib.len(),
                    skipped = self.skipped,
                    "kernel routes followed: {changed} prefixes changed"
                );
                (changed, since) = (0, Instant::now());
            }
            self.publish();
            let events = match src.poll(Duration::from_millis(100)) {
                Ok(e) => e,
                Err(e) => {
                    tracing::error!("kernel route sync stopped: {e}");
                    return;
                }
            };
            let mut dumped = false;
            for ev in events {
                if matches!(ev, RouteEvent::Resync | RouteEvent::Flushed) {
                    if std::mem::replace(&mut dumped, true) {
                        // One dump for a burst (a link with its addresses).
                        continue;
                    }
                    match src.dump() {
                        Ok(t) => {
                            if ev == RouteEvent::Resync {
                                self.status.resyncs.fetch_add(1, Ordering::Relaxed);
                                tracing::warn!("kernel route events lost: table dumped again");
                            }
                            changed += self.reconcile(KernelFib::from_table(t));
                        }
                        Err(e) => tracing::error!("kernel route sync: dump failed: {e}"),
                    }
                    continue;
                }
                for (prefix, choice) in self.fib.apply(ev) {
                    changed += 1;
                    self.sync(prefix, choice);
                }
            }
        }
    }

    /// Follows `fib` (a fresh dump) from now on: installs or removes what
    /// differs from the table followed so far. Returns how many prefixes.
    fn reconcile(&mut self, fib: KernelFib) -> u64 {
        let diff = self.fib.diff(&fib);
        self.fib = fib;
        let n = diff.len() as u64;
        for (prefix, choice) in diff {
            self.sync(prefix, choice);
        }
        n
    }

    /// Makes the router do with `prefix` what the kernel does (`choice`:
    /// the route it uses, `None`: it has none), if softrouter can.
    fn sync(&mut self, (addr, len): Prefix, choice: Option<RouteAction>) {
        let prefix = Cidr { addr, len };
        let set = self.configured.clone();
        let configured = set.lock().unwrap_or_else(|e| e.into_inner());
        if configured.contains(&prefix) {
            // The file's route wins (one a reload made configured is no
            // longer the kernel's to remove).
            self.installed.remove(&prefix);
            return;
        }
        let Some(action) = choice else {
            self.remove_installed(prefix);
            return;
        };
        let done = self.judge(prefix, &action).and_then(|i| {
            match i {
                Install::Via(via) => {
                    self.router
                        .add_route(dataplane::RouteSource::Kernel, prefix, &via)
                }
                Install::Drop => self.router.add_blackhole(prefix),
            }
            .map_err(|e| format!("route {prefix}: not installed: {e:#}"))
        });
        match done {
            Ok(()) => {
                self.installed.insert(prefix);
            }
            Err(reason) => {
                // What softrouter had for it is not what the kernel does.
                self.remove_installed(prefix);
                self.refuse(&reason);
            }
        }
    }

    /// What softrouter installs for the kernel's `action`, judged as a
    /// configured route would be; else why not.
    fn judge(&self, prefix: Cidr, action: &RouteAction) -> Result<Install, String> {
        let RouteAction::Forward(hops) = action else {
            config::check_runtime_prefix(&self.cfg, prefix)?;
            return Ok(Install::Drop);
        };
        // Next hops through interfaces softrouter does not own are the
        // kernel's; on-link ones (`dev X`, the kernel's connected routes)
        // have no gateway to forward to.
        // A gateway twice (two members of a group with the same one) is
        // a weight, which softrouter's equal-cost groups do not keep.
        let mut via: Vec<(IpAddr, usize)> = Vec::with_capacity(hops.len());
        for h in hops {
            let Some(hop) = h.gateway.zip(self.ports.get(&h.ifindex).copied()) else {
                continue;
            };
            if !via.contains(&hop) {
                via.push(hop);
            }
        }
        if via.is_empty() {
            return Err(format!(
                "route {prefix}: no next hop with a gateway through softrouter's ports"
            ));
        }
        // IPv6 link-local gateways (FRR installs BGP routes through the
        // peer's) are on the link of the kernel's interface, which no
        // subnet names: the rest of the rules hold for them.
        let (link_local, global): (Vec<_>, Vec<_>) = via
            .into_iter()
            .partition(|(gw, _)| matches!(gw, IpAddr::V6(a) if a.is_unicast_link_local()));
        if let Some((gw, _)) = link_local.first().filter(|_| prefix.addr.is_ipv4()) {
            return Err(format!(
                "route {prefix}: via: {gw} is not of the prefix's address family"
            ));
        }
        let mut out = if global.is_empty() {
            config::check_runtime_prefix(&self.cfg, prefix)?;
            Vec::new()
        } else {
            let (gateways, ports): (Vec<IpAddr>, Vec<usize>) = global.into_iter().unzip();
            let r = config::check_runtime_route(&self.cfg, prefix, &gateways)?;
            for (&(gw, port), kernel_port) in r.via.iter().zip(ports) {
                if port != kernel_port {
                    return Err(format!(
                        "route {prefix}: via: {gw} is on port {:?}'s subnet, the kernel sends it out of port {:?}",
                        self.cfg.ports[port].name, self.cfg.ports[kernel_port].name
                    ));
                }
            }
            r.via
        };
        out.extend(link_local);
        Ok(Install::Via(out))
    }

    /// Counts a refused route; logs the reason unless a line was logged
    /// less than a second ago (then says how many went unlogged).
    fn refuse(&mut self, reason: &str) {
        self.skipped += 1;
        let now = Instant::now();
        if self
            .logged_at
            .is_some_and(|t| now.duration_since(t) < Duration::from_secs(1))
        {
            self.unlogged += 1;
            return;
        }
        tracing::warn!(
            skipped = self.skipped,
            unlogged = self.unlogged,
            "kernel route refused: {reason}"
        );
        (self.unlogged, self.logged_at) = (0, Some(now));
    }

    /// Removes `prefix` from the router if the kernel put it there (the
    /// caller holds the configured set's lock and checked it).
    fn remove_installed(&mut self, prefix: Cidr) {
        if self.installed.remove(&prefix) {
            if self.installed.capacity() > 4 * self.installed.len() + 1024 {
                self.installed.shrink_to_fit();
            }
            if let Err(e) = self.router.remove_route(prefix) {
                tracing::warn!("kernel route {prefix}: not removed: {e:#}");
            }
        }
    }
}
