//! The `bpf(2)` commands the XDP tester needs, without libbpf: mmapable
//! array maps, program load (verifier log in the error), XDP link attach,
//! and `BPF_PROG_TEST_RUN` (live frames for generation, plain runs for
//! tests).
//!
//! Why mmapable arrays: user space reads the counters and the sequence
//! bitmaps and resets them between trials by plain memory access, with no
//! syscall per element (syscalls are expensive on this VM).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const BPF_MAP_CREATE: i32 = 0;
const BPF_PROG_LOAD: i32 = 5;
const BPF_PROG_TEST_RUN: i32 = 10;
const BPF_LINK_CREATE: i32 = 28;
const BPF_MAP_TYPE_ARRAY: u32 = 2;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_XDP: u32 = 37;
const BPF_F_MMAPABLE: u32 = 1 << 10;
/// `BPF_F_TEST_XDP_LIVE_FRAMES` (kernel >= 5.18).
pub const LIVE_FRAMES: u32 = 1 << 1;
/// `XDP_FLAGS_DRV_MODE`.
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
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as i32)
    }
}

fn name16(s: &str) -> [u8; 16] {
    let mut n = [0u8; 16];
    for (d, c) in n.iter_mut().zip(s.bytes().take(15)) {
        *d = c;
    }
    n
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

/// An mmapable BPF array map (u32 keys), mapped into our memory.
pub struct ArrayMap {
    fd: OwnedFd,
    ptr: *mut u8,
    len: usize,
    pub value_size: usize,
    pub entries: usize,
}

// SAFETY: the mapping is plain shared memory owned by this value.
unsafe impl Send for ArrayMap {}

impl ArrayMap {
    /// `entries` values of `value_size` bytes (a multiple of 8), zeroed.
    pub fn new(name: &str, value_size: usize, entries: usize) -> io::Result<ArrayMap> {
        let mut a = MapCreateAttr {
            map_type: BPF_MAP_TYPE_ARRAY,
            key_size: 4,
            value_size: value_size as u32,
            max_entries: entries.max(1) as u32,
            map_flags: BPF_F_MMAPABLE,
            map_name: name16(name),
            ..Default::default()
        };
        let fd = sys_bpf(BPF_MAP_CREATE, &mut a)
            .map_err(|e| io::Error::new(e.kind(), format!("BPF_MAP_CREATE {name}: {e}")))?;
        // SAFETY: a new fd returned by the kernel.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let page = 4096;
        let len = (value_size * entries.max(1)).div_ceil(page) * page;
        // SAFETY: mapping a BPF_F_MMAPABLE array map of this size.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(ArrayMap {
            fd,
            ptr: ptr.cast(),
            len,
            value_size,
            entries: entries.max(1),
        })
    }

    pub fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// The values as u64 words (shared with the kernel: read with
    /// volatile semantics via [`ArrayMap::get`]).
    fn words(&self) -> *mut u64 {
        self.ptr.cast()
    }

    /// Word `i` of the whole value area.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        assert!(i * 8 < self.value_size * self.entries);
        // SAFETY: in bounds of the mapping; the kernel updates it
        // concurrently, hence volatile.
        unsafe { std::ptr::read_volatile(self.words().add(i)) }
    }

    #[inline]
    pub fn set(&self, i: usize, v: u64) {
        assert!(i * 8 < self.value_size * self.entries);
        // SAFETY: as in get.
        unsafe { std::ptr::write_volatile(self.words().add(i), v) }
    }

    /// Zero the first `words` words.
    pub fn zero(&self, words: usize) {
        let n = (words * 8).min(self.value_size * self.entries);
        // SAFETY: in bounds of the mapping.
        unsafe { std::ptr::write_bytes(self.ptr, 0, n) };
    }

    /// Words `from..to` as a slice (for bitmap scans after the drain).
    pub fn slice(&self, from: usize, to: usize) -> &[u64] {
        assert!(from <= to && to * 8 <= self.value_size * self.entries);
        // SAFETY: in bounds; only read after the traffic stopped.
        unsafe { std::slice::from_raw_parts(self.words().add(from), to - from) }
    }
}

