//! IPv4 updates: the single writer's side of DIR-24-8.
//!
//! The writer keeps, for every entry, the length + 1 of the prefix whose
//! target the entry holds (`depth`, 0 = no route). Then:
//!
//! * insert p/len: every entry in p's range whose depth <= len + 1 takes the
//!   new target (a longer prefix's entries are left alone; an equal depth is
//!   the same prefix being replaced).
//! * remove p/len: every entry in p's range whose depth == len + 1 takes the
//!   next-shorter covering route from the rules table (or "no route").
//! * prefixes longer than /24 live in a tbl8 group, created on demand as a
//!   copy of the tbl24 entry it replaces and freed (after a grace period)
//!   once it only holds /24-or-shorter routes again. Such routes cover the
//!   whole /24, so all 256 entries of that group are then equal and the
//!   group collapses back into one tbl24 entry.
//!
//! Each store is a single atomic word, so a concurrent reader sees every
//! entry either before or after the update.

use std::sync::atomic::Ordering::{Relaxed, Release};

use super::Lpm4Writer;
use crate::entry::{group, is_ext, route, GROUP_SIZE, PAYLOAD};
use crate::lpm::{check_target, Family as _};
use crate::{FibError, Prefix4, Target};

impl Lpm4Writer {
    /// Install a route, replacing the target if the prefix already exists.
    /// Host bits of `prefix` are ignored.
    pub fn insert(&mut self, prefix: Prefix4, target: Target) -> Result<(), FibError> {
        let (addr, len) = prefix.network()?;
        check_target(target)?;
        let d = len + 1;
        if len <= 24 {
            let (first, count) = ((addr >> 8) as usize, 1usize << (24 - len));
            self.set_range24(first, count, |x| x <= d, route(target), d);
        } else {
            self.insert_long(addr, len, route(target))?;
        }
        self.rules.insert(addr, len, target);
        Ok(())
    }

    /// Remove a route; returns its target, or `None` if it was not
    /// installed. Addresses it covered fall back to the next-shorter
    /// covering route.
    pub fn remove(&mut self, prefix: Prefix4) -> Result<Option<Target>, FibError> {
        let (addr, len) = prefix.network()?;
        let Some((old, rv, rd)) = self.rules.remove(addr, len) else {
            return Ok(None);
        };
        let d = len + 1;
        if len <= 24 {
            let (first, count) = ((addr >> 8) as usize, 1usize << (24 - len));
            self.set_range24(first, count, |x| x == d, rv, rd);
        } else {
            self.remove_long(addr, len, rv, rd);
        }
        Ok(Some(old))
    }

    /// Write `val`/`depth` into every entry of tbl24[first..first+count]
    /// (descending into tbl8 groups) whose depth satisfies `cond`.
    fn set_range24(
        &mut self,
        first: usize,
        count: usize,
        cond: impl Fn(u8) -> bool,
        val: u32,
        depth: u8,
    ) {
        let t = &*self.tables;
        for i in first..first + count {
            let e = t.tbl24[i].load(Relaxed);
            if is_ext(e) {
                let base = (e & PAYLOAD) as usize * GROUP_SIZE;
                for j in base..base + GROUP_SIZE {
                    if cond(self.depth8[j]) {
                        t.tbl8[j].store(val, Release);
                        self.depth8[j] = depth;
                    }
                }
            } else if cond(self.depth24[i]) {
                t.tbl24[i].store(val, Release);
                self.depth24[i] = depth;
            }
        }
    }

    fn insert_long(&mut self, addr: u32, len: u8, val: u32) -> Result<(), FibError> {
        let t = &*self.tables;
        let i24 = (addr >> 8) as usize;
        let (lo, count) = ((addr & 0xff) as usize, 1usize << (32 - len));
        let d = len + 1;
        let e = t.tbl24[i24].load(Relaxed);
        if is_ext(e) {
            let base = (e & PAYLOAD) as usize * GROUP_SIZE;
            for j in base + lo..base + lo + count {
                if self.depth8[j] <= d {
                    t.tbl8[j].store(val, Release);
                    self.depth8[j] = d;
                }
            }
            return Ok(());
        }
        let g = self.groups.alloc(&t.qsbr).ok_or(FibError::Tbl8Exhausted {
            capacity: (t.tbl8.len() / GROUP_SIZE) as u32,
        })?;
        // Fill the whole group before publishing it: readers cannot reach it
        // until the Release store below, so Relaxed stores suffice here.
        let base = g as usize * GROUP_SIZE;
        let d24 = self.depth24[i24];
        for j in 0..GROUP_SIZE {
            let (v, dv) = if (lo..lo + count).contains(&j) {
                (val, d)
            } else {
                (e, d24)
            };
            t.tbl8[base + j].store(v, Relaxed);
            self.depth8[base + j] = dv;
        }
        t.tbl24[i24].store(group(g), Release);
        self.depth24[i24] = 0;
        Ok(())
    }

    fn remove_long(&mut self, addr: u32, len: u8, rv: u32, rd: u8) {
        let t = &*self.tables;
        let i24 = (addr >> 8) as usize;
        let (lo, count) = ((addr & 0xff) as usize, 1usize << (32 - len));
        let d = len + 1;
        let e = t.tbl24[i24].load(Relaxed);
        debug_assert!(is_ext(e), "a route longer than /24 without a tbl8 group");
        let g = e & PAYLOAD;
        let base = g as usize * GROUP_SIZE;
        for j in base + lo..base + lo + count {
            if self.depth8[j] == d {
                t.tbl8[j].store(rv, Release);
                self.depth8[j] = rd;
            }
        }
        // Only /24-or-shorter routes left: all 256 entries are equal, so the
        // group folds back into tbl24. Readers already inside it still read
        // correct values; reuse waits for the grace period.
        if self.depth8[base..base + GROUP_SIZE]
            .iter()
            .all(|&x| x <= 25)
        {
            t.tbl24[i24].store(t.tbl8[base].load(Relaxed), Release);
            self.depth24[i24] = self.depth8[base];
            self.groups.retire(&t.qsbr, g);
        }
    }
}
