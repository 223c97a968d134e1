//! The contract between the testbed/DUT side of the benchmark and the
//! traffic engine: which tester ports exist, where they live, what they are
//! connected to, and which port sends to which.
//!
//! Why a separate module: the DUT launchers (`dut`) build the testbed and
//! know the addresses; the traffic engine (`traffic`) only needs this plain
//! description, so either side can change without the other, and the
//! loopback calibration can describe a tester-to-tester wire with the same
//! types.

use crate::sysstat::SysStats;
use anyhow::Result;
use serde::Serialize;
use std::net::{Ipv4Addr, Ipv6Addr};

/// The tester backend is a setting (`--tester`, `tester = "xdp"`); it is
/// re-exported here because the plan carries it to the engine.
pub use crate::settings::TesterBackend;

/// One tester port: an interface in the tester's namespace, cabled to the
/// DUT (or, for calibration, to another tester port).
#[derive(Debug, Clone, Serialize)]
pub struct TesterPort {
    /// Network namespace holding `iface`; `None` = the current one
    /// (external DUTs).
    pub netns: Option<String>,
    /// Interface name inside `netns`.
    pub iface: String,
    /// This port's MAC (source of the frames it sends).
    pub mac: [u8; 6],
    /// This port's addresses; the tester answers ARP/ND for them.
    pub v4: Ipv4Addr,
    pub v6: Ipv6Addr,
    /// The MAC frames sent on this port are addressed to (the DUT's port).
    pub peer_mac: [u8; 6],
    /// The DUT's address on this link (for reports and ARP/ND probes).
    pub peer_v4: Ipv4Addr,
    pub peer_v6: Ipv6Addr,
    /// Destination networks the DUT routes out of *this* port: frames
    /// meant to be received here are addressed into these (a /24 and a
    /// /64; the host part is varied per flow).
    pub dest_v4: Ipv4Addr,
    pub dest_v6: Ipv6Addr,
    /// The DUT's interface at the other end of this port's wire, when the
    /// bench built the wire (a veth end of its own testbed: such names are
    /// unique on the host); `None` for external DUTs and the tester's
    /// loopback. The traffic engine measures the DUT's receive gaps on it
    /// (`traffic::noise`), and knows its ring is a veth's.
    pub dut_iface: Option<String>,
}

/// Everything the traffic engine needs for one testbed.
#[derive(Debug, Clone, Serialize)]
pub struct TrafficPlan {
    pub ports: Vec<TesterPort>,
    /// (sending port index, receiving port index) pairs; each pair gets
    /// `flows_per_pair` flows (addresses and UDP ports varied).
    pub pairs: Vec<(usize, usize)>,
    pub flows_per_pair: u32,
    /// IPv6 instead of IPv4 test frames.
    pub ipv6: bool,
    pub backend: TesterBackend,
    /// RX/TX queues to open per tester port (1 unless the veth has more).
    pub queues: u16,
    /// The DUT switches frames (a bridge, a cross-connect): each frame is
    /// addressed to the *receiving* tester port's MAC, as one host to
    /// another on a LAN, instead of to the DUT's port (`peer_mac`).
    pub l2: bool,
}

/// Measurements of the DUT taken around each trial: begin just before the
/// first frame, end after the receivers drained.
pub trait DutProbe: Send {
    fn begin(&mut self) -> Result<()>;
    /// Whether this DUT has a control plane to time under load.
    fn times_control_plane(&self) -> bool {
        false
    }
    /// Time the control plane from the next [`DutProbe::begin`] to its
    /// `end` (`TrialSpec::sample_control`).
    fn sample_control(&mut self, _on: bool) {}
    /// CPU/interrupt figures of the DUT's cores over the trial, and
    /// DUT-specific statistics (softrouter: cycles per stage, drops).
    fn end(&mut self) -> Result<DutSample>;
}

/// What a [`DutProbe`] measured over one trial.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DutSample {
    pub sys: Option<SysStats>,
    pub dut_stats: Option<schema::dut_sample::DutStats>,
}
