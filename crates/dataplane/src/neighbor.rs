//! Neighbour entries: one per next hop, readable by every worker without
//! locks; the model follows RFC 4861 section 7.3 (and Linux's `neighbour`
//! code, which applies it to ARP as well).
//!
//! # Where entries come from
//!
//! An entry is indexed by the [`fib::NextHopId`] of a `Gateway` next hop.
//! *Permanent* entries are the gateways of routes and the static
//! neighbours: they live as long as the router. A destination on a
//! connected subnet gets a *dynamic* host entry on first use: the slow path
//! (`neigh_table`, under the control lock) adds a `Gateway(destination)`
//! next hop and a /32 (/128) host route to it, so the next packet to that
//! host finds its entry with the ordinary FIB lookup. A dynamic entry is
//! also created, already holding a MAC, when a host on a connected subnet
//! resolves one of the router's addresses (ARP request or NS to us, RFC 826
//! / RFC 4861 7.2.3). Nothing else creates entries.
//!
//! # What may be learned (RFC 826, RFC 4861 7.2)
//!
//! * Only unicast, non-zero link-layer addresses, and only for addresses on
//!   one of the receiving port's subnets that are not the router's own, a
//!   subnet's IPv4 network or broadcast address or IPv6 Subnet-Router
//!   anycast address, nor multicast, loopback or unspecified.
//! * ARP: an existing entry is updated from any ARP packet whose sender it
//!   is (the RFC 826 merge); an entry is created only from a request whose
//!   target is one of our addresses. Replies (solicited or not) and
//!   gratuitous ARP never create entries. A reply addressed to us confirms
//!   reachability; everything else only updates the MAC (STALE).
//! * ND: an NS for one of our addresses creates or updates its source's
//!   entry (STALE); an NA only updates an existing entry: REACHABLE if
//!   Solicited, a different MAC only with Override (7.2.5).
//! * A frame claiming one of the router's own addresses (sender, source or
//!   NA target) is never learned; it is counted `neighbor_own_address` and
//!   the router defends the address with one gratuitous ARP / unsolicited
//!   NA per port and family every [`DEFEND_INTERVAL_MS`] (RFC 5227 2.4).
//!
//! # States and timers
//!
//! | state | usable | leaves on |
//! |---|---|---|
//! | INCOMPLETE | no: packets are held | an answer (REACHABLE / STALE); failure after [`RESOLVE_WINDOW_MS`] |
//! | REACHABLE | yes | confirmation older than the reachable time (`router.neighbor_timeout`): STALE |
//! | STALE | yes, and each use within a probe round sends at most one unicast probe per [`SOLICIT_INTERVAL_MS`] | confirmation; failure after [`RESOLVE_WINDOW_MS`] of unanswered probes |
//! | STATIC | yes | never |
//!
//! An INCOMPLETE entry solicits (broadcast ARP / multicast NS) once per
//! [`SOLICIT_INTERVAL_MS`], [`SOLICIT_RETRIES`] times after the first, then
//! *fails*: held packets get an ICMP host/address unreachable. A failed
//! permanent entry restarts resolution on its next packet. A failed dynamic
//! entry drops packets (`neighbor_unresolved`) until the garbage collector
//! removes it; the next packet to that host then starts afresh (subject to
//! the rate limit below), so a dead host costs one resolution per
//! [`NeighLimits::failed_keep_ms`] + window, not one per packet.
//!
//! # Bounds and garbage collection (Linux `gc_thresh` model)
//!
//! Dynamic entries are bounded *per port* ([`NeighLimits`]), so a sweep
//! arriving for one port cannot take the entries of another:
//!
//! * `max_per_port` (gc_thresh3) is a hard limit; creating an entry at the
//!   limit runs a forced collection first (at most every 100 ms: it scans
//!   the port's entries), which evicts failed entries and then entries
//!   unused for [`FORCED_GC_IDLE_MS`], least recently used first, down to
//!   `gc_soft`; entries in use or still resolving are never evicted, so
//!   when nothing can go the new destination is dropped
//!   (`neighbor_table_full`).
//! * above `gc_soft` (gc_thresh2) a forced collection also runs at most
//!   every [`FORCED_GC_IDLE_MS`];
//! * a periodic collection every `gc_interval_ms`, run by whichever worker
//!   notices it is due (under `try_lock`, never waiting), removes entries
//!   failed for `failed_keep_ms` and, while the port has more than
//!   `gc_min` (gc_thresh1) entries, entries unused for `stale_ms`
//!   (gc_staletime).
//! * New resolutions (entries created by traffic) and passively learned
//!   entries are each limited per port by a token bucket of `resolve_rate`
//!   / `learn_rate` per second (one second of burst). Beyond it the packet
//!   is dropped (`neighbor_rate_limited`); a lock-free "closed until" time
//!   per port keeps a sweep from contending for the control lock.
//!
//! So a sweep can hold at most about `resolve_rate x (window + keep)`
//! entries of its egress port, and once it stops every one of them is gone
//! within window + keep + one GC interval.
//!
//! Removing a dynamic entry removes its host route, marks the entry DEAD,
//! bumps its incarnation ([`NeighEntry::life`]) and retires its next-hop id
//! ([`fib::NextHopWriter::retire`]): the id is reused only after every
//! worker has passed a quiescent point (QSBR, once per poll round). Hold
//! queues keep ids across rounds, so they remember the incarnation and
//! give up on an entry that was removed under them.
//!
//! # The entry
//!
//! * `word`: MAC (48 bits) | state (3 bits) | generation (13 bits), stored
//!   with `Release` by whoever learns the MAC and loaded with `Acquire` on
//!   the fast path: one load tells a worker whether and where to send;
//! * `confirmed_ms`: when reachability was last confirmed;
//! * `solicited_ms`: when the last solicitation or probe was sent (+1, 0 =
//!   never). Workers that want to solicit CAS it forward; only the winner
//!   sends, so N workers send one request per interval, not N;
//! * `since_ms`: start of the current resolution or probe round (+1, 0 =
//!   none);
//! * `used_ms`: last use by the fast path (written at most once a second);
//! * `life`: incarnation, bumped on removal and on reuse of the id.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

