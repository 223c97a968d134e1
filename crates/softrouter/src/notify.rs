//! The service manager's readiness protocol (`sd_notify(3)`): one datagram
//! of `KEY=VALUE` lines to the socket named by `$NOTIFY_SOCKET` (a path,
//! or an abstract name written `@name`).
//!
//! Written here rather than taken from a crate: the protocol is one
//! `sendto` on a Unix datagram socket, and `std` has everything needed
//! (abstract names included), so a dependency would add more to review
//! than it saves. Without `$NOTIFY_SOCKET` (not started by systemd) every
//! call does nothing. A datagram that cannot be sent is logged once and
//! never stops the router: readiness is the manager's view, forwarding
//! does not depend on it.

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// The manager's socket, read once from the environment.
struct Notifier {
    sock: UnixDatagram,
    to: SocketAddr,
}

static NOTIFIER: OnceLock<Option<Notifier>> = OnceLock::new();
static FAILED: AtomicBool = AtomicBool::new(false);
/// `READY=1` was sent: a reload before it (a `ctl reload` during start-up)
/// must not announce readiness early.
static READY: AtomicBool = AtomicBool::new(false);

/// The address `$NOTIFY_SOCKET` names: `@name` is abstract, anything
/// else a path; empty is no socket at all.
pub fn address(var: &str) -> std::io::Result<Option<SocketAddr>> {
    match var.strip_prefix('@') {
        _ if var.is_empty() => Ok(None),
        Some(name) => SocketAddr::from_abstract_name(name.as_bytes()).map(Some),
        None => SocketAddr::from_pathname(var).map(Some),
    }
}

fn notifier() -> Option<&'static Notifier> {
    NOTIFIER
        .get_or_init(|| {
            let var = std::env::var("NOTIFY_SOCKET").ok()?;
            let made = address(&var).and_then(|to| Ok((UnixDatagram::unbound()?, to)));
            match made {
                Ok((sock, Some(to))) => Some(Notifier { sock, to }),
                Ok((_, None)) => None,
                Err(e) => {
                    tracing::warn!("NOTIFY_SOCKET={var:?}: {e}; no readiness notifications");
                    None
                }
            }
        })
        .as_ref()
}

/// Sends `state` (`READY=1`, `RELOADING=1`, …) to the service manager,
/// if there is one.
pub fn send(state: &str) {
    let Some(n) = notifier() else { return };
    if let Err(e) = n.sock.send_to_addr(state.as_bytes(), &n.to) {
        if !FAILED.swap(true, Ordering::Relaxed) {
            tracing::warn!("service manager notification not sent: {e}");
        }
    }
}

/// The router is up: ports open, tables loaded, the XDP tier attached,
/// the workers running and the control socket answering.
pub fn ready(status: &str) {
    READY.store(true, Ordering::SeqCst);
    send(&format!("READY=1\nSTATUS={status}"));
}

/// The router is stopping (a signal, `--duration`, or a failure).
pub fn stopping() {
    send("STOPPING=1");
}

/// A reload ends (applied or refused: either way the router runs on).
pub fn reloaded(status: &str) {
    if READY.load(Ordering::SeqCst) {
        send(&format!("READY=1\nSTATUS={status}"));
    }
}

/// A reload starts: `RELOADING=1` with the monotonic time systemd asks to
/// come with it.
pub fn reloading() {
    if !READY.load(Ordering::SeqCst) {
        return;
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime(2) writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let usec = ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1_000;
    send(&format!("RELOADING=1\nMONOTONIC_USEC={usec}"));
}

/// How often to send `WATCHDOG=1`: half the interval the manager set in
/// `$WATCHDOG_USEC` (for this process, if `$WATCHDOG_PID` names one), or
/// None when no watchdog is on.
pub fn watchdog_interval() -> Option<Duration> {
    notifier()?;
    if let Ok(pid) = std::env::var("WATCHDOG_PID") {
        if pid.parse::<u32>().ok() != Some(std::process::id()) {
            return None;
        }
    }
    let usec: u64 = std::env::var("WATCHDOG_USEC").ok()?.parse().ok()?;
    (usec > 0).then(|| Duration::from_micros(usec / 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_paths_and_abstract_names() {
        assert!(address("").unwrap().is_none());
        let a = address("@sr/notify").unwrap().unwrap();
        assert_eq!(a.as_abstract_name(), Some(&b"sr/notify"[..]));
        let p = address("/run/systemd/notify").unwrap().unwrap();
        assert_eq!(
            p.as_pathname(),
            Some(std::path::Path::new("/run/systemd/notify"))
        );
        // Longer than sun_path: an error, not a truncated address.
        assert!(address(&"/x".repeat(100)).is_err());
    }
}
