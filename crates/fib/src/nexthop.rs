//! Next hops and ECMP groups.
//!
//! Routes point to a [`Target`]; this table turns a target and a flow hash
//! into one [`NextHop`]. Same split as the LPMs: one writer, lock-free
//! readers, fixed capacity preallocated at creation, no allocation on the
//! read side.
//!
//! Publication: an entry's side data (gateway address, group members) is
//! written first, then its packed descriptor word is stored with `Release`;
//! readers load the descriptor with `Acquire`. Entries are immutable while
//! their id is live.
//!
//! Reuse: a next hop that nothing references any more (no route, no group)
//! can be [retired](NextHopWriter::retire); its id is handed out again only
//! after a grace period, the QSBR scheme of the tbl8 groups
//! ([`crate::lpm4`]): every reader registered with
//! [`NextHopReader::register`] must have announced a quiescent point
//! ([`NextHopEpoch::quiescent`]) after the retirement. Until then the
//! retired entry keeps its old contents, so a reader that obtained the id
//! before the retirement still reads the next hop it was given. Readers
//! that keep ids beyond a quiescent point (a hold queue) must detect reuse
//! themselves (the dataplane keeps a per-id incarnation counter).
//! Fresh ids are used first; retired ones are reclaimed when the fresh ones
//! run out, so an id is reused as late as possible.
//!
//! ECMP groups are [removed](NextHopWriter::remove_group) the same way:
//! the group id and its member slots are reused only after a grace period
//! of the same domain, so a reader that loaded the group's descriptor
//! before the removal reads its old members to the end.

use std::cell::Cell;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::Arc;

use crate::memory::{names, Heap, Region, TableMemory};
use crate::qsbr::{GroupAllocator, Qsbr, QsbrDomain, RangeAllocator};
use crate::{FibError, Target};

/// Index of a next hop in the [`NextHopTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NextHopId(pub u32);

/// Index of an ECMP group in the [`NextHopTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupId(pub u32);

/// How the packet leaves (or does not leave) the router.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NextHopKind {
    /// Forward to this neighbor (the gateway).
    Gateway(IpAddr),
    /// The destination is on the link: the neighbor is the packet's
    /// destination address.
    Connected,
    /// One of the router's own addresses: deliver to the router.
    Local,
    /// Drop.
    Blackhole,
}

/// [`NextHopKind`] without the gateway's address: all that forwarding a
/// packet decides on ([`NextHopReader::port_class`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HopClass {
    Gateway,
    Connected,
    Local,
    Blackhole,
}

impl NextHopKind {
    /// This kind's class.
    pub fn class(&self) -> HopClass {
        match self {
            NextHopKind::Gateway(_) => HopClass::Gateway,
            NextHopKind::Connected => HopClass::Connected,
            NextHopKind::Local => HopClass::Local,
            NextHopKind::Blackhole => HopClass::Blackhole,
        }
    }
}

/// Where a route sends packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NextHop {
    /// Output port.
    pub port: u16,
    /// Neighbor selection.
    pub kind: NextHopKind,
}

// Descriptor word of a next hop: bit 63 valid | bits 32..35 kind | bits
// 0..16 port; of a group: bit 63 valid | count << 32 | first member. Public
// for the XDP fast path, which reads the same words (its C header is
// generated from these).
/// A descriptor (next hop or group) in use.
pub const NH_VALID: u64 = 1 << 63;
/// Where a next hop's kind, and a group's member count, sit in the word.
pub const KIND_SHIFT: u32 = 32;
/// The kind's bits (after [`KIND_SHIFT`]).
pub const KIND_MASK: u64 = 0x7;
/// A group's member count bits (after [`KIND_SHIFT`]).
pub const COUNT_MASK: u32 = 0x7fff_ffff;
/// Kind: a gateway with an IPv4 address.
pub const KIND_GW4: u64 = 1;
/// Kind: a gateway with an IPv6 address.
pub const KIND_GW6: u64 = 2;
/// Kind: a host on a connected subnet.
pub const KIND_CONNECTED: u64 = 3;
/// Kind: one of the router's own addresses.
pub const KIND_LOCAL: u64 = 4;
/// Kind: dropped.
pub const KIND_BLACKHOLE: u64 = 5;

struct Shared {
    nh: Region<AtomicU64>,
    /// Gateway address of each next hop (u128, IPv4 in the low 32 bits),
    /// written before the descriptor is published.
    gw_hi: Region<AtomicU64>,
    gw_lo: Region<AtomicU64>,
    groups: Region<AtomicU64>,
    members: Region<AtomicU32>,
    /// Grace periods for retired next-hop ids.
    qsbr: Arc<QsbrDomain>,
}

