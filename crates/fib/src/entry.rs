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
pub const VALID: u32 = 1 << 31;
/// Entry points to a tbl8 group (only with `VALID`).
pub const EXT: u32 = 1 << 30;
/// Payload mask.
pub const PAYLOAD: u32 = EXT - 1;

/// Entries per tbl8 group (8-bit stride).
pub const GROUP_SIZE: usize = 256;

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
