//! Per-worker counters and their snapshots.
//!
//! Each worker owns one [`WorkerStats`]; it is the only writer, and updates
//! with a Relaxed load + Relaxed store (plain `mov`s on x86, no
//! lock-prefixed read-modify-write). Other threads read at any time through
//! [`WorkerStats::snapshot`]; snapshots of several workers are summed with
//! [`StatsSnapshot::merge`].
//!
//! # Accounting identity
//!
//! Every received frame ends in exactly one bucket:
//!
//! ```text
//! rx_packets (sum over ports) = forwarded + local + held + sum(drops[r] for input reasons r)
//! ```
//!
//! * `forwarded`: received and handed to an egress TX stage (a fragmented
//!   packet counts once here, its fragments in `fragments`);
//! * `local`: consumed by the router (ARP, NS/NA, echo requests answered);
//! * `held`: currently waiting in a hold queue for neighbor resolution (a
//!   gauge: it goes down when the packet is sent, counted `forwarded`, or
//!   dropped, counted `neighbor_unresolved` / `held_at_shutdown`);
//! * `drops`: input reasons ([`DropReason::is_input`]).
//!
//! On the output side, frames the router made itself are `generated`
//! (echo replies, ARP replies and requests, NA/NS, ICMP errors), and
//!
//! ```text
//! tx_packets (sum over ports) = forwarded - fragmented + fragments + generated - drops[tx_full]
//! ```
//!
//! `icmp_rate_limited` and `reply_no_buffer` count errors not generated;
//! they are in neither identity.

use crate::drop::DropReason;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A single-writer counter.
#[derive(Default)]
#[repr(transparent)]
pub struct Counter(AtomicU64);

impl Counter {
    #[inline(always)]
    pub fn add(&self, n: u64) {
        self.0.store(self.0.load(Relaxed).wrapping_add(n), Relaxed);
    }
    #[inline(always)]
    pub fn sub(&self, n: u64) {
        self.0.store(self.0.load(Relaxed).wrapping_sub(n), Relaxed);
    }
    #[inline(always)]
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

#[derive(Default)]
pub struct PortStats {
    pub rx_packets: Counter,
    pub tx_packets: Counter,
    pub rx_bytes: Counter,
    pub tx_bytes: Counter,
}

/// One worker's counters.
pub struct WorkerStats {
    pub ports: Box<[PortStats]>,
    pub drops: Box<[Counter]>,
    pub forwarded: Counter,
    pub local: Counter,
    pub held: Counter,
    pub generated: Counter,
    pub fragmented: Counter,
    pub fragments: Counter,
    pub cycles_rx: Counter,
    pub cycles_process: Counter,
    pub cycles_tx: Counter,
    pub cycles_packets: Counter,
}

impl WorkerStats {
    pub fn new(ports: usize) -> WorkerStats {
        WorkerStats {
            ports: (0..ports).map(|_| PortStats::default()).collect(),
            drops: (0..DropReason::COUNT).map(|_| Counter::default()).collect(),
            forwarded: Counter::default(),
            local: Counter::default(),
            held: Counter::default(),
            generated: Counter::default(),
            fragmented: Counter::default(),
            fragments: Counter::default(),
            cycles_rx: Counter::default(),
            cycles_process: Counter::default(),
            cycles_tx: Counter::default(),
            cycles_packets: Counter::default(),
        }
    }

    #[inline(always)]
    pub fn count_drop(&self, r: DropReason) {
        self.drops[r as usize].add(1);
    }

    #[inline(always)]
    pub fn drop_n(&self, r: DropReason, n: u64) {
        self.drops[r as usize].add(n);
    }