/// Create a table with fixed capacities.
pub struct NextHopTable;

impl NextHopTable {
    /// Preallocate room for `next_hops` next hops, `groups` ECMP groups and
    /// `group_members` member slots in total.
    ///
    /// # Panics
    /// If a capacity exceeds what a [`Target`] can index (2^29).
    #[allow(clippy::new_ret_no_self)]
    pub fn with_capacity(
        next_hops: u32,
        groups: u32,
        group_members: u32,
    ) -> (NextHopWriter, NextHopReader) {
        Self::with_capacity_in(next_hops, groups, group_members, &mut Heap).expect("heap memory")
    }

    /// Like [`with_capacity`](Self::with_capacity), with the readers'
    /// arrays in memory from `mem` (see [`crate::memory`]).
    ///
    /// # Panics
    /// If a capacity exceeds what a [`Target`] can index (2^29).
    pub fn with_capacity_in<M: TableMemory>(
        next_hops: u32,
        groups: u32,
        group_members: u32,
        mem: &mut M,
    ) -> Result<(NextHopWriter, NextHopReader), FibError> {
        assert!(next_hops <= Target::MAX_INDEX + 1 && groups <= Target::MAX_INDEX + 1);
        let n = next_hops as usize;
        let shared = Arc::new(Shared {
            nh: mem.region(names::NH_DESC, n)?,
            gw_hi: mem.region(names::NH_GW_HI, n)?,
            gw_lo: mem.region(names::NH_GW_LO, n)?,
            groups: mem.region(names::NH_GROUPS, groups as usize)?,
            members: mem.region(names::NH_MEMBERS, group_members as usize)?,
            qsbr: Arc::new(QsbrDomain::new()),
        });
        let writer = NextHopWriter {
            shared: shared.clone(),
            ids: GroupAllocator::new(next_hops),
            live: Vec::new(),
            in_groups: HashMap::new(),
            group_ids: GroupAllocator::new(groups),
            member_slots: RangeAllocator::new(group_members),
            nh_index: HashMap::new(),
            group_index: HashMap::new(),
            _not_sync: PhantomData,
        };
        Ok((writer, NextHopReader { shared }))
    }
}

/// The single writer of a next-hop table (`Send`, not `Sync`).
pub struct NextHopWriter {
    shared: Arc<Shared>,
    /// Next-hop ids: fresh ones first, retired ones after a grace period.
    ids: GroupAllocator,
    /// Whether each id handed out so far is live (not retired).
    live: Vec<bool>,
    /// Ids that are members of a group, with the number of groups that
    /// hold each (a member cannot be retired).
    in_groups: HashMap<NextHopId, u32>,
    /// Group ids and member slots, both reused after a grace period.
    group_ids: GroupAllocator,
    member_slots: RangeAllocator,
    nh_index: HashMap<NextHop, NextHopId>,
    group_index: HashMap<Vec<NextHopId>, GroupId>,
    _not_sync: PhantomData<Cell<()>>,
}

impl NextHopWriter {
    /// Add a next hop (even if an identical one exists). Uses a fresh id
    /// while there is one, then ids retired at least one grace period ago.
    pub fn add(&mut self, nh: NextHop) -> Result<NextHopId, FibError> {
        let s = &*self.shared;
        let Some(i) = self.ids.alloc(&s.qsbr) else {
            return Err(FibError::CapacityExhausted {
                what: "next-hop",
                capacity: s.nh.len() as u32,
            });
        };
        let i = i as usize;
        let (kind, gw) = match nh.kind {
            NextHopKind::Gateway(IpAddr::V4(a)) => (KIND_GW4, u128::from(u32::from(a))),
            NextHopKind::Gateway(IpAddr::V6(a)) => (KIND_GW6, u128::from(a)),
            NextHopKind::Connected => (KIND_CONNECTED, 0),
            NextHopKind::Local => (KIND_LOCAL, 0),
            NextHopKind::Blackhole => (KIND_BLACKHOLE, 0),
        };
        s.gw_hi[i].store((gw >> 64) as u64, Relaxed);
        s.gw_lo[i].store(gw as u64, Relaxed);
        s.nh[i].store(NH_VALID | kind << KIND_SHIFT | u64::from(nh.port), Release);
        if i == self.live.len() {
            self.live.push(true);
        } else {
            self.live[i] = true;
        }
        let id = NextHopId(i as u32);
        self.nh_index.entry(nh).or_insert(id);
        Ok(id)
    }

