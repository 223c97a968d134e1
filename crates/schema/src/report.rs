//! The statistics file written by `softrouter run --stats-json`: its
//! schema, as one type its writer (softrouter's `stats_file`, which fills
//! it from the workers' counters), the control socket (`ctl stats`, the
//! metrics endpoint) and its readers (the bench's softrouter launcher)
//! share.
//!
//! Why here and not in softrouter, which writes it: the bench reads the
//! file, and the bench cannot depend on softrouter (softrouter depends on
//! the bench, through its `bench` feature); nor should a reader link the
//! datapath that counts ([`crate::stats`] has the counters as data).
//!
//! Field names are part of the interface: the benchmark and users' scripts
//! read `elapsed_s`, `ports[].{name, rx_packets, tx_packets, rx_bytes,
//! tx_bytes}`, `drops`, `cycles_per_packet.{rx, process, tx}` and
//! `totals`.
//!
//! Each port also carries its accounting (`received`, `forwarded`,
//! `local`, `held`, `drops`, `output_drops`, `events`, `rx_queues`; see
//! `dataplane::accounting`), so that `received = forwarded + local + held +
//! sum(drops)` can be checked per port (`dataplane::assert_accounting`).
//!
//! Unknown fields are ignored when reading, so a reader built before a
//! field was added still reads the file.

use crate::stats::{PortCounters, StatsSnapshot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One port, summed over workers: traffic and the port's accounting
/// ([`PortCounters`], with the configured name).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct PortReport {
    pub name: String,
    /// The counters, flattened into the port's object (one list of
    /// fields: `PortCounters`'s). With the XDP tier on they count both
    /// tiers: what the program forwarded is in `rx_*`, `received` and
    /// `forwarded` of its ingress port and in `tx_*` of its egress port,
    /// so the accounting identity holds as without the tier.
    #[serde(flatten)]
    pub counters: PortCounters,
    /// The XDP tier's share, when it serves this port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_path: Option<FastPathPort>,
}

impl PortReport {
    pub fn new(name: String, counters: PortCounters) -> PortReport {
        PortReport {
            name,
            counters,
            fast_path: None,
        }
    }
}

/// The device-counted output drop reasons (defined with the counters, so
/// the accounting check needs no report).
pub use crate::stats::{DEVICE_DROPS, DEVICE_TX_DROPPED, XDP_XMIT_ERRORS};

/// What the XDP tier did on one port (softrouter's `fastpath` counters,
/// summed over CPUs).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct FastPathPort {
    /// Frames that arrived here and the program forwarded.
    pub forwarded: u64,
    pub forwarded_bytes: u64,
    /// Frames the program sent out of this port.
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Of those, frames this port's driver dropped (`xdp_xmit_errors` in
    /// the port's `output_drops`).
    #[serde(default)]
    pub xmit_drops: u64,
    /// Frames passed to the kernel's stack (`[kernel] local`: the router's
    /// traffic the workers do not answer, ARP, ND, multicast); the
    /// workers never see them, so they are in no identity.
    #[serde(default)]
    pub to_kernel: u64,
    /// Frames handed to the workers, by reason (non-zero).
    pub punted: BTreeMap<String, u64>,
    /// The program may redirect to this port now (its driver takes XDP
    /// frames); otherwise traffic to it goes through the workers.
    pub xdp_tx: bool,
    /// `native` or `generic`.
    pub mode: String,
}

impl FastPathPort {
    /// Frames punted, all reasons.
    pub fn punted_total(&self) -> u64 {
        self.punted.values().sum()
    }

    /// Adds the program's work to the port's counters (see
    /// [`PortReport::counters`]).
    pub fn merge_into(&self, c: &mut PortCounters) {
        c.rx_packets += self.forwarded;
        c.rx_bytes += self.forwarded_bytes;
        c.received += self.forwarded;
        c.forwarded += self.forwarded;
        c.tx_packets += self.tx_packets;
        c.tx_bytes += self.tx_bytes;
        if self.xmit_drops > 0 {
            *c.output_drops.entry(XDP_XMIT_ERRORS.into()).or_default() += self.xmit_drops;
        }
    }
}

