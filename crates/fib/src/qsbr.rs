//! Quiescent-state-based reclamation (QSBR) for tbl8 groups.
//!
//! A tbl8 group that the writer unlinks may still be read by a worker that
//! loaded the old pointer just before. Memory is never freed (the pool is
//! preallocated), so this is not about memory safety but correctness: if the
//! writer refilled the group for another /24 at once, that worker could
//! return a target that was never installed for its address.
//!
//! Scheme: a global epoch counter, and one slot per reader handle that holds
//! the last epoch the reader saw at a quiescent point (between two bursts,
//! when it holds no pointer into the tables).
//!
//! * Writer, on unlinking a group: the unlink is a `Release` store into the
//!   parent entry; then `epoch.fetch_add(1, AcqRel)` returns `e` and the
//!   group is parked with tag `e + 1`.
//! * Reader, at [`Qsbr::quiescent`]: `seen = epoch.load(Acquire)`, then
//!   `slot.store(seen, Release)`.
//! * Writer, before reuse: the group with tag `t` is free once every live
//!   slot holds `>= t` (slots loaded with `Acquire`).
//!
//! Why that is enough: if a slot holds `>= t`, its reader's epoch load read
//! the writer's increment (or a later one), which followed the unlink; with
//! Acquire/Release every lookup the reader starts afterwards sees the new
//! parent entry and cannot enter the group. Every lookup it made before was
//! sequenced before its `Release` store of the slot, which the writer read
//! with `Acquire`, so those loads happen-before the writer's refill stores.
//!
//! On x86 all of this is plain `mov`s on the reader side: one load and one
//! store per quiescent point, nothing per lookup.
//!
//! A reader that goes to sleep for long ([`Qsbr::offline`]) sets its slot
//! to [`OFFLINE`], above every tag, so that it holds back no reuse while
//! it holds no pointer; on waking ([`Qsbr::online`]) it stores the epoch
//! again, then a full fence, before its first lookup. The writer has a
//! full fence between the unlink (and its epoch increment) and its slot
//! loads. Why both fences: this is the store-buffering pattern (reader:
//! store slot, load entry; writer: store entry, load slot). With the two
//! SeqCst fences one of the loads sees the other side's store: either the
//! writer sees the reader online with an epoch below the tag, and waits,
//! or the reader's lookups see the unlink and never enter the group.

use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One reader's slot, on its own cache line so that announcing a quiescent
/// state does not bounce the line of another reader.
#[repr(align(64))]
pub(crate) struct Slot(AtomicU64);

/// A slot's value while its reader sleeps (holds no pointer): it has
/// passed every tag.
const OFFLINE: u64 = u64::MAX;

/// The shared epoch and the registry of reader slots.
pub(crate) struct QsbrDomain {
    epoch: AtomicU64,
    slots: Mutex<Vec<Arc<Slot>>>,
}

impl QsbrDomain {
    pub(crate) fn new() -> QsbrDomain {
        QsbrDomain {
            epoch: AtomicU64::new(1),
            slots: Mutex::new(Vec::new()),
        }
    }

    /// Register a reader; it counts as having just passed a quiescent point
    /// (it holds no pointer yet).
    pub(crate) fn register(&self) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let slot = Arc::new(Slot(AtomicU64::new(self.epoch.load(Ordering::Acquire))));
        slots.push(slot.clone());
        slot
    }

    pub(crate) fn unregister(&self, slot: &Arc<Slot>) {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots.retain(|s| !Arc::ptr_eq(s, slot));
    }

    /// Reader side: announce that no pointer into the tables is held.
    #[inline]
    pub(crate) fn quiescent(&self, slot: &Slot) {
        let e = self.epoch.load(Ordering::Acquire);
        slot.0.store(e, Ordering::Release);
    }

    /// Reader side, before a long sleep: no pointer is held until
    /// [`QsbrDomain::online`], and no retired memory waits for this reader.
    #[inline]
    pub(crate) fn offline(&self, slot: &Slot) {
        slot.0.store(OFFLINE, Ordering::Release);
    }

    /// Reader side, after the sleep, before the first lookup (the module
    /// documentation says why the fence).
    #[inline]
    pub(crate) fn online(&self, slot: &Slot) {
        self.quiescent(slot);
        fence(Ordering::SeqCst);
    }

    /// Writer side: called right after an unlink store; returns the tag the
    /// unlinked group must wait for.
    pub(crate) fn retire(&self) -> u64 {
        self.epoch.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Writer side: the smallest epoch every live reader has passed.
    pub(crate) fn safe_epoch(&self) -> u64 {
        // Pairs with the fence of a reader coming online.
        fence(Ordering::SeqCst);
        let slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots
            .iter()
            .map(|s| s.0.load(Ordering::Acquire))
            .min()
            .unwrap_or(u64::MAX)
    }
}