    /// Retires next hop `id`: [`find_or_add`](Self::find_or_add) no longer
    /// returns it and its id is reused after a grace period (see the module
    /// documentation). The caller must already have removed every route
    /// that points to it; members of an ECMP group cannot be retired.
    pub fn retire(&mut self, id: NextHopId) -> Result<(), FibError> {
        if !self.live.get(id.0 as usize).copied().unwrap_or(false) {
            return Err(FibError::InvalidId(format!(
                "next hop {} is not live",
                id.0
            )));
        }
        if self.in_groups.contains_key(&id) {
            return Err(FibError::InvalidId(format!(
                "next hop {} is a member of an ECMP group",
                id.0
            )));
        }
        let nh = self.reader().get(id);
        if self.nh_index.get(&nh) == Some(&id) {
            self.nh_index.remove(&nh);
        }
        self.live[id.0 as usize] = false;
        self.ids.retire(&self.shared.qsbr, id.0);
        Ok(())
    }

    /// Moves ids, group ids and member slots whose grace period has passed
    /// to their free lists (also done by the allocations when they run
    /// out); returns how many next-hop ids.
    pub fn reclaim(&mut self) -> usize {
        let q = &self.shared.qsbr;
        self.group_ids.reclaim(q);
        self.member_slots.reclaim(q);
        self.ids.reclaim(q)
    }

    /// Retired ids still waiting for their grace period.
    pub fn retired(&self) -> usize {
        self.ids.pending()
    }

    /// The id of an identical next hop, or a new one.
    pub fn find_or_add(&mut self, nh: NextHop) -> Result<NextHopId, FibError> {
        match self.nh_index.get(&nh) {
            Some(&id) => Ok(id),
            None => self.add(nh),
        }
    }

    /// An ECMP group of these members (in this order; a member may repeat
    /// to give it more weight). Returns the existing group if one has the
    /// same member list.
    pub fn add_group(&mut self, members: &[NextHopId]) -> Result<GroupId, FibError> {
        if members.is_empty() {
            return Err(FibError::InvalidId("empty ECMP group".into()));
        }
        if let Some(m) = members
            .iter()
            .find(|m| !self.live.get(m.0 as usize).copied().unwrap_or(false))
        {
            return Err(FibError::InvalidId(format!("unknown next hop {}", m.0)));
        }
        if let Some(&g) = self.group_index.get(members) {
            return Ok(g);
        }
        let s = &*self.shared;
        let Some(g) = self.group_ids.alloc(&s.qsbr) else {
            return Err(FibError::CapacityExhausted {
                what: "ECMP group",
                capacity: s.groups.len() as u32,
            });
        };
        let Some(first) = self.member_slots.alloc(&s.qsbr, members.len() as u32) else {
            // Never published: parked like a removed group.
            self.group_ids.retire(&s.qsbr, g);
            return Err(FibError::CapacityExhausted {
                what: "ECMP group member",
                capacity: s.members.len() as u32,
            });
        };
        let first = first as usize;
        for (slot, m) in s.members[first..].iter().zip(members) {
            slot.store(m.0, Relaxed);
        }
        s.groups[g as usize].store(
            NH_VALID | (members.len() as u64) << KIND_SHIFT | first as u64,
            Release,
        );
        for m in members {
            *self.in_groups.entry(*m).or_insert(0) += 1;
        }
        let id = GroupId(g);
        self.group_index.insert(members.to_vec(), id);
        Ok(id)
    }

    /// Removes group `g` (no route may point to it any more): its members
    /// can be retired once no other group holds them, and its id and
    /// member slots are reused after a grace period. Returns the members.
    pub fn remove_group(&mut self, g: GroupId) -> Result<Vec<NextHopId>, FibError> {
        let members: Vec<NextHopId> = self.reader().group_members(g).collect();
        if members.is_empty() || self.group_index.get(&members) != Some(&g) {
            return Err(FibError::InvalidId(format!("group {} is not live", g.0)));
        }
        self.group_index.remove(&members);
        for m in &members {
            if let Some(n) = self.in_groups.get_mut(m) {
                *n -= 1;
                if *n == 0 {
                    self.in_groups.remove(m);
                }
            }
        }
        let s = &*self.shared;
        let first = s.groups[g.0 as usize].load(Acquire) as u32;
        self.group_ids.retire(&s.qsbr, g.0);
        self.member_slots
            .retire(&s.qsbr, first, members.len() as u32);
        Ok(members)
    }

