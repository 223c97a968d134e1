//! IPv6 updates: the DIR-24-8 writer rules (see `lpm4/update.rs`) applied
//! level by level.
//!
//! A group at start bit `s` covers address bits `s..s + 8`. A prefix of
//! length `len` is written into the level with `s < len <= s + 8` (or tbl24
//! if `len <= 24`), over 2^(s + 8 - len) entries; entries on the way that
//! point to deeper groups are descended into, so a shorter route reaches
//! every leaf it covers. Groups on the path are created on demand (a copy of
//! the parent entry, published with `Release` after being filled) and folded
//! back into the parent when they only hold routes of length <= `s`, which
//! then cover the whole group and are all equal.

use std::sync::atomic::Ordering::{Relaxed, Release};

use super::Lpm6Writer;
use crate::entry::{group, is_ext, route, GROUP_SIZE, PAYLOAD};
use crate::lpm::{check_target, Family as _};
use crate::{FibError, Prefix6, Target};

/// An entry of either table.
#[derive(Clone, Copy)]
enum Slot {
    Top(usize),
    Tbl8(usize),
}

/// The 8 address bits a group at start bit `s` is indexed by.
#[inline]
fn byte_at(addr: u128, s: u32) -> usize {
    (addr >> (120 - s)) as usize & 0xff
}

impl Lpm6Writer {
    /// Install a route, replacing the target if the prefix already exists.
    /// Host bits of `prefix` are ignored.
    pub fn insert(&mut self, prefix: Prefix6, target: Target) -> Result<(), FibError> {
        let (addr, len) = prefix.network()?;
        check_target(target)?;
        let (val, d) = (route(target), len + 1);
        if len <= 24 {
            let first = (addr >> 104) as usize;
            for i in first..first + (1usize << (24 - len)) {
                self.set(Slot::Top(i), &|x| x <= d, val, d);
            }
        } else {
            let i = (addr >> 104) as usize;
            let g = self.child(Slot::Top(i))?;
            if let Err(e) = self.insert_in(g, 24, addr, len, val) {
                self.try_fold(Slot::Top(i), g, 24);
                return Err(e);
            }
        }
        self.rules.insert(addr, len, target);
        Ok(())
    }

    /// Remove a route; returns its target, or `None` if it was not
    /// installed. Addresses it covered fall back to the next-shorter
    /// covering route.
    pub fn remove(&mut self, prefix: Prefix6) -> Result<Option<Target>, FibError> {
        let (addr, len) = prefix.network()?;
        let Some((old, rv, rd)) = self.rules.remove(addr, len) else {
            return Ok(None);
        };
        let d = len + 1;
        if len <= 24 {
            let first = (addr >> 104) as usize;
            for i in first..first + (1usize << (24 - len)) {
                self.set(Slot::Top(i), &|x| x == d, rv, rd);
            }
        } else {
            let i = (addr >> 104) as usize;
            let e = self.load(Slot::Top(i));
            debug_assert!(is_ext(e), "a route longer than /24 without a group");
            self.remove_in(e & PAYLOAD, 24, addr, len, rv, rd);
            self.try_fold(Slot::Top(i), e & PAYLOAD, 24);
        }
        Ok(Some(old))
    }

    fn load(&self, s: Slot) -> u32 {
        match s {
            Slot::Top(i) => self.tables.tbl24[i].load(Relaxed),
            Slot::Tbl8(i) => self.tables.tbl8[i].load(Relaxed),
        }
    }

    fn depth(&self, s: Slot) -> u8 {
        match s {
            Slot::Top(i) => self.depth24[i],
            Slot::Tbl8(i) => self.depth8[i],
        }
    }

    /// Store an entry for readers to see (`Release`: a group it points to,
    /// and next-hop entries its target names, are complete before it).
    fn store(&mut self, s: Slot, v: u32, d: u8) {
        match s {
            Slot::Top(i) => {
                self.tables.tbl24[i].store(v, Release);
                self.depth24[i] = d;
            }
            Slot::Tbl8(i) => {
                self.tables.tbl8[i].store(v, Release);
                self.depth8[i] = d;
            }
        }
    }