pub const STATE_INCOMPLETE: u64 = 0;
pub const STATE_REACHABLE: u64 = 1;
pub const STATE_STATIC: u64 = 2;
pub const STATE_STALE: u64 = 3;
/// Removed by the garbage collector; the id awaits reuse.
pub const STATE_DEAD: u64 = 4;

const MAC_MASK: u64 = 0xffff_ffff_ffff;
const STATE_SHIFT: u32 = 48;
const GEN_SHIFT: u32 = 51;
const GEN_MASK: u64 = 0x1fff;

/// Solicitation (and probe) retry interval.
pub const SOLICIT_INTERVAL_MS: u64 = 1000;
/// Retries after the first solicitation before the entry fails.
pub const SOLICIT_RETRIES: u64 = 3;
/// From the first solicitation (or probe) to failure.
pub const RESOLVE_WINDOW_MS: u64 = (1 + SOLICIT_RETRIES) * SOLICIT_INTERVAL_MS;
/// A forced collection evicts entries unused for this long (Linux: 5 s).
pub const FORCED_GC_IDLE_MS: u64 = 5000;
/// At most one defence of an address per port and family in this interval
/// (RFC 5227 DEFEND_INTERVAL).
pub const DEFEND_INTERVAL_MS: u64 = 10_000;
/// `used_ms` is refreshed when older than this.
const TOUCH_MS: u64 = 1000;

/// Bounds and timers of the dynamic neighbour entries (see the module
/// documentation). Defaults follow Linux's ARP/ND tables, per port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NeighLimits {
    /// gc_thresh1: below this many dynamic entries on a port, idle entries
    /// are not collected.
    pub gc_min: u32,
    /// gc_thresh2: above this, creating an entry runs a forced collection
    /// at most every [`FORCED_GC_IDLE_MS`].
    pub gc_soft: u32,
    /// gc_thresh3: hard limit of dynamic entries per port. The router caps
    /// it so that all ports together use at most half of the next-hop
    /// table.
    pub max_per_port: u32,
    /// gc_staletime: idle entries older than this are collected.
    pub stale_ms: u64,
    /// Failed dynamic entries are kept (dropping their packets) this long.
    pub failed_keep_ms: u64,
    /// Period of the background collection.
    pub gc_interval_ms: u64,
    /// New resolutions started by traffic, per port and second.
    pub resolve_rate: u32,
    /// Entries created by ARP requests / NSs to us, per port and second.
    pub learn_rate: u32,
}