    /// ECMP groups in use (added and not removed).
    pub fn groups(&self) -> usize {
        self.group_ids.in_use() as usize
    }

    /// Capacity in next hops.
    pub fn capacity(&self) -> usize {
        self.shared.nh.len()
    }

    /// Capacity in ECMP groups.
    pub fn group_capacity(&self) -> usize {
        self.shared.groups.len()
    }

    /// A reader handle.
    pub fn reader(&self) -> NextHopReader {
        NextHopReader {
            shared: self.shared.clone(),
        }
    }

    /// Number of live next hops (added and not retired).
    pub fn len(&self) -> usize {
        self.ids.in_use() as usize
    }

    /// True if no next hop is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A worker's handle (cheap `Arc` clone). Never blocks or allocates.
#[derive(Clone)]
pub struct NextHopReader {
    shared: Arc<Shared>,
}

/// A reader's registration in the grace-period domain of retired next-hop
/// ids ([`NextHopReader::register`]); unregistered on drop.
pub struct NextHopEpoch(Qsbr);

impl NextHopEpoch {
    /// Announces that this reader holds no next-hop id obtained before
    /// this point (other than ones it checks for reuse itself).
    #[inline]
    pub fn quiescent(&self) {
        self.0.quiescent();
    }

    /// Before a long sleep: no id obtained before is used until
    /// [`NextHopEpoch::online`] (other than ones the reader checks for
    /// reuse itself), so none holds back reuse meanwhile.
    #[inline]
    pub fn offline(&self) {
        self.0.offline();
    }

    /// After the sleep, before the next id is read.
    #[inline]
    pub fn online(&self) {
        self.0.online();
    }
}

impl NextHopReader {
    pub(crate) fn domain(&self) -> Arc<QsbrDomain> {
        self.shared.qsbr.clone()
    }

    /// Registers a reader for id reuse: retired ids are not handed out
    /// again until every registration has passed a quiescent point.
    /// A thread that keeps ids across lookups must hold one and call
    /// [`NextHopEpoch::quiescent`] regularly (a registration that never
    /// does blocks reuse).
    pub fn register(&self) -> NextHopEpoch {
        NextHopEpoch(Qsbr::new(self.shared.qsbr.clone()))
    }

    /// The next hop with this id.
    ///
    /// Ids reach workers only through routes installed after the next hop
    /// was published, so the entry is always complete. An id that was never
    /// added (a caller bug) reads as a blackhole on port 0.
    ///
    /// # Panics
    /// If the id is beyond the table's capacity.
    #[inline]
    pub fn get(&self, id: NextHopId) -> NextHop {
        let s = &*self.shared;
        let i = id.0 as usize;
        let w = s.nh[i].load(Acquire);
        let port = w as u16;
        let kind = match (w >> KIND_SHIFT) & KIND_MASK {
            KIND_GW4 => {
                NextHopKind::Gateway(IpAddr::V4(Ipv4Addr::from(s.gw_lo[i].load(Relaxed) as u32)))
            }
            KIND_GW6 => {
                let a = u128::from(s.gw_hi[i].load(Relaxed)) << 64
                    | u128::from(s.gw_lo[i].load(Relaxed));
                NextHopKind::Gateway(IpAddr::V6(Ipv6Addr::from(a)))
            }
            KIND_CONNECTED => NextHopKind::Connected,
            KIND_LOCAL => NextHopKind::Local,
            _ => NextHopKind::Blackhole,
        };
        NextHop { port, kind }
    }

    /// The port and class of next hop `id`, from its one word: the fast
    /// path's read, where [`get`](Self::get) also loads a gateway's
    /// address from two more arrays (wanted only to solicit it).
    ///
    /// # Panics
    /// If the id is beyond the table's capacity.
    #[inline]
    pub fn port_class(&self, id: NextHopId) -> (u16, HopClass) {
        let w = self.shared.nh[id.0 as usize].load(Acquire);
        let class = match (w >> KIND_SHIFT) & KIND_MASK {
            KIND_GW4 | KIND_GW6 => HopClass::Gateway,
            KIND_CONNECTED => HopClass::Connected,
            KIND_LOCAL => HopClass::Local,
            _ => HopClass::Blackhole,
        };
        (w as u16, class)
    }

