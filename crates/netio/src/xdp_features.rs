//! What a device's driver can do with XDP frames, as the kernel says
//! (`xdp_features`, the `netdev` generic-netlink family, Linux 6.3+).
//!
//! Why: a frame an XDP program redirects to another device is handed to
//! that device's `ndo_xdp_xmit`. A driver without it, or a veth whose peer
//! has neither an XDP program nor GRO (no NAPI to take the frame), drops
//! it, and counts the drop only in its own statistics. The kernel
//! publishes exactly this as [`NDO_XMIT`]: veth sets it while its peer can
//! receive XDP frames and clears it when that stops, so polling it tells
//! softrouter's fast path which egress ports it may redirect to.
//!
//! Two requests on a `NETLINK_GENERIC` socket, written out here (a few
//! dozen bytes each) rather than pulling in a generic-netlink stack:
//! `CTRL_CMD_GETFAMILY "netdev"` for the family id, then `NETDEV_CMD_DEV_GET`
//! with the ifindex. The socket is created in the calling thread's network
//! namespace.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `NETDEV_XDP_ACT_BASIC`: XDP_PASS/DROP/ABORTED.
pub const BASIC: u64 = 1 << 0;
/// `NETDEV_XDP_ACT_REDIRECT`: the driver's XDP may redirect.
pub const REDIRECT: u64 = 1 << 1;
/// `NETDEV_XDP_ACT_NDO_XMIT`: the device takes redirected XDP frames.
pub const NDO_XMIT: u64 = 1 << 2;
/// `NETDEV_XDP_ACT_XSK_ZEROCOPY`.
pub const XSK_ZEROCOPY: u64 = 1 << 3;

const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const NETDEV_CMD_DEV_GET: u8 = 1;
const NETDEV_A_DEV_IFINDEX: u16 = 1;
const NETDEV_A_DEV_XDP_FEATURES: u16 = 3;
const NLMSG_ERROR: u16 = 2;
const NLM_F_REQUEST: u16 = 1;
const NLMSG_HDR: usize = 16;
const GENL_HDR: usize = 4;

/// The `xdp_features` of interface `ifindex` (a mask of [`NDO_XMIT`] and
/// friends). `Unsupported` on kernels without the `netdev` family.
pub fn query(ifindex: u32) -> io::Result<u64> {
    let sock = open()?;
    let family = family_id(&sock)?;
    let reply = request(
        &sock,
        family,
        NETDEV_CMD_DEV_GET,
        &attr(NETDEV_A_DEV_IFINDEX, &ifindex.to_ne_bytes()),
    )?;
    match find_attr(&reply, NETDEV_A_DEV_XDP_FEATURES) {
        Some(v) if v.len() >= 8 => Ok(u64::from_ne_bytes(v[..8].try_into().unwrap())),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "netdev reply without xdp-features",
        )),
    }
}

fn open() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2).
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_GENERIC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new fd we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn family_id(sock: &OwnedFd) -> io::Result<u16> {
    let reply = request(
        sock,
        GENL_ID_CTRL,
        CTRL_CMD_GETFAMILY,
        &attr(CTRL_ATTR_FAMILY_NAME, b"netdev\0"),
    )
    .map_err(|e| match e.raw_os_error() {
        Some(libc::ENOENT) => io::Error::new(
            io::ErrorKind::Unsupported,
            "no netdev netlink family (kernel before 6.3)",
        ),
        _ => e,
    })?;
    match find_attr(&reply, CTRL_ATTR_FAMILY_ID) {
        Some(v) if v.len() >= 2 => Ok(u16::from_ne_bytes([v[0], v[1]])),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "genl reply without a family id",
        )),
    }
}

/// One netlink attribute, padded to 4 bytes.
fn attr(kind: u16, value: &[u8]) -> Vec<u8> {
    let len = 4 + value.len();
    let mut a = Vec::with_capacity(len.next_multiple_of(4));
    a.extend_from_slice(&(len as u16).to_ne_bytes());
    a.extend_from_slice(&kind.to_ne_bytes());
    a.extend_from_slice(value);
    a.resize(len.next_multiple_of(4), 0);
    a
}

