//! The supervisor's eye on the live ports' interfaces, polled from the
//! supervisor loop (never from the workers: no per-packet cost).
//!
//! * An interface that disappears (its ifindex no longer exists, e.g. `ip
//!   link del`, or a veth whose peer namespace went away) stops the router
//!   with an error naming the port and the interface: its sockets and XDP
//!   program went with it, nothing will ever arrive on that port again, and
//!   a router that silently keeps running without a port is harder to
//!   notice than one that exits (a service manager restarts it when the
//!   interface is back).
//! * An interface that goes down (administratively or carrier lost) is an
//!   ordinary event: it is logged once it has lasted a moment, as is its
//!   return, and the router keeps running.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

struct Watched {
    port: String,
    iface: String,
    index: u32,
    /// Since when the link has been seen down (not IFF_UP && IFF_RUNNING).
    down_since: Option<Instant>,
    /// Whether that was logged (it is once it lasts [`DOWN_GRACE`]).
    reported_down: bool,
}

/// How long a link must stay down before it is logged: attaching a socket
/// or an XDP program to a veth takes its carrier away for a moment.
const DOWN_GRACE: Duration = Duration::from_secs(2);

pub struct IfaceWatch {
    watched: Vec<Watched>,
    sock: Option<OwnedFd>,
}

impl IfaceWatch {
    /// Watches `(port name, interface)` pairs; interfaces that do not exist
    /// now are skipped (the port could not have opened).
    pub fn new(ifaces: &[(String, String)]) -> IfaceWatch {
        let watched = ifaces
            .iter()
            .filter_map(|(port, iface)| {
                crate::iflock::ifindex(iface).map(|index| Watched {
                    port: port.clone(),
                    iface: iface.clone(),
                    index,
                    down_since: None,
                    reported_down: false,
                })
            })
            .collect();
        // SAFETY: plain socket(2); the fd is owned below.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        let sock = (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) });
        let mut w = IfaceWatch { watched, sock };
        let _ = w.poll();
        w
    }

    pub fn is_empty(&self) -> bool {
        self.watched.is_empty()
    }

    /// Checks every interface; an error names the first one that is gone.
    pub fn poll(&mut self) -> Result<(), String> {
        for w in &mut self.watched {
            let Some(name) = name_of(self.sock.as_ref(), w.index) else {
                return Err(format!(
                    "port {:?}: interface {:?} (ifindex {}) disappeared; stopping (its sockets went with it)",
                    w.port, w.iface, w.index
                ));
            };
            if name != w.iface {
                tracing::warn!(
                    port = %w.port,
                    "interface {:?} (ifindex {}) was renamed to {name:?}",
                    w.iface,
                    w.index
                );
                w.iface = name;
            }
            if let Some(up) = self.sock.as_ref().and_then(|s| link_up(s, &w.iface)) {
                if up {
                    if w.reported_down {
                        tracing::info!(port = %w.port, "interface {:?} is up again", w.iface);
                    }
                    w.down_since = None;
                    w.reported_down = false;
                } else {
                    let since = *w.down_since.get_or_insert_with(Instant::now);
                    if !w.reported_down && since.elapsed() >= DOWN_GRACE {
                        tracing::warn!(
                            port = %w.port,
                            "interface {:?} is down (not up, or no carrier); still running",
                            w.iface
                        );
                        w.reported_down = true;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The name of interface `index` in our namespace, None when there is
/// none. SIOCGIFNAME on the watch's socket: glibc's if_indextoname opens
/// and closes a socket of its own on every call (one per interface every
/// 100 ms here; ~6.7 against ~2.2 us a call on the test VM).
fn name_of(sock: Option<&OwnedFd>, index: u32) -> Option<String> {
    if let (Some(sock), Ok(index)) = (sock, i32::try_from(index)) {
        // SAFETY: ifreq is plain data; the ioctl reads the index and
        // writes a NUL-terminated name into ifr_name.
        unsafe {
            let mut req: libc::ifreq = std::mem::zeroed();
            req.ifr_ifru.ifru_ifindex = index;
            if libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFNAME, &mut req) == 0 {
                return Some(cstr(req.ifr_name.as_ptr()));
            }
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENODEV) {
                return None;
            }
        }
    }
    let mut buf = [0 as libc::c_char; libc::IF_NAMESIZE];
    // SAFETY: buf has IF_NAMESIZE bytes, as if_indextoname needs; on
    // success it holds a NUL-terminated name.
    unsafe {
        let p = libc::if_indextoname(index, buf.as_mut_ptr());
        (!p.is_null()).then(|| cstr(buf.as_ptr()))
    }
}

/// # Safety
/// `p` points to a NUL-terminated string.
unsafe fn cstr(p: *const libc::c_char) -> String {
    // SAFETY: as the caller promises.
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}

/// IFF_UP and IFF_RUNNING of `iface` (SIOCGIFFLAGS in our namespace).
fn link_up(sock: &OwnedFd, iface: &str) -> Option<bool> {
    let name = CString::new(iface).ok()?;
    let bytes = name.as_bytes_with_nul();
    if bytes.len() > libc::IFNAMSIZ {
        return None;
    }
    // SAFETY: ifreq is plain data; the name fits; the ioctl fills the flags.
    unsafe {
        let mut req: libc::ifreq = std::mem::zeroed();
        for (d, s) in req.ifr_name.iter_mut().zip(bytes) {
            *d = *s as libc::c_char;
        }
        if libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) != 0 {
            return None;
        }
        let flags = req.ifr_ifru.ifru_flags as libc::c_int;
        Some(flags & libc::IFF_UP != 0 && flags & libc::IFF_RUNNING != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_there_and_a_missing_interface_is_not_watched() {
        let mut w = IfaceWatch::new(&[
            ("in".into(), "lo".into()),
            ("out".into(), "nosuchif0".into()),
        ]);
        assert_eq!(w.watched.len(), 1);
        assert!(w.poll().is_ok());
        // By the watch's socket and by glibc alike: lo is 1 in every
        // namespace, and a stale index has no name.
        for sock in [w.sock.as_ref(), None] {
            assert_eq!(name_of(sock, 1).as_deref(), Some("lo"));
            assert_eq!(name_of(sock, 999_999), None);
            assert_eq!(name_of(sock, u32::MAX - 7), None);
        }
        // A stale ifindex reads as gone.
        w.watched[0].index = u32::MAX - 7;
        let e = w.poll().unwrap_err();
        assert!(
            e.contains("\"in\"") && e.contains("\"lo\"") && e.contains("disappeared"),
            "{e}"
        );
    }
}
