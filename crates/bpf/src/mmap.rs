//! A `BPF_F_MMAPABLE` array map mapped into our memory.
//!
//! Why: user space writes the generator's plan and reads the counters and
//! sequence bitmaps by plain memory access, with no syscall per element
//! (a syscall costs microseconds on a small VM, and a bitmap has millions
//! of words).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// The value area of an mmapable array map (all entries, contiguous; the
/// kernel rounds each value up to 8 bytes).
pub struct MmapArray {
    ptr: *mut u8,
    map_len: usize,
    /// Bytes of the value area (entries x stride).
    len: usize,
    /// Bytes from one value to the next.
    stride: usize,
}

// SAFETY: the mapping is plain shared memory owned by this value; the
// kernel side writes it concurrently, which every access allows for.
unsafe impl Send for MmapArray {}
// SAFETY: every access through `&self` is a volatile or raw access to
// memory that another party (the program) may write at any time anyway;
// sharing it between threads adds nothing the users do not already allow
// for (the FIB's tables in it are atomics).
unsafe impl Sync for MmapArray {}

impl MmapArray {
    /// Map `entries` values of `value_size` bytes of the map behind `fd`.
    pub fn new(fd: BorrowedFd<'_>, value_size: usize, entries: usize) -> io::Result<MmapArray> {
        let stride = value_size.next_multiple_of(8);
        let len = stride * entries;
        let map_len = len.div_ceil(4096).max(1) * 4096;
        // SAFETY: mapping a BPF_F_MMAPABLE array map of at least this size.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(MmapArray {
            ptr: ptr.cast(),
            map_len,
            len,
            stride,
        })
    }

    /// Bytes of the value area.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Start of the value area.
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    /// u64 word `i` (volatile: the kernel updates it concurrently).
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        assert!(
            (i + 1) * 8 <= self.len,
            "word {i} beyond {} bytes",
            self.len
        );
        // SAFETY: in bounds and 8-byte aligned (page-aligned mapping).
        unsafe { std::ptr::read_volatile(self.ptr.cast::<u64>().add(i)) }
    }

    #[inline]
    pub fn set(&self, i: usize, v: u64) {
        assert!(
            (i + 1) * 8 <= self.len,
            "word {i} beyond {} bytes",
            self.len
        );
        // SAFETY: as in get.
        unsafe { std::ptr::write_volatile(self.ptr.cast::<u64>().add(i), v) }
    }

    /// Zero the whole value area.
    pub fn zero(&self) {
        // SAFETY: in bounds of the mapping.
        unsafe { std::ptr::write_bytes(self.ptr, 0, self.len) };
    }

    /// Words `from..to` (bitmap scans after the traffic stopped).
    pub fn words(&self, from: usize, to: usize) -> &[u64] {
        assert!(from <= to && to * 8 <= self.len);
        // SAFETY: in bounds, aligned; read only after the drain.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u64>().add(from), to - from) }
    }

    /// The value area as `T` (a `#[repr(C)]` mirror of the map's value).
    ///
    /// # Safety
    /// `T` must match the map's value layout, fit in the area, and be
    /// valid for any bit pattern; the caller must not hold the reference
    /// while the program writes fields it reads (plan before the run,
    /// results after it).
    pub unsafe fn as_mut<T>(&mut self) -> &mut T {
        assert!(std::mem::size_of::<T>() <= self.len);
        // SAFETY: per the contract above.
        unsafe { &mut *self.ptr.cast::<T>() }
    }

    /// Value `i` := `data` (at most one value's bytes).
    pub fn write_value(&self, i: usize, data: &[u8]) {
        assert!(data.len() <= self.stride);
        self.write(i * self.stride, data);
    }

    /// Bytes `off..off + data.len()` := `data`.
    pub fn write(&self, off: usize, data: &[u8]) {
        assert!(off + data.len() <= self.len);
        // SAFETY: in bounds.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(off), data.len()) };
    }
}

impl Drop for MmapArray {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping.
        unsafe { libc::munmap(self.ptr.cast(), self.map_len) };
    }
}
