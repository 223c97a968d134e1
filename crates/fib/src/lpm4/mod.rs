//! IPv4 longest-prefix match, DIR-24-8 (Gupta, Lin, McKeown, "Routing
//! lookups in hardware at memory access speeds", INFOCOM 1998), in the shape
//! of DPDK `lib/lpm`.
//!
//! * `tbl24`: 2^24 entries indexed by the top 24 bits of the address. An
//!   entry holds the target of the longest prefix of length <= 24 covering
//!   that /24, or (ext bit) the index of a tbl8 group.
//! * `tbl8`: groups of 256 entries indexed by the last byte, used only for
//!   /24s that contain a prefix longer than /24.
//!
//! A lookup is one memory access for a /24-or-shorter match, two otherwise
//! ([`lookup`](Lpm4Reader::lookup), in `lookup.rs`). The writer
//! (`update.rs`) keeps the routes themselves and a depth per entry on its
//! side; the entry layout is in `entry.rs` (valid bit, ext bit, 30-bit payload).
//! The tables, the handles and the route set are the IPv6 table's too
//! ([`crate::lpm`]).
//!
//! Concurrency: one writer, any number of readers, no locks. Every entry is
//! one `AtomicU32`, so a reader sees an entry either before or after a store,
//! never half of it. A new tbl8 group is filled completely before the tbl24
//! entry pointing to it is stored with `Release`; readers load with
//! `Acquire` (plain loads on x86). An unlinked group is reused only after
//! every reader handle has passed a quiescent point (`qsbr.rs` has the scheme and its ordering argument).
//!
//! Memory: tbl24 is 64 MiB (+16 MiB writer-side depth), each tbl8 group
//! 1 KiB (+256 B depth). The pool is allocated zeroed, so unused groups cost
//! address space only.

mod lookup;
mod update;

use crate::lpm;
use crate::memory::{Heap, TableMemory};
use crate::Prefix4;

pub use crate::lpm::MemoryUse;

/// Sizing of an IPv4 table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lpm4Config {
    /// Number of tbl8 groups (1 KiB each). Each /24 that holds a prefix
    /// longer than /24 needs one; the full Internet table needs a few
    /// hundred. Groups awaiting a grace period count as used.
    pub tbl8_groups: u32,
}

impl Default for Lpm4Config {
    fn default() -> Self {
        Lpm4Config {
            tbl8_groups: 1 << 12,
        }
    }
}

/// A worker's handle for IPv4 lookups (see [`lpm::Reader`]).
pub type Lpm4Reader = lpm::Reader<Prefix4>;

/// The single IPv4 writer (see [`lpm::Writer`]).
pub type Lpm4Writer = lpm::Writer<Prefix4>;

/// Create an empty table: the one writer and a first reader handle.
///
/// # Panics
/// If `tbl8_groups` exceeds 2^30 (the entry's payload width).
pub fn new(config: Lpm4Config) -> (Lpm4Writer, Lpm4Reader) {
    new_in(config, &mut Heap).expect("heap memory")
}

/// Like [`new`], with the readers' tables in memory from `mem` (shared
/// with the XDP fast path: see [`crate::memory`]).
///
/// # Panics
/// If `tbl8_groups` exceeds 2^30.
pub fn new_in<M: TableMemory>(
    config: Lpm4Config,
    mem: &mut M,
) -> Result<(Lpm4Writer, Lpm4Reader), crate::FibError> {
    lpm::new_in(config.tbl8_groups, mem)
}
