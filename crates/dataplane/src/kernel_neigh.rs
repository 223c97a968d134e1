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
//!
//! [`Router::kernel_requests`]: crate::Router::kernel_requests
//! [`Router::kernel_neighbor`]: crate::Router::kernel_neighbor
//! [`Router::forget_kernel_neighbor`]: crate::Router::forget_kernel_neighbor
//! [`Router::kernel_in_use`]: crate::Router::kernel_in_use

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

    /// The receiving end, once (the control plane's).
    pub(crate) fn take_receiver(&self) -> Option<Receiver<(usize, IpAddr)>> {
        self.rx.lock().unwrap().take()
    }
}
