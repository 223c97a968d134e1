//! What a queue knows about frames its worker never saw: frames lost
//! before the worker received them (oversize frames, the kernel's AF_XDP
//! and AF_PACKET drops), frames the kernel discarded after the worker sent
//! them, and kernel events that are not frames at all.
//!
//! Queues keep these counters cumulative since they were opened and hand
//! them out through [`crate::RxQueue::counters`] and
//! [`crate::TxQueue::counters`]. Reading them may cost a system call
//! (`getsockopt`), so a worker reads them off the fast path: every few
//! milliseconds at the end of a round, when a statistics snapshot is
//! requested, and once more at shutdown (after `release`, which counts
//! frames left unread in a ring).

/// What a counter counts, which decides where it appears in statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterKind {
    /// Frames that reached the port and were lost before a worker got
    /// them: part of the port's `received` and of its input drops.
    RxDrop,
    /// Frames a worker handed to the port that the kernel then discarded:
    /// an output drop, outside the input accounting identity.
    TxDrop,
    /// A kernel event count, not a number of frames (e.g. "the fill ring
    /// was found empty"): reported, but in no identity.
    Event,
}

macro_rules! queue_counters {
    ($($variant:ident => $name:literal, $kind:ident;)*) => {
        /// One counter a queue keeps. The discriminant indexes
        /// [`QueueCounters`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum QueueCounter { $($variant,)* }

        impl QueueCounter {
            /// Every counter, in index order.
            pub const ALL: &'static [QueueCounter] = &[$(QueueCounter::$variant,)*];
            /// Number of counters.
            pub const COUNT: usize = Self::ALL.len();

            /// The snake_case name used in statistics.
            pub const fn name(self) -> &'static str {
                match self { $(QueueCounter::$variant => $name,)* }
            }

            pub const fn kind(self) -> CounterKind {
                match self { $(QueueCounter::$variant => CounterKind::$kind,)* }
            }

            /// The counter called `name`, if any.
            pub fn from_name(name: &str) -> Option<QueueCounter> {
                Self::ALL.iter().copied().find(|c| c.name() == name)
            }
        }
    };
}

queue_counters! {
    // Any backend: a frame larger than a pool buffer (pcap, mem: a frame
    // of the capture; afpacket: a frame longer than the ring slot or the
    // buffer). AF_XDP's kernel counts these in `xdp_rx_dropped`.
    RxOversize => "rx_oversize", RxDrop;
    // Frames already in a queue's ring when the worker stopped (AF_XDP RX
    // ring, AF_PACKET blocks): received by the kernel for softrouter,
    // never processed.
    RxUnreadAtShutdown => "rx_unread_at_shutdown", RxDrop;
    // AF_XDP, `getsockopt(SOL_XDP, XDP_STATISTICS)` of the RX socket.
    // rx_dropped: no free UMEM frame (fill ring empty, copy mode) or frame
    // larger than a UMEM frame.
    XdpRxDropped => "xdp_rx_dropped", RxDrop;
    // rx_ring_full: the RX ring was full (the worker fell behind).
    XdpRxRingFull => "xdp_rx_ring_full", RxDrop;
    // rx_invalid_descs: invalid descriptors on the RX ring.
    XdpRxInvalidDescs => "xdp_rx_invalid_descs", RxDrop;
    // rx_fill_ring_empty_descs: times the kernel wanted a frame from the
    // fill ring and found it empty. Not frames: in copy mode each such
    // frame is also in xdp_rx_dropped; in zero-copy mode the NIC drops it.
    XdpRxFillRingEmptyDescs => "xdp_rx_fill_ring_empty_descs", Event;
    // tx_invalid_descs: TX descriptors the kernel rejected (frame larger
    // than the device MTU, bad address): sent by a worker, never on the wire.
    XdpTxInvalidDescs => "xdp_tx_invalid_descs", TxDrop;
    // tx_ring_empty_descs: times the kernel looked at the TX ring and found
    // nothing to send (a kick with nothing queued). Not frames.
    XdpTxRingEmptyDescs => "xdp_tx_ring_empty_descs", Event;
    // AF_PACKET, `getsockopt(SOL_PACKET, PACKET_STATISTICS)` `tp_drops`:
    // frames the kernel could not put in the socket's ring (no free block).
    // The kernel resets its counter on every read; the queue accumulates.
    AfPacketTpDrops => "afpacket_tp_drops", RxDrop;
}

/// A queue's counters, cumulative since it was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounters([u64; QueueCounter::COUNT]);

impl QueueCounters {
    #[inline]
    pub fn get(&self, c: QueueCounter) -> u64 {
        self.0[c as usize]
    }

    #[inline]
    pub fn set(&mut self, c: QueueCounter, v: u64) {
        self.0[c as usize] = v;
    }

    #[inline]
    pub fn add(&mut self, c: QueueCounter, v: u64) {
        self.0[c as usize] = self.0[c as usize].wrapping_add(v);
    }

    /// Every counter with its value (zeros included), in index order.
    pub fn iter(&self) -> impl Iterator<Item = (QueueCounter, u64)> + '_ {
        QueueCounter::ALL.iter().map(|&c| (c, self.get(c)))
    }

    /// Sum of the counters of one kind.
    pub fn total(&self, kind: CounterKind) -> u64 {
        self.iter()
            .filter(|(c, _)| c.kind() == kind)
            .map(|(_, v)| v)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_snake_case_and_found_by_name() {
        let mut seen = std::collections::HashSet::new();
        for (i, c) in QueueCounter::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
            assert!(seen.insert(c.name()));
            assert!(c
                .name()
                .chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_'));
            assert_eq!(QueueCounter::from_name(c.name()), Some(*c));
        }
        assert_eq!(QueueCounter::from_name("no_such_counter"), None);
    }

    #[test]
    fn totals_by_kind() {
        let mut q = QueueCounters::default();
        q.add(QueueCounter::XdpRxRingFull, 3);
        q.add(QueueCounter::RxOversize, 2);
        q.set(QueueCounter::XdpTxInvalidDescs, 5);
        q.set(QueueCounter::XdpRxFillRingEmptyDescs, 7);
        assert_eq!(q.total(CounterKind::RxDrop), 5);
        assert_eq!(q.total(CounterKind::TxDrop), 5);
        assert_eq!(q.total(CounterKind::Event), 7);
    }
}