/// Cycles per packet in each stage, and their sum.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Cycles {
    pub rx: f64,
    pub process: f64,
    pub tx: f64,
    pub total: f64,
}

/// The whole file.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Report {
    /// The version of the softrouter that wrote it.
    pub version: String,
    pub elapsed_s: f64,
    pub workers: usize,
    pub mode: String,
    /// `xdp` when the XDP tier served at least one port, else `off`.
    #[serde(default)]
    pub fast_path: String,
    pub ports: Vec<PortReport>,
    pub drops: BTreeMap<String, u64>,
    pub cycles_per_packet: Cycles,
    /// Times idle workers went to sleep (interrupt/adaptive modes).
    pub sleeps: u64,
    /// Anything accepted and not delivered, or other problems at exit.
    pub notes: Vec<String>,
    /// The summed worker counters in full.
    pub totals: StatsSnapshot,
    /// Each worker's counters.
    pub per_worker: Vec<StatsSnapshot>,
    /// Routes, neighbours and the kernel mirror, when the router runs
    /// (absent from statistics written by capture-only tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<ControlPlane>,
    /// The big regions (packet pools, FIB, next-hop and neighbour tables)
    /// and how much of each is on huge pages (`hugemem::report`); empty
    /// in files written by tools that allocate none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<MemoryRegion>,
}

/// One memory region (all live mappings of that name, e.g. one packet
/// pool per worker): its size and the bytes the kernel put on huge pages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryRegion {
    pub region: String,
    pub mappings: u64,
    pub bytes: u64,
    /// On explicit 2 MiB pages (`MAP_HUGETLB`).
    pub huge_explicit_bytes: u64,
    /// On transparent huge pages (`AnonHugePages` in `/proc/self/smaps`).
    pub huge_thp_bytes: u64,
}

impl MemoryRegion {
    /// Bytes on 4 KiB pages.
    pub fn small_bytes(&self) -> u64 {
        self.bytes
            .saturating_sub(self.huge_explicit_bytes + self.huge_thp_bytes)
    }
}

/// The routing state at the moment of the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ControlPlane {
    /// Routes installed (connected, local and the router's own included).
    pub routes_v4: u64,
    pub routes_v6: u64,
    /// Neighbour entries by state (`reachable`, `stale`, `static`, ...).
    pub neighbors: BTreeMap<String, u64>,
    /// The kernel routing-table mirror, if `[kernel] routes` is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_sync: Option<KernelSyncState>,
    /// The next-hop table's use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_hops: Option<NextHopUse>,
}

/// The next-hop table's use. Every neighbour entry is a next hop: the
/// gateways of routes, static neighbours and the dynamic entries of
/// hosts on connected subnets, besides two per port (connected, local).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NextHopUse {
    pub capacity: u64,
    /// Next hops in use.
    pub used: u64,
    /// Released and waiting for every reader's grace period before reuse.
    pub retired: u64,
    /// Gateway entries held by each source's routes and static neighbours
    /// (`config`, `ctl`, `kernel`), dynamic entries (`neighbor`), and the
    /// two per port (`port`).
    pub by_source: BTreeMap<String, u64>,
    /// The sources' limits (those that have one; `neighbor`: all ports'
    /// `max_per_port`, which the run-time sources leave free).
    pub limits: BTreeMap<String, u64>,
    /// ECMP groups in use, and their capacity.
    pub ecmp_groups: u64,
    pub ecmp_group_capacity: u64,
}

/// Where the kernel mirror stands.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelSyncState {
    /// Following the kernel's events (false: its thread stopped).
    pub following: bool,
    /// Routes the mirror installed and holds now.
    pub installed: u64,
    /// Kernel routes seen and not taken (no gateway, foreign interface,
    /// a configured prefix, a table that was full).
    pub skipped: u64,
    /// Times events were lost and the table dumped again.
    pub resyncs: u64,
}