    /// The next hop a flow with hash `flow_hash` takes for `target`.
    ///
    /// For a group of `n` members the member is `(hash * n) >> 32`
    /// (Lemire's multiply-shift range reduction): uniform for a uniform hash,
    /// one multiply instead of a division, and a pure function of the hash,
    /// so one flow always takes one path. It uses the hash's high bits, so
    /// the hash must mix into those (see [`crate::flow_hash`]).
    ///
    /// # Panics
    /// If a group id is beyond the capacity. A group id never added reads as
    /// next hop 0 (a caller bug, as for [`get`](Self::get)).
    #[inline]
    pub fn resolve(&self, target: Target, flow_hash: u32) -> NextHopId {
        if !target.is_group() {
            return NextHopId(target.index());
        }
        let s = &*self.shared;
        let w = s.groups[target.index() as usize].load(Acquire);
        let n = (w >> KIND_SHIFT) as u32 & COUNT_MASK;
        let first = w as u32 as usize;
        if n == 0 {
            return NextHopId(0);
        }
        let k = ((u64::from(flow_hash) * u64::from(n)) >> 32) as usize;
        NextHopId(s.members[first + k].load(Relaxed))
    }

    /// Members of a group, in order (empty for an unknown group).
    pub fn group_members(&self, id: GroupId) -> impl Iterator<Item = NextHopId> + '_ {
        let s = &*self.shared;
        let w = s.groups.get(id.0 as usize).map_or(0, |g| g.load(Acquire));
        let n = ((w >> KIND_SHIFT) as u32 & COUNT_MASK) as usize;
        let first = w as u32 as usize;
        s.members[first..first + n]
            .iter()
            .map(|m| NextHopId(m.load(Relaxed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gw(a: &str, port: u16) -> NextHop {
        NextHop {
            port,
            kind: NextHopKind::Gateway(a.parse().unwrap()),
        }
    }

    #[test]
    fn add_get_dedupe() {
        let (mut w, r) = NextHopTable::with_capacity(8, 4, 16);
        let a = w.add(gw("198.18.0.1", 1)).unwrap();
        let b = w.add(gw("2001:2::1", 2)).unwrap();
        let c = w
            .add(NextHop {
                port: 3,
                kind: NextHopKind::Connected,
            })
            .unwrap();
        let l = w
            .add(NextHop {
                port: 0,
                kind: NextHopKind::Local,
            })
            .unwrap();
        assert_eq!(r.get(a), gw("198.18.0.1", 1));
        assert_eq!(r.get(b), gw("2001:2::1", 2));
        assert_eq!(r.get(c).kind, NextHopKind::Connected);
        assert_eq!(r.get(l).kind, NextHopKind::Local);
        for id in [a, b, c, l] {
            let hop = r.get(id);
            assert_eq!(r.port_class(id), (hop.port, hop.kind.class()), "{hop:?}");
        }
        assert_eq!(w.find_or_add(gw("198.18.0.1", 1)).unwrap(), a);
        assert_ne!(w.find_or_add(gw("198.18.0.1", 2)).unwrap(), a);
        let g = w.add_group(&[a, b, c]).unwrap();
        assert_eq!(w.add_group(&[a, b, c]).unwrap(), g);
        assert_ne!(w.add_group(&[a, b]).unwrap(), g);
        assert_eq!(r.group_members(g).collect::<Vec<_>>(), vec![a, b, c]);
        assert!(w.add_group(&[]).is_err());
        assert!(w.add_group(&[NextHopId(7)]).is_err());
        assert_eq!(r.resolve(Target::next_hop(b), 12345), b);
        for h in [0u32, 1 << 31, u32::MAX] {
            let m = r.resolve(Target::group(g), h);
            assert!([a, b, c].contains(&m));
            assert_eq!(m, r.resolve(Target::group(g), h));
        }
        // capacity
        for _ in w.len()..8 {
            w.add(gw("198.18.0.9", 9)).unwrap();
        }
        assert!(matches!(
            w.add(gw("198.18.0.9", 9)),
            Err(FibError::CapacityExhausted { .. })
        ));
    }

    #[test]
    fn resolve_spreads_over_members() {
        let (mut w, r) = NextHopTable::with_capacity(8, 8, 64);
        let ids: Vec<_> = (0..8)
            .map(|p| w.add(gw("198.18.0.1", p)).unwrap())
            .collect();
        for n in 2..=8 {
            let g = w.add_group(&ids[..n]).unwrap();
            let mut count = [0u32; 8];
            let flows = 80_000u32;
            for f in 0..flows {
                let h = crate::flow_hash::flow_hash_v4(
                    0xc612_0000 | f,
                    0xc613_0001,
                    17,
                    1024 + (f % 7) as u16,
                    80,
                );
                count[r.resolve(Target::group(g), h).0 as usize] += 1;
            }
            let expect = flows / n as u32;
            for &c in &count[..n] {
                assert!(
                    (c as i64 - expect as i64).abs() < (expect / 20) as i64,
                    "n={n} {count:?}"
                );
            }
        }
    }

    #[test]
    fn retired_ids_are_reused_only_after_a_grace_period() {
        let (mut w, r) = NextHopTable::with_capacity(4, 2, 8);
        let epoch = r.register();
        let ids: Vec<_> = (0..4)
            .map(|i| w.add(gw(&format!("198.18.0.{i}"), 0)).unwrap())
            .collect();
        assert!(w.add(gw("198.18.0.9", 0)).is_err(), "full");
        w.retire(ids[1]).unwrap();
        assert!(w.retire(ids[1]).is_err(), "twice");
        assert_eq!((w.len(), w.retired()), (3, 1));
        // The retired entry still reads as before for readers in flight.
        assert_eq!(r.get(ids[1]), gw("198.18.0.1", 0));
        // Not reusable until the registered reader passes a quiescent point.
        assert!(w.add(gw("198.18.0.9", 0)).is_err());
        // find_or_add no longer returns the retired id.
        assert!(w.find_or_add(gw("198.18.0.1", 0)).is_err());
        epoch.quiescent();
        let n = w.add(gw("198.18.0.9", 1)).unwrap();
        assert_eq!(n, ids[1], "reused after the grace period");
        assert_eq!(r.get(n), gw("198.18.0.9", 1));
        assert_eq!(w.find_or_add(gw("198.18.0.9", 1)).unwrap(), n);
        // Group members cannot be retired.
        let g = w.add_group(&[ids[0], ids[2]]).unwrap();
        assert!(w.retire(ids[0]).is_err());
        assert_eq!(r.group_members(g).count(), 2);
        // A retired id cannot join a group.
        w.retire(ids[3]).unwrap();
        assert!(w.add_group(&[ids[3]]).is_err());
        // Without registered readers the grace period is immediate.
        drop(epoch);
        assert_eq!(w.add(gw("198.18.0.10", 0)).unwrap(), ids[3]);
    }

    #[test]
    fn removed_groups_free_their_members_after_a_grace_period() {
        let (mut w, r) = NextHopTable::with_capacity(8, 2, 6);
        let epoch = r.register();
        let ids: Vec<_> = (0..4)
            .map(|i| w.add(gw(&format!("198.18.0.{i}"), 0)).unwrap())
            .collect();
        let g = w.add_group(&ids[..3]).unwrap();
        let h = w.add_group(&ids[1..3]).unwrap();
        assert_eq!(w.groups(), 2);
        assert!(w.add_group(&ids[2..4]).is_err(), "no group id left");
        assert_eq!(w.remove_group(g).unwrap(), ids[..3].to_vec());
        assert!(w.remove_group(g).is_err(), "twice");
        assert_eq!(w.groups(), 1);
        // ids[0] is in no group now; ids[1] still is (in h).
        w.retire(ids[0]).unwrap();
        assert!(w.retire(ids[1]).is_err());
        // Readers in flight still read the removed group's members.
        assert_eq!(r.group_members(g).count(), 3);
        assert!(
            w.add_group(&ids[2..4]).is_err(),
            "not before the grace period"
        );
        epoch.quiescent();
        let k = w.add_group(&ids[2..4]).unwrap();
        assert_eq!(k, g, "the group id is reused");
        assert_eq!(r.group_members(k).collect::<Vec<_>>(), ids[2..4].to_vec());
        assert_eq!(r.group_members(h).collect::<Vec<_>>(), ids[1..3].to_vec());
        // Member slots coalesce: after both go, one group of 6 fits.
        w.remove_group(h).unwrap();
        w.remove_group(k).unwrap();
        drop(epoch);
        let all = [ids[1], ids[2], ids[3], ids[1], ids[2], ids[3]];
        let big = w.add_group(&all).unwrap();
        assert_eq!(r.group_members(big).count(), 6);
        for id in [ids[1], ids[2]] {
            assert!(w.retire(id).is_err(), "in a group");
        }
        w.remove_group(big).unwrap();
        for id in &ids[1..] {
            w.retire(*id).unwrap();
        }
        assert_eq!((w.len(), w.groups()), (0, 0));
    }
}
