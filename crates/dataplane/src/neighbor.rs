//! The neighbor table: one entry per next hop, readable by every worker
//! without locks.
//!
//! An entry is indexed by the [`fib::NextHopId`] of a `Gateway` next hop.
//! Gateways of routes are next hops by construction; a destination on a
//! connected subnet gets its own *host entry* on first use: the slow path
//! takes the control lock, adds a `Gateway(destination)` next hop and a
//! /32 (/128) host route to it, so the next packet to that host finds its
//! entry with the ordinary FIB lookup.
//!
//! Each entry is three atomics:
//! * `word`: MAC (48 bits) | state (2 bits) | generation (14 bits), stored
//!   with `Release` by whoever learns the MAC and loaded with `Acquire` on
//!   the fast path: one load tells a worker whether and where to send;
//! * `confirmed_ms`: when a learned MAC was last confirmed (aging);
//! * `solicited_ms`: when the last solicitation was sent (+1, 0 = never).
//!   Workers that want to solicit CAS it forward; only the winner sends, so
//!   N workers with held packets send one request per interval, not N.
//!
//! Learning (ARP replies/requests to us, NAs, NSs) is rare and goes through
//! the control lock only to find the entry of an address; the update
//! itself is the atomic store above.

use std::sync::atomic::{AtomicU64, Ordering};

pub const STATE_INCOMPLETE: u64 = 0;
pub const STATE_REACHABLE: u64 = 1;
pub const STATE_STATIC: u64 = 2;

/// Solicitation retry interval.
pub const SOLICIT_INTERVAL_MS: u64 = 1000;
/// Retries after the first solicitation before held packets are dropped.
pub const SOLICIT_RETRIES: u64 = 3;

#[derive(Default)]
pub struct NeighEntry {
    word: AtomicU64,
    confirmed_ms: AtomicU64,
    solicited_ms: AtomicU64,
}

#[inline]
pub fn mac_to_u64(mac: [u8; 6]) -> u64 {
    let mut b = [0u8; 8];
    b[2..].copy_from_slice(&mac);
    u64::from_be_bytes(b)
}

#[inline]
pub fn u64_to_mac(v: u64) -> [u8; 6] {
    let b = v.to_be_bytes();
    [b[2], b[3], b[4], b[5], b[6], b[7]]
}

impl NeighEntry {
    /// The MAC to send to, if the entry is usable at `now_ms`.
    #[inline]
    pub fn resolve(&self, now_ms: u64, timeout_ms: u64) -> Option<[u8; 6]> {
        let w = self.word.load(Ordering::Acquire);
        match (w >> 48) & 3 {
            STATE_STATIC => Some(u64_to_mac(w)),
            STATE_REACHABLE => {
                let c = self.confirmed_ms.load(Ordering::Relaxed);
                (now_ms.saturating_sub(c) <= timeout_ms).then(|| u64_to_mac(w))
            }
            _ => None,
        }
    }

    pub fn state(&self) -> u64 {
        (self.word.load(Ordering::Acquire) >> 48) & 3
    }

    pub fn generation(&self) -> u64 {
        self.word.load(Ordering::Acquire) >> 50
    }

    pub fn set_static(&self, mac: [u8; 6]) {
        let gen = (self.generation() + 1) & 0x3fff;
        self.word.store(
            mac_to_u64(mac) | STATE_STATIC << 48 | gen << 50,
            Ordering::Release,
        );
    }

    /// Learns or confirms `mac`. Static entries are never changed.
    pub fn learn(&self, mac: [u8; 6], now_ms: u64) {
        let w = self.word.load(Ordering::Acquire);
        if (w >> 48) & 3 == STATE_STATIC {
            return;
        }
        self.confirmed_ms.store(now_ms, Ordering::Relaxed);
        let m = mac_to_u64(mac);
        if (w >> 48) & 3 == STATE_REACHABLE && w & 0xffff_ffff_ffff == m {
            // Same MAC: the confirmation time is enough, but publish it
            // with Release ordering so a reader that sees it sees the time.
            self.word.store(w, Ordering::Release);
            return;
        }
        let gen = ((w >> 50) + 1) & 0x3fff;
        self.word
            .store(m | STATE_REACHABLE << 48 | gen << 50, Ordering::Release);
        // A fresh answer ends the current solicitation cycle.
        self.solicited_ms.store(0, Ordering::Relaxed);
    }

    /// True if the caller won the right to send a solicitation now (none
    /// sent in the last interval). Lock-free; at most one winner per
    /// interval across all workers.
    pub fn try_solicit(&self, now_ms: u64) -> bool {
        let last = self.solicited_ms.load(Ordering::Relaxed);
        if last != 0 && now_ms + 1 < last + SOLICIT_INTERVAL_MS {
            return false;
        }
        self.solicited_ms
            .compare_exchange(last, now_ms + 1, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learn_resolve_age_static() {
        let e = NeighEntry::default();
        assert_eq!(e.resolve(0, 1000), None);
        e.learn([2, 0, 0, 0, 0, 9], 100);
        assert_eq!(e.resolve(500, 1000), Some([2, 0, 0, 0, 0, 9]));
        assert_eq!(e.resolve(1101, 1000), None, "aged out");
        let g = e.generation();
        e.learn([2, 0, 0, 0, 0, 10], 2000);
        assert_eq!(e.generation(), g + 1);
        e.set_static([2, 0, 0, 0, 0, 1]);
        e.learn([2, 0, 0, 0, 0, 2], 3000);
        assert_eq!(e.resolve(u64::MAX / 2, 1), Some([2, 0, 0, 0, 0, 1]));
    }

    #[test]
    fn one_solicitation_per_interval() {
        let e = NeighEntry::default();
        assert!(e.try_solicit(0));
        assert!(!e.try_solicit(0));
        assert!(!e.try_solicit(998));
        assert!(e.try_solicit(1000));
        assert!(!e.try_solicit(1500));
        assert!(e.try_solicit(2000));
    }
}
