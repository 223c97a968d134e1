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

use std::cell::Cell;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::AtomicU32;
use std::sync::Arc;

use crate::entry::GROUP_SIZE;
use crate::memory::{names, Heap, Region, TableMemory};
use crate::qsbr::{GroupAllocator, Qsbr, QsbrDomain};

const TBL24_SIZE: usize = 1 << 24;

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

/// The tables the readers see.
pub(crate) struct Tables4 {
    tbl24: Region<AtomicU32>,
    tbl8: Region<AtomicU32>,
    qsbr: Arc<QsbrDomain>,
}

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
    assert!(config.tbl8_groups <= crate::entry::PAYLOAD + 1);
    let qsbr = Arc::new(QsbrDomain::new());
    let tables = Arc::new(Tables4 {
        tbl24: mem.region(names::LPM4_TBL24, TBL24_SIZE)?,
        tbl8: mem.region(names::LPM4_TBL8, config.tbl8_groups as usize * GROUP_SIZE)?,
        qsbr: qsbr.clone(),
    });
    let writer = Lpm4Writer {
        tables: tables.clone(),
        depth24: vec![0; TBL24_SIZE].into_boxed_slice(),
        depth8: vec![0; config.tbl8_groups as usize * GROUP_SIZE].into_boxed_slice(),
        rules: (0..=32).map(|_| HashMap::new()).collect(),
        groups: GroupAllocator::new(config.tbl8_groups),
        n_rules: 0,
        _not_sync: PhantomData,
    };
    let reader = Lpm4Reader {
        qsbr: Qsbr::new(qsbr),
        tables,
    };
    Ok((writer, reader))
}

/// A worker's handle for lookups. Cheap to clone (an `Arc` plus a
/// registration); lookups never block, allocate or write shared memory.
///
/// Each handle is registered with the table's reclamation scheme: the writer
/// reuses a freed tbl8 group only after every live handle has called
/// [`quiescent`](Lpm4Reader::quiescent) (or been dropped). Give each worker
/// its own clone, call `quiescent()` once per polling round, and drop handles
/// you do not poll: an idle handle holds back reuse (the writer then runs out
/// of tbl8 groups, it never waits).
pub struct Lpm4Reader {
    tables: Arc<Tables4>,
    qsbr: Qsbr,
}

impl Clone for Lpm4Reader {
    fn clone(&self) -> Self {
        Lpm4Reader {
            tables: self.tables.clone(),
            qsbr: self.qsbr.clone(),
        }
    }
}

impl Lpm4Reader {
    pub(crate) fn domain(&self) -> Arc<QsbrDomain> {
        self.tables.qsbr.clone()
    }
}

impl Lpm4Reader {
    /// Announce that this handle holds no pointer into the tables (call
    /// between bursts). Two plain stores' worth of work.
    #[inline]
    pub fn quiescent(&self) {
        self.qsbr.quiescent();
    }
}

/// The single writer. `Send` (may move to the control thread) but not
/// `Sync`: updates take `&mut self`, and there is exactly one.
pub struct Lpm4Writer {
    tables: Arc<Tables4>,
    /// Prefix length + 1 of the route in each tbl24 entry (0 = none);
    /// meaningless for extended entries.
    depth24: Box<[u8]>,
    /// Same for tbl8 entries.
    depth8: Box<[u8]>,
    /// The routes, one map per length, keyed by network address.
    rules: Vec<HashMap<u32, crate::Target>>,
    groups: GroupAllocator,
    n_rules: usize,
    _not_sync: PhantomData<Cell<()>>,
}

/// Memory use of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryUse {
    /// Bytes the readers touch (first level + groups in use).
    pub reader_bytes: usize,
    /// Bytes of writer-side shadow state (depths, excluding the route maps).
    pub writer_bytes: usize,
    /// tbl8 groups in use.
    pub groups_in_use: u32,
    /// tbl8 groups awaiting a grace period.
    pub groups_pending: usize,
}

impl Lpm4Writer {
    /// Number of routes installed.
    pub fn len(&self) -> usize {
        self.n_rules
    }

    /// True if no route is installed.
    pub fn is_empty(&self) -> bool {
        self.n_rules == 0
    }

    /// Every installed route, shortest prefixes first (in no particular
    /// order within a length): for listings (`softrouter ctl route
    /// show`), not for the fast path.
    pub fn routes(&self) -> impl Iterator<Item = (crate::Prefix4, crate::Target)> + '_ {
        self.rules.iter().enumerate().flat_map(|(len, m)| {
            m.iter().map(move |(&bits, &t)| {
                let p = crate::Prefix4::new(std::net::Ipv4Addr::from(bits), len as u8)
                    .expect("installed prefixes are valid");
                (p, t)
            })
        })
    }

    /// The target of exactly this prefix, if installed.
    pub fn get(&self, prefix: crate::Prefix4) -> Option<crate::Target> {
        self.rules[prefix.len as usize].get(&prefix.bits()).copied()
    }

    /// Move tbl8 groups whose grace period has passed to the free list;
    /// returns how many. Allocation also does this when it runs dry.
    pub fn reclaim(&mut self) -> usize {
        self.groups.reclaim(&self.tables.qsbr)
    }

    /// A new reader handle (same as cloning an existing one).
    pub fn reader(&self) -> Lpm4Reader {
        Lpm4Reader {
            tables: self.tables.clone(),
            qsbr: Qsbr::new(self.tables.qsbr.clone()),
        }
    }

    /// Memory in use.
    pub fn memory(&self) -> MemoryUse {
        let g = self.groups.high_water() as usize;
        MemoryUse {
            reader_bytes: TBL24_SIZE * 4 + g * GROUP_SIZE * 4,
            writer_bytes: TBL24_SIZE + g * GROUP_SIZE,
            groups_in_use: self.groups.in_use(),
            groups_pending: self.groups.pending(),
        }
    }
}
