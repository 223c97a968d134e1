//! A Linux bridge as the DUT (`--dut bridge`): paper 001's Table I has
//! the Linux bridge beside Linux IP forwarding, the same kernel receive
//! and transmit paths with an L2 lookup instead of the FIB's.
//!
//! Configured in the DUT namespace: `br0` over every DUT port, no
//! addresses (`RouterMode::Bare`), STP off, and one static forwarding
//! entry per tester port (its MAC on the DUT port it is cabled to), so
//! the bridge never floods and never has to learn: the tester addresses
//! each frame to the receiving tester port ([`TrafficPlan::l2`]), and in a
//! one-way pattern the receiving port never sends a frame to learn from.
//! GRO is on for the DUT ends when the xdp tester sends (its frames reach
//! a veth only through NAPI; as for the Linux DUT).

use anyhow::{bail, Context, Result};
use schema::dut_description::{self as description, DutDescription, FinalStats};
use schema::dut_sample::DutStats;
use serde_json::Value;
use testbed::link::format_mac;
use testbed::RouterMode;

use super::bed::{if_counters, Bed, IfCounters};
use super::probe::{CpuMeter, Direct};
use super::stages::StageProfiler;
use super::{counters_since, describe_bed, dut_ns, named_counters, rx_dropped, Dut, DutOptions};
use bench::plan::{DutProbe, DutSample, TesterBackend, TrafficPlan};
use bench::settings::Pattern;

/// The bridge's name in the DUT namespace.
const BRIDGE: &str = "br0";

pub struct BridgeDut {
    bed: Bed,
    backend: TesterBackend,
    stages: Option<StageProfiler>,
}

impl BridgeDut {
    pub fn start(pattern: Pattern, opts: &DutOptions) -> Result<Self> {
        let placement = opts.rx_placement();
        let stages = StageProfiler::for_dut(opts)?;
        let mut bed = Bed::build(pattern, opts.queues, RouterMode::Bare, placement.as_ref())?;
        let ns = bed.dut_ns("bridge")?;
        let nsn = ns.name().to_string();
        let ip = |args: &[&str]| {
            ns.ip(args)
                .with_context(|| format!("ip {} in namespace {nsn}", args.join(" ")))
        };
        ip(&[
            "link",
            "add",
            BRIDGE,
            "type",
            "bridge",
            "stp_state",
            "0",
            "forward_delay",
            "0",
        ])?;
        for p in &bed.ports {
            ip(&["link", "set", &p.dut_if, "master", BRIDGE])?;
            if opts.backend.counts_in_xdp() {
                ns.run(&["ethtool", "-K", &p.dut_if, "gro", "on"])
                    .with_context(|| format!("ethtool -K {} gro on in {nsn}", p.dut_if))?;
            }
        }
        ip(&["link", "set", BRIDGE, "up"])?;
        for p in &bed.ports {
            let mac = format_mac(&p.tester_mac);
            ns.run(&[
                "bridge", "fdb", "replace", &mac, "dev", &p.dut_if, "master", "static",
            ])
            .with_context(|| format!("bridge fdb replace {mac} dev {} in {nsn}", p.dut_if))?;
        }
        // Ready when every port is forwarding (STP off: at once; checked,
        // not assumed).
        let state = ns.run(&["bridge", "-j", "link", "show"])?;
        let links: Value = serde_json::from_str(&state).context("parsing `bridge -j link`")?;
        for p in &bed.ports {
            let fwd = links
                .as_array()
                .into_iter()
                .flatten()
                .any(|l| l["ifname"] == p.dut_if.as_str() && l["state"] == "forwarding");
            if !fwd {
                bail!("bridge DUT: port {} is not forwarding: {state}", p.dut_if);
            }
        }
        bed.thread_dut_napi()?;
        Ok(BridgeDut {
            bed,
            backend: opts.backend,
            stages,
        })
    }
}

impl Dut for BridgeDut {
    fn kind(&self) -> &'static str {
        "bridge"
    }

    fn plan(&self, ipv6: bool, flows_per_pair: u32) -> TrafficPlan {
        TrafficPlan {
            l2: true,
            ..self.bed.plan(ipv6, flows_per_pair, self.backend)
        }
    }

    fn probe(&self) -> Box<dyn DutProbe> {
        Box::new(PortCountersProbe {
            kind: "bridge",
            meter: CpuMeter::new(Direct::Softirq),
            ns: dut_ns(&self.bed).unwrap_or_default(),
            ifaces: self.bed.dut_ifaces(),
            start: None,
            stages: self.stages.as_ref().map(StageProfiler::fresh),
        })
    }

    fn describe(&self) -> DutDescription {
        DutDescription::Bridge(description::Bridge {
            version: format!("Linux {} bridge", super::kernel_release()),
            bridge: BRIDGE.into(),
            stp: false,
            fdb: "static, one entry per tester port".into(),
            stage_profiler: self.stages.as_ref().map(StageProfiler::source),
            testbed: describe_bed(&self.bed),
            final_stats: None,
        })
    }

    fn bed(&self) -> &Bed {
        &self.bed
    }

    fn stop(self: Box<Self>) -> Result<FinalStats> {
        let ns = dut_ns(&self.bed).unwrap_or_default();
        let ifaces = self.bed.dut_ifaces();
        let ifs = if_counters(Some(&ns), &ifaces).ok();
        Ok(FinalStats::Bridge {
            interfaces: ifs.map(|c| named_counters(&ifaces, &c)),
        })
    }
}

/// The probe of the DUTs without a forwarding counter of their own (bridge,
/// ovs, floor): CPU figures, and what the DUT ports transmitted as
/// "forwarded".
pub(crate) struct PortCountersProbe {
    pub(crate) kind: &'static str,
    pub(crate) meter: CpuMeter,
    pub(crate) ns: String,
    pub(crate) ifaces: Vec<String>,
    pub(crate) start: Option<Vec<IfCounters>>,
    /// Per-trial stage profiling (`DutOptions::profile_stages`).
    pub(crate) stages: Option<StageProfiler>,
}

impl DutProbe for PortCountersProbe {
    fn begin(&mut self) -> Result<()> {
        // First, so that perf's start is not in the measured interval.
        if let Some(p) = self.stages.as_mut() {
            p.begin_or_note();
        }
        self.start = Some(if_counters(Some(&self.ns), &self.ifaces)?);
        self.meter.begin()
    }

    fn end(&mut self) -> Result<DutSample> {
        let c0 = self
            .start
            .take()
            .with_context(|| format!("{} probe: end() without begin()", self.kind))?;
        let c1 = if_counters(Some(&self.ns), &self.ifaces)?;
        let d = counters_since(&c1, &c0);
        let fwd: u64 = d.iter().map(|c| c.tx_packets).sum();
        let what = format!("{} ports' tx packets", self.kind);
        let (sys, cpu) = self.meter.end(Some((fwd, &what)))?;
        let stats = DutStats {
            forwarded: Some(fwd),
            interfaces: Some(named_counters(&self.ifaces, &d)),
            dropped: Some(rx_dropped(&d)),
            stages: self.stages.as_mut().map(|p| p.end_or_error(&cpu.cpu)),
            ..DutStats::new(self.kind, cpu)
        };
        Ok(DutSample {
            sys: Some(sys),
            dut_stats: Some(stats),
        })
    }
}
