//! The 32-bit table entry shared by the IPv4 and IPv6 tables.
//!
//! ```text
//!  31    30    29 ........................... 0
//! valid  ext   target (ext = 0) or tbl8 group index (ext = 1)
//! ```
//!
//! Unlike DPDK, the entry holds no prefix depth: the depth is only needed by
//! the writer (to decide which entries an insert or a remove may touch), so
//! it lives in a writer-side shadow array of one byte per entry. The reader
//! entry stays one `u32` and a full 30-bit target fits. An all-zero entry
//! means "no route", so tables start as zeroed memory.

use crate::Target;

/// Entry holds a route (or a group pointer).
pub(crate) const VALID: u32 = 1 << 31;
/// Entry points to a tbl8 group (only with `VALID`).
pub(crate) const EXT: u32 = 1 << 30;
/// Payload mask.
pub(crate) const PAYLOAD: u32 = EXT - 1;

/// Entries per tbl8 group (8-bit stride).
pub(crate) const GROUP_SIZE: usize = 256;

#[inline]
pub(crate) fn route(t: Target) -> u32 {
    VALID | t.0
}

#[inline]
pub(crate) fn group(g: u32) -> u32 {
    VALID | EXT | g
}

#[inline]
pub(crate) fn is_ext(e: u32) -> bool {
    e & EXT != 0
}

/// Decode a non-extended entry.
#[inline]
pub(crate) fn target(e: u32) -> Option<Target> {
    if e & VALID != 0 {
        Some(Target(e & PAYLOAD))
    } else {
        None
    }
}

/// A zero-initialised slice of atomics. Uses `alloc_zeroed` so that the
/// 64 MiB first-level tables and the tbl8 pool cost no time (and no resident
/// memory) until touched.
///
/// On Linux the memory is also advised for transparent huge pages: lookups
/// hit tbl24 at random, so with 4 KiB pages nearly every lookup is a TLB
/// miss (16384 pages); with 2 MiB pages the whole tbl24 is 32 TLB entries.
pub(crate) fn zeroed_atomics(n: usize) -> Box<[std::sync::atomic::AtomicU32]> {
    let v: Vec<u32> = vec![0; n];
    let raw = Box::into_raw(v.into_boxed_slice());
    advise_huge_pages(raw as *mut u8, n * 4);
    // SAFETY: AtomicU32 has the same size, alignment and bit validity as
    // u32 (documented), so a boxed [u32] is a valid boxed [AtomicU32].
    unsafe { Box::from_raw(raw as *mut [std::sync::atomic::AtomicU32]) }
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(start: *mut u8, len: usize) {
    const PAGE: usize = 4096;
    if len < 4 << 20 {
        return;
    }
    // madvise wants a page-aligned start; the kernel uses huge pages for the
    // 2 MiB-aligned parts of the range. Failure (THP disabled) is harmless.
    let begin = (start as usize).next_multiple_of(PAGE);
    let end = (start as usize + len) & !(PAGE - 1);
    // SAFETY: the range lies inside an allocation we own; MADV_HUGEPAGE does
    // not change its contents.
    unsafe {
        libc::madvise(begin as *mut libc::c_void, end - begin, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: *mut u8, _len: usize) {}
