//! The running router behind the control socket (`softrouter ctl`) and
//! the metrics endpoint: every request is carried out by the single
//! writer's own methods (`dataplane::Router`), under its control lock, on
//! the control socket's thread, never on a worker.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use config::{Cidr, Config};
use control::protocol::{NeighView, NextHopView, RouteSummaryView, RouteView};
use control::{ControlServer, Handler, Request};
use dataplane::inspect::{RouteInfo, RouteKind};
use dataplane::{RouteSource, Router, WorkerStats};
use netio::Port;

use crate::kernel_sync::{Configured, SyncStatus};
use crate::reload::{Outcome, Plan};
use crate::stats_file;

/// What the handler needs of the running router.
pub struct RouterControl {
    /// The configuration at start: ports and file never change while
    /// running.
    cfg: Config,
    /// What runs now: the start configuration with every reload's applied
    /// routes and neighbours (also serialises reloads).
    running: Mutex<Config>,
    configured: Configured,
    /// The kernel mirror's state, once it runs.
    kernel: std::sync::OnceLock<Arc<SyncStatus>>,
    router: Arc<Router>,
    ports: Vec<Arc<dyn Port>>,
    stats: Vec<Arc<WorkerStats>>,
    tier: Option<Arc<crate::tier::RunningTier>>,
    started: Instant,
}

impl RouterControl {
    pub fn new(
        cfg: &Config,
        router: Arc<Router>,
        ports: Vec<Arc<dyn Port>>,
        stats: Vec<Arc<WorkerStats>>,
        tier: Option<Arc<crate::tier::RunningTier>>,
        started: Instant,
        configured: Configured,
    ) -> RouterControl {
        RouterControl {
            cfg: cfg.clone(),
            running: Mutex::new(cfg.clone()),
            configured,
            kernel: std::sync::OnceLock::new(),
            router,
            ports,
            stats,
            tier,
            started,
        }
    }

    /// Registers the kernel mirror, for the statistics.
    pub fn set_kernel_sync(&self, s: Arc<SyncStatus>) {
        let _ = self.kernel.set(s);
    }

    /// The statistics document of this moment.
    pub fn report(&self) -> stats_file::Report {
        self.with_control_plane(stats_file::build(
            &self.cfg,
            &self.ports,
            &self.stats,
            self.tier.as_deref(),
            self.started.elapsed(),
            &[],
        ))
    }

    /// `r` with the routing state of this moment.
    pub fn with_control_plane(&self, mut r: stats_file::Report) -> stats_file::Report {
        let (routes_v4, routes_v6) = self.router.route_counts();
        let mut neighbors = std::collections::BTreeMap::new();
        for n in self.router.neighbors() {
            *neighbors.entry(n.state.to_string()).or_insert(0u64) += 1;
        }
        r.control_plane = Some(dataplane::report::ControlPlane {
            routes_v4: routes_v4 as u64,
            routes_v6: routes_v6 as u64,
            neighbors,
            kernel_sync: self.kernel.get().map(|k| k.state()),
            next_hops: Some(self.router.shared().next_hop_use()),
        });
        r
    }

    /// The statistics for a metrics scrape (direct reads, see
    /// [`stats_file::build_direct`]).
    pub fn metrics_report(&self) -> stats_file::Report {
        self.with_control_plane(stats_file::build_direct(
            &self.cfg,
            &self.ports,
            &self.stats,
            self.tier.as_deref(),
            self.started.elapsed(),
        ))
    }

    fn port_name(&self, i: usize) -> String {
        self.cfg
            .ports
            .get(i)
            .map_or_else(|| format!("port{i}"), |p| p.name.clone())
    }

    fn route_view(&self, r: RouteInfo) -> RouteView {
        let (kind, via) = match r.kind {
            RouteKind::Forward(v) => (
                "forward",
                v.into_iter()
                    .map(|(address, port)| NextHopView {
                        address,
                        port: self.port_name(port),
                    })
                    .collect(),
            ),
            RouteKind::Connected(_) => ("connected", Vec::new()),
            RouteKind::Local => ("local", Vec::new()),
            RouteKind::Blackhole => ("blackhole", Vec::new()),
        };
        RouteView {
            prefix: r.prefix.to_string(),
            kind: kind.into(),
            via,
        }
    }

