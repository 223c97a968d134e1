//! [`NetTrial::run`](bench::search::Trial::run) for the user-space
//! backends (AF_XDP, AF_PACKET): the receiver gets a fresh analyzer, the
//! generator sends the spec's phases, the counters are read after the
//! drain, and the outcome says whether the tester limited the trial.
//! The `xdp` backend's run is `xdp::trial`; both share the phases here and
//! the outcome in [`limits`](super::limits).

use std::sync::mpsc::channel;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use super::gen::{self, GenJob, GenPhase, GenResult};
use super::limits::{faults, outcome, pause_fault, Counted, Seen, SendTiming};
use super::noise::arm_for;
use super::rx::RxCmd;
use super::NetTrial;
use bench::analyzer::Analyzer;
use bench::search::{LossTimeline, Trial, TrialOutcome, TrialSpec};

impl Trial for NetTrial {
    fn times_control_plane(&self) -> bool {
        self.probe.as_ref().is_some_and(|p| p.times_control_plane())
    }

    fn run(&mut self, spec: &TrialSpec) -> Result<TrialOutcome> {
        if self.learned.is_none() {
            self.learn()?;
        }
        if self.xdp.is_some() {
            return self.run_xdp(spec);
        }
        let size = spec.size.effective(self.plan.ipv6);
        let schedule_sizes = size.schedule();
        let mut distinct: Vec<usize> = size.sizes();
        distinct.sort_unstable();
        distinct.dedup();
        let schedule: Vec<u16> = schedule_sizes
            .iter()
            .map(|s| distinct.iter().position(|d| d == s).unwrap_or(0) as u16)
            .collect();
        let templates = self.templates(&distinct, 0)?;
        let (phases, per_port) = gen_phases(spec)?;
        let max_streams_per_port = self.send_ports.iter().map(|p| p.1.len()).min().unwrap_or(1);
        let expected_per_stream = per_port / max_streams_per_port.max(1) as u64 + 64;
        let record = spec.timeline_interval.is_some();
        let rounds_hint = if record {
            phases
                .iter()
                .map(|p| {
                    let b = if p.paced {
                        gen::batch_for(p.rate_fps)
                    } else {
                        64
                    };
                    p.frames / b + 2
                })
                .sum::<u64>() as usize
        } else {
            0
        };
        let job = GenJob {
            ports: gen::port_jobs(&self.send_ports),
            templates,
            nsizes: distinct.len(),
            schedule,
            phases: phases.clone(),
            n_streams: self.flows.len(),
            record_rounds: record,
            rounds_hint,
        };
        let analyzer = Analyzer::new(self.flows.len(), expected_per_stream);

        let drops_before = self.tester_rx_drops();
        self.noise.begin();
        if let Some(p) = self.probe.as_mut() {
            p.sample_control(spec.sample_control);
            p.begin().context("DUT probe (begin)")?;
        }
        let (ack_tx, ack_rx) = channel();
        self.rx_send(RxCmd::Start {
            analyzer,
            ack: ack_tx,
        })?;
        ack_rx
            .recv_timeout(Duration::from_secs(5))
            .map_err(|_| anyhow!("the receiver did not start the trial"))?;
        arm_for(self.noise.arm_handle().as_ref(), &phases);
        let (job, g) = self.run_gen(job)?;
        let sent_total: u64 = g.sent.iter().sum();
        let (done_tx, done_rx) = channel();
        self.rx_send(RxCmd::Finish {
            expected: sent_total,
            quiet: self.opts.drain_quiet,
            max: self.opts.drain_max,
            reply: done_tx,
        })?;
        let done = done_rx
            .recv_timeout(self.opts.drain_max + Duration::from_secs(5))
            .map_err(|_| anyhow!("the receiver did not finish the drain"))?;
        let sample = match self.probe.as_mut() {
            Some(p) => Some(p.end().context("DUT probe (end)")?),
            None => None,
        };
        let rx_drops = self.tester_rx_drops().saturating_sub(drops_before);
        let rep = done.analyzer.finish(&g.sent);

        let planned = per_port * self.send_ports.len() as u64;
        let noise = self
            .noise
            .end(spec.rate_fps, rep.lost)
            .with_generator_pauses(g.long_stall_ns, g.long_stalls, g.max_stall_ns);
        let seen = Seen {
            dut_ring: g.refused,
            tester_rx: rx_drops,
            faults: faults(sent_total, planned, g.fell_behind, gen::own_limits(&g)),
            pause: pause_fault(spec, &SendTiming::from_gen(&g)),
            noise,
            moved: self.noise.moved_apart(),
        };
        let own = gen::own_limits(&g);
        let (achieved, reasons) = self.tester_limits(
            spec,
            &phases,
            per_port,
            &SendTiming::from_gen(&g),
            gen::batch_for,
            own,
        );
        if rep.clock_errors > 0 {
            tracing::warn!("{} frames had timestamps in the future", rep.clock_errors);
        }
        tracing::debug!(
            sent = sent_total,
            received = rep.received,
            lost = rep.lost,
            refused = g.refused,
            max_lag_us = g.max_lag_ns / 1000,
            drain_ms = done.drain_ns / 1_000_000,
            "trial done"
        );
        let timeline = spec.timeline_interval.map(|iv| {
            timeline(iv.as_nanos() as u64, &job, &g, |s, q| {
                done.analyzer.was_received(s, q)
            })
        });
        Ok(outcome(
            spec,
            Counted {
                sent: sent_total,
                received: rep.received,
                lost: rep.lost,
                reordered: rep.reordered,
                duplicates: rep.duplicates,
                non_test: rep.non_test,
                latency: rep.latency,
                timeline,
            },
            achieved,
            reasons,
            seen,
            sample,
        ))
    }
}

/// A trial's generator phases (a burst, the spec's phases, or one constant
/// rate) and the frames each port sends over them.
pub(crate) fn gen_phases(spec: &TrialSpec) -> Result<(Vec<GenPhase>, u64)> {
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
        bail!("trial rate must be positive");
    }
    let per_port: u64 = phases.iter().map(|p| p.frames).sum();
    Ok((phases, per_port))
}

/// The loss timeline: every sent frame's transmit offset (its round's
/// send time) and whether it was lost.
pub(crate) fn timeline(
    interval_ns: u64,
    job: &GenJob,
    g: &GenResult,
    received: impl Fn(u32, u64) -> bool,
) -> LossTimeline {
    let mut frames: Vec<(u64, bool)> = Vec::new();
    for (pi, pj) in job.ports.iter().enumerate() {
        let nf = pj.streams.len() as u64;
        let rounds = &g.rounds[pi];
        let total = g.port_frames[pi];
        for (ri, &(first, t)) in rounds.iter().enumerate() {
            let end = rounds.get(ri + 1).map_or(total, |r| r.0);
            for i in first..end {
                let stream = pj.streams[(i % nf) as usize];
                frames.push((t, !received(stream, i / nf)));
            }
        }
    }
    LossTimeline::from_frames(interval_ns, frames.into_iter())
}

impl NetTrial {
    fn tester_rx_drops(&self) -> u64 {
        self.ports.iter().map(|p| p.rx_drops()).sum()
    }
}
