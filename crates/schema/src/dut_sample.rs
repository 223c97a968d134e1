//! What a DUT probe measured over one trial: a trial's `dut_stats` in the
//! results file (`docs/bench-results.md`), written by the bench's DUT
//! launchers (`dut`) and read by the bench's report and loss split.
//!
//! Why typed: the launchers and the report are different crates, and a
//! key renamed on one side must break the other's build, not leave a table
//! empty. Every section is optional because each DUT kind fills the ones it
//! can (only softrouter has `softrouter`, only a profiled kernel DUT
//! `stages`), and results files written before a section existed must
//! still be read. Keys a reader does not know are skipped, never an error.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::report::Cycles;
use crate::stats::StageCycles;

/// A trial's `dut_stats`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DutStats {
    /// The DUT kind that measured it (`softrouter`, `linux`, `bridge`...).
    #[serde(default)]
    pub kind: String,
    /// Frames the DUT's ports transmitted (bridge, ovs, floor: the DUTs
    /// without a forwarding counter of their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forwarded: Option<u64>,
    /// Frames the DUT itself dropped (its interfaces' `rx_dropped`, or
    /// softrouter's drop reasons summed): the loss split's `dut_drops`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<u64>,
    /// The DUT's interfaces over the trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interfaces: Option<Vec<NamedCounters>>,
    /// An external DUT's: the tester's interfaces, the only ones seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tester_interfaces: Option<Vec<NamedCounters>>,
    /// Why the figures are what they are (an external DUT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// CPU time and cycles per packet (`dut::probe`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuFigures>,
    /// Per-CPU deltas of /proc/net/softnet_stat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub softnet: Option<Vec<SoftnetDelta>>,
    /// What softrouter counted in the trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub softrouter: Option<SoftrouterTrial>,
    /// The kernel's forwarding counters (the linux DUT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelTrial>,
    /// A kernel DUT's CPU time by stage, from perf (`profile_stages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<StageReport>,
    /// The control plane's answer times under the trial's load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_latency: Option<ControlLatency>,
    /// Frames the veth wire dropped, by whose ring was full (the xdp
    /// tester adds them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<WireDrops>,
}

impl DutStats {
    /// A probe's figures with `kind` and the CPU meter's sections; the
    /// probe fills in the rest.
    pub fn new(kind: &str, cpu: CpuSample) -> DutStats {
        DutStats {
            kind: kind.into(),
            cpu: Some(cpu.cpu),
            softnet: Some(cpu.softnet),
            ..DutStats::default()
        }
    }

    /// DUT cycles per forwarded packet: by the soakers when they ran,
    /// else by /proc/stat (see `dut::probe`).
    pub fn cycles_per_packet(&self) -> Option<f64> {
        let c = self.cpu.as_ref()?;
        c.soak_cycles_per_packet.or(c.dut_cycles_per_packet)
    }

    /// The DUT CPUs' mean busy share by the soakers while the trial's
    /// traffic ran for `sending_s` seconds, %, at most 100; `None` without
    /// soakers. Why not the soakers' own share (`cpu.soak[].busy_pct`):
    /// that is over the probe's whole interval, drain and pauses included,
    /// when the DUT has next to nothing to do. With 0.5 s trials and a
    /// 0.5 s drain it halved the share (27 % for a floor DUT whose cycles
    /// a packet said 59 %) and doubled every projection made from it.
    pub fn busy_pct_while(&self, sending_s: f64) -> Option<f64> {
        let cpu = self.cpu.as_ref()?;
        let cpus = cpu.soak.as_ref().map_or(0, Vec::len);
        let busy_s = cpu.soak_dut_cpu_s?;
        (cpus > 0 && sending_s > 0.0)
            .then(|| (100.0 * busy_s / (cpus as f64 * sending_s)).min(100.0))
    }
}

/// What the CPU meter adds to every probe's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuSample {
    pub cpu: CpuFigures,
    pub softnet: Vec<SoftnetDelta>,
}

/// One interface's counters over a trial.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct IfCounters {
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_dropped: u64,
    pub tx_dropped: u64,
}

impl IfCounters {
    /// `self - earlier`, saturating.
    pub fn since(&self, e: &IfCounters) -> IfCounters {
        IfCounters {
            rx_packets: self.rx_packets.saturating_sub(e.rx_packets),
            tx_packets: self.tx_packets.saturating_sub(e.tx_packets),
            rx_bytes: self.rx_bytes.saturating_sub(e.rx_bytes),
            tx_bytes: self.tx_bytes.saturating_sub(e.tx_bytes),
            rx_dropped: self.rx_dropped.saturating_sub(e.rx_dropped),
            tx_dropped: self.tx_dropped.saturating_sub(e.tx_dropped),
        }
    }
}

