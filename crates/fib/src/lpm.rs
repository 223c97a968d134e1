//! What the IPv4 and IPv6 tables share, written once: the readers' tables
//! (`tbl24` and the pool of tbl8 groups), the reader handle, the writer's
//! state and route set, and what a writer does alike for either family
//! (listing, memory use, new reader handles).
//!
//! The families differ only in how they walk the tables (IPv4: at most one
//! tbl8 level, `lpm4`; IPv6: up to thirteen, `lpm6`), so the lookups and
//! the table updates stay in their modules, as inherent methods of
//! [`Reader`] and [`Writer`] of that family ([`crate::Lpm4Reader`] is
//! `Reader<Prefix4>`): a lookup is the same code as before it was generic,
//! monomorphic, with no per-packet cost.
//!
//! Left twice on purpose, alike in shape only: the public entries of each
//! family's writer (`insert`/`remove` check the prefix and keep the route
//! set here, then walk their own tables), and each family's config and
//! constructors (a config type per family, with its own default pool
//! size, so that one family's sizing cannot be handed to the other).

use std::cell::Cell;
use std::collections::HashMap;
use std::hash::Hash;
use std::marker::PhantomData;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::atomic::AtomicU32;
use std::sync::Arc;

use crate::entry::{route, GROUP_SIZE};
use crate::memory::{names, Region, TableMemory};
use crate::prefix::{mask4, mask6};
use crate::qsbr::{GroupAllocator, Qsbr, QsbrDomain};
use crate::{FibError, Prefix4, Prefix6, Target};

/// Entries of the first level, indexed by an address's top 24 bits.
pub(crate) const TBL24_SIZE: usize = 1 << 24;

/// A family's prefix as the tables see it: network bits as a host-order
/// integer (the routes' key) and a length.
pub trait Family: Copy + 'static {
    /// The network address as a host-order integer.
    type Bits: Copy + Eq + Hash + 'static;
    /// The longest prefix.
    const MAX_LEN: u8;
    /// The family's name in errors.
    const NAME: &'static str;
    /// The tables' memory regions, tbl24 and tbl8 ([`crate::memory`]).
    const REGIONS: [&'static str; 2];

    /// Network bits (as stored: host bits not cleared) and length.
    fn parts(self) -> (Self::Bits, u8);
    /// `bits` with the bits after the first `len` cleared.
    fn mask(bits: Self::Bits, len: u8) -> Self::Bits;
    /// The prefix `bits/len` of an installed route.
    fn from_parts(bits: Self::Bits, len: u8) -> Self;

    /// The network bits (host bits cleared) and length of a route the
    /// tables can hold, or why they cannot.
    fn network(self) -> Result<(Self::Bits, u8), FibError> {
        let (bits, len) = self.parts();
        if len > Self::MAX_LEN {
            return Err(FibError::InvalidPrefix(format!(
                "{} length {len}",
                Self::NAME
            )));
        }
        Ok((Self::mask(bits, len), len))
    }
}

impl Family for Prefix4 {
    type Bits = u32;
    const MAX_LEN: u8 = 32;
    const NAME: &'static str = "IPv4";
    const REGIONS: [&'static str; 2] = [names::LPM4_TBL24, names::LPM4_TBL8];

    fn parts(self) -> (u32, u8) {
        (self.bits(), self.len)
    }
    fn mask(bits: u32, len: u8) -> u32 {
        bits & mask4(len)
    }
    fn from_parts(bits: u32, len: u8) -> Prefix4 {
        Prefix4::new(Ipv4Addr::from(bits), len).expect("installed prefixes are valid")
    }
}

impl Family for Prefix6 {
    type Bits = u128;
    const MAX_LEN: u8 = 128;
    const NAME: &'static str = "IPv6";
    const REGIONS: [&'static str; 2] = [names::LPM6_TBL24, names::LPM6_TBL8];

    fn parts(self) -> (u128, u8) {
        (self.bits(), self.len)
    }
    fn mask(bits: u128, len: u8) -> u128 {
        bits & mask6(len)
    }
    fn from_parts(bits: u128, len: u8) -> Prefix6 {
        Prefix6::new(Ipv6Addr::from(bits), len).expect("installed prefixes are valid")
    }
}

/// A route's target, or why no table entry can hold it.
pub(crate) fn check_target(target: Target) -> Result<(), FibError> {
    if target.is_valid() {
        Ok(())
    } else {
        Err(FibError::InvalidId(format!(
            "target {:#x} beyond 30 bits",
            target.0
        )))
    }
}

/// The tables the readers see.
pub(crate) struct Tables {
    pub(crate) tbl24: Region<AtomicU32>,
    pub(crate) tbl8: Region<AtomicU32>,
    pub(crate) qsbr: Arc<QsbrDomain>,
}

/// An empty table with `tbl8_groups` groups: the one writer and a first
/// reader handle.
///
/// # Panics
/// If `tbl8_groups` exceeds 2^30 (the entry's payload width).
pub(crate) fn new_in<P: Family, M: TableMemory>(
    tbl8_groups: u32,
    mem: &mut M,
) -> Result<(Writer<P>, Reader<P>), FibError> {
    assert!(tbl8_groups <= crate::entry::PAYLOAD + 1);
    let [tbl24, tbl8] = P::REGIONS;
    let tbl8_len = tbl8_groups as usize * GROUP_SIZE;
    let tables = Arc::new(Tables {
        tbl24: mem.region(tbl24, TBL24_SIZE)?,
        tbl8: mem.region(tbl8, tbl8_len)?,
        qsbr: Arc::new(QsbrDomain::new()),
    });
    let writer = Writer {
        tables,
        depth24: vec![0; TBL24_SIZE].into_boxed_slice(),
        depth8: vec![0; tbl8_len].into_boxed_slice(),
        rules: Rules::new(),
        groups: GroupAllocator::new(tbl8_groups),
        _not_sync: PhantomData,
    };
    let reader = writer.reader();
    Ok((writer, reader))
}

/// A worker's handle for lookups. Cheap to clone (an `Arc` plus a
/// registration); lookups never block, allocate or write shared memory.
///
/// Each handle is registered with the table's reclamation scheme: the writer
/// reuses a freed tbl8 group only after every live handle has called
/// [`quiescent`](Reader::quiescent) (or been dropped). Give each worker
/// its own clone, call `quiescent()` once per polling round, and drop handles
/// you do not poll: an idle handle holds back reuse (the writer then runs out
/// of tbl8 groups, it never waits).
pub struct Reader<P: Family> {
    pub(crate) tables: Arc<Tables>,
    qsbr: Qsbr,
    family: PhantomData<fn() -> P>,
}

impl<P: Family> Clone for Reader<P> {
    fn clone(&self) -> Self {
        Reader {
            tables: self.tables.clone(),
            qsbr: self.qsbr.clone(),
            family: PhantomData,
        }
    }
}

impl<P: Family> Reader<P> {
    pub(crate) fn domain(&self) -> Arc<QsbrDomain> {
        self.tables.qsbr.clone()
    }