/// Reader registration: one per reader handle, unregistered on drop.
pub(crate) struct Qsbr {
    domain: Arc<QsbrDomain>,
    slot: Arc<Slot>,
}

impl Qsbr {
    pub(crate) fn new(domain: Arc<QsbrDomain>) -> Qsbr {
        let slot = domain.register();
        Qsbr { domain, slot }
    }

    #[inline]
    pub(crate) fn quiescent(&self) {
        self.domain.quiescent(&self.slot);
    }

    #[inline]
    pub(crate) fn offline(&self) {
        self.domain.offline(&self.slot);
    }

    #[inline]
    pub(crate) fn online(&self) {
        self.domain.online(&self.slot);
    }
}

impl Clone for Qsbr {
    fn clone(&self) -> Qsbr {
        Qsbr::new(self.domain.clone())
    }
}

impl Drop for Qsbr {
    fn drop(&mut self) {
        self.domain.unregister(&self.slot);
    }
}

/// Writer-side allocator of tbl8 group indices with deferred reuse.
pub(crate) struct GroupAllocator {
    capacity: u32,
    /// Never-used indices start at `next`; below it, indices come back
    /// through `free`.
    next: u32,
    free: Vec<u32>,
    /// Retired groups and the epoch each must wait for (non-decreasing).
    pending: std::collections::VecDeque<(u64, u32)>,
    in_use: u32,
}

impl GroupAllocator {
    pub(crate) fn new(capacity: u32) -> GroupAllocator {
        GroupAllocator {
            capacity,
            next: 0,
            free: Vec::new(),
            pending: Default::default(),
            in_use: 0,
        }
    }

    /// A group index, or `None` if all are in use or awaiting a grace period.
    pub(crate) fn alloc(&mut self, domain: &QsbrDomain) -> Option<u32> {
        if self.free.is_empty() && self.next == self.capacity {
            self.reclaim(domain);
        }
        let g = if let Some(g) = self.free.pop() {
            g
        } else if self.next < self.capacity {
            self.next += 1;
            self.next - 1
        } else {
            return None;
        };
        self.in_use += 1;
        Some(g)
    }

    /// Park an unlinked group until every reader passes a quiescent point.
    pub(crate) fn retire(&mut self, domain: &QsbrDomain, g: u32) {
        let tag = domain.retire();
        self.pending.push_back((tag, g));
        self.in_use -= 1;
    }

    /// Move every group whose grace period has passed to the free list.
    pub(crate) fn reclaim(&mut self, domain: &QsbrDomain) -> usize {
        if self.pending.is_empty() {
            return 0;
        }
        let safe = domain.safe_epoch();
        let mut n = 0;
        while let Some(&(tag, g)) = self.pending.front() {
            if tag > safe {
                break;
            }
            self.pending.pop_front();
            self.free.push(g);
            n += 1;
        }
        n
    }

    pub(crate) fn in_use(&self) -> u32 {
        self.in_use
    }

    pub(crate) fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Highest index ever handed out + 1 (pages touched in the pool).
    pub(crate) fn high_water(&self) -> u32 {
        self.next
    }
}

/// Writer-side allocator of contiguous ranges (the member slots of ECMP
/// groups) with the same deferred reuse as [`GroupAllocator`]: first fit
/// over coalesced free ranges; a retired range is free again only after
/// every reader has passed a quiescent point.
pub(crate) struct RangeAllocator {
    /// Free ranges, start -> length, never adjacent (coalesced).
    free: std::collections::BTreeMap<u32, u32>,
    /// Retired ranges and the epoch each must wait for (non-decreasing).
    pending: std::collections::VecDeque<(u64, u32, u32)>,
}

impl RangeAllocator {
    pub(crate) fn new(capacity: u32) -> RangeAllocator {
        let mut free = std::collections::BTreeMap::new();
        if capacity > 0 {
            free.insert(0, capacity);
        }
        RangeAllocator {
            free,
            pending: Default::default(),
        }
    }

    fn first_fit(&self, len: u32) -> Option<(u32, u32)> {
        self.free
            .iter()
            .find(|&(_, &l)| l >= len)
            .map(|(&s, &l)| (s, l))
    }