    fn carry_out(&self, request: Request) -> Result<serde_json::Value> {
        Ok(match request {
            Request::RouteAdd { prefix, via } => {
                let r =
                    config::runtime_route(&self.cfg, &prefix, &via).map_err(anyhow::Error::msg)?;
                self.router.add_route(RouteSource::Ctl, r.prefix, &r.via)?;
                tracing::info!(route = %r.prefix, via = ?via, "route added (ctl)");
                serde_json::Value::Null
            }
            Request::RouteDel { prefix } => {
                let p: Cidr = prefix
                    .parse()
                    .map_err(|e| anyhow::anyhow!("route del: {e}"))?;
                // The router's own addresses and connected subnets (and
                // the host entries inside them) are not ctl's to remove,
                // as `route add` may not set them.
                config::check_runtime_prefix(&self.cfg, p).map_err(anyhow::Error::msg)?;
                self.router.remove_route(p)?;
                tracing::info!(route = %p, "route removed (ctl)");
                serde_json::Value::Null
            }
            Request::RouteShow { prefix, longest } => {
                let routes: Vec<RouteInfo> = match (prefix, longest) {
                    (Some(p), _) => {
                        let p: Cidr = p.parse().map_err(|e| anyhow::anyhow!("route show: {e}"))?;
                        self.router.route(p).into_iter().collect()
                    }
                    (None, Some(a)) => self.router.route_for(a).into_iter().collect(),
                    (None, None) => self.router.routes(),
                };
                let views: Vec<RouteView> =
                    routes.into_iter().map(|r| self.route_view(r)).collect();
                to_json(&views)?
            }
            Request::RouteSummary => to_json(&self.route_summary())?,
            Request::NeighShow => {
                let views: Vec<NeighView> = self
                    .router
                    .neighbors()
                    .into_iter()
                    .map(|n| NeighView {
                        address: n.address,
                        port: self.port_name(n.port),
                        state: n.state.into(),
                        mac: n.mac.map(|m| format_mac(&m)),
                        dynamic: n.dynamic,
                    })
                    .collect();
                to_json(&views)?
            }
            Request::NeighAdd { address, mac, port } => {
                let n = config::runtime_neighbor(&self.cfg, address, &mac, &port)
                    .map_err(|e| anyhow::anyhow!("neigh add: {e}"))?;
                self.router
                    .set_neighbor(RouteSource::Ctl, n.port, n.address, n.mac)?;
                tracing::info!(%address, %mac, port, "static neighbour set (ctl)");
                serde_json::Value::Null
            }
            Request::NeighDel { address } => {
                self.router.remove_neighbor(address)?;
                tracing::info!(%address, "neighbour removed (ctl)");
                serde_json::Value::Null
            }
            Request::PortShow => to_json(&self.report().ports)?,
            Request::Stats => to_json(&self.report())?,
            Request::Reload => to_json(&self.reload()?)?,
        })
    }

    /// Re-reads the configuration file and applies what changed (see
    /// [`crate::reload`]); a file that does not validate changes nothing.
    pub fn reload(&self) -> Result<Outcome> {
        crate::notify::reloading();
        let r = self.reload_file();
        crate::notify::reloaded(match &r {
            Ok(_) => "reloaded",
            Err(_) => "reload refused: running the previous configuration",
        });
        r
    }

    fn reload_file(&self) -> Result<Outcome> {
        let path = &self.cfg.source;
        let new = crate::check::load(path)
            .map_err(|e| anyhow::anyhow!("reload: {e}; still running the previous configuration"))?
            .config;
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let plan = Plan::new(&running, &new)
            .map_err(|e| anyhow::anyhow!("reload: {}: {e:#}; nothing changed", path.display()))?;
        let mut configured = self.configured.lock().unwrap_or_else(|e| e.into_inner());
        let result = plan.apply(&self.router, &mut running);
        *configured = running.routes.iter().map(|r| r.prefix).collect();
        let out = result?;
        for c in &out.applied {
            tracing::info!("reload: {c}");
        }
        for r in &out.restart_needed {
            tracing::warn!("reload: {r} changed: kept as running until a restart");
        }
        tracing::info!(
            applied = out.applied.len(),
            restart_needed = out.restart_needed.len(),
            "reloaded {}",
            path.display()
        );
        Ok(out)
    }

    /// Route and next-hop counts: each read under its own short lock, no
    /// walk of the table (a full table's walk holds the writer for
    /// seconds).
    fn route_summary(&self) -> RouteSummaryView {
        let (v4, v6) = self.router.route_counts();
        let from_file = self
            .configured
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len();
        let (nh, retired) = self.router.shared().next_hops();
        RouteSummaryView {
            routes_v4: v4 as u64,
            routes_v6: v6 as u64,
            from_file: from_file as u64,
            from_kernel: self.kernel.get().map_or(0, |k| k.state().installed),
            next_hops: nh as u64,
            next_hops_retired: retired as u64,
        }
    }
}

impl Handler for RouterControl {
    fn handle(&self, request: Request) -> Result<serde_json::Value, String> {
        self.carry_out(request).map_err(|e| format!("{e:#}"))
    }
}

fn format_mac(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<serde_json::Value> {
    Ok(serde_json::to_value(v)?)
}

/// The group id of `name` (the control socket's group).
pub fn group_id(name: &str) -> Result<u32> {
    let c = std::ffi::CString::new(name).context("group name")?;
    // SAFETY: getgrnam with a valid C string; the result is read at once,
    // on the starting thread, before anything else could call it.
    let g = unsafe { libc::getgrnam(c.as_ptr()) };
    if g.is_null() {
        bail!("control: group: no group named {name:?}");
    }
    // SAFETY: non-null result of getgrnam.
    Ok(unsafe { (*g).gr_gid })
}

/// Start the control socket of `cfg` (if any) with `handler`.
pub fn start(cfg: &Config, handler: Arc<RouterControl>) -> Result<Option<ControlServer>> {
    let Some(path) = &cfg.control.socket else {
        return Ok(None);
    };
    let gid = cfg.control.group.as_deref().map(group_id).transpose()?;
    let s = ControlServer::start(path, gid, handler).with_context(|| {
        format!(
            "control socket (set [control] socket in {} to another path, or \"off\")",
            cfg.source.display()
        )
    })?;
    tracing::info!("control socket {}", path.display());
    Ok(Some(s))
}
