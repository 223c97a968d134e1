//! The learning phase (R6): before the first trial, learning frames (one
//! per flow per round, flagged so the analyzer does not count them) until a
//! whole round comes back through the DUT.
//!
//! Why: the DUT must resolve the tester's addresses (ARP/ND, which the
//! receiver answers) and fill its caches before a trial counts anything;
//! and a DUT that forwards nothing at all is reported here, with what to
//! check, rather than as 100 % loss in every trial.

use std::sync::atomic::Ordering;

use anyhow::{bail, Result};

use super::clock;
use super::gen::{self, GenJob, GenPhase};
use super::NetTrial;
use packet::test_frame::FLAG_LEARNING;

/// What the learning phase saw.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct LearningReport {
    pub rounds: u32,
    pub sent: u64,
    pub received: u64,
    /// A whole round (one frame per flow) came back.
    pub complete: bool,
}

impl NetTrial {
    /// Send learning frames (one per flow per round, flagged so the
    /// analyzer does not count them) until a whole round comes back or
    /// the timeout passes. Runs automatically before the first trial.
    pub fn learn(&mut self) -> Result<LearningReport> {
        // 128 bytes: the long header form (which has the learning flag)
        // for IPv4 and IPv6 alike.
        let sizes = [128usize];
        let templates = self.templates(&sizes, FLAG_LEARNING)?;
        let nf = self.flows.len() as u64;
        if let Some(x) = &self.xdp {
            let rep = x.learn(self.send_ports.clone(), templates, &self.opts)?;
            return self.learned_check(rep);
        }
        let mut rep = LearningReport::default();
        let t_end = clock::mono_ns() + self.opts.learning_timeout.as_nanos() as u64;
        let mut templates = Some(templates);
        loop {
            let before = self.shared.learning.load(Ordering::Relaxed);
            let per_port = self.send_ports.iter().map(|p| p.1.len()).max().unwrap_or(1) as u64;
            let job = GenJob {
                ports: gen::port_jobs(&self.send_ports),
                templates: templates.take().unwrap_or_default(),
                nsizes: 1,
                schedule: vec![0],
                phases: vec![GenPhase {
                    rate_fps: 10_000.0,
                    frames: per_port,
                    paced: true,
                }],
                n_streams: self.flows.len(),
                record_rounds: false,
                rounds_hint: 0,
            };
            let (job, res) = self.run_gen(job)?;
            templates = Some(job.templates);
            rep.rounds += 1;
            rep.sent += res.port_frames.iter().sum::<u64>();
            std::thread::sleep(self.opts.learning_interval);
            let got = self.shared.learning.load(Ordering::Relaxed) - before;
            rep.received += got;
            if got >= nf {
                rep.complete = true;
                break;
            }
            if clock::mono_ns() >= t_end {
                break;
            }
        }
        self.learned_check(rep)
    }

    /// Fail if nothing came back during learning; warn if not all did.
    fn learned_check(&mut self, rep: LearningReport) -> Result<LearningReport> {
        if rep.received == 0 {
            let p = &self.plan.ports[self.plan.pairs[0].0];
            bail!(
                "no test frame came back through the DUT during learning: check that the DUT \
                 forwards {} to the receiving ports, that frames sent to MAC {} on {} reach it, \
                 and that it resolves the tester addresses (ARP/ND answered: {}); sent {} \
                 learning frames over {} rounds",
                if self.plan.ipv6 {
                    "2001:2:0:1xx::/64"
                } else {
                    "198.19.x.0/24"
                },
                testbed::link::format_mac(&p.peer_mac),
                p.iface,
                self.neighbor_answers(),
                rep.sent,
                rep.rounds
            );
        }
        if !rep.complete {
            tracing::warn!(
                "learning: only {} of {} learning frames came back in {} rounds",
                rep.received,
                rep.sent,
                rep.rounds
            );
        }
        self.learned = Some(rep.clone());
        Ok(rep)
    }
}