/// [`IfCounters`] with the interface's name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedCounters {
    pub name: String,
    #[serde(flatten)]
    pub counters: IfCounters,
}

/// The CPU figures of `dut::probe` (its module docs say what each means),
/// in seconds of CPU time over the trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuFigures {
    pub interval_s: f64,
    pub clk_tck: f64,
    pub tsc_hz: f64,
    pub machine_busy_s: f64,
    pub machine_user_s: f64,
    pub machine_system_s: f64,
    pub machine_irq_s: f64,
    pub machine_softirq_s: f64,
    pub bench_cpu_s: f64,
    pub bench_user_s: f64,
    pub dut_cpu_s: f64,
    pub dut_cpu_lower_s: f64,
    /// `dut_cpus` or `machine` (`None` in results from before the
    /// bench's CPU split).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dut_cpu_source: Option<String>,
    pub direct_cpu_s: f64,
    /// `process` or `softirq`.
    pub direct_source: String,
    pub forwarded_packets: Option<u64>,
    pub forwarded_source: Option<String>,
    pub dut_cycles_per_packet: Option<f64>,
    pub dut_cycles_per_packet_lower: Option<f64>,
    pub direct_cycles_per_packet: Option<f64>,
    /// Per soaked (DUT) CPU; `None` without soakers.
    pub soak: Option<Vec<CpuBusy>>,
    pub soak_dut_cpu_s: Option<f64>,
    pub soak_cycles_per_packet: Option<f64>,
}

impl CpuFigures {
    /// The CPU time of the machine's `kind` (`user`, `system`, `irq`,
    /// `softirq`): the parts of `machine_busy_s`.
    pub fn machine_s(&self, kind: &str) -> Option<f64> {
        match kind {
            "user" => Some(self.machine_user_s),
            "system" => Some(self.machine_system_s),
            "irq" => Some(self.machine_irq_s),
            "softirq" => Some(self.machine_softirq_s),
            _ => None,
        }
    }
}

/// One CPU's share used by others over an interval (`dut::soak`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuBusy {
    pub cpu: usize,
    /// 100 - the soaker's share: what the DUT (and the kernel for it) used.
    pub busy_pct: f64,
}

/// One CPU's softnet deltas.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SoftnetDelta {
    pub cpu: usize,
    pub processed: u64,
    pub dropped: u64,
    pub time_squeeze: u64,
}

/// What softrouter counted in one trial: the difference of two statistics
/// files (`dut::softrouter::stats_delta`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SoftrouterTrial {
    /// Both tiers.
    pub forwarded: u64,
    /// Of `forwarded`, by the XDP tier (0 without it).
    #[serde(default)]
    pub fast_path_forwarded: u64,
    /// Frames the XDP tier handed to the workers.
    #[serde(default)]
    pub fast_path_punted: u64,
    pub local: u64,
    pub generated: u64,
    /// `held` is a gauge (packets waiting for neighbor resolution): its
    /// growth over the trial, 0 if it shrank.
    pub held: u64,
    /// Sums over `ports`.
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub ports: Vec<PortTraffic>,
    /// Reason -> count, the reasons that occurred in the trial.
    pub drops: BTreeMap<String, u64>,
    pub cycles: StageCycles,
    /// `cycles` per packet (0 without packets).
    pub cycles_per_packet: Cycles,
}

/// One port's traffic in a trial.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortTraffic {
    pub name: String,
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
}

/// The kernel's own counters over a trial (the linux DUT).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelTrial {
    /// ForwDatagrams + Ip6OutForwDatagrams.
    pub forwarded: u64,
    /// /proc/net/snmp{,6} counter -> its growth, those that grew.
    pub counters: BTreeMap<String, u64>,
}

/// A kernel DUT's stage split, or why there is none (profiling is an
/// extra that never fails a trial).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StageReport {
    Split(Box<StageSplit>),
    Failed {
        /// What profiled (perf and the CPUs).
        source: String,
        error: String,
    },
}

impl StageReport {
    /// The split, when profiling worked.
    pub fn split(&self) -> Option<&StageSplit> {
        match self {
            StageReport::Split(s) => Some(s),
            StageReport::Failed { .. } => None,
        }
    }
}