/// Sends one generic-netlink request and returns the reply's attributes
/// (the bytes after the genl header), or the kernel's error.
fn request(sock: &OwnedFd, family: u16, cmd: u8, attrs: &[u8]) -> io::Result<Vec<u8>> {
    let len = NLMSG_HDR + GENL_HDR + attrs.len();
    let mut m = Vec::with_capacity(len);
    m.extend_from_slice(&(len as u32).to_ne_bytes());
    m.extend_from_slice(&family.to_ne_bytes());
    m.extend_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    m.extend_from_slice(&1u32.to_ne_bytes()); // sequence
    m.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel's
    m.extend_from_slice(&[cmd, 1, 0, 0]); // genl: cmd, version, reserved
    m.extend_from_slice(attrs);
    // SAFETY: a sockaddr_nl addressed to the kernel (all zero but family).
    let mut to: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    to.nl_family = libc::AF_NETLINK as u16;
    // SAFETY: valid buffer and address for the call.
    let r = unsafe {
        libc::sendto(
            sock.as_raw_fd(),
            m.as_ptr().cast(),
            m.len(),
            0,
            (&to as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as u32,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = vec![0u8; 8192];
    // SAFETY: valid buffer.
    let n = unsafe { libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let buf = &buf[..n as usize];
    if buf.len() < NLMSG_HDR {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "short netlink reply",
        ));
    }
    let mlen = (u32::from_ne_bytes(buf[0..4].try_into().unwrap()) as usize).min(buf.len());
    let kind = u16::from_ne_bytes([buf[4], buf[5]]);
    if kind == NLMSG_ERROR {
        let code = buf
            .get(NLMSG_HDR..NLMSG_HDR + 4)
            .map(|b| i32::from_ne_bytes(b.try_into().unwrap()))
            .unwrap_or(-libc::EIO);
        return Err(io::Error::from_raw_os_error(-code));
    }
    if mlen < NLMSG_HDR + GENL_HDR {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "short genl reply",
        ));
    }
    Ok(buf[NLMSG_HDR + GENL_HDR..mlen].to_vec())
}

/// The value of the first attribute of `kind` in `attrs`.
fn find_attr(mut attrs: &[u8], kind: u16) -> Option<&[u8]> {
    while attrs.len() >= 4 {
        let len = u16::from_ne_bytes([attrs[0], attrs[1]]) as usize;
        let k = u16::from_ne_bytes([attrs[2], attrs[3]]) & 0x3fff;
        if len < 4 || len > attrs.len() {
            return None;
        }
        if k == kind {
            return Some(&attrs[4..len]);
        }
        attrs = &attrs[len.next_multiple_of(4).min(attrs.len())..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_padded_and_found() {
        let mut a = attr(7, b"abcde");
        assert_eq!(a.len(), 12);
        assert_eq!(&a[..4], &[9, 0, 7, 0]);
        a.extend(attr(3, &42u64.to_ne_bytes()));
        assert_eq!(find_attr(&a, 3), Some(&42u64.to_ne_bytes()[..]));
        assert_eq!(find_attr(&a, 7), Some(&b"abcde"[..]));
        assert_eq!(find_attr(&a, 9), None);
        assert_eq!(
            find_attr(&[200, 0, 1, 0], 1),
            None,
            "a length beyond the buffer"
        );
    }

    /// A veth takes redirected frames only while its peer can receive
    /// them: GRO on the peer (or an XDP program there) sets NDO_XMIT.
    #[test]
    fn veth_ndo_xmit_follows_its_peers_gro() {
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: needs root");
            return;
        }
        let (a, b) = (
            format!("srxf{}a", std::process::id() % 100000),
            format!("srxf{}b", std::process::id() % 100000),
        );
        let ip = |args: &[&str]| {
            std::process::Command::new("ip")
                .args(args)
                .status()
                .expect("ip")
                .success()
        };
        assert!(ip(&["link", "add", &a, "type", "veth", "peer", "name", &b]));
        struct Del(String);
        impl Drop for Del {
            fn drop(&mut self) {
                let _ = std::process::Command::new("ip")
                    .args(["link", "del", &self.0])
                    .status();
            }
        }
        let _del = Del(a.clone());
        let ethtool = |dev: &str, on: &str| {
            std::process::Command::new("ethtool")
                .args(["-K", dev, "gro", on])
                .status()
                .expect("ethtool")
                .success()
        };
        assert!(ip(&["link", "set", &a, "up"]) && ip(&["link", "set", &b, "up"]));
        let ia = crate::ifinfo::ifindex(&a).unwrap();
        assert!(ethtool(&b, "off"));
        let before = query(ia).expect("xdp features");
        assert_eq!(before & NDO_XMIT, 0, "{before:#x}");
        assert_ne!(before & REDIRECT, 0, "{before:#x}");
        assert!(ethtool(&b, "on"));
        let after = query(ia).unwrap();
        assert_ne!(after & NDO_XMIT, 0, "{after:#x}");
        assert!(query(u32::MAX - 1).is_err(), "no such device");
    }
}
