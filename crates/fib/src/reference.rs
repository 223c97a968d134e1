//! A simple, obviously correct LPM to test the real ones against.
//!
//! One hash map per prefix length; a lookup tries every length from the
//! longest down and returns the first hit. Slow (up to 33 or 129 probes) and
//! that is the point: nothing here can be subtly wrong.

use std::collections::HashMap;

use crate::prefix::{mask4, mask6};
use crate::{Prefix4, Prefix6, Target};

/// Reference LPM for both families.
#[derive(Debug, Clone)]
pub struct ReferenceLpm {
    v4: Vec<HashMap<u32, Target>>,
    v6: Vec<HashMap<u128, Target>>,
}

impl Default for ReferenceLpm {
    fn default() -> Self {
        Self::new()
    }
}

impl ReferenceLpm {
    /// An empty table.
    pub fn new() -> Self {
        ReferenceLpm {
            v4: vec![HashMap::new(); 33],
            v6: vec![HashMap::new(); 129],
        }
    }

    /// Insert or replace; returns the previous target.
    pub fn insert4(&mut self, p: Prefix4, t: Target) -> Option<Target> {
        self.v4[p.len as usize].insert(p.bits() & mask4(p.len), t)
    }

    /// Remove; returns the removed target.
    pub fn remove4(&mut self, p: Prefix4) -> Option<Target> {
        self.v4[p.len as usize].remove(&(p.bits() & mask4(p.len)))
    }

    /// Longest-prefix match of a host-order address.
    pub fn lookup4(&self, addr: u32) -> Option<Target> {
        (0..=32u8)
            .rev()
            .filter(|&l| !self.v4[l as usize].is_empty())
            .find_map(|l| self.v4[l as usize].get(&(addr & mask4(l))).copied())
    }

    /// Insert or replace; returns the previous target.
    pub fn insert6(&mut self, p: Prefix6, t: Target) -> Option<Target> {
        self.v6[p.len as usize].insert(p.bits() & mask6(p.len), t)
    }

    /// Remove; returns the removed target.
    pub fn remove6(&mut self, p: Prefix6) -> Option<Target> {
        self.v6[p.len as usize].remove(&(p.bits() & mask6(p.len)))
    }

    /// Longest-prefix match of a host-order address.
    pub fn lookup6(&self, addr: u128) -> Option<Target> {
        (0..=128u8)
            .rev()
            .filter(|&l| !self.v6[l as usize].is_empty())
            .find_map(|l| self.v6[l as usize].get(&(addr & mask6(l))).copied())
    }

    /// Number of IPv4 and IPv6 routes.
    pub fn len(&self) -> (usize, usize) {
        (
            self.v4.iter().map(HashMap::len).sum(),
            self.v6.iter().map(HashMap::len).sum(),
        )
    }

    /// True if the table holds no route.
    pub fn is_empty(&self) -> bool {
        self.len() == (0, 0)
    }
}
