//! [`NetTrial::run`] for the `xdp` backend: the same trial contract
//! (phases, bursts, timeline, self-checks) as the AF_XDP path, with the
//! generation and counting done by the worker ([`super::XdpNet`]).

use anyhow::{Context, Result};

use super::super::{gen_phases, outcome, NetTrial};
use super::XdpJob;
use crate::search::{TrialOutcome, TrialSpec};

impl NetTrial {
    pub(in crate::traffic) fn run_xdp(&mut self, spec: &TrialSpec) -> Result<TrialOutcome> {
        let size = spec.size.effective(self.plan.ipv6);
        let mut distinct: Vec<usize> = size.sizes();
        distinct.sort_unstable();
        distinct.dedup();
        let schedule: Vec<u16> = size
            .schedule()
            .iter()
            .map(|s| distinct.iter().position(|d| d == s).unwrap_or(0) as u16)
            .collect();
        let templates = self.templates(&distinct, 0)?;
        let (phases, per_port) = gen_phases(spec)?;
        let min_streams = self.send_ports.iter().map(|p| p.1.len()).min().unwrap_or(1);
        let job = XdpJob {
            ports: self.send_ports.clone(),
            templates,
            nsizes: distinct.len(),
            schedule,
            phases: phases.clone(),
            timeline_ns: spec.timeline_interval.map(|d| d.as_nanos() as u64),
            expected_per_stream: per_port / min_streams.max(1) as u64 + 256,
            drain_quiet: self.opts.drain_quiet,
            drain_max: self.opts.drain_max,
        };
        if let Some(p) = self.probe.as_mut() {
            p.begin().context("DUT probe (begin)")?;
        }
        let x = self.xdp.as_ref().expect("xdp backend");
        let batch_for = x.mode().batch_for();
        let g = x.trial(job)?;
        let sample = match self.probe.as_mut() {
            Some(p) => Some(p.end().context("DUT probe (end)")?),
            None => None,
        };
        let (achieved, reasons) =
            self.tester_limits(spec, &phases, per_port, &g.timing, batch_for, g.own);
        if g.clock_errors > 0 {
            tracing::warn!("{} frames had timestamps in the future", g.clock_errors);
        }
        Ok(outcome(spec, g.counted, achieved, reasons, sample))
    }
}