/// A trial's perf samples of the DUT's CPUs split by stage (`dut::stages`,
/// paper 001's Table II).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StageSplit {
    pub source: String,
    pub cpus: Option<Vec<usize>>,
    /// DUT-work samples (those not in `excluded`).
    pub samples: u64,
    pub excluded: Excluded,
    /// The busiest threads doing DUT work.
    pub threads: Vec<ThreadSamples>,
    /// Each stage's share of `samples`, % (`None` without samples).
    pub share_pct: StageFigures,
    /// The share of the trial's cycles per packet (`cycles_per_packet_of`).
    pub cycles_per_packet: StageFigures,
    /// `soak_cycles_per_packet` or `dut_cycles_per_packet`.
    pub cycles_per_packet_of: String,
    pub total_cycles_per_packet: Option<f64>,
    /// The hottest symbols.
    pub top: Vec<TopSymbol>,
}

/// Samples left out of the split.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Excluded {
    pub soaker: u64,
    pub idle: u64,
    pub profiler: u64,
    pub other_processes: u64,
}

/// One thread's DUT-work samples.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadSamples {
    pub thread: String,
    pub samples: u64,
}

/// One hot symbol.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TopSymbol {
    pub symbol: String,
    pub stage: String,
    pub share_pct: f64,
}

/// One figure per stage of paper 001 (`dut::stages::classify`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StageFigures {
    pub rx: Option<f64>,
    pub tx: Option<f64>,
    pub memory: Option<f64>,
    pub skb: Option<f64>,
    pub processing: Option<f64>,
    pub other: Option<f64>,
}

impl StageFigures {
    /// The stages' names, as the results file spells them.
    pub const NAMES: [&'static str; 6] = ["rx", "tx", "memory", "skb", "processing", "other"];

    /// Every stage's figure by `f(stage name)`.
    pub fn by(f: impl Fn(&str) -> Option<f64>) -> StageFigures {
        StageFigures {
            rx: f("rx"),
            tx: f("tx"),
            memory: f("memory"),
            skb: f("skb"),
            processing: f("processing"),
            other: f("other"),
        }
    }

    /// The figure of the stage named `stage` (a name of [`Self::NAMES`]),
    /// for readers given a stage by name (a paper's metric).
    pub fn get(&self, stage: &str) -> Option<f64> {
        match stage {
            "rx" => self.rx,
            "tx" => self.tx,
            "memory" => self.memory,
            "skb" => self.skb,
            "processing" => self.processing,
            "other" => self.other,
            _ => None,
        }
    }
}

/// The control plane's answer times over a trial, per kind of request;
/// a kind that got neither an answer nor an error is left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ControlLatency {
    /// A scrape of the metrics endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<AnswerTimes>,
    /// `ctl route show --longest`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route_lookup: Option<AnswerTimes>,
    /// `ctl stats`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<AnswerTimes>,
}

impl ControlLatency {
    /// (kind as the results file names it, its times), in that order.
    pub fn kinds(&self) -> impl Iterator<Item = (&'static str, &AnswerTimes)> {
        [
            ("metrics", &self.metrics),
            ("route_lookup", &self.route_lookup),
            ("stats", &self.stats),
        ]
        .into_iter()
        .filter_map(|(k, t)| Some((k, t.as_ref()?)))
    }
}

/// Answer times of one kind of control request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AnswerTimes {
    /// Answers.
    pub count: u64,
    /// Requests that failed.
    pub errors: u64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
}

/// Frames the wire itself dropped over a trial, told apart by whose ring
/// was full (veth counters, `ethtool -S`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireDrops {
    /// Frames the tester sent that the DUT's receive ring refused
    /// (`tx_queue_N_xdp_xmit_errors` of the tester's sending ends): the
    /// DUT did not poll its ring in time. The DUT's loss, as `rx_missed`
    /// of a NIC would be, but reported apart.
    pub dut_ring_full: u64,
    /// Frames the tester's receive ends dropped (`rx_queue_N_drops`):
    /// the tester's loss; such a trial is tester-limited.
    pub tester_rx_drops: u64,
}

impl WireDrops {
    /// `self - before`, saturating.
    pub fn since(&self, before: &WireDrops) -> WireDrops {
        WireDrops {
            dut_ring_full: self.dut_ring_full.saturating_sub(before.dut_ring_full),
            tester_rx_drops: self.tester_rx_drops.saturating_sub(before.tester_rx_drops),
        }
    }
}
