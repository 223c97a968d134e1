//! IPv6 longest-prefix match: a multibit trie with DIR-style expansion, the
//! layout of DPDK `rte_lpm6`.
//!
//! * `tbl24`: 2^24 entries indexed by the top 24 bits (as DIR-24-8).
//! * then up to 13 levels of tbl8 groups of 256 entries, each consuming the
//!   next 8 bits. A prefix of length `len` sits in the level that contains
//!   bit `len - 1`, expanded over the 2^(level end - len) entries it covers.
//!
//! A lookup follows ext entries down until it meets a plain entry
//! ([`lookup`](Lpm6Reader::lookup), `lookup.rs`): a /32 route costs 2 memory
//! accesses, a /48 4 (tbl24 + the groups for bits 24..32, 32..40, 40..48),
//! each one cache line. The writer side (`update.rs`) is the DIR-24-8 writer
//! generalised to many levels; entries, depths, publication order and tbl8
//! reclamation are exactly as for IPv4 (see [`crate::lpm4`]).
//!
//! Memory: tbl24 64 MiB (+16 MiB writer depth) plus 1 KiB (+256 B) per group
//! in use; the full table (160k prefixes) uses 38,096 groups, 101 MiB for
//! the readers in all (see the crate documentation).

mod lookup;
mod update;

use crate::lpm;
use crate::memory::{Heap, TableMemory};
use crate::Prefix6;

pub use crate::lpm::MemoryUse;

/// Sizing of an IPv6 table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lpm6Config {
    /// Number of tbl8 groups (1 KiB each, allocated zeroed so unused ones
    /// cost address space only). A route of length `len` > 24 needs up to
    /// `ceil((len - 24) / 8)` groups, shared with routes on the same path.
    pub tbl8_groups: u32,
}

impl Default for Lpm6Config {
    fn default() -> Self {
        Lpm6Config {
            tbl8_groups: 1 << 16,
        }
    }
}

/// A worker's handle for IPv6 lookups (see [`lpm::Reader`]).
pub type Lpm6Reader = lpm::Reader<Prefix6>;

/// The single IPv6 writer (see [`lpm::Writer`]).
pub type Lpm6Writer = lpm::Writer<Prefix6>;

/// Create an empty table: the one writer and a first reader handle.
///
/// # Panics
/// If `tbl8_groups` exceeds 2^30.
pub fn new(config: Lpm6Config) -> (Lpm6Writer, Lpm6Reader) {
    new_in(config, &mut Heap).expect("heap memory")
}

/// Like [`new`], with the readers' tables in memory from `mem` (shared
/// with the XDP fast path: see [`crate::memory`]).
///
/// # Panics
/// If `tbl8_groups` exceeds 2^30.
pub fn new_in<M: TableMemory>(
    config: Lpm6Config,
    mem: &mut M,
) -> Result<(Lpm6Writer, Lpm6Reader), crate::FibError> {
    lpm::new_in(config.tbl8_groups, mem)
}
