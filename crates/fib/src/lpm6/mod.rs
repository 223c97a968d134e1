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

use std::cell::Cell;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::AtomicU32;
use std::sync::Arc;

use crate::entry::GROUP_SIZE;
use crate::memory::{names, Heap, Region, TableMemory};
use crate::qsbr::{GroupAllocator, Qsbr, QsbrDomain};

pub use crate::lpm4::MemoryUse;

const TBL24_SIZE: usize = 1 << 24;

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

pub(crate) struct Tables6 {
    tbl24: Region<AtomicU32>,
    tbl8: Region<AtomicU32>,
    qsbr: Arc<QsbrDomain>,
}

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
    assert!(config.tbl8_groups <= crate::entry::PAYLOAD + 1);
    let qsbr = Arc::new(QsbrDomain::new());
    let tables = Arc::new(Tables6 {
        tbl24: mem.region(names::LPM6_TBL24, TBL24_SIZE)?,
        tbl8: mem.region(names::LPM6_TBL8, config.tbl8_groups as usize * GROUP_SIZE)?,
        qsbr: qsbr.clone(),
    });
    let writer = Lpm6Writer {
        tables: tables.clone(),
        depth24: vec![0; TBL24_SIZE].into_boxed_slice(),
        depth8: vec![0; config.tbl8_groups as usize * GROUP_SIZE].into_boxed_slice(),
        rules: (0..=128).map(|_| HashMap::new()).collect(),
        groups: GroupAllocator::new(config.tbl8_groups),
        n_rules: 0,
        _not_sync: PhantomData,
    };
    let reader = Lpm6Reader {
        qsbr: Qsbr::new(qsbr),
        tables,
    };
    Ok((writer, reader))
}

/// A worker's handle for IPv6 lookups; same contract as
/// [`crate::lpm4::Lpm4Reader`] (clone per worker, call
/// [`quiescent`](Lpm6Reader::quiescent) every round).
pub struct Lpm6Reader {
    tables: Arc<Tables6>,
    qsbr: Qsbr,
}

impl Clone for Lpm6Reader {
    fn clone(&self) -> Self {
        Lpm6Reader {
            tables: self.tables.clone(),
            qsbr: self.qsbr.clone(),
        }
    }
}

impl Lpm6Reader {
    pub(crate) fn domain(&self) -> Arc<QsbrDomain> {
        self.tables.qsbr.clone()
    }
}

impl Lpm6Reader {
    /// Announce that this handle holds no pointer into the tables.
    #[inline]
    pub fn quiescent(&self) {
        self.qsbr.quiescent();
    }
}

/// The single IPv6 writer (`Send`, not `Sync`).
pub struct Lpm6Writer {
    tables: Arc<Tables6>,
    /// Prefix length + 1 of the route held by each entry (0 = none).
    depth24: Box<[u8]>,
    depth8: Box<[u8]>,
    rules: Vec<HashMap<u128, crate::Target>>,
    groups: GroupAllocator,
    n_rules: usize,
    _not_sync: PhantomData<Cell<()>>,
}

impl Lpm6Writer {
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
    pub fn routes(&self) -> impl Iterator<Item = (crate::Prefix6, crate::Target)> + '_ {
        self.rules.iter().enumerate().flat_map(|(len, m)| {
            m.iter().map(move |(&bits, &t)| {
                let p = crate::Prefix6::new(std::net::Ipv6Addr::from(bits), len as u8)
                    .expect("installed prefixes are valid");
                (p, t)
            })
        })
    }

    /// The target of exactly this prefix, if installed.
    pub fn get(&self, prefix: crate::Prefix6) -> Option<crate::Target> {
        self.rules[prefix.len as usize].get(&prefix.bits()).copied()
    }

    /// Move tbl8 groups whose grace period has passed to the free list.
    pub fn reclaim(&mut self) -> usize {
        self.groups.reclaim(&self.tables.qsbr)
    }

    /// A new reader handle.
    pub fn reader(&self) -> Lpm6Reader {
        Lpm6Reader {
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
