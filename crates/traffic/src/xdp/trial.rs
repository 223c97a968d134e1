//! [`NetTrial::run`] for the `xdp` backend: the same trial contract
//! (phases, bursts, timeline, self-checks) as the user-space backends,
//! with generation and counting in the kernel (see `super`).

use anyhow::{Context, Result};

use super::super::limits::{faults, outcome, pause_fault, Counted, Seen, SendTiming};
use super::super::trial::gen_phases;
use super::super::NetTrial;
use super::{XdpJob, XdpOut};
use bench::analyzer::LatencySummary;
use bench::search::{LossTimeline, TrialOutcome, TrialSpec};

/// Iterations per test-run batch. Redirected frames are flushed per
/// batch, so at full speed this is the longest burst into the DUT's
/// 256-frame veth ring (paced, a burst is the frames due during one batch,
/// about 10 us); it is also the size of the call's page pool, and frames
/// in flight beyond it cost a page allocation each. Measured in loopback
/// (`gen_capacity` in softrouter-tester): 16 gave 1.23 Mfps, 64 1.63,
/// 256 1.94 with the receiving NAPI threaded on the same CPU.
const BATCH: u32 = 64;

impl NetTrial {
    pub(crate) fn run_xdp(&mut self, spec: &TrialSpec) -> Result<TrialOutcome> {
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
            expected_per_stream: per_port / min_streams.max(1) as u64 + 256,
            batch: BATCH,
            drain_quiet: self.opts.drain_quiet,
            drain_max: self.opts.drain_max,
        };
        // Where a trial's time goes besides its traffic (debug log).
        let t0 = std::time::Instant::now();
        self.noise.begin();
        if let Some(p) = self.probe.as_mut() {
            p.sample_control(spec.sample_control);
            p.begin().context("DUT probe (begin)")?;
        }
        let t1 = std::time::Instant::now();
        let x = self.xdp.as_ref().expect("xdp backend");
        let out = x.trial(job, spec.timeline_interval.is_some())?;
        let t2 = std::time::Instant::now();
        let mut sample = match self.probe.as_mut() {
            Some(p) => Some(p.end().context("DUT probe (end)")?),
            None => None,
        };
        let t3 = std::time::Instant::now();
        // Whose ring dropped what: with the DUT's own figures, so a reader
        // sees the DUT's loss split into ring overflow and the rest.
        if let Some(stats) = sample.as_mut().and_then(|s| s.dut_stats.as_mut()) {
            stats.wire = Some(out.wire);
        }
        let s = &out.sent;
        let ideal_ns: f64 = phases
            .iter()
            .filter(|p| p.paced)
            .map(|p| p.frames as f64 * 1e9 / p.rate_fps)
            .sum();
        let timing = SendTiming {
            port_frames: s.port_frames.clone(),
            start_ns: s.first_ns,
            // The last frame's interval belongs to the trial.
            end_ns: s.last_ns,
            ideal_ns: ideal_ns as u64,
            fell_behind: s.sent < s.planned,
            max_lag_ns: s.max_lag_ns,
            paused_ns: s.long_stall_ns,
        };
        // The tester's own failures: measurement faults, and tester limits.
        let mut own = Vec::new();
        if s.errors > 0 {
            own.push(format!(
                "the generator program failed {} times ({})",
                s.errors,
                s.last_error.unwrap_or("?")
            ));
        }
        if out.counts.beyond > 0 {
            own.push(format!(
                "{} frames beyond the counter's sequence bitmap",
                out.counts.beyond
            ));
        }
        let noise = self
            .noise
            .end(spec.rate_fps, out.counts.lost)
            .with_generator_pauses(s.long_stall_ns, s.long_stalls, s.max_stall_ns);
        let seen = Seen {
            dut_ring: out.wire.dut_ring_full,
            tester_rx: out.wire.tester_rx_drops,
            faults: faults(s.sent, s.planned, false, own.clone()),
            pause: pause_fault(spec, &timing),
            noise,
            moved: self.noise.moved_apart(),
        };
        let (achieved, reasons) = self.tester_limits(spec, &phases, per_port, &timing, |_| 1, own);
        if out.counts.clock_errors > 0 {
            tracing::warn!(
                "{} frames had timestamps in the future",
                out.counts.clock_errors
            );
        }
        tracing::debug!(
            sent = s.sent,
            planned = s.planned,
            received = out.counts.received,
            lost = out.counts.lost,
            max_lag_us = s.max_lag_ns / 1000,
            shift_us = s.shift_ns / 1000,
            paused_us = s.stall_ns / 1000,
            pauses = s.stalls,
            dut_ring_full = out.wire.dut_ring_full,
            early = s.early,
            probe_begin_ms = (t1 - t0).as_millis() as u64,
            traffic_and_drain_ms = (t2 - t1).as_millis() as u64,
            probe_end_ms = (t3 - t2).as_millis() as u64,
            "xdp trial done"
        );
        let timeline = spec
            .timeline_interval
            .map(|iv| timeline(iv.as_nanos() as u64, &out));
        let c = &out.counts;
        let counted = Counted {
            sent: s.sent,
            received: c.received,
            lost: c.lost,
            reordered: c.reordered,
            duplicates: c.duplicates,
            non_test: c.non_test,
            latency: latency(&c.latency),
            timeline,
        };
        Ok(outcome(spec, counted, achieved, reasons, seen, sample))
    }
}

