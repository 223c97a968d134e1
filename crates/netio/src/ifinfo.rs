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

const ETHTOOL_GSSET_INFO: u32 = 0x37;
const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSTATS: u32 = 0x1d;
const ETH_SS_STATS: u32 = 1;
const ETH_GSTRING_LEN: usize = 32;

/// The driver's statistics (`ethtool -S`) of `name`, as (name, value)
/// pairs, through `SIOCETHTOOL` in this thread's namespace: what
/// `ethtool -S` prints, without running it. Drivers without statistics
/// give an empty list.
pub fn nic_stats(name: &str) -> io::Result<Vec<(String, u64)>> {
    let sock = socket(libc::AF_INET, libc::SOCK_DGRAM, 0)?;
    let fd = sock.as_raw_fd();
    let ethtool = |buf: &mut [u8]| -> io::Result<()> {
        let mut ifr = ifreq(name)?;
        ifr.ifr_ifru.ifru_data = buf.as_mut_ptr().cast();
        // SAFETY: SIOCETHTOOL with a buffer laid out for the command in
        // its first word and large enough for the answer (callers).
        cvt(unsafe { libc::ioctl(fd, SIOCETHTOOL, &mut ifr) }).map(|_| ())
    };
    // struct ethtool_sset_info: cmd, reserved, sset_mask (u64), data[1].
    let mut info = [0u8; 24];
    info[0..4].copy_from_slice(&ETHTOOL_GSSET_INFO.to_ne_bytes());
    info[8..16].copy_from_slice(&(1u64 << ETH_SS_STATS).to_ne_bytes());
    match ethtool(&mut info) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    }
    let mask = u64::from_ne_bytes(info[8..16].try_into().unwrap());
    let n = if mask & (1 << ETH_SS_STATS) != 0 {
        u32::from_ne_bytes(info[16..20].try_into().unwrap()) as usize
    } else {
        0
    };
    if n == 0 {
        return Ok(Vec::new());
    }
    // struct ethtool_gstrings: cmd, string_set, len, data[len * 32].
    let mut strings = vec![0u8; 12 + n * ETH_GSTRING_LEN];
    strings[0..4].copy_from_slice(&ETHTOOL_GSTRINGS.to_ne_bytes());
    strings[4..8].copy_from_slice(&ETH_SS_STATS.to_ne_bytes());
    strings[8..12].copy_from_slice(&(n as u32).to_ne_bytes());
    ethtool(&mut strings)?;
    // struct ethtool_stats: cmd, n_stats, data[n] (u64).
    let mut stats = vec![0u8; 8 + n * 8];
    stats[0..4].copy_from_slice(&ETHTOOL_GSTATS.to_ne_bytes());
    stats[4..8].copy_from_slice(&(n as u32).to_ne_bytes());
    ethtool(&mut stats)?;
    Ok((0..n)
        .map(|i| {
            let raw = &strings[12 + i * ETH_GSTRING_LEN..12 + (i + 1) * ETH_GSTRING_LEN];
            let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
            let v = u64::from_ne_bytes(stats[8 + i * 8..16 + i * 8].try_into().unwrap());
            (String::from_utf8_lossy(&raw[..end]).into_owned(), v)
        })
        .collect())
}

/// The device's `tx_dropped` (`/proc/self/net/dev`, this process's
/// network namespace): what its driver refused to send, whoever sent it.
pub fn tx_dropped(name: &str) -> io::Result<u64> {
    let text = std::fs::read_to_string("/proc/self/net/dev")?;
    tx_dropped_in(&text, name).ok_or_else(|| io::Error::from_raw_os_error(libc::ENODEV))
}

/// `tx_dropped` of `name` in a `/proc/net/dev` text: the 12th number
/// after `name:` (8 receive columns, then bytes, packets, errs, drop).
fn tx_dropped_in(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (n, rest) = l.split_once(':')?;
        if n.trim() != name {
            return None;
        }
        rest.split_whitespace().nth(11)?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn tx_dropped_is_the_twelfth_column() {
        let text = "Inter-|   Receive                            |  Transmit\n \
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n \
    lo: 100 2 0 0 0 0 0 0 100 2 0 0 0 0 0 0\n \
 veth0a: 500 5 0 1 0 0 0 0 700 7 0 42 0 0 0 0\n";
        assert_eq!(super::tx_dropped_in(text, "veth0a"), Some(42));
        assert_eq!(super::tx_dropped_in(text, "lo"), Some(0));
        assert_eq!(super::tx_dropped_in(text, "veth0"), None);
        assert!(super::tx_dropped("lo").is_ok());
    }

    use super::*;

    /// The names and values `ethtool -S` prints for a veth.
    #[test]
    fn nic_stats_match_ethtool() {
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: needs root");
            return;
        }
        let a = format!("srns{}a", std::process::id() % 100000);
        let b = format!("srns{}b", std::process::id() % 100000);
        let ok = std::process::Command::new("ip")
            .args(["link", "add", &a, "type", "veth", "peer", "name", &b])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let stats = nic_stats(&a);
        let out = std::process::Command::new("ethtool")
            .args(["-S", &a])
            .output()
            .unwrap();
        let _ = std::process::Command::new("ip")
            .args(["link", "del", &a])
            .status();
        let stats = stats.unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let theirs: Vec<(String, u64)> = text
            .lines()
            .filter_map(|l| {
                let (k, v) = l.trim().split_once(':')?;
                Some((k.trim().to_string(), v.trim().parse().ok()?))
            })
            .collect();
        assert!(stats.iter().any(|(k, _)| k == "tx_queue_0_xdp_xmit_errors"));
        assert_eq!(stats, theirs);
        assert!(nic_stats("lo").unwrap().is_empty());
    }

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