    /// Announce that this handle holds no pointer into the tables (call
    /// between bursts). Two plain stores' worth of work.
    #[inline]
    pub fn quiescent(&self) {
        self.qsbr.quiescent();
    }

    /// Before a long sleep: this handle holds no pointer into the tables
    /// and holds back no reuse until [`Reader::online`].
    #[inline]
    pub fn offline(&self) {
        self.qsbr.offline();
    }

    /// After the sleep, before the next lookup.
    #[inline]
    pub fn online(&self) {
        self.qsbr.online();
    }
}

/// The single writer. `Send` (may move to the control thread) but not
/// `Sync`: updates take `&mut self`, and there is exactly one.
pub struct Writer<P: Family> {
    pub(crate) tables: Arc<Tables>,
    /// Prefix length + 1 of the route in each tbl24 entry (0 = none);
    /// meaningless for extended entries.
    pub(crate) depth24: Box<[u8]>,
    /// Same for tbl8 entries.
    pub(crate) depth8: Box<[u8]>,
    pub(crate) rules: Rules<P>,
    pub(crate) groups: GroupAllocator,
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

impl<P: Family> Writer<P> {
    /// Number of routes installed.
    pub fn len(&self) -> usize {
        self.rules.n
    }

    /// True if no route is installed.
    pub fn is_empty(&self) -> bool {
        self.rules.n == 0
    }

    /// Every installed route, shortest prefixes first (in no particular
    /// order within a length): for listings (`softrouter ctl route
    /// show`), not for the fast path.
    pub fn routes(&self) -> impl Iterator<Item = (P, Target)> + '_ {
        self.rules.by_len.iter().enumerate().flat_map(|(len, m)| {
            m.iter()
                .map(move |(&bits, &t)| (P::from_parts(bits, len as u8), t))
        })
    }

    /// The target of exactly this prefix, if installed.
    pub fn get(&self, prefix: P) -> Option<Target> {
        let (bits, len) = prefix.parts();
        self.rules.by_len[len as usize].get(&bits).copied()
    }

    /// Move tbl8 groups whose grace period has passed to the free list;
    /// returns how many. Allocation also does this when it runs dry.
    pub fn reclaim(&mut self) -> usize {
        self.groups.reclaim(&self.tables.qsbr)
    }

    /// A new reader handle (same as cloning an existing one).
    pub fn reader(&self) -> Reader<P> {
        Reader {
            tables: self.tables.clone(),
            qsbr: Qsbr::new(self.tables.qsbr.clone()),
            family: PhantomData,
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

/// The writer's routes, one map per prefix length keyed by network bits:
/// the tables hold only each entry's winner, so a removal asks these for
/// the next-shorter route that takes the entries back.
pub(crate) struct Rules<P: Family> {
    by_len: Vec<HashMap<P::Bits, Target>>,
    n: usize,
}

impl<P: Family> Rules<P> {
    fn new() -> Self {
        Rules {
            by_len: (0..=P::MAX_LEN).map(|_| HashMap::new()).collect(),
            n: 0,
        }
    }

    /// Record the route `bits/len` (a [`Family::network`]), replacing its
    /// target if it exists.
    pub(crate) fn insert(&mut self, bits: P::Bits, len: u8, target: Target) {
        if self.by_len[len as usize].insert(bits, target).is_none() {
            self.n += 1;
        }
    }

    /// Forget the route `bits/len`. If it was installed: its target, and
    /// the entry value and depth its entries fall back to (those of the
    /// next-shorter route covering it, or 0, 0: none).
    pub(crate) fn remove(&mut self, bits: P::Bits, len: u8) -> Option<(Target, u32, u8)> {
        let old = self.by_len[len as usize].remove(&bits)?;
        self.n -= 1;
        let (value, depth) = self.covering(bits, len);
        Some((old, value, depth))
    }

    /// Entry value and depth of the longest route shorter than `len`
    /// covering `bits` (0, 0: none).
    fn covering(&self, bits: P::Bits, len: u8) -> (u32, u8) {
        for l in (0..len).rev() {
            if let Some(&t) = self.by_len[l as usize].get(&P::mask(bits, l)) {
                return (route(t), l + 1);
            }
        }
        (0, 0)
    }
}
