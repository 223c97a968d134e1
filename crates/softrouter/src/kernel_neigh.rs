//! `[kernel] local`: softrouter's neighbours are the kernel's (design in
//! `dataplane::kernel_neigh` and docs/control.md).
//!
//! One thread dumps the kernel's neighbour table of softrouter's ports,
//! then follows it: an entry with a MAC is given to the router's entry
//! for that address (if it has one), a deleted or failed entry takes the
//! router's away. What the router wants resolved (its workers' and its
//! new routes' unresolved gateways) arrives on its request queue: answered
//! from the table when the kernel knows the address, else asked of the
//! kernel with `NTF_USE`, whose answer comes back as an event. Every
//! [`CONFIRM`] the entries in use are handed to the kernel again, so that
//! it probes them as it would its own and fails the dead ones.

use anyhow::{Context, Result};
use config::Config;
use control::kernel_neigh::{KernelNeighbours, NeighEvent};
use dataplane::Router;
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the thread waits for kernel events before it serves the
/// router's requests: the delay a worker's first request may see.
const POLL: Duration = Duration::from_millis(10);
/// How often the neighbours softrouter sends to are handed to the kernel
/// again (`NTF_USE`), so that it confirms them with its own probes (a
/// STALE entry: DELAY, then PROBE) and fails the dead ones. A dead next
/// hop is noticed within the kernel's reachable time plus this plus its
/// probes (Linux: 15 to 45 s + 5 s + 3 s by default).
const CONFIRM: Duration = Duration::from_secs(5);

struct NeighMirror {
    router: Arc<Router>,
    /// ifindex -> router port, and back.
    ports: HashMap<u32, usize>,
    ifindex: HashMap<usize, u32>,
    /// What the kernel holds, of softrouter's ports.
    known: HashMap<(usize, IpAddr), [u8; 6]>,
    /// The configuration's static neighbours: the configuration wins, as
    /// for routes, so the kernel's view of them is ignored.
    configured: HashSet<(usize, IpAddr)>,
    requests: Receiver<(usize, IpAddr)>,
}

/// Applies the kernel's table to `router` (returns when the dump is
/// applied) and starts the thread that follows it until `stop`.
pub fn start(cfg: &Config, router: Arc<Router>, stop: Arc<AtomicBool>) -> Result<JoinHandle<()>> {
    let mut src = KernelNeighbours::open().context("following the kernel's neighbour table")?;
    let requests = router
        .kernel_requests()
        .context("the router has no kernel request queue ([kernel] local)")?;
    let ports: HashMap<u32, usize> = cfg
        .ports
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((netio::ifinfo::ifindex(p.iface.as_deref()?).ok()?, i)))
        .collect();
    let ifindex = ports.iter().map(|(&k, &v)| (v, k)).collect();
    let mut m = NeighMirror {
        router,
        ports,
        ifindex,
        known: HashMap::new(),
        configured: cfg.neighbors.iter().map(|n| (n.port, n.address)).collect(),
        requests,
    };
    let dump = src.dump().context("dumping the kernel's neighbour table")?;
    m.resync(dump);
    tracing::info!(neighbours = m.known.len(), "kernel neighbours followed");
    std::thread::Builder::new()
        .name("kernel-neigh".into())
        .spawn(move || m.follow(&mut src, &stop))
        .context("spawning the kernel neighbour sync")
}

impl NeighMirror {
    fn follow(&mut self, src: &mut KernelNeighbours, stop: &AtomicBool) {
        let mut confirmed = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            if confirmed.elapsed() >= CONFIRM {
                confirmed = Instant::now();
                let window = CONFIRM.as_millis() as u64 + 1000;
                for (port, ip) in self.router.kernel_in_use(window) {
                    match self.ifindex.get(&port) {
                        Some(&i) if !self.configured.contains(&(port, ip)) => {
                            if let Err(e) = src.resolve(i, ip) {
                                tracing::debug!("confirming {ip} (port {port}): {e}");
                            }
                        }
                        _ => {}
                    }
                }
            }
            let events = match src.poll(POLL) {
                Ok(e) => e,
                Err(e) => {
                    tracing::error!("kernel neighbour sync stopped: {e}");
                    return;
                }
            };
            for ev in events {
                match ev {
                    NeighEvent::Resync => match src.dump() {
                        Ok(d) => {
                            tracing::warn!("kernel neighbour events lost: table dumped again");
                            self.resync(d);
                        }
                        Err(e) => tracing::error!("kernel neighbour sync: dump failed: {e}"),
                    },
                    ev => self.apply(ev),
                }
            }
            while let Ok((port, ip)) = self.requests.try_recv() {
                if let Some(&mac) = self.known.get(&(port, ip)) {
                    let _ = self.router.kernel_neighbor(port, ip, mac);
                } else if let Some(&ifindex) = self.ifindex.get(&port) {
                    if let Err(e) = src.resolve(ifindex, ip) {
                        tracing::warn!("asking the kernel to resolve {ip} (port {port}): {e}");
                    }
                }
            }
        }
    }

    fn apply(&mut self, ev: NeighEvent) {
        let port_ip = |ifindex, ip| Some((*self.ports.get(&ifindex)?, ip));
        let key = match &ev {
            NeighEvent::Set { ifindex, ip, .. } | NeighEvent::Gone { ifindex, ip } => {
                port_ip(*ifindex, *ip)
            }
            NeighEvent::Resync => None,
        };
        if key.is_none_or(|k| self.configured.contains(&k)) {
            return;
        }
        match ev {
            NeighEvent::Set { ifindex, ip, mac } => {
                let Some(&port) = self.ports.get(&ifindex) else {
                    return;
                };
                if self.known.insert((port, ip), mac) != Some(mac) {
                    if let Err(e) = self.router.kernel_neighbor(port, ip, mac) {
                        tracing::debug!("kernel neighbour {ip}: {e:#}");
                    }
                }
            }
            NeighEvent::Gone { ifindex, ip } => {
                let Some(&port) = self.ports.get(&ifindex) else {
                    return;
                };
                self.known.remove(&(port, ip));
                self.router.forget_kernel_neighbor(port, ip);
            }
            NeighEvent::Resync => {}
        }
    }

    /// Applies a dump: every entry in it, and forgets what is not.
    fn resync(&mut self, dump: Vec<NeighEvent>) {
        let before: Vec<(usize, IpAddr)> = self.known.keys().copied().collect();
        self.known.clear();
        for ev in dump {
            self.apply(ev);
        }
        for (port, ip) in before {
            if !self.known.contains_key(&(port, ip)) {
                self.router.forget_kernel_neighbor(port, ip);
            }
        }
    }
}
