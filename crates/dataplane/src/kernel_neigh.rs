//! `[kernel] local`: the kernel's neighbour table is the router's.
//!
//! In this mode the XDP program hands every ARP and ND frame to the
//! kernel's stack, which owns the interfaces' addresses next to
//! softrouter: the workers never see an answer to a solicitation, so they
//! send none. Instead
//!
//! * what they would solicit (an unresolved gateway or connected host,
//!   at most once per [`crate::neighbor::SOLICIT_INTERVAL_MS`] per entry)
//!   is queued as a request for the kernel ([`Router::kernel_requests`]),
//!   which the control plane turns into an `NTF_USE` (resolve it, as if
//!   the kernel had traffic for it);
//! * the entries the kernel holds with a link-layer address arrive through
//!   [`Router::kernel_neighbor`]: the router's entry for that address
//!   takes the MAC as STATIC (the kernel confirms it and ages it, the
//!   workers must not probe, since the replies would be the kernel's);
//! * an entry the kernel deletes or fails goes through
//!   [`Router::forget_kernel_neighbor`]: a connected host's entry goes
//!   with its host route, a gateway's starts resolving again.
//! * the kernel sends nothing to the neighbours softrouter forwards to, so
//!   it would never notice one die: the entries in use
//!   ([`Router::kernel_in_use`]) are handed to it again now and then
//!   (`NTF_USE` once more), which makes it confirm a STALE entry with its
//!   own probes, and fail it when they go unanswered.

use crate::router::Router;
use anyhow::{bail, Result};
use std::net::IpAddr;
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Mutex;

/// Requests the queue holds.
const QUEUE: usize = 4096;

/// The workers' side of the request queue, in `Shared`.
pub struct KernelRequests {
    tx: SyncSender<(usize, IpAddr)>,
    rx: Mutex<Option<Receiver<(usize, IpAddr)>>>,
}

impl KernelRequests {
    pub(crate) fn new() -> KernelRequests {
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
        KernelRequests {
            tx,
            rx: Mutex::new(Some(rx)),
        }
    }

    /// Asks the kernel to resolve `ip` on `port`; never blocks. A full
    /// queue drops the request (the entry asks again a solicitation
    /// interval later), as does a router nobody follows the kernel for.
    pub(crate) fn request(&self, port: usize, ip: IpAddr) {
        let _ = self.tx.try_send((port, ip));
    }
}

impl Router {
    /// The requests for the kernel to resolve (port, address), once;
    /// `None` unless `[kernel] local`, or if already taken.
    pub fn kernel_requests(&self) -> Option<Receiver<(usize, IpAddr)>> {
        self.shared().kernel.as_ref()?.rx.lock().unwrap().take()
    }

    /// The kernel holds `mac` for `ip` on `port`: the router's entry for
    /// it, if there is one, uses it as STATIC. Returns whether there was
    /// an entry (none: the address is neither a gateway nor a connected
    /// host in use; its MAC is applied when one is created and asks).
    pub fn kernel_neighbor(&self, port: usize, ip: IpAddr, mac: [u8; 6]) -> Result<bool> {
        if !crate::neighbor::unicast_mac(mac) {
            bail!("{ip}: a neighbour's MAC must be unicast and non-zero");
        }
        let sh = self.shared();
        let c = sh.control();
        let Some(&id) = c.hosts.get(&(port, ip)) else {
            return Ok(false);
        };
        sh.neigh(id).set_kernel(mac);
        Ok(true)
    }

    /// The entries holding a MAC as STATIC (the kernel's, or configured)
    /// that a fast path sent to within the last `window_ms`.
    pub fn kernel_in_use(&self, window_ms: u64) -> Vec<(usize, IpAddr)> {
        let sh = self.shared();
        let now_ms = sh.epoch().elapsed().as_millis() as u64;
        let c = sh.control();
        c.hosts
            .iter()
            .filter(|(_, &id)| {
                let e = sh.neigh(id);
                e.state() == crate::neighbor::STATE_STATIC
                    && now_ms.saturating_sub(e.used_ms()) < window_ms
            })
            .map(|(&k, _)| k)
            .collect()
    }

    /// The kernel no longer has `ip` on `port` (deleted or failed): a
    /// connected host's entry goes with its host route; a gateway's
    /// entry forgets its MAC and asks the kernel again on its next use.
    /// Returns whether there was an entry.
    pub fn forget_kernel_neighbor(&self, port: usize, ip: IpAddr) -> bool {
        let sh = self.shared();
        let now_ms = sh.epoch().elapsed().as_millis() as u64;
        let mut c = sh.control();
        let Some(&id) = c.hosts.get(&(port, ip)) else {
            return false;
        };
        let e = sh.neigh(id);
        if e.is_dynamic() {
            c.remove_dynamic(&sh.neigh, port, ip, id);
        } else {
            e.reset(false, now_ms, false);
        }
        true
    }
}