/// The counter's latency as the results report it.
fn latency(l: &tester::count::Latency) -> LatencySummary {
    if l.count == 0 {
        return LatencySummary::default();
    }
    LatencySummary {
        count: l.count,
        min_ns: l.min_ns,
        mean_ns: l.sum_ns as f64 / l.count as f64,
        median_ns: l.quantile(0.5),
        p99_ns: l.quantile(0.99),
        p999_ns: l.quantile(0.999),
        max_ns: l.max_ns,
        // The counter measures IPDV between consecutive frames of a
        // stream; absent only when no stream had two frames.
        ipdv_mean_abs_ns: (l.ipdv_count > 0).then(|| l.ipdv_sum_ns as f64 / l.ipdv_count as f64),
        ipdv_max_abs_ns: (l.ipdv_count > 0).then_some(l.ipdv_max_ns),
        pdv_ns: l.max_ns - l.min_ns,
    }
}

/// The loss timeline: every frame's due time (from the phases' clocks:
/// the program sends frame k of a phase at t0 + k x interval, or late by
/// at most the trial's max lag) and whether it was lost. The program
/// round-robins over the ports, and each port over its streams.
fn timeline(interval_ns: u64, out: &XdpOut) -> LossTimeline {
    let s = &out.sent;
    let Some(lost) = out.lost_bits.as_ref() else {
        return LossTimeline::from_frames(interval_ns, std::iter::empty());
    };
    let np = out.ports.len() as u64;
    let t0 = s.t0_ns;
    // Aggregate frame k -> (phase t0, interval) by cumulative phase sizes.
    let mut bounds = Vec::new();
    let mut acc = 0u64;
    for (i, &(pt0, iv)) in s.phase_clock.iter().enumerate() {
        let n = s.phase_frames.get(i).copied().unwrap_or(0);
        bounds.push((acc, acc + n, pt0, iv));
        acc += n;
    }
    let frames = (0..s.sent).map(move |k| {
        let (first, _, pt0, iv) = bounds
            .iter()
            .copied()
            .find(|b| k < b.1)
            .unwrap_or((0, 0, t0, 0));
        let t = pt0 + (u128::from(k - first) * u128::from(iv) / 1000) as u64;
        let (p, i) = ((k % np) as usize, k / np);
        let streams = &out.ports[p].1;
        let stream = streams[(i % streams.len() as u64) as usize] as usize;
        let seq = (i / streams.len() as u64) as usize;
        let was_lost = lost
            .get(stream)
            .and_then(|v| v.get(seq))
            .copied()
            .unwrap_or(true);
        (t.saturating_sub(t0), was_lost)
    });
    LossTimeline::from_frames(interval_ns, frames)
}
