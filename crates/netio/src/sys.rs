//! Thin system-call helpers shared by the live backends (`afxdp`,
//! `afpacket`): errno conversion, socket options, shared mappings, and the
//! AF_PACKET / TPACKET_V3 definitions the `libc` crate does not carry.
//!
//! Everything here runs at set-up time except [`Mmap`] accessors and the
//! kick helpers, which are one syscall per batch at most.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Converts a `-1`-on-error return into an `io::Result`.
pub(crate) fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// `socket()` with `SOCK_CLOEXEC`, owned.
pub(crate) fn socket(domain: i32, ty: i32, proto: i32) -> io::Result<OwnedFd> {
    // SAFETY: plain syscall; the fd is owned from here on.
    let fd = cvt(unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, proto) })?;
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `setsockopt(fd, level, name, &val, sizeof val)`.
pub(crate) fn setsockopt<T>(fd: RawFd, level: i32, name: i32, val: &T) -> io::Result<()> {
    // SAFETY: val points to a live T of the size passed.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (val as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// `getsockopt(fd, level, name, &mut val)`; returns the length written.
pub(crate) fn getsockopt<T>(fd: RawFd, level: i32, name: i32, val: &mut T) -> io::Result<usize> {
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: val points to a writable T of the size passed.
    cvt(unsafe { libc::getsockopt(fd, level, name, (val as *mut T).cast(), &mut len) })?;
    Ok(len as usize)
}

/// A shared mapping of a socket's ring, unmapped on drop.
pub(crate) struct Mmap {
    pub ptr: *mut u8,
    pub len: usize,
}

// SAFETY: the mapping is plain memory; synchronisation with the kernel is
// done by the ring code with atomics.
unsafe impl Send for Mmap {}
unsafe impl Sync for Mmap {}

impl Mmap {
    /// Maps `len` bytes of `fd` at page offset `off`, shared, populated.
    pub fn new(fd: RawFd, len: usize, off: libc::off_t) -> io::Result<Mmap> {
        // SAFETY: a new shared mapping of the socket; checked for failure.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                off,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mmap {
            ptr: ptr.cast(),
            len,
        })
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what new() mapped.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Waits up to `timeout_ms` for `fd` to become readable. True if it is.
pub fn poll_in(fd: RawFd, timeout_ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let r = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    r > 0 && p.revents & libc::POLLIN != 0
}

/// Errno of the last failed call.
#[inline]
pub(crate) fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// `true` for errors that say "the caller lacks privileges".
pub(crate) fn is_perm(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES))
}

/// Borrowed raw fd of an owned fd (shorthand).
#[inline]
pub(crate) fn raw(fd: &OwnedFd) -> RawFd {
    fd.as_raw_fd()
}

// ---- AF_PACKET and TPACKET_V3 (linux/if_packet.h) ----

/// `struct tpacket_stats_v3` (`PACKET_STATISTICS` on a TPACKET_V3
/// socket). The kernel zeroes its counters on every read.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TpacketStatsV3 {
    /// Frames received, drops included.
    pub tp_packets: u32,
    pub tp_drops: u32,
    pub tp_freeze_q_cnt: u32,
}

pub(crate) const ETH_P_ALL: u16 = 0x0003;
pub(crate) const PACKET_ADD_MEMBERSHIP: i32 = 1;
pub(crate) const PACKET_RX_RING: i32 = 5;
pub(crate) const PACKET_VERSION: i32 = 10;
pub(crate) const PACKET_STATISTICS: i32 = 6;
pub(crate) const PACKET_FANOUT: i32 = 18;
pub(crate) const PACKET_QDISC_BYPASS: i32 = 20;
pub(crate) const PACKET_IGNORE_OUTGOING: i32 = 23;
pub(crate) const PACKET_MR_PROMISC: u16 = 1;
pub(crate) const PACKET_FANOUT_HASH: u32 = 0;
pub(crate) const PACKET_FANOUT_FLAG_UNIQUEID: u32 = 0x2000;
pub(crate) const TPACKET_V3: i32 = 2;
pub(crate) const TP_STATUS_KERNEL: u32 = 0;
pub(crate) const TP_STATUS_USER: u32 = 1;
pub(crate) const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
pub(crate) const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;

#[repr(C)]
#[derive(Default)]
pub(crate) struct PacketMreq {
    pub mr_ifindex: i32,
    pub mr_type: u16,
    pub mr_alen: u16,
    pub mr_address: [u8; 8],
}

#[repr(C)]
#[derive(Default)]
pub(crate) struct TpacketReq3 {
    pub tp_block_size: u32,
    pub tp_block_nr: u32,
    pub tp_frame_size: u32,
    pub tp_frame_nr: u32,
    pub tp_retire_blk_tov: u32,
    pub tp_sizeof_priv: u32,
    pub tp_feature_req_word: u32,
}

/// Offsets inside `struct tpacket_block_desc` (version, offset_to_priv,
/// then `struct tpacket_hdr_v1`).
pub(crate) mod bd {
    pub const BLOCK_STATUS: usize = 8;
    pub const NUM_PKTS: usize = 12;
    pub const OFFSET_TO_FIRST_PKT: usize = 16;
}

/// `struct tpacket3_hdr`, as the kernel lays it out.
#[repr(C)]
pub(crate) struct Tpacket3Hdr {
    pub tp_next_offset: u32,
    pub tp_sec: u32,
    pub tp_nsec: u32,
    pub tp_snaplen: u32,
    pub tp_len: u32,
    pub tp_status: u32,
    pub tp_mac: u16,
    pub tp_net: u16,
    pub tp_rxhash: u32,
    pub tp_vlan_tci: u32,
    pub tp_vlan_tpid: u16,
    pub tp_padding: u16,
}

/// A `sockaddr_ll` for `ifindex` and `proto` (host order).
pub(crate) fn sockaddr_ll(ifindex: u32, proto: u16) -> libc::sockaddr_ll {
    // SAFETY: all-zero is a valid sockaddr_ll.
    let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sa.sll_family = libc::AF_PACKET as u16;
    sa.sll_protocol = proto.to_be();
    sa.sll_ifindex = ifindex as i32;
    sa
}

/// Binds a packet socket to `ifindex` with `proto` (host order).
pub(crate) fn bind_ll(fd: RawFd, ifindex: u32, proto: u16) -> io::Result<()> {
    let sa = sockaddr_ll(ifindex, proto);
    // SAFETY: sa is a valid sockaddr_ll of the size passed.
    cvt(unsafe {
        libc::bind(
            fd,
            (&sa as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// Identity (inode) of the calling thread's network namespace, if /proc
/// tells. Ports remember it: interface indexes are per namespace, so a
/// queue opened from a thread in another namespace could bind a different
/// device with the same index.
pub(crate) fn netns_id() -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/thread-self/ns/net")
        .ok()
        .map(|m| m.ino())
}

/// Fails if the calling thread is not in namespace `id` (when both known).
pub(crate) fn check_netns(id: Option<u64>, port: &str) -> Result<(), crate::NetioError> {
    match (id, netns_id()) {
        (Some(a), Some(b)) if a != b => Err(crate::NetioError::port(
            port,
            "this thread is in another network namespace than the one the port was opened in; \
             open queues from a thread in the port's namespace",
        )),
        _ => Ok(()),
    }
}