impl Drop for ArrayMap {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
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

/// Load an XDP program; on failure the error carries the verifier log.
pub fn load_xdp(name: &str, insns: &[u64]) -> io::Result<OwnedFd> {
    let lic = c"GPL";
    let mut log = vec![0u8; 1 << 20];
    let mut a = ProgLoadAttr {
        prog_type: BPF_PROG_TYPE_XDP,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: lic.as_ptr() as u64,
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
        Err(e) => {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(&log[..end]);
            // The end of the log says why.
            let tail: String = text
                .chars()
                .rev()
                .take(6000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            Err(io::Error::new(
                e.kind(),
                format!(
                    "BPF_PROG_LOAD {name}: {e}; verifier log (tail):\n{}",
                    tail.trim_end()
                ),
            ))
        }
    }
}

#[repr(C)]
#[derive(Default)]
struct LinkCreateAttr {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
}

/// Attach `prog` to `ifindex` (in the calling thread's namespace) in
/// native mode; detached when the returned fd closes.
pub fn link_xdp(prog: &OwnedFd, ifindex: u32) -> io::Result<OwnedFd> {
    let mut a = LinkCreateAttr {
        prog_fd: prog.as_raw_fd() as u32,
        target_ifindex: ifindex,
        attach_type: BPF_XDP,
        flags: XDP_FLAGS_DRV_MODE,
    };
    let fd = sys_bpf(BPF_LINK_CREATE, &mut a)?;
    // SAFETY: a new fd returned by the kernel.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[repr(C)]
#[derive(Default)]
struct TestRunAttr {
    prog_fd: u32,
    retval: u32,
    data_size_in: u32,
    data_size_out: u32,
    data_in: u64,
    data_out: u64,
    repeat: u32,
    duration: u32,
    ctx_size_in: u32,
    ctx_size_out: u32,
    ctx_in: u64,
    ctx_out: u64,
    flags: u32,
    cpu: u32,
    batch_size: u32,
    _pad: u32,
}

/// `struct xdp_md` as `ctx_in`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
pub struct XdpMd {
    pub data: u32,
    pub data_end: u32,
    pub data_meta: u32,
    pub ingress_ifindex: u32,
    pub rx_queue_index: u32,
    pub egress_ifindex: u32,
}

/// Run `prog` on `frame` `repeat` times as live frames: each run's
/// XDP_TX transmits out of `ifindex` (calling thread's namespace).
pub fn run_live(prog: &OwnedFd, frame: &[u8], ifindex: u32, repeat: u32) -> io::Result<()> {
    let ctx = XdpMd {
        data_end: frame.len() as u32,
        ingress_ifindex: ifindex,
        ..Default::default()
    };
    let mut a = TestRunAttr {
        prog_fd: prog.as_raw_fd() as u32,
        data_size_in: frame.len() as u32,
        data_in: frame.as_ptr() as u64,
        repeat,
        ctx_size_in: std::mem::size_of::<XdpMd>() as u32,
        ctx_in: &ctx as *const XdpMd as u64,
        flags: LIVE_FRAMES,
        batch_size: repeat.clamp(1, 256),
        ..Default::default()
    };
    sys_bpf(BPF_PROG_TEST_RUN, &mut a).map(|_| ())
}

#[cfg(test)]
/// Run `prog` once on a copy of `frame` (no transmit); returns the XDP
/// action and the frame as the program left it. For tests.
pub fn run_once(prog: &OwnedFd, frame: &[u8]) -> io::Result<(u32, Vec<u8>)> {
    let mut out = vec![0u8; frame.len() + 256];
    let mut a = TestRunAttr {
        prog_fd: prog.as_raw_fd() as u32,
        data_size_in: frame.len() as u32,
        data_in: frame.as_ptr() as u64,
        data_size_out: out.len() as u32,
        data_out: out.as_mut_ptr() as u64,
        repeat: 1,
        ..Default::default()
    };
    sys_bpf(BPF_PROG_TEST_RUN, &mut a)?;
    out.truncate(a.data_size_out as usize);
    Ok((a.retval, out))
}
