//! The counters of a statistics snapshot: one worker's, or summed over
//! workers. The datapath (`dataplane::stats`) fills them from its
//! per-worker counters and checks the identities between them
//! (`dataplane::accounting`); here they are plain data, so that a reader
//! of softrouter's statistics file needs no datapath.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The name of a drop reason, queue counter or event in a snapshot: the
/// router's own static name (`DropReason::name`, `QueueCounter::name`),
/// so counting allocates nothing, or an owned copy when a snapshot is read
/// back from statistics JSON (the bench reads softrouter's file this way).
pub type CounterName = Cow<'static, str>;

/// Output drop reason: frames the XDP tier redirected to a port whose
/// driver dropped them.
pub const XDP_XMIT_ERRORS: &str = "xdp_xmit_errors";
/// Output drop reason: the egress device's own `tx_dropped` (softrouter
/// reads it on ports served by the XDP tier).
pub const DEVICE_TX_DROPPED: &str = "device_tx_dropped";
/// The output drop reasons counted by the devices, not the workers.
pub const DEVICE_DROPS: [&str; 2] = [XDP_XMIT_ERRORS, DEVICE_TX_DROPPED];

/// The counters of one RX queue in a snapshot: non-zero values by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RxQueueReport {
    pub worker: usize,
    pub queue: u16,
    pub counters: BTreeMap<CounterName, u64>,
}

/// One port in a snapshot (see `dataplane::accounting` for the meaning
/// of each field and the identities between them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortCounters {
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    /// Frames that reached the port: `rx_packets` + port-side input drops.
    pub received: u64,
    pub forwarded: u64,
    pub local: u64,
    pub held: u64,
    /// Input drop reasons, the worker's and the port side's (non-zero).
    pub drops: BTreeMap<CounterName, u64>,
    /// Output drop reasons (non-zero).
    pub output_drops: BTreeMap<CounterName, u64>,
    /// Kernel events that are not frames (non-zero).
    pub events: BTreeMap<CounterName, u64>,
    /// Per RX queue detail of the port-side counters.
    pub rx_queues: Vec<RxQueueReport>,
}

impl PortCounters {
    // Sums wrap rather than panic: a broken gauge (a `held` that went
    // below zero) must show as a violation of the identity, not a crash.
    fn merge(&mut self, b: &PortCounters) {
        self.rx_packets = self.rx_packets.wrapping_add(b.rx_packets);
        self.tx_packets = self.tx_packets.wrapping_add(b.tx_packets);
        self.rx_bytes = self.rx_bytes.wrapping_add(b.rx_bytes);
        self.tx_bytes = self.tx_bytes.wrapping_add(b.tx_bytes);
        self.received = self.received.wrapping_add(b.received);
        self.forwarded = self.forwarded.wrapping_add(b.forwarded);
        self.local = self.local.wrapping_add(b.local);
        self.held = self.held.wrapping_add(b.held);
        for (mine, theirs) in [
            (&mut self.drops, &b.drops),
            (&mut self.output_drops, &b.output_drops),
            (&mut self.events, &b.events),
        ] {
            for (k, v) in theirs {
                let e = mine.entry(k.clone()).or_default();
                *e = e.wrapping_add(*v);
            }
        }
        self.rx_queues.extend(b.rx_queues.iter().cloned());
    }

    pub fn drop_count(&self, name: &str) -> u64 {
        self.drops
            .get(name)
            .or_else(|| self.output_drops.get(name))
            .copied()
            .unwrap_or(0)
    }
}

/// TSC cycles spent per stage, and the packets they were spent on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageCycles {
    pub rx: u64,
    pub process: u64,
    pub tx: u64,
    pub packets: u64,
}

/// The counters of one worker, or summed over workers. Serialized in
/// softrouter's statistics file ([`crate::report`]) and deserialized from
/// it by the bench.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsSnapshot {
    pub ports: Vec<PortCounters>,
    /// Reason name -> count over all ports (only reasons that occurred):
    /// input and output reasons, the worker's and the ports' (not events).
    pub drops: BTreeMap<CounterName, u64>,
    pub cycles: StageCycles,
    /// Sums over the ports.
    pub forwarded: u64,
    pub local: u64,
    pub held: u64,
    pub generated: u64,
    pub fragmented: u64,
    pub fragments: u64,
}

impl StatsSnapshot {
    /// Recomputes the totals that are sums over ports.
    pub fn sum_ports(&mut self) {
        let sum =
            |f: fn(&PortCounters) -> u64| self.ports.iter().fold(0u64, |a, p| a.wrapping_add(f(p)));
        self.forwarded = sum(|p| p.forwarded);
        self.local = sum(|p| p.local);
        self.held = sum(|p| p.held);
        self.drops.clear();
        for p in &self.ports {
            for (k, v) in p.drops.iter().chain(&p.output_drops) {
                let e = self.drops.entry(k.clone()).or_default();
                *e = e.wrapping_add(*v);
            }
        }
    }

    pub fn merge(&mut self, other: &StatsSnapshot) {
        if self.ports.len() < other.ports.len() {
            self.ports
                .resize(other.ports.len(), PortCounters::default());
        }
        for (a, b) in self.ports.iter_mut().zip(&other.ports) {
            a.merge(b);
        }
        self.cycles.rx += other.cycles.rx;
        self.cycles.process += other.cycles.process;
        self.cycles.tx += other.cycles.tx;
        self.cycles.packets += other.cycles.packets;
        self.generated += other.generated;
        self.fragmented += other.fragmented;
        self.fragments += other.fragments;
        self.sum_ports();
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
        self.ports
            .iter()
            .fold(0, |a, p| a.wrapping_add(p.rx_packets))
    }

    pub fn tx_packets(&self) -> u64 {
        self.ports
            .iter()
            .fold(0, |a, p| a.wrapping_add(p.tx_packets))
    }

    /// Frames that reached the ports, port-side drops included.
    pub fn received(&self) -> u64 {
        self.ports.iter().fold(0, |a, p| a.wrapping_add(p.received))
    }

    /// A drop reason's count over all ports, by its name (a `&str`, or
    /// the datapath's `DropReason`, which names itself).
    pub fn drop_count(&self, reason: impl AsRef<str>) -> u64 {
        self.drops.get(reason.as_ref()).copied().unwrap_or(0)
    }
}
