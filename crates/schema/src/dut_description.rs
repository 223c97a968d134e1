//! What a DUT launcher says about the device it started (`Dut::describe`)
//! and, after it stopped, its final counters: a run's `meta.dut.config`
//! in the results file (`docs/bench-results.md`), written by the bench's
//! launchers (`dut`) and kept by the bench for the record (R15).
//!
//! Typed for the reason `dut_sample` is: the writer and the reader are
//! different crates. One variant per DUT kind, tagged by `kind` as the
//! file always was; each carries what that kind reports.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

use crate::dut_sample::{IfCounters, NamedCounters};
use crate::report::Report;

/// A run's `meta.dut.config`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum DutDescription {
    Softrouter(Softrouter),
    Linux(Linux),
    Bridge(Bridge),
    Ovs(Ovs),
    Floor(Floor),
    Command(Command),
    External(External),
}

impl DutDescription {
    /// Its version string (softrouter --version, the kernel release...).
    pub fn version(&self) -> &str {
        match self {
            DutDescription::Softrouter(d) => &d.version,
            DutDescription::Linux(d) => &d.version,
            DutDescription::Bridge(d) => &d.version,
            DutDescription::Ovs(d) => &d.version,
            DutDescription::Floor(d) => &d.version,
            DutDescription::Command(d) => &d.version,
            DutDescription::External(d) => &d.version,
        }
    }

    /// The name it gave itself (a softrouter variant), if any.
    pub fn name(&self) -> Option<&str> {
        match self {
            DutDescription::Softrouter(d) => Some(&d.name),
            _ => None,
        }
    }

    /// Record the DUT's final counters (`Dut::stop`).
    pub fn set_final_stats(&mut self, stats: FinalStats) {
        match self {
            DutDescription::Softrouter(d) => d.final_stats = Some(stats),
            DutDescription::Linux(d) => d.final_stats = Some(stats),
            DutDescription::Bridge(d) => d.final_stats = Some(stats),
            DutDescription::Ovs(d) => d.final_stats = Some(stats),
            DutDescription::Floor(d) => d.final_stats = Some(stats),
            DutDescription::Command(d) => d.final_stats = Some(stats),
            DutDescription::External(d) => d.final_stats = Some(stats),
        }
    }
}

/// The testbed of a DUT in a namespace of its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Testbed {
    pub queues_per_port: u32,
    /// The traffic pattern's name.
    pub pattern: String,
    /// Tester's and DUT's.
    pub namespaces: Vec<String>,
    pub ports: Vec<PortDescription>,
    /// Where each side's veth ends receive (`None`: not steered).
    pub receive_cpus: Option<ReceiveCpus>,
    /// The DUT ends' threaded NAPI threads.
    pub napi_threads: Vec<String>,
}

/// One port of the testbed: a tester interface cabled to a DUT interface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortDescription {
    pub index: usize,
    pub tester_if: String,
    /// Empty for an external DUT.
    pub dut_if: String,
    /// `aa:bb:cc:dd:ee:ff`.
    pub tester_mac: String,
    pub dut_mac: String,
    pub tester_v4: Ipv4Addr,
    pub tester_v6: Ipv6Addr,
    pub dut_v4: Ipv4Addr,
    pub dut_v6: Ipv6Addr,
    /// The networks behind the port (network addresses).
    pub dest_v4: Ipv4Addr,
    pub dest_v6: Ipv6Addr,
}

/// Each side's receive CPUs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReceiveCpus {
    pub tester_cpus: Vec<usize>,
    pub dut_cpus: Vec<usize>,
    /// `threaded-napi` or `rps`.
    pub mechanism: String,
}

/// The final counters of a DUT, as its launcher read them when it
/// stopped (`null` where they could not be read).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum FinalStats {
    Softrouter {
        /// How the process ended.
        exit_status: Option<String>,
        /// Its last statistics file.
        stats: Option<Box<Report>>,
        /// The end of its output.
        log_tail: String,
    },
    Linux {
        /// ForwDatagrams + Ip6OutForwDatagrams.
        forwarded: Option<u64>,
        /// /proc/net/snmp{,6}.
        kernel_counters: Option<BTreeMap<String, u64>>,
        interfaces: Option<BTreeMap<String, IfCounters>>,
        /// netdev_budget as it was before the run, when it was set.
        netdev_budget_restored: Option<String>,
    },
    Bridge {
        interfaces: Option<Vec<NamedCounters>>,
    },
    Ovs {
        interfaces: Option<Vec<NamedCounters>>,
        /// The flow table.
        flows: Vec<String>,
    },
    Floor {
        interfaces: Option<Vec<NamedCounters>>,
    },
    Command {
        /// How the process ended.
        exit: Option<String>,
        interfaces: Option<BTreeMap<String, IfCounters>>,
        /// The end of its output.
        output_tail: String,
    },
    External {},
}