impl Default for NeighLimits {
    fn default() -> Self {
        NeighLimits {
            gc_min: 128,
            gc_soft: 1024,
            max_per_port: 2048,
            stale_ms: 60_000,
            failed_keep_ms: 3000,
            gc_interval_ms: 1000,
            resolve_rate: 256,
            learn_rate: 256,
        }
    }
}

/// What the fast path does with a packet for an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// Send to this MAC.
    Send([u8; 6]),
    /// Send to this MAC; the entry is STALE: probe it (at most one probe
    /// per interval, [`NeighEntry::try_solicit`]).
    Probe([u8; 6]),
    /// Resolution in progress: hold the packet (and solicit).
    Hold,
    /// Resolution failed or the entry is gone.
    Failed,
}

/// How a received ARP/ND frame may change an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Learn {
    /// Create the entry if there is none (ARP request / NS to us).
    pub create: bool,
    /// The frame confirms reachability (a reply to us, a solicited NA).
    pub confirm: bool,
    /// A different MAC replaces the known one (always for ARP; the NA
    /// Override flag).
    pub overrides: bool,
}

/// What the garbage collector sees of an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcView {
    /// Resolution or probing failed this long ago.
    Failed(u64),
    /// Resolving, or never touched by the GC (static, dead).
    Busy,
    /// Usable; unused for this long.
    Idle(u64),
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

/// True for a MAC a neighbour may have: unicast and not all-zero.
#[inline]
pub fn unicast_mac(mac: [u8; 6]) -> bool {
    mac[0] & 1 == 0 && mac != [0; 6]
}

#[inline]
fn state_of(w: u64) -> u64 {
    (w >> STATE_SHIFT) & 7
}

#[inline]
fn word(mac: u64, state: u64, gen: u64) -> u64 {
    (mac & MAC_MASK) | state << STATE_SHIFT | (gen & GEN_MASK) << GEN_SHIFT
}

/// One cache line, `#[repr(C)]`: the XDP fast path reads the same entries
/// (`struct fp_neigh` in `crates/fastpath/bpf/fwd.h`, compiled against the
/// C header generated from [`layout`], which asserts it).
#[derive(Default)]
#[repr(C, align(64))]
pub struct NeighEntry {
    word: AtomicU64,
    confirmed_ms: AtomicU64,
    solicited_ms: AtomicU64,
    since_ms: AtomicU64,
    used_ms: AtomicU64,
    life: AtomicU32,
    dynamic: AtomicBool,
}

// SAFETY: atomics only; all-zero is `NeighEntry::default()` (INCOMPLETE,
// no MAC, life 0, not dynamic).
unsafe impl fib::memory::Zeroed for NeighEntry {}

/// The entry as the XDP fast path reads it: where its fields are (bytes)
/// and what its word holds. The one description of both sides: the C
/// header of the BPF programs is generated from it (`sr_layout.h`, see
/// `crates/fastpath/tests/vocabulary.rs`).
pub mod layout {
    use super::NeighEntry;
    use std::mem::{offset_of, size_of};
    pub const SIZE: usize = size_of::<NeighEntry>();
    pub const WORD: usize = offset_of!(NeighEntry, word);
    pub const CONFIRMED_MS: usize = offset_of!(NeighEntry, confirmed_ms);
    pub const USED_MS: usize = offset_of!(NeighEntry, used_ms);
    /// The MAC's bits in the word.
    pub const MAC_MASK: u64 = super::MAC_MASK;
    pub const STATE_SHIFT: u32 = super::STATE_SHIFT;
    /// The state's bits (after [`STATE_SHIFT`]): up to the generation.
    pub const STATE_MASK: u64 = (1 << (super::GEN_SHIFT - STATE_SHIFT)) - 1;
    pub const STATE_REACHABLE: u64 = super::STATE_REACHABLE;
    pub const STATE_STATIC: u64 = super::STATE_STATIC;
    /// `used_ms` is refreshed when older than this.
    pub const TOUCH_MS: u64 = super::TOUCH_MS;
}