    /// Write `val`/`depth` into this entry, or every leaf below it, where
    /// the depth satisfies `cond`.
    fn set(&mut self, s: Slot, cond: &dyn Fn(u8) -> bool, val: u32, depth: u8) {
        let e = self.load(s);
        if is_ext(e) {
            let base = (e & PAYLOAD) as usize * GROUP_SIZE;
            for j in base..base + GROUP_SIZE {
                self.set(Slot::Tbl8(j), cond, val, depth);
            }
        } else if cond(self.depth(s)) {
            self.store(s, val, depth);
        }
    }

    /// The group below entry `s`, creating it (as 256 copies of the entry)
    /// if the entry is a leaf.
    fn child(&mut self, s: Slot) -> Result<u32, FibError> {
        let e = self.load(s);
        if is_ext(e) {
            return Ok(e & PAYLOAD);
        }
        let t = &*self.tables;
        let g = self.groups.alloc(&t.qsbr).ok_or(FibError::Tbl8Exhausted {
            capacity: (t.tbl8.len() / GROUP_SIZE) as u32,
        })?;
        let base = g as usize * GROUP_SIZE;
        let d = self.depth(s);
        // Not yet reachable by readers: Relaxed fill, then Release publish.
        for j in base..base + GROUP_SIZE {
            self.tables.tbl8[j].store(e, Relaxed);
            self.depth8[j] = d;
        }
        self.store(s, group(g), 0);
        Ok(g)
    }

    fn insert_in(&mut self, g: u32, s: u32, addr: u128, len: u8, val: u32) -> Result<(), FibError> {
        let base = g as usize * GROUP_SIZE;
        let idx = byte_at(addr, s);
        let d = len + 1;
        if u32::from(len) <= s + 8 {
            let count = 1usize << (s + 8 - u32::from(len));
            for j in base + idx..base + idx + count {
                self.set(Slot::Tbl8(j), &|x| x <= d, val, d);
            }
            Ok(())
        } else {
            let c = self.child(Slot::Tbl8(base + idx))?;
            let r = self.insert_in(c, s + 8, addr, len, val);
            if r.is_err() {
                // Out of groups further down: drop the groups this insert
                // created on the way (they only hold copies of their parent).
                self.try_fold(Slot::Tbl8(base + idx), c, s + 8);
            }
            r
        }
    }

    fn remove_in(&mut self, g: u32, s: u32, addr: u128, len: u8, rv: u32, rd: u8) {
        let base = g as usize * GROUP_SIZE;
        let idx = byte_at(addr, s);
        let d = len + 1;
        if u32::from(len) <= s + 8 {
            let count = 1usize << (s + 8 - u32::from(len));
            for j in base + idx..base + idx + count {
                self.set(Slot::Tbl8(j), &|x| x == d, rv, rd);
            }
        } else {
            let e = self.load(Slot::Tbl8(base + idx));
            debug_assert!(is_ext(e), "a route without its group");
            self.remove_in(e & PAYLOAD, s + 8, addr, len, rv, rd);
            self.try_fold(Slot::Tbl8(base + idx), e & PAYLOAD, s + 8);
        }
    }

    /// If group `g` (start bit `s`, below entry `parent`) holds only leaves
    /// of routes no longer than `s`, those are all the same route: put it
    /// back into the parent and retire the group.
    fn try_fold(&mut self, parent: Slot, g: u32, s: u32) {
        let base = g as usize * GROUP_SIZE;
        let t = &*self.tables;
        let foldable = (base..base + GROUP_SIZE)
            .all(|j| !is_ext(t.tbl8[j].load(Relaxed)) && u32::from(self.depth8[j]) <= s + 1);
        if foldable {
            let (v, d) = (t.tbl8[base].load(Relaxed), self.depth8[base]);
            self.store(parent, v, d);
            let t = &*self.tables;
            self.groups.retire(&t.qsbr, g);
        }
    }
}
