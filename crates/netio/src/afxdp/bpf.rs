//! The few `bpf(2)` commands AF_XDP needs, without libbpf: create the
//! XSKMAP, update/delete its entries, load the redirect program and attach
//! it with a BPF link.
//!
//! Each command's `union bpf_attr` member is declared as its own
//! `#[repr(C)]` prefix struct; the kernel copies `size` bytes and treats
//! the rest as zero.
//!
//! The generic wrappers ([`sys_bpf`], [`map_create`], [`prog_load_xdp`],
//! [`link_xdp`]) are public (as `netio::bpf`); no other crate uses them
//! now: the tester's programs and the router's XDP tier are loaded with
//! aya (crates `tester`, `fastpath`, through `bpf`).

use crate::sys::{cvt, raw};
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

const BPF_MAP_CREATE: i32 = 0;
const BPF_MAP_UPDATE_ELEM: i32 = 2;
const BPF_MAP_DELETE_ELEM: i32 = 3;
const BPF_PROG_LOAD: i32 = 5;
const BPF_LINK_CREATE: i32 = 28;

const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_XDP: u32 = 6;
/// `enum bpf_attach_type` value of `BPF_XDP`.
const BPF_XDP: u32 = 37;

/// `XDP_FLAGS_SKB_MODE`: generic XDP (after the skb is built).
pub const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
/// `XDP_FLAGS_DRV_MODE`: native XDP (in the driver).
pub const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;

/// `bpf(cmd, attr, sizeof(attr))`: `attr` is the command's `#[repr(C)]`
/// prefix of `union bpf_attr`. Returns the kernel's non-negative result.
pub fn sys_bpf<T>(cmd: i32, attr: &mut T) -> io::Result<i32> {
    // SAFETY: attr is a live, initialised attribute struct of the size
    // passed; the kernel reads (and for some commands writes) only that.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            (attr as *mut T).cast::<libc::c_void>(),
            std::mem::size_of::<T>() as u32,
        )
    };
    cvt(r as libc::c_int)
}

#[repr(C)]
#[derive(Default)]
struct MapCreateAttr {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    inner_map_fd: u32,
    numa_node: u32,
    map_name: [u8; 16],
}

#[repr(C)]
#[derive(Default)]
struct MapElemAttr {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

#[repr(C)]
#[derive(Default)]
struct ProgLoadAttr {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

#[repr(C)]
#[derive(Default)]
struct LinkCreateAttr {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
}

/// An object name as the kernel takes it: at most 15 bytes, NUL-padded.
pub fn name16(s: &str) -> [u8; 16] {
    let mut n = [0u8; 16];
    for (d, c) in n.iter_mut().zip(s.bytes().take(15)) {
        *d = c;
    }
    n
}

/// `BPF_MAP_CREATE`: a map of `map_type` with `map_flags`, named `name`.
pub fn map_create(
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    name: &str,
) -> io::Result<OwnedFd> {
    let mut a = MapCreateAttr {
        map_type,
        key_size,
        value_size,
        max_entries,
        map_flags,
        map_name: name16(name),
        ..Default::default()
    };
    let fd = sys_bpf(BPF_MAP_CREATE, &mut a)?;
    // SAFETY: a new fd returned by the kernel.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Creates an XSKMAP of `entries` slots (key: queue index, value: socket).
pub fn create_xskmap(entries: u32) -> io::Result<OwnedFd> {
    map_create(BPF_MAP_TYPE_XSKMAP, 4, 4, entries.max(1), 0, "sr_xsks")
}

/// `map[key] = sock_fd` (an XSKMAP stores the socket behind the fd).
pub fn map_set(map: &OwnedFd, key: u32, sock_fd: RawFd) -> io::Result<()> {
    let value: u32 = sock_fd as u32;
    let mut a = MapElemAttr {
        map_fd: raw(map) as u32,
        key: &key as *const u32 as u64,
        value: &value as *const u32 as u64,
        ..Default::default()
    };
    sys_bpf(BPF_MAP_UPDATE_ELEM, &mut a).map(|_| ())
}

/// Removes `map[key]`; missing entries are not an error.
pub fn map_delete(map: &OwnedFd, key: u32) -> io::Result<()> {
    let mut a = MapElemAttr {
        map_fd: raw(map) as u32,
        key: &key as *const u32 as u64,
        ..Default::default()
    };
    match sys_bpf(BPF_MAP_DELETE_ELEM, &mut a) {
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(()),
        r => r.map(|_| ()),
    }
}

/// A failed `BPF_PROG_LOAD`: the error and the verifier's log.
#[derive(Debug)]
pub struct ProgLoadError {
    pub error: io::Error,
    /// The verifier log up to its NUL (lossy UTF-8), untrimmed.
    pub log: String,
}

/// `BPF_PROG_LOAD` of an XDP program named `name` (expected attach type
/// `BPF_XDP`), with a verifier log of `log_size` bytes (level 1) that is
/// returned on failure.
pub fn prog_load_xdp(
    name: &str,
    insns: &[u64],
    license: &CStr,
    log_size: usize,
) -> Result<OwnedFd, ProgLoadError> {
    let mut log = vec![0u8; log_size];
    let mut a = ProgLoadAttr {
        prog_type: BPF_PROG_TYPE_XDP,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level: 1,
        log_size: log.len() as u32,
        log_buf: log.as_mut_ptr() as u64,
        prog_name: name16(name),
        expected_attach_type: BPF_XDP,
        ..Default::default()
    };
    match sys_bpf(BPF_PROG_LOAD, &mut a) {
        // SAFETY: a new fd returned by the kernel.
        Ok(fd) => Ok(unsafe { OwnedFd::from_raw_fd(fd) }),
        Err(error) => {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let log = String::from_utf8_lossy(&log[..end]).into_owned();
            Err(ProgLoadError { error, log })
        }
    }
}

/// Loads an XDP program. On failure the error message includes the
/// verifier log.
pub fn load_xdp(insns: &[u64], license: &str) -> io::Result<OwnedFd> {
    let lic = CString::new(license).expect("license without NUL");
    prog_load_xdp("sr_xsk_redir", insns, &lic, 64 * 1024).map_err(
        |ProgLoadError { error: e, log }| {
            io::Error::new(
                e.kind(),
                format!("BPF_PROG_LOAD: {e}; verifier log:\n{}", log.trim_end()),
            )
        },
    )
}

/// Attaches `prog` to `ifindex` as an XDP link with `flags`
/// (`XDP_FLAGS_DRV_MODE` or `XDP_FLAGS_SKB_MODE`). The program stays
/// attached exactly as long as the returned fd is open.
pub fn link_xdp(prog: &OwnedFd, ifindex: u32, flags: u32) -> io::Result<OwnedFd> {
    let mut a = LinkCreateAttr {
        prog_fd: raw(prog) as u32,
        target_ifindex: ifindex,
        attach_type: BPF_XDP,
        flags,
    };
    let fd = sys_bpf(BPF_LINK_CREATE, &mut a)?;
    // SAFETY: a new fd returned by the kernel.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
