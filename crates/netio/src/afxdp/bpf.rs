//! The few `bpf(2)` commands AF_XDP needs, without libbpf: create the
//! XSKMAP, update/delete its entries, load the redirect program and attach
//! it with a BPF link.
//!
//! Each command's `union bpf_attr` member is declared as its own
//! `#[repr(C)]` prefix struct; the kernel copies `size` bytes and treats
//! the rest as zero.

use crate::sys::{cvt, raw};
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

fn sys_bpf<T>(cmd: i32, attr: &mut T) -> io::Result<i32> {
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

fn name16(s: &str) -> [u8; 16] {
    let mut n = [0u8; 16];
    for (d, c) in n.iter_mut().zip(s.bytes().take(15)) {
        *d = c;
    }
    n
}

/// Creates an XSKMAP of `entries` slots (key: queue index, value: socket).
pub fn create_xskmap(entries: u32) -> io::Result<OwnedFd> {
    let mut a = MapCreateAttr {
        map_type: BPF_MAP_TYPE_XSKMAP,
        key_size: 4,
        value_size: 4,
        max_entries: entries.max(1),
        map_name: name16("sr_xsks"),
        ..Default::default()
    };
    let fd = sys_bpf(BPF_MAP_CREATE, &mut a)?;
    // SAFETY: a new fd returned by the kernel.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
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

/// Loads an XDP program. On failure the error message includes the
/// verifier log.
pub fn load_xdp(insns: &[u64], license: &str) -> io::Result<OwnedFd> {
    let lic = std::ffi::CString::new(license).expect("license without NUL");
    let mut log = vec![0u8; 64 * 1024];
    let mut a = ProgLoadAttr {
        prog_type: BPF_PROG_TYPE_XDP,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: lic.as_ptr() as u64,
        log_level: 1,
        log_size: log.len() as u32,
        log_buf: log.as_mut_ptr() as u64,
        prog_name: name16("sr_xsk_redir"),
        expected_attach_type: BPF_XDP,
        ..Default::default()
    };
    match sys_bpf(BPF_PROG_LOAD, &mut a) {
        // SAFETY: a new fd returned by the kernel.
        Ok(fd) => Ok(unsafe { OwnedFd::from_raw_fd(fd) }),
        Err(e) => {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(&log[..end]);
            Err(io::Error::new(
                e.kind(),
                format!("BPF_PROG_LOAD: {e}; verifier log:\n{}", text.trim_end()),
            ))
        }
    }
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
