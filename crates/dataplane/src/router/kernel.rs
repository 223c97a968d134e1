//! The router's side of `[kernel] local` neighbour resolution (see
//! [`crate::kernel_neigh`] for the scheme and the workers' request queue).

use super::Router;
use anyhow::{bail, Result};
use std::net::IpAddr;
use std::sync::mpsc::Receiver;

impl Router {
    /// The requests for the kernel to resolve (port, address), once;
    /// `None` unless `[kernel] local`, or if already taken.
    pub fn kernel_requests(&self) -> Option<Receiver<(usize, IpAddr)>> {
        self.shared().kernel.as_ref()?.take_receiver()
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
