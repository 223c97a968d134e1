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
//! does not depend on it. Nor does it wait: the socket is non-blocking,
//! so a manager that stops reading (a full queue, `net.unix.max_dgram_qlen`
//! datagrams) costs notifications, never a stalled reload.

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

impl Notifier {
    /// A non-blocking socket to the address `var` names (None: no socket).
    fn open(var: &str) -> std::io::Result<Option<Notifier>> {
        let Some(to) = address(var)? else {
            return Ok(None);
        };
        let sock = UnixDatagram::unbound()?;
        sock.set_nonblocking(true)?;
        Ok(Some(Notifier { sock, to }))
    }

    fn send(&self, state: &str) -> std::io::Result<()> {
        self.sock
            .send_to_addr(state.as_bytes(), &self.to)
            .map(|_| ())
    }
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
            match Notifier::open(&var) {
                Ok(n) => n,
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
    if let Err(e) = n.send(state) {
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

    /// A manager that stops reading: the sends beyond its queue fail at
    /// once instead of blocking the router (a reload sends two).
    #[test]
    fn a_manager_that_does_not_read_never_blocks_the_router() {
        let dir = std::env::temp_dir().join(format!("sr-notify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notify.sock");
        let _ = std::fs::remove_file(&path);
        let manager = UnixDatagram::bind(&path).unwrap();
        let n = Notifier::open(path.to_str().unwrap()).unwrap().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let results: Vec<bool> = (0..1000).map(|_| n.send("RELOADING=1").is_ok()).collect();
            let _ = tx.send(results);
        });
        let results = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("1000 notifications to a full queue did not return");
        assert!(results[0], "the first notification was not sent");
        assert!(
            results.iter().any(|ok| !ok),
            "a queue that is never read took 1000 datagrams"
        );
        let mut buf = [0u8; 64];
        let got = manager.recv(&mut buf).unwrap();
        assert_eq!(&buf[..got], b"RELOADING=1");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
