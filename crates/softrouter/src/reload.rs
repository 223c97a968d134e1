//! Reload (SIGHUP, `softrouter ctl reload`): re-read the configuration
//! file and apply what can change while forwarding.
//!
//! What is applied: `[[route]]` (added, replaced, removed) and
//! `[[neighbor]]` (set, changed, removed), through the single writer's
//! own calls, so the workers and the XDP tier see each route either old
//! or new and nothing in flight is lost (the route churn test shows it at
//! 1,000 changes a second). Routes added with `softrouter ctl` or taken
//! from the kernel are not the file's: a reload leaves them alone.
//!
//! What needs a restart, and is reported as such (the running value is
//! kept): ports (the workers hold their sockets and addresses without a
//! lock), every `[router]` knob (read by the workers at start), the
//! routes file (read once at start), `[control]`, `[metrics]` and
//! `[kernel]`. The new file's routes and neighbours are judged against
//! the *running* ports, so a route whose gateway is only on a changed
//! port's new subnet is refused with the reason.
//!
//! What is read: the configuration file and its routes file, each only if
//! it is a regular file of bounded size ([`config::source`]), so a path
//! that names `/dev/zero`, a FIFO or a huge file is refused with the reason
//! and nothing changes. SIGHUP reloads run on their own thread
//! ([`Reloads`]).
//!
//! All or nothing: a file that does not validate, or a change the running
//! ports refuse, leaves the router as it was, with the error. Only a
//! failure while applying (a full table) can leave part of the changes
//! done; the answer then says which were.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Condvar, Mutex};

use anyhow::{anyhow, bail, Result};
use config::{Cidr, Config, Neighbor, Route};
use dataplane::Router;
use serde::Serialize;

/// What a reload did.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The changes applied, one line each (`route 198.19.0.0/16 added`).
    pub applied: Vec<String>,
    /// What changed in the file but is kept as it runs until a restart.
    pub restart_needed: Vec<String>,
}

/// The changes from the running configuration to a new one.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// Routes to add or replace (ports are the running ones).
    pub set_routes: Vec<Route>,
    pub del_routes: Vec<Cidr>,
    /// Static neighbours to set (ports are the running ones).
    pub set_neighbors: Vec<Neighbor>,
    pub del_neighbors: Vec<IpAddr>,
    pub restart_needed: Vec<String>,
}

impl Plan {
    /// The plan from `running` to `new`, or why `new`'s routes or
    /// neighbours cannot be applied to the running ports.
    pub fn new(running: &Config, new: &Config) -> Result<Plan> {
        let mut plan = Plan {
            restart_needed: restart_needed(running, new),
            ..Plan::default()
        };
        let old_routes: HashMap<Cidr, &Route> =
            running.routes.iter().map(|r| (r.prefix, r)).collect();
        for r in &new.routes {
            let hops: Vec<IpAddr> = r.via.iter().map(|&(ip, _)| ip).collect();
            let judged = config::runtime_route(running, &r.prefix.to_string(), &hops)
                .map_err(|e| anyhow!("{e} (with the running ports)"))?;
            if old_routes.get(&r.prefix) != Some(&&judged) {
                plan.set_routes.push(judged);
            }
        }
        let kept: std::collections::HashSet<Cidr> = new.routes.iter().map(|r| r.prefix).collect();
        plan.del_routes = running
            .routes
            .iter()
            .map(|r| r.prefix)
            .filter(|p| !kept.contains(p))
            .collect();

        let old_neigh: HashMap<IpAddr, &Neighbor> =
            running.neighbors.iter().map(|n| (n.address, n)).collect();
        for n in &new.neighbors {
            let name = &new.ports[n.port].name;
            let port = running
                .port_index(name)
                .ok_or_else(|| anyhow!("neighbor {}: port {name:?} is not running", n.address))?;
            let on_link = running.ports[port]
                .addresses
                .iter()
                .any(|a| a.addr.is_ipv4() == n.address.is_ipv4() && a.subnet().contains(n.address));
            if !on_link {
                bail!(
                    "neighbor {}: not on a subnet of the running port {name:?}",
                    n.address
                );
            }
            let judged = Neighbor { port, ..n.clone() };
            if old_neigh.get(&n.address) != Some(&&judged) {
                plan.set_neighbors.push(judged);
            }
        }
        plan.del_neighbors = running
            .neighbors
            .iter()
            .map(|n| n.address)
            .filter(|a| !new.neighbors.iter().any(|n| n.address == *a))
            .collect();
        Ok(plan)
    }

    pub fn is_empty(&self) -> bool {
        self.set_routes.is_empty()
            && self.del_routes.is_empty()
            && self.set_neighbors.is_empty()
            && self.del_neighbors.is_empty()
    }