    /// The start of `len` contiguous slots, or `None` if no free range is
    /// long enough (after reclaiming what passed its grace period).
    pub(crate) fn alloc(&mut self, domain: &QsbrDomain, len: u32) -> Option<u32> {
        let (start, have) = match self.first_fit(len) {
            Some(r) => r,
            None => {
                self.reclaim(domain);
                self.first_fit(len)?
            }
        };
        self.free.remove(&start);
        if have > len {
            self.free.insert(start + len, have - len);
        }
        Some(start)
    }

    /// Parks a range no reader can newly reach until every reader passes
    /// a quiescent point.
    pub(crate) fn retire(&mut self, domain: &QsbrDomain, start: u32, len: u32) {
        let tag = domain.retire();
        self.pending.push_back((tag, start, len));
    }

    /// Frees every range whose grace period has passed; returns how many.
    pub(crate) fn reclaim(&mut self, domain: &QsbrDomain) -> usize {
        if self.pending.is_empty() {
            return 0;
        }
        let safe = domain.safe_epoch();
        let mut n = 0;
        while let Some(&(tag, start, len)) = self.pending.front() {
            if tag > safe {
                break;
            }
            self.pending.pop_front();
            self.release(start, len);
            n += 1;
        }
        n
    }

    fn release(&mut self, mut start: u32, mut len: u32) {
        if let Some((&s, &l)) = self.free.range(..start).next_back() {
            if s + l == start {
                self.free.remove(&s);
                start = s;
                len += l;
            }
        }
        if let Some(l) = self.free.remove(&(start + len)) {
            len += l;
        }
        self.free.insert(start, len);
    }
}

/// Registration of a reader that is not a thread of this process and has
/// no quiescent points of its own: the XDP fast path, which the kernel
/// runs inside RCU read-side sections (one program run per frame).
///
/// Its grace periods are the kernel's: whoever drives it reads
/// [`start`](ExternalReader::start), waits for an RCU grace period that
/// begins after that (e.g. an update of a map-in-map, which the kernel
/// completes with `synchronize_rcu`), then calls
/// [`passed`](ExternalReader::passed). Every program run that could have
/// seen an unlinked tbl8 group or a retired next-hop id began before the
/// grace period and has ended, so the writer may reuse what was retired
/// before `start`. Until `passed` is called, the registration holds back
/// reuse like an idle worker (the writer then runs out, it never waits).
pub struct ExternalReader {
    regs: Vec<Qsbr>,
}

/// The epochs of the tables when a grace period was asked for.
#[derive(Debug, Clone)]
pub struct GraceStart(Vec<u64>);

impl ExternalReader {
    /// Register with the tables of `lpm4`, `lpm6` and `next_hops`.
    pub fn new(
        lpm4: &crate::Lpm4Reader,
        lpm6: &crate::Lpm6Reader,
        next_hops: &crate::NextHopReader,
    ) -> ExternalReader {
        ExternalReader {
            regs: [lpm4.domain(), lpm6.domain(), next_hops.domain()]
                .into_iter()
                .map(Qsbr::new)
                .collect(),
        }
    }

    /// Before the grace period: the tables' current epochs.
    pub fn start(&self) -> GraceStart {
        GraceStart(
            self.regs
                .iter()
                .map(|r| r.domain.epoch.load(Ordering::Acquire))
                .collect(),
        )
    }

    /// After a grace period that began after `start`: nothing retired
    /// before `start` is in use by this reader any more.
    pub fn passed(&self, start: &GraceStart) {
        for (r, &e) in self.regs.iter().zip(&start.0) {
            r.slot.0.fetch_max(e, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_offline_holds_back_no_reuse_and_online_again_does() {
        let domain = Arc::new(QsbrDomain::new());
        let reader = Qsbr::new(domain.clone());
        let mut groups = GroupAllocator::new(1);
        let g = groups.alloc(&domain).unwrap();
        groups.retire(&domain, g);
        // Online, not yet quiescent since the retirement: held back.
        assert_eq!(groups.alloc(&domain), None);
        reader.offline();
        assert_eq!(
            groups.alloc(&domain),
            Some(g),
            "an offline reader held back reuse"
        );
        reader.online();
        groups.retire(&domain, g);
        assert_eq!(
            groups.alloc(&domain),
            None,
            "a reader back online was not waited for"
        );
        reader.quiescent();
        assert_eq!(groups.alloc(&domain), Some(g));
    }
}
