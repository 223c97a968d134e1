//! What a route points to: one next hop, or an ECMP group of them.

use crate::nexthop::{GroupId, NextHopId};

/// A route's target, packed in 30 bits so that it fits in an LPM entry next
/// to the entry's valid and extension bits.
///
/// Bit 29 says "ECMP group"; bits 0..29 hold the next-hop or group index.
/// [`crate::nexthop::NextHopReader::resolve`] turns it into one next hop for
/// a given flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Target(pub u32);

impl Target {
    /// Bit that marks an ECMP group.
    pub const GROUP_BIT: u32 = 1 << 29;
    /// Largest next-hop or group index a target can hold.
    pub const MAX_INDEX: u32 = Self::GROUP_BIT - 1;
    /// Every valid target is below this (30 bits).
    pub const LIMIT: u32 = 1 << 30;

    /// A target that is a single next hop.
    ///
    /// # Panics
    /// If the id does not fit in 29 bits (the next-hop table never hands
    /// out such ids).
    pub fn next_hop(id: NextHopId) -> Target {
        assert!(
            id.0 <= Self::MAX_INDEX,
            "next-hop id {} beyond 29 bits",
            id.0
        );
        Target(id.0)
    }

    /// A target that is an ECMP group.
    ///
    /// # Panics
    /// If the id does not fit in 29 bits.
    pub fn group(id: GroupId) -> Target {
        assert!(id.0 <= Self::MAX_INDEX, "group id {} beyond 29 bits", id.0);
        Target(id.0 | Self::GROUP_BIT)
    }

    /// True if this target is an ECMP group.
    #[inline]
    pub fn is_group(self) -> bool {
        self.0 & Self::GROUP_BIT != 0
    }

    /// The next-hop or group index.
    #[inline]
    pub fn index(self) -> u32 {
        self.0 & Self::MAX_INDEX
    }

    /// True if the raw value fits in 30 bits (what the LPMs accept).
    #[inline]
    pub fn is_valid(self) -> bool {
        self.0 < Self::LIMIT
    }
}