impl NeighEntry {
    pub fn state(&self) -> u64 {
        state_of(self.word.load(Ordering::Acquire))
    }

    /// The MAC the entry holds (meaningful once resolved).
    pub fn mac(&self) -> [u8; 6] {
        u64_to_mac(self.word.load(Ordering::Acquire))
    }

    pub fn generation(&self) -> u64 {
        self.word.load(Ordering::Acquire) >> GEN_SHIFT
    }

    /// Incarnation: changes when the entry is removed and when its id is
    /// reused.
    #[inline]
    pub fn life(&self) -> u32 {
        self.life.load(Ordering::Acquire)
    }

    pub fn is_dynamic(&self) -> bool {
        self.dynamic.load(Ordering::Relaxed)
    }

    /// When a fast path (either tier) last sent to it, on the workers'
    /// clock (ms; refreshed at most once a second).
    pub fn used_ms(&self) -> u64 {
        self.used_ms.load(Ordering::Relaxed)
    }

    /// The start of the current probe round of a STALE (or aged
    /// REACHABLE) entry, if one is running: a `since_ms` left over from
    /// before the last confirmation does not count.
    #[inline]
    fn probe_start(&self, st: u64, reachable_ms: u64) -> u64 {
        let s = self.since_ms.load(Ordering::Relaxed);
        if st == STATE_REACHABLE
            && s <= self
                .confirmed_ms
                .load(Ordering::Relaxed)
                .saturating_add(reachable_ms)
                .saturating_add(1)
        {
            return 0;
        }
        s
    }