    /// Carries the plan out on `router` and records each applied change
    /// in `running` (so it always says what runs). Neighbours are set
    /// before the routes that may use them, routes removed before the
    /// neighbours they used.
    pub fn apply(self, router: &Router, running: &mut Config) -> Result<Outcome> {
        let mut out = Outcome {
            restart_needed: self.restart_needed,
            ..Outcome::default()
        };
        let fail = |out: &Outcome, what: String, e: anyhow::Error| {
            anyhow!(
                "reload: {what}: {e:#}; applied before it: {}",
                if out.applied.is_empty() {
                    "nothing".into()
                } else {
                    out.applied.join(", ")
                }
            )
        };
        for n in self.set_neighbors {
            let mac = n.mac;
            router
                .set_neighbor(dataplane::RouteSource::Config, n.port, n.address, mac)
                .map_err(|e| fail(&out, format!("neighbor {}", n.address), e))?;
            out.applied.push(format!("neighbor {} set", n.address));
            running.neighbors.retain(|o| o.address != n.address);
            running.neighbors.push(n);
        }
        for r in self.set_routes {
            router
                .add_route(dataplane::RouteSource::Config, r.prefix, &r.via)
                .map_err(|e| fail(&out, format!("route {}", r.prefix), e))?;
            let verb = match running.routes.iter().position(|o| o.prefix == r.prefix) {
                Some(i) => {
                    running.routes.remove(i);
                    "replaced"
                }
                None => "added",
            };
            out.applied.push(format!("route {} {verb}", r.prefix));
            running.routes.push(r);
        }
        for p in self.del_routes {
            // Gone already (`ctl route del`) is what was asked for.
            if router.has_route(p) {
                router
                    .remove_route(p)
                    .map_err(|e| fail(&out, format!("route {p}"), e))?;
            }
            out.applied.push(format!("route {p} removed"));
            running.routes.retain(|o| o.prefix != p);
        }
        for a in self.del_neighbors {
            // Forgotten already (`ctl neigh del`) is what was asked for.
            let _ = router.remove_neighbor(a);
            out.applied.push(format!("neighbor {a} removed"));
            running.neighbors.retain(|o| o.address != a);
        }
        Ok(out)
    }
}

/// Reloads asked for by SIGHUP, carried out on their own thread
/// (`sr-reload`), so the supervisor never waits for one: it goes on
/// watching signals, workers and ports while a file is read and applied,
/// and stops at SIGTERM whatever a reload is doing (the thread is not
/// waited for). SIGHUPs that arrive during a reload are folded into one
/// more reload after it: a burst re-reads the file once or twice, not once
/// per signal. (`ctl reload` runs on the control socket's threads, which
/// nothing waits for either.)
pub struct Reloads {
    asked: Arc<(Mutex<Asked>, Condvar)>,
}

#[derive(Default)]
struct Asked {
    pending: bool,
    closed: bool,
}

impl Reloads {
    /// `reload` carries one out (the controller's, which also serves
    /// `ctl reload`).
    pub fn start(reload: impl Fn() -> Result<Outcome> + Send + 'static) -> Result<Reloads> {
        let asked = Arc::new((Mutex::new(Asked::default()), Condvar::new()));
        let mine = asked.clone();
        std::thread::Builder::new()
            .name("sr-reload".into())
            .spawn(move || loop {
                {
                    let (lock, cv) = &*mine;
                    let mut a = lock.lock().unwrap_or_else(|e| e.into_inner());
                    while !a.pending && !a.closed {
                        a = cv.wait(a).unwrap_or_else(|e| e.into_inner());
                    }
                    if a.closed {
                        return;
                    }
                    a.pending = false;
                }
                // Logged by the reload itself, change by change; a bad
                // file is the operator's to fix, never a reason to stop.
                if let Err(e) = reload() {
                    tracing::error!("SIGHUP: {e:#}");
                }
            })?;
        Ok(Reloads { asked })
    }

    /// Asks for a reload; returns at once.
    pub fn request(&self) {
        let (lock, cv) = &*self.asked;
        lock.lock().unwrap_or_else(|e| e.into_inner()).pending = true;
        cv.notify_one();
    }
}

impl Drop for Reloads {
    fn drop(&mut self) {
        let (lock, cv) = &*self.asked;
        lock.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
        cv.notify_one();
    }
}

/// What differs between `a` and `b` that only a restart applies, one
/// line per field.
fn restart_needed(a: &Config, b: &Config) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = |name: &str, differs: bool| {
        if differs {
            out.push(name.to_string());
        }
    };
    let (ra, rb) = (&a.router, &b.router);
    field("[router] workers", ra.workers != rb.workers);
    field("[router] cores", ra.cores != rb.cores);
    field("[[queue]]", ra.queue_map != rb.queue_map);
    field("[router] mode", ra.mode != rb.mode);
    field("[router] forwarding", ra.forwarding != rb.forwarding);
    field("[router] tx_queues", ra.tx_queues != rb.tx_queues);
    field("[router] fast_path", ra.fast_path != rb.fast_path);
    field("[router] budget", ra.budget != rb.budget);
    field("[router] icmp_rate", ra.icmp_rate != rb.icmp_rate);
    field("[router] hold_packets", ra.hold_packets != rb.hold_packets);
    field(
        "[router] neighbor_timeout",
        ra.neighbor_timeout_s != rb.neighbor_timeout_s,
    );
    field("[router] pool_frames", ra.pool_frames != rb.pool_frames);
    field("[router] frame_size", ra.frame_size != rb.frame_size);
    field(
        "[router] ipv4_tbl8_groups",
        ra.ipv4_tbl8_groups != rb.ipv4_tbl8_groups,
    );
    field(
        "[router] ipv6_tbl8_groups",
        ra.ipv6_tbl8_groups != rb.ipv6_tbl8_groups,
    );
    let names = |c: &Config| c.ports.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
    if names(a) != names(b) {
        field("[[port]] (ports added, removed or reordered)", true);
    } else {
        for (pa, pb) in a.ports.iter().zip(&b.ports) {
            if pa != pb {
                out.push(format!("[[port]] {:?}", pa.name));
            }
        }
    }
    let mut field = |name: &str, differs: bool| {
        if differs {
            out.push(name.to_string());
        }
    };
    field("[routes_file]", a.routes_file != b.routes_file);
    field("[control]", a.control != b.control);
    field("[metrics]", a.metrics != b.metrics);
    field(
        "[kernel]",
        a.kernel_routes != b.kernel_routes || a.kernel_local != b.kernel_local,
    );
    out
}

#[cfg(test)]
mod tests;