    /// A copy of the counters (non-zero drop reasons only).
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            ports: self
                .ports
                .iter()
                .map(|p| PortCounters {
                    rx_packets: p.rx_packets.get(),
                    tx_packets: p.tx_packets.get(),
                    rx_bytes: p.rx_bytes.get(),
                    tx_bytes: p.tx_bytes.get(),
                })
                .collect(),
            drops: DropReason::ALL
                .iter()
                .filter_map(|&r| {
                    let v = self.drops[r as usize].get();
                    (v > 0).then_some((r.name(), v))
                })
                .collect(),
            cycles: StageCycles {
                rx: self.cycles_rx.get(),
                process: self.cycles_process.get(),
                tx: self.cycles_tx.get(),
                packets: self.cycles_packets.get(),
            },
            forwarded: self.forwarded.get(),
            local: self.local.get(),
            held: self.held.get(),
            generated: self.generated.get(),
            fragmented: self.fragmented.get(),
            fragments: self.fragments.get(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PortCounters {
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
}

/// TSC cycles spent per stage, and the packets they were spent on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StageCycles {
    pub rx: u64,
    pub process: u64,
    pub tx: u64,
    pub packets: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StatsSnapshot {
    pub ports: Vec<PortCounters>,
    /// Reason name -> count (only reasons that occurred).
    pub drops: BTreeMap<&'static str, u64>,
    pub cycles: StageCycles,
    pub forwarded: u64,
    pub local: u64,
    pub held: u64,
    pub generated: u64,
    pub fragmented: u64,
    pub fragments: u64,
}

impl StatsSnapshot {
    pub fn merge(&mut self, other: &StatsSnapshot) {
        if self.ports.len() < other.ports.len() {
            self.ports
                .resize(other.ports.len(), PortCounters::default());
        }
        for (a, b) in self.ports.iter_mut().zip(&other.ports) {
            a.rx_packets += b.rx_packets;
            a.tx_packets += b.tx_packets;
            a.rx_bytes += b.rx_bytes;
            a.tx_bytes += b.tx_bytes;
        }
        for (k, v) in &other.drops {
            *self.drops.entry(k).or_default() += v;
        }
        self.cycles.rx += other.cycles.rx;
        self.cycles.process += other.cycles.process;
        self.cycles.tx += other.cycles.tx;
        self.cycles.packets += other.cycles.packets;
        self.forwarded += other.forwarded;
        self.local += other.local;
        self.held += other.held;
        self.generated += other.generated;
        self.fragmented += other.fragmented;
        self.fragments += other.fragments;
    }

    /// Cycles per packet in the rx, process and tx stages.
    pub fn cycles_per_packet(&self) -> (f64, f64, f64) {
        let n = self.cycles.packets.max(1) as f64;
        (
            self.cycles.rx as f64 / n,
            self.cycles.process as f64 / n,
            self.cycles.tx as f64 / n,
        )
    }

    pub fn rx_packets(&self) -> u64 {
        self.ports.iter().map(|p| p.rx_packets).sum()
    }

    pub fn tx_packets(&self) -> u64 {
        self.ports.iter().map(|p| p.tx_packets).sum()
    }

    pub fn drop_count(&self, r: DropReason) -> u64 {
        self.drops.get(r.name()).copied().unwrap_or(0)
    }

    /// Sum of the input drop reasons.
    pub fn input_drops(&self) -> u64 {
        DropReason::ALL
            .iter()
            .filter(|r| r.is_input())
            .map(|&r| self.drop_count(r))
            .sum()
    }

    /// Checks both accounting identities (see the module documentation).
    pub fn check_identity(&self) -> Result<(), String> {
        let rx = self.rx_packets();
        let accounted = self.forwarded + self.local + self.held + self.input_drops();
        if rx != accounted {
            return Err(format!(
                "rx {rx} != forwarded {} + local {} + held {} + input drops {} ({:?})",
                self.forwarded,
                self.local,
                self.held,
                self.input_drops(),
                self.drops
            ));
        }
        let tx = self.tx_packets();
        let out = (self.forwarded + self.fragments + self.generated)
            .wrapping_sub(self.fragmented + self.drop_count(DropReason::TxFull));
        if tx != out {
            return Err(format!(
                "tx {tx} != forwarded {} - fragmented {} + fragments {} + generated {} - tx_full {}",
                self.forwarded,
                self.fragmented,
                self.fragments,
                self.generated,
                self.drop_count(DropReason::TxFull)
            ));
        }
        Ok(())
    }
}