/// softrouter.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Softrouter {
    /// What tables call it (`softrouter`, `softrouter-noxdp`).
    pub name: String,
    pub version: String,
    pub binary: String,
    /// `af_xdp`, `af_packet`...
    pub driver: String,
    /// Generated from the settings, or the user's file.
    pub config_source: String,
    /// The configuration file's text.
    pub config: String,
    pub kernel: String,
    #[serde(flatten)]
    pub testbed: Testbed,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_stats: Option<FinalStats>,
}

/// Linux kernel forwarding.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Linux {
    pub version: String,
    pub sysctls_in_dut_namespace: BTreeMap<String, String>,
    /// netdev_budget before and as set, when it was set.
    pub netdev_budget: Option<NetdevBudget>,
    /// The machine-wide sysctls that bound NAPI.
    pub global: GlobalSysctls,
    /// The RPS mode, when set.
    pub rps: Option<String>,
    /// Interface -> its rps_cpus mask.
    pub rps_cpus: BTreeMap<String, String>,
    pub veth_napi_gro: Option<bool>,
    /// Interface -> its NAPI coalescing as read back.
    pub napi_coalescing: BTreeMap<String, NapiCoalescing>,
    pub online_cpus: usize,
    pub stage_profiler: Option<String>,
    #[serde(flatten)]
    pub testbed: Testbed,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_stats: Option<FinalStats>,
}

/// `net.core.netdev_budget` before the run and as set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetdevBudget {
    pub before: String,
    pub set: u32,
}

/// The machine-wide sysctls, as read (`None`: unreadable).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GlobalSysctls {
    #[serde(rename = "net.core.netdev_budget")]
    pub netdev_budget: Option<String>,
    #[serde(rename = "net.core.netdev_budget_usecs")]
    pub netdev_budget_usecs: Option<String>,
    #[serde(rename = "net.core.dev_weight")]
    pub dev_weight: Option<String>,
}

/// One DUT end's NAPI coalescing, as sysfs reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NapiCoalescing {
    pub napi_defer_hard_irqs: Option<u64>,
    pub gro_flush_timeout_ns: Option<u64>,
}

/// The Linux bridge.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Bridge {
    pub version: String,
    pub bridge: String,
    pub stp: bool,
    pub fdb: String,
    pub stage_profiler: Option<String>,
    #[serde(flatten)]
    pub testbed: Testbed,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_stats: Option<FinalStats>,
}

/// Open vSwitch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ovs {
    pub version: String,
    pub datapath: String,
    pub flows: String,
    pub stage_profiler: Option<String>,
    #[serde(flatten)]
    pub testbed: Testbed,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_stats: Option<FinalStats>,
}

/// The floor: an XDP redirect with the MAC rewrite and nothing else.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Floor {
    pub version: String,
    pub program: String,
    pub xdp_mode: String,
    #[serde(flatten)]
    pub testbed: Testbed,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_stats: Option<FinalStats>,
}

/// A user's command in the DUT namespace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Command {
    pub command: String,
    pub version: String,
    pub environment: BTreeMap<String, String>,
    /// Whether the DUT ends got the kernel addresses.
    pub kernel_addresses: bool,
    /// `net.ipv4.ip_forward` in the namespace.
    pub ip_forward: Option<String>,
    pub kernel: String,
    #[serde(flatten)]
    pub testbed: Testbed,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_stats: Option<FinalStats>,
}

/// A device outside this host, behind the tester's interfaces.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct External {
    pub version: String,
    pub interfaces: Vec<String>,
    pub peer_macs: Vec<String>,
    /// `settings` or `neighbor table`.
    pub peer_mac_source: String,
    pub isolation: String,
    pub pattern: String,
    pub ports: Vec<PortDescription>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_stats: Option<FinalStats>,
}