    /// What to do with a packet for this entry at `now_ms`. Starts the
    /// resolution or probe round when there is none.
    #[inline]
    pub fn lookup(&self, now_ms: u64, reachable_ms: u64) -> Use {
        let w = self.word.load(Ordering::Acquire);
        let st = state_of(w);
        let mac = u64_to_mac(w);
        let stale = match st {
            STATE_STATIC => return Use::Send(mac),
            STATE_REACHABLE => {
                let c = self.confirmed_ms.load(Ordering::Relaxed);
                if now_ms.saturating_sub(c) <= reachable_ms {
                    return Use::Send(mac);
                }
                true
            }
            STATE_STALE => true,
            STATE_INCOMPLETE => false,
            _ => return Use::Failed,
        };
        let s = if stale {
            self.probe_start(st, reachable_ms)
        } else {
            self.since_ms.load(Ordering::Relaxed)
        };
        let pending = if stale { Use::Probe(mac) } else { Use::Hold };
        if s == 0 {
            let raw = self.since_ms.load(Ordering::Relaxed);
            let _ = self.since_ms.compare_exchange(
                raw,
                now_ms + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            return pending;
        }
        if (now_ms + 1).saturating_sub(s) < RESOLVE_WINDOW_MS {
            pending
        } else {
            Use::Failed
        }
    }

    /// Records a use by the fast path (coarsely: at most one store a
    /// second, so a busy entry's cache line stays shared).
    #[inline]
    pub fn touch(&self, now_ms: u64) {
        if now_ms.saturating_sub(self.used_ms.load(Ordering::Relaxed)) >= TOUCH_MS {
            self.used_ms.store(now_ms, Ordering::Relaxed);
        }
    }

    /// The MAC to send to, if the entry is usable at `now_ms` (REACHABLE,
    /// STALE within its probe round, STATIC).
    pub fn resolve(&self, now_ms: u64, reachable_ms: u64) -> Option<[u8; 6]> {
        match self.lookup(now_ms, reachable_ms) {
            Use::Send(m) | Use::Probe(m) => Some(m),
            _ => None,
        }
    }

    pub fn set_static(&self, mac: [u8; 6]) {
        let gen = self.generation() + 1;
        self.dynamic.store(false, Ordering::Relaxed);
        self.word
            .store(word(mac_to_u64(mac), STATE_STATIC, gen), Ordering::Release);
    }

    /// A MAC from the kernel's neighbour table (`[kernel] local`): STATIC,
    /// since the kernel confirms and ages it, but `dynamic` is kept, so a
    /// connected host's entry still goes when the kernel forgets it. A
    /// dead entry stays dead; the same MAC changes nothing.
    pub fn set_kernel(&self, mac: [u8; 6]) {
        let w = self.word.load(Ordering::Acquire);
        let m = mac_to_u64(mac);
        match state_of(w) {
            STATE_DEAD => return,
            STATE_STATIC if w & MAC_MASK == m => return,
            _ => {}
        }
        self.since_ms.store(0, Ordering::Relaxed);
        self.word.store(
            word(m, STATE_STATIC, (w >> GEN_SHIFT) + 1),
            Ordering::Release,
        );
    }

    /// Makes a dynamic entry permanent (a route now uses it).
    pub fn pin(&self) {
        self.dynamic.store(false, Ordering::Relaxed);
    }

    /// Makes a permanent entry dynamic again (no route holds it any more;
    /// the collector ages it like any other).
    pub fn unpin(&self) {
        self.dynamic.store(true, Ordering::Relaxed);
    }

    /// Prepares the entry for a (re)used id: INCOMPLETE, no MAC, a new
    /// incarnation. `resolving`: the resolution starts now (an entry
    /// created by traffic); otherwise it starts on first use.
    pub fn reset(&self, dynamic: bool, now_ms: u64, resolving: bool) {
        self.life.fetch_add(1, Ordering::AcqRel);
        self.dynamic.store(dynamic, Ordering::Relaxed);
        self.confirmed_ms.store(0, Ordering::Relaxed);
        self.solicited_ms.store(0, Ordering::Relaxed);
        self.since_ms
            .store(if resolving { now_ms + 1 } else { 0 }, Ordering::Relaxed);
        self.used_ms.store(now_ms, Ordering::Relaxed);
        let gen = self.generation() + 1;
        self.word
            .store(word(0, STATE_INCOMPLETE, gen), Ordering::Release);
    }

    /// Marks the entry removed: never usable again until [`reset`](Self::reset).
    pub fn retire(&self) {
        let gen = self.generation() + 1;
        self.word.store(word(0, STATE_DEAD, gen), Ordering::Release);
        self.life.fetch_add(1, Ordering::AcqRel);
    }

    /// Restarts the resolution of a failed permanent entry. Returns true
    /// if this call restarted it (one winner among racing workers).
    pub fn restart(&self, now_ms: u64, reachable_ms: u64) -> bool {
        if self.is_dynamic() || self.lookup(now_ms, reachable_ms) != Use::Failed {
            return false;
        }
        let s = self.since_ms.load(Ordering::Relaxed);
        if self
            .since_ms
            .compare_exchange(s, now_ms + 1, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        let w = self.word.load(Ordering::Acquire);
        if matches!(state_of(w), STATE_STATIC | STATE_DEAD) {
            return false;
        }
        self.solicited_ms.store(0, Ordering::Relaxed);
        let gen = (w >> GEN_SHIFT) + 1;
        self.word
            .store(word(0, STATE_INCOMPLETE, gen), Ordering::Release);
        true
    }

    /// Learns `mac` as `how` allows (RFC 4861 7.2.5 / RFC 826 merge).
    /// Static and dead entries never change. Returns true if the entry
    /// now holds `mac`.
    pub fn learn(&self, mac: [u8; 6], how: Learn, now_ms: u64) -> bool {
        let w = self.word.load(Ordering::Acquire);
        let st = state_of(w);
        if matches!(st, STATE_STATIC | STATE_DEAD) {
            return false;
        }
        let m = mac_to_u64(mac);
        let has_mac = matches!(st, STATE_REACHABLE | STATE_STALE);
        let same = has_mac && w & MAC_MASK == m;
        let gen = w >> GEN_SHIFT;
        if has_mac && !same && !how.overrides {
            if st == STATE_REACHABLE {
                self.word
                    .store(word(w, STATE_STALE, gen), Ordering::Release);
            }
            return false;
        }
        if how.confirm {
            self.confirmed_ms.store(now_ms, Ordering::Relaxed);
            self.since_ms.store(0, Ordering::Relaxed);
            self.solicited_ms.store(0, Ordering::Relaxed);
            let gen = if same { gen } else { gen + 1 };
            self.word
                .store(word(m, STATE_REACHABLE, gen), Ordering::Release);
            return true;
        }
        if same {
            return true;
        }
        // A new MAC without confirmation: STALE (usable, probed on use).
        self.since_ms.store(0, Ordering::Relaxed);
        self.solicited_ms.store(0, Ordering::Relaxed);
        self.word
            .store(word(m, STATE_STALE, gen + 1), Ordering::Release);
        true
    }

    /// Confirms the known MAC (a solicited NA without a Target Link-Layer
    /// Address option, RFC 4861 7.2.5): REACHABLE again. Only entries that
    /// have a MAC (REACHABLE, STALE) change. Returns true if it did.
    pub fn confirm(&self, now_ms: u64) -> bool {
        let w = self.word.load(Ordering::Acquire);
        if !matches!(state_of(w), STATE_REACHABLE | STATE_STALE) {
            return false;
        }
        self.confirmed_ms.store(now_ms, Ordering::Relaxed);
        self.since_ms.store(0, Ordering::Relaxed);
        self.solicited_ms.store(0, Ordering::Relaxed);
        self.word
            .store(word(w, STATE_REACHABLE, w >> GEN_SHIFT), Ordering::Release);
        true
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

    /// The garbage collector's view at `now_ms`.
    pub fn gc_view(&self, now_ms: u64, reachable_ms: u64) -> GcView {
        let w = self.word.load(Ordering::Acquire);
        let st = state_of(w);
        let s = match st {
            STATE_INCOMPLETE => self.since_ms.load(Ordering::Relaxed),
            STATE_REACHABLE | STATE_STALE => self.probe_start(st, reachable_ms),
            _ => return GcView::Busy,
        };
        if s != 0 {
            let failed_at = s - 1 + RESOLVE_WINDOW_MS;
            if now_ms >= failed_at {
                return GcView::Failed(now_ms - failed_at);
            }
            if st == STATE_INCOMPLETE {
                return GcView::Busy;
            }
        } else if st == STATE_INCOMPLETE {
            // Not started (never used): as idle as its creation.
        }
        GcView::Idle(now_ms.saturating_sub(self.used_ms.load(Ordering::Relaxed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIRM: Learn = Learn {
        create: false,
        confirm: true,
        overrides: true,
    };
    const UPDATE: Learn = Learn {
        create: false,
        confirm: false,
        overrides: true,
    };

    #[test]
    fn learn_resolve_stale_probe_fail_static() {
        let e = NeighEntry::default();
        e.reset(false, 0, false);
        assert_eq!(e.lookup(0, 1000), Use::Hold, "starts resolving");
        assert!(e.learn([2, 0, 0, 0, 0, 9], CONFIRM, 100));
        assert_eq!(e.lookup(500, 1000), Use::Send([2, 0, 0, 0, 0, 9]));
        // Aged: still usable while probed, then failed.
        assert_eq!(e.lookup(1101, 1000), Use::Probe([2, 0, 0, 0, 0, 9]));
        assert_eq!(
            e.lookup(1101 + RESOLVE_WINDOW_MS - 1, 1000),
            Use::Probe([2, 0, 0, 0, 0, 9])
        );
        assert_eq!(e.lookup(1101 + RESOLVE_WINDOW_MS, 1000), Use::Failed);
        assert!(matches!(
            e.gc_view(1101 + RESOLVE_WINDOW_MS + 5, 1000),
            GcView::Failed(5)
        ));
        // A confirmation ends the probe round.
        let g = e.generation();
        assert!(e.learn([2, 0, 0, 0, 0, 10], CONFIRM, 6000));
        assert_eq!(e.generation(), g + 1);
        assert_eq!(e.lookup(6500, 1000), Use::Send([2, 0, 0, 0, 0, 10]));
        // A permanent failed entry restarts; a dynamic one does not.
        let t = 7001 + RESOLVE_WINDOW_MS;
        assert_eq!(e.lookup(7001, 1000), Use::Probe([2, 0, 0, 0, 0, 10]));
        assert_eq!(e.lookup(t, 1000), Use::Failed);
        assert!(e.restart(t, 1000));
        assert_eq!(e.lookup(t, 1000), Use::Hold);
        e.set_static([2, 0, 0, 0, 0, 1]);
        assert!(!e.learn([2, 0, 0, 0, 0, 2], CONFIRM, 3000));
        assert_eq!(e.resolve(u64::MAX / 2, 1), Some([2, 0, 0, 0, 0, 1]));
    }

    #[test]
    fn unconfirmed_information_makes_stale_entries() {
        let e = NeighEntry::default();
        e.reset(true, 0, true);
        assert_eq!(e.lookup(10, 60_000), Use::Hold);
        // An unsolicited update fills an INCOMPLETE entry as STALE.
        assert!(e.learn([2, 0, 0, 0, 0, 9], UPDATE, 20));
        assert_eq!(e.state(), STATE_STALE);
        assert_eq!(e.lookup(30, 60_000), Use::Probe([2, 0, 0, 0, 0, 9]));
        // The same MAC again does not confirm; a solicited answer does.
        assert!(e.learn([2, 0, 0, 0, 0, 9], UPDATE, 40));
        assert_eq!(e.state(), STATE_STALE);
        assert!(e.learn([2, 0, 0, 0, 0, 9], CONFIRM, 50));
        assert_eq!(e.lookup(60, 60_000), Use::Send([2, 0, 0, 0, 0, 9]));
        // NA without Override: a different MAC is not taken, REACHABLE
        // becomes STALE (RFC 4861 7.2.5).
        let no_o = Learn {
            create: false,
            confirm: true,
            overrides: false,
        };
        assert!(!e.learn([2, 0, 0, 0, 0, 7], no_o, 70));
        assert_eq!(e.state(), STATE_STALE);
        assert_eq!(e.resolve(80, 60_000), Some([2, 0, 0, 0, 0, 9]));
        // A solicited NA without a target address option confirms it.
        assert_eq!(e.lookup(90, 60_000), Use::Probe([2, 0, 0, 0, 0, 9]));
        assert!(e.confirm(100));
        assert_eq!(e.lookup(110, 60_000), Use::Send([2, 0, 0, 0, 0, 9]));
        assert_eq!(
            e.lookup(100 + RESOLVE_WINDOW_MS * 2, 60_000),
            Use::Send([2, 0, 0, 0, 0, 9])
        );
        // ... but never fills an entry without a MAC.
        let f = NeighEntry::default();
        f.reset(true, 0, true);
        assert!(!f.confirm(10));
        assert_eq!(f.lookup(20, 60_000), Use::Hold);
    }

    #[test]
    fn incomplete_fails_after_the_window_and_dead_entries_stay_dead() {
        let e = NeighEntry::default();
        e.reset(true, 1000, true);
        let life = e.life();
        assert_eq!(e.lookup(1000, 60_000), Use::Hold);
        assert_eq!(
            e.gc_view(1000 + RESOLVE_WINDOW_MS - 1, 60_000),
            GcView::Busy
        );
        assert_eq!(e.lookup(1000 + RESOLVE_WINDOW_MS, 60_000), Use::Failed);
        assert!(!e.restart(1000 + RESOLVE_WINDOW_MS, 60_000), "dynamic");
        e.retire();
        assert_ne!(e.life(), life);
        assert_eq!(e.lookup(0, 60_000), Use::Failed);
        assert!(!e.learn([2, 0, 0, 0, 0, 1], CONFIRM, 0));
        assert_eq!(e.gc_view(0, 60_000), GcView::Busy);
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

    #[test]
    fn special_macs_are_not_unicast() {
        assert!(unicast_mac([2, 0, 0, 0, 0, 1]));
        assert!(!unicast_mac([0xff; 6]));
        assert!(!unicast_mac([1, 0, 0x5e, 0, 0, 1]));
        assert!(!unicast_mac([0x33, 0x33, 0, 0, 0, 1]));
        assert!(!unicast_mac([0; 6]));
    }
}
