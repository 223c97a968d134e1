//! What the kernel knows about an interface: index, MAC, MTU and RX queue
//! count, asked through sockets of the calling thread's network namespace.
//!
//! The queue count comes from `ETHTOOL_GCHANNELS` (rx + combined channels),
//! not from `/sys/class/net`, because sysfs shows the namespace it was
//! mounted in, not the one a `setns()`-moved thread lives in. Drivers
//! without channel reporting count as one queue.

use crate::sys::{cvt, socket};
use std::io;
use std::os::fd::AsRawFd;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IfInfo {
    pub name: String,
    pub ifindex: u32,
    pub mac: [u8; 6],
    /// IP MTU (the interface MTU).
    pub mtu: u16,
    /// RX queues the device really has in use (`real_num_rx_queues`).
    pub rx_queues: u16,
}

const SIOCETHTOOL: libc::c_ulong = 0x8946;
const ETHTOOL_GCHANNELS: u32 = 0x3c;

#[repr(C)]
#[derive(Default)]
struct EthtoolChannels {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
}

fn ifreq(name: &str) -> io::Result<libc::ifreq> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a valid interface name"),
        ));
    }
    // SAFETY: all-zero is a valid ifreq.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    Ok(ifr)
}

/// Interface index of `name` in this thread's namespace; `NotFound` if
/// there is no such interface.
pub fn ifindex(name: &str) -> io::Result<u32> {
    let c = std::ffi::CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in interface name"))?;
    // SAFETY: c is a valid C string.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 {
        return Err(io::Error::from_raw_os_error(libc::ENODEV));
    }
    Ok(idx)
}

/// Queries `name`. Errors carry the OS error (`ENODEV`: no such interface).
pub fn query(name: &str) -> io::Result<IfInfo> {
    let ifindex = ifindex(name)?;
    let sock = socket(libc::AF_INET, libc::SOCK_DGRAM, 0)?;
    let fd = sock.as_raw_fd();

    let mut ifr = ifreq(name)?;
    // SAFETY: SIOCGIFHWADDR fills ifr_hwaddr of a valid ifreq.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCGIFHWADDR, &mut ifr) })?;
    let mut mac = [0u8; 6];
    // SAFETY: the union member written by SIOCGIFHWADDR.
    let sa = unsafe { ifr.ifr_ifru.ifru_hwaddr };
    for (d, s) in mac.iter_mut().zip(sa.sa_data.iter()) {
        *d = *s as u8;
    }

    let mut ifr = ifreq(name)?;
    // SAFETY: SIOCGIFMTU fills ifr_mtu.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCGIFMTU, &mut ifr) })?;
    // SAFETY: the union member written by SIOCGIFMTU.
    let mtu = unsafe { ifr.ifr_ifru.ifru_mtu }.clamp(0, u16::MAX as i32) as u16;

    let mut ch = EthtoolChannels {
        cmd: ETHTOOL_GCHANNELS,
        ..Default::default()
    };
    let mut ifr = ifreq(name)?;
    ifr.ifr_ifru.ifru_data = (&mut ch as *mut EthtoolChannels).cast();
    // SAFETY: SIOCETHTOOL with a valid ethtool_channels buffer.
    let rx_queues = match cvt(unsafe { libc::ioctl(fd, SIOCETHTOOL, &mut ifr) }) {
        Ok(_) => (ch.rx_count + ch.combined_count).clamp(1, u16::MAX as u32) as u16,
        Err(_) => 1,
    };
    Ok(IfInfo {
        name: name.to_string(),
        ifindex,
        mac,
        mtu,
        rx_queues,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_found_and_missing_is_enodev() {
        let lo = query("lo").unwrap();
        assert_eq!(lo.mac, [0; 6]);
        assert!(lo.ifindex > 0);
        assert!(lo.rx_queues >= 1);
        let e = query("nosuchif0x").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENODEV));
    }
}
