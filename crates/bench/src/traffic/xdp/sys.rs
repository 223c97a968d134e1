//! The `bpf(2)` commands the XDP tester needs beyond the raw wrappers it
//! shares with the AF_XDP port ([`netio::bpf`]: syscall, map create,
//! program load, XDP link attach): mmapable array maps, program load with
//! the tester's naming and log tail, and `BPF_PROG_TEST_RUN` (live frames
//! for generation, plain runs for tests).
//!
//! Why mmapable arrays: user space reads the counters and the sequence
//! bitmaps and resets them between trials by plain memory access, with no
//! syscall per element (syscalls are expensive on this VM).

use netio::bpf::{self, sys_bpf, ProgLoadError};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

const BPF_PROG_TEST_RUN: i32 = 10;
const BPF_MAP_TYPE_ARRAY: u32 = 2;
const BPF_F_MMAPABLE: u32 = 1 << 10;
/// `BPF_F_TEST_XDP_LIVE_FRAMES` (kernel >= 5.18).
pub const LIVE_FRAMES: u32 = 1 << 1;

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
        let fd = bpf::map_create(
            BPF_MAP_TYPE_ARRAY,
            4,
            value_size as u32,
            entries.max(1) as u32,
            BPF_F_MMAPABLE,
            name,
        )
        .map_err(|e| io::Error::new(e.kind(), format!("BPF_MAP_CREATE {name}: {e}")))?;
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

/// Load an XDP program; on failure the error carries the verifier log.
pub fn load_xdp(name: &str, insns: &[u64]) -> io::Result<OwnedFd> {
    bpf::prog_load_xdp(name, insns, c"GPL", 1 << 20).map_err(|ProgLoadError { error: e, log }| {
        // The end of the log says why.
        let tail: String = log
            .chars()
            .rev()
            .take(6000)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        io::Error::new(
            e.kind(),
            format!(
                "BPF_PROG_LOAD {name}: {e}; verifier log (tail):\n{}",
                tail.trim_end()
            ),
        )
    })
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
