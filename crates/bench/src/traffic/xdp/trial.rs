//! [`NetTrial::run`] for the `xdp` backend: the same trial contract
//! (phases, bursts, timeline, self-checks) as the AF_XDP path, with the
//! generation and counting done by the worker ([`super::XdpNet`]).

use anyhow::{Context, Result};

use super::super::gen::GenPhase;
use super::super::NetTrial;
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
        let templates = self
            .templates(&distinct, 0)?
            .into_iter()
            .map(|t| t.bytes)
            .collect();
        let phases: Vec<GenPhase> = if let Some(b) = spec.burst {
            vec![GenPhase {
                rate_fps: spec.rate_fps,
                frames: b,
                paced: false,
            }]
        } else if !spec.phases.is_empty() {
            spec.phases
                .iter()
                .map(|p| GenPhase {
                    rate_fps: p.rate_fps,
                    frames: (p.rate_fps * p.duration.as_secs_f64()).round() as u64,
                    paced: true,
                })
                .collect()
        } else {
            vec![GenPhase {
                rate_fps: spec.rate_fps,
                frames: (spec.rate_fps * spec.duration.as_secs_f64()).round() as u64,
                paced: true,
            }]
        };
        if phases
            .iter()
            .any(|p| p.paced && (p.rate_fps.is_nan() || p.rate_fps <= 0.0))
        {
            anyhow::bail!("trial rate must be positive");
        }
        let per_port: u64 = phases.iter().map(|p| p.frames).sum();
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
        let g = self.xdp.as_ref().expect("xdp backend").trial(job)?;
        let sample = match self.probe.as_mut() {
            Some(p) => Some(p.end().context("DUT probe (end)")?),
            None => None,
        };
        // Achieved rate per port, as the AF_XDP path computes it.
        let nports = g.port_frames.len().max(1) as f64;
        let frames_per_port = g.port_frames.iter().sum::<u64>() as f64 / nports;
        let elapsed_ns = if spec.burst.is_some() {
            g.end_ns.saturating_sub(g.start_ns).max(1) as f64
        } else {
            let last_rate = phases.last().map_or(1.0, |p| p.rate_fps);
            let b = super::batch_for(last_rate) as f64;
            (g.end_ns.saturating_sub(g.start_ns) as f64 + b * 1e9 / last_rate)
                .max(g.ideal_ns as f64)
                .max(1.0)
        };
        let achieved = frames_per_port * 1e9 / elapsed_ns;
        let mut reasons = Vec::new();
        if g.fell_behind {
            reasons.push(format!(
                "generator fell behind its schedule: sent {:.0} of {} frames per port in the \
                 trial time (max lag {:.1} ms)",
                frames_per_port,
                per_port,
                g.max_lag_ns as f64 / 1e6
            ));
        }
        if spec.burst.is_none()
            && spec.phases.is_empty()
            && achieved < spec.rate_fps * (1.0 - self.opts.rate_tolerance_pct / 100.0)
        {
            reasons.push(format!(
                "achieved {:.0} fps of {:.0} fps target per port (tolerance {}%)",
                achieved, spec.rate_fps, self.opts.rate_tolerance_pct
            ));
        }
        if g.clock_errors > 0 {
            tracing::warn!("{} frames had timestamps in the future", g.clock_errors);
        }
        let limited = !reasons.is_empty();
        Ok(TrialOutcome {
            offered_rate_fps: spec.rate_fps,
            sent: g.sent,
            received: g.received,
            lost: g.lost,
            reordered: g.reordered,
            duplicates: g.duplicates,
            non_test: g.non_test,
            achieved_tx_rate_fps: achieved,
            tester_limited: limited,
            tester_limit_reason: limited.then(|| reasons.join("; ")),
            latency: g.latency,
            timeline: g.timeline,
            sys: sample.as_ref().and_then(|s| s.sys.clone()),
            dut_stats: sample.and_then(|s| s.dut_stats),
        })
    }
}
