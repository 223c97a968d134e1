//! The traffic engine: real frames through a real DUT, as a
//! [`search::Trial`](crate::search::Trial).
//!
//! Why it is built this way (see also the submodules):
//!
//! * Two threads for the whole lifetime of a [`NetTrial`]: a generator
//!   ([`gen`]) that owns the sending ports' TX paths, and a receiver
//!   ([`rx`]) that owns every port's RX queues and answers ARP/ND. Each
//!   owns its buffer pool (pools are per thread by design in `netio`).
//!   Both enter the ports' network namespaces before opening queues
//!   ([`ports::enter_netns`]); the caller's thread never changes namespace.
//! * A trial (R6): learning frames before the first trial (the DUT
//!   resolves our addresses; we answer its ARP/ND), then the receiver gets
//!   a fresh analyzer, the generator sends the spec's frames, and the
//!   counters are read only after the receiver drained (every frame in, or
//!   no test frame for `drain_quiet`, at most `drain_max`).
//! * Self-checks: the achieved transmit rate per port is compared with the
//!   target (`rate_tolerance_pct`); frames the tester itself dropped (its
//!   AF_XDP TX ring, its pool, its RX rings: `XDP_STATISTICS`) or a
//!   generator that fell behind mark the trial tester-limited with the
//!   reason: such a result is never the DUT's.
//! * Rates are per sending port (as [`TrialSpec`] says); a port with
//!   several pairs (mesh) spreads its rate over them.
//!
//! [`calibrate`] measures what the tester itself can do over one veth.

mod calibrate;
pub mod clock;
pub mod cpu;
mod gen;
pub mod neigh;
pub mod ports;
mod rx;
pub mod soak;
mod xdp;

pub use calibrate::{calibrate, wire_plan, Calibration, SizeCalibration};

use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use netio::Pool;

use crate::analyzer::{Analyzer, LatencySummary};
use crate::frame::{build, Flow, FlowSet, FLAG_LEARNING, UDP_DST_PORT, UDP_SRC_PORT};
use crate::plan::{DutProbe, DutSample, TrafficPlan};
use crate::search::{LossTimeline, Trial, TrialOutcome, TrialSpec};
use crate::sizes::FrameSize;
use gen::{GenJob, GenPhase, GenResult, Template};
use ports::{enter_netns, GenTx, PortHandle, MAX_TESTER_FRAME};
use rx::{RxCmd, RxPort, RxShared};

/// Knobs of the traffic engine.
#[derive(Debug, Clone, PartialEq)]
pub struct TrafficOptions {
    /// Achieved-rate shortfall above which a trial is tester-limited, %.
    pub rate_tolerance_pct: f64,
    /// The drain ends when no test frame arrived for this long.
    pub drain_quiet: Duration,
    /// The drain ends after this long at the latest (R6: RFC 2544 says 2 s).
    pub drain_max: Duration,
    /// Learning: rounds of one frame per flow, this far apart...
    pub learning_interval: Duration,
    /// ...until one round came back complete, or this long passed.
    pub learning_timeout: Duration,
}

impl Default for TrafficOptions {
    fn default() -> Self {
        TrafficOptions {
            rate_tolerance_pct: 1.0,
            drain_quiet: Duration::from_millis(100),
            drain_max: Duration::from_secs(2),
            learning_interval: Duration::from_millis(100),
            learning_timeout: Duration::from_secs(5),
        }
    }
}

/// What the learning phase saw.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct LearningReport {
    pub rounds: u32,
    pub sent: u64,
    pub received: u64,
    /// A whole round (one frame per flow) came back.
    pub complete: bool,
}

enum GenCmd {
    Run(Box<GenJob>, Sender<(Box<GenJob>, GenResult)>),
}

/// The traffic engine on one [`TrafficPlan`]: implements
/// [`Trial`](crate::search::Trial).
pub struct NetTrial {
    plan: TrafficPlan,
    opts: TrafficOptions,
    probe: Option<Box<dyn DutProbe>>,
    ports: Vec<PortHandle>,
    /// Flow (= stream id) definitions; index = stream id.
    flows: Vec<Flow>,
    /// Per sending port (index into the generator's TX list): its streams.
    send_ports: Vec<(usize, Vec<u32>)>,
    rx_cmd: Option<Sender<RxCmd>>,
    gen_cmd: Option<Sender<GenCmd>>,
    threads: Vec<JoinHandle<()>>,
    shared: Arc<RxShared>,
    learned: Option<LearningReport>,
    tx_describe: Vec<String>,
    /// The `xdp` backend's worker (then no receiver/generator threads).
    xdp: Option<xdp::XdpNet>,
}

impl NetTrial {
    /// Open the plan's ports (in their namespaces) and start the receiver
    /// and generator threads. Learning happens before the first trial.
    pub fn new(
        plan: TrafficPlan,
        probe: Option<Box<dyn DutProbe>>,
        opts: TrafficOptions,
    ) -> Result<NetTrial> {
        if plan.ports.is_empty() || plan.pairs.is_empty() {
            bail!("traffic plan without ports or pairs");
        }
        for &(s, r) in &plan.pairs {
            if s >= plan.ports.len() || r >= plan.ports.len() {
                bail!("traffic plan pair ({s}, {r}) names a port that does not exist");
            }
        }
        let fpp = plan.flows_per_pair.max(1) as usize;
        let n_streams = plan.pairs.len() * fpp;
        if n_streams > usize::from(u16::MAX) {
            bail!("{n_streams} flows: at most 65535 (16-bit stream ids in 64-byte frames)");
        }
        // Flows: per pair, `fpp` flows from the sending port's address to
        // hosts .2.. of the receiving port's destination network, UDP
        // source ports varied (RSS / RPS spread them over queues).
        let mut flows = Vec::with_capacity(n_streams);
        let mut by_sender: Vec<Vec<u32>> = vec![Vec::new(); plan.ports.len()];
        for (pi, &(s, r)) in plan.pairs.iter().enumerate() {
            let (sp, rp) = (&plan.ports[s], &plan.ports[r]);
            let (src, dst): (IpAddr, IpAddr) = if plan.ipv6 {
                let mut d = rp.dest_v6.segments();
                d[7] = 2;
                (sp.v6.into(), std::net::Ipv6Addr::from(d).into())
            } else {
                let mut d = rp.dest_v4.octets();
                d[3] = 2;
                (sp.v4.into(), std::net::Ipv4Addr::from(d).into())
            };
            let base = Flow {
                dst_mac: sp.peer_mac,
                src_mac: sp.mac,
                src_ip: src,
                dst_ip: dst,
                src_port: UDP_SRC_PORT,
                dst_port: UDP_DST_PORT,
                stream: (pi * fpp) as u32,
            };
            let hosts = fpp.min(if plan.ipv6 { 4000 } else { 253 }) as u16;
            for f in FlowSet::new(base, fpp, hosts).flows {
                by_sender[s].push(f.stream);
                flows.push(f);
            }
        }
        // Interleave a port's pairs so that consecutive frames go to
        // different pairs (mesh, many-to-one) rather than pair by pair.
        let send_ports: Vec<(usize, Vec<u32>)> = by_sender
            .into_iter()
            .enumerate()
            .filter(|(_, v)| !v.is_empty())
            .map(|(p, mut v)| {
                v.sort_by_key(|&s| (s as usize % fpp, s));
                (p, v)
            })
            .collect();

        if plan.backend.counts_in_xdp() {
            let x = xdp::XdpNet::new(&plan, flows.len())?;
            let mut describe = vec![
                "XDP live frames (BPF_PROG_TEST_RUN, paced in the program), XDP counting"
                    .to_string(),
            ];
            describe.extend(x.placement.iter().cloned());
            return Ok(NetTrial {
                plan,
                opts,
                probe,
                ports: Vec::new(),
                flows,
                // Plan port indices (the worker has no TX list).
                send_ports,
                rx_cmd: None,
                gen_cmd: None,
                threads: Vec::new(),
                shared: Arc::new(RxShared::default()),
                learned: None,
                tx_describe: describe,
                xdp: Some(x),
            });
        }
        let shared = Arc::new(RxShared::default());
        // Receiver: opens every port and its RX queues (+ an answer path).
        let (rx_cmd, rx_cmds) = channel::<RxCmd>();
        let (ready_tx, ready_rx) = channel::<Result<Vec<PortHandle>>>();
        let plan2 = plan.clone();
        let shared2 = shared.clone();
        let rx_thread = std::thread::Builder::new()
            .name("sr-bench-rx".into())
            .spawn(move || rx_thread(plan2, rx_cmds, shared2, ready_tx))
            .context("spawning the receiver thread")?;
        let ports = match ready_rx.recv() {
            Ok(Ok(p)) => p,
            Ok(Err(e)) => {
                drop(rx_cmd);
                let _ = rx_thread.join();
                return Err(e);
            }
            Err(_) => {
                let _ = rx_thread.join();
                bail!("the receiver thread died while opening the tester ports");
            }
        };
        // Generator: its own TX path on every sending port.
        let (gen_cmd, gen_cmds) = channel::<GenCmd>();
        let (gready_tx, gready_rx) = channel::<Result<Vec<String>>>();
        let senders: Vec<(usize, PortHandle, Option<String>)> = send_ports
            .iter()
            .map(|&(p, _)| (p, ports[p].clone(), plan.ports[p].netns.clone()))
            .collect();
        let gen_thread = std::thread::Builder::new()
            .name("sr-bench-gen".into())
            .spawn(move || gen_thread(senders, gen_cmds, gready_tx))
            .context("spawning the generator thread")?;
        let mut me = NetTrial {
            plan,
            opts,
            probe,
            ports,
            flows,
            // The generator's TX list is in send_ports order.
            send_ports: send_ports
                .into_iter()
                .enumerate()
                .map(|(i, (_, v))| (i, v))
                .collect(),
            rx_cmd: Some(rx_cmd),
            gen_cmd: Some(gen_cmd),
            threads: vec![rx_thread, gen_thread],
            shared,
            learned: None,
            tx_describe: Vec::new(),
            xdp: None,
        };
        match gready_rx.recv() {
            Ok(Ok(d)) => me.tx_describe = d,
            Ok(Err(e)) => return Err(e),
            Err(_) => bail!("the generator thread died while opening its TX paths"),
        }
        Ok(me)
    }

    /// The plan this engine runs.
    pub fn plan(&self) -> &TrafficPlan {
        &self.plan
    }

    /// The generator's TX path per sending port, for reports.
    pub fn tx_paths(&self) -> &[String] {
        &self.tx_describe
    }

    /// ARP/NA answers sent so far.
    pub fn neighbor_answers(&self) -> u64 {
        self.shared.answers.load(Ordering::Relaxed)
    }

    /// The learning phase's report, once it ran.
    pub fn learning(&self) -> Option<&LearningReport> {
        self.learned.as_ref()
    }

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

    /// Templates for every stream and each of `sizes`.
    fn templates(&self, sizes: &[usize], flags: u32) -> Result<Vec<Template>> {
        let mut out = Vec::with_capacity(self.flows.len() * sizes.len());
        let mut buf = vec![0u8; MAX_TESTER_FRAME];
        for f in &self.flows {
            for &s in sizes {
                if s > MAX_TESTER_FRAME {
                    bail!("frame size {s} above the tester's maximum {MAX_TESTER_FRAME}");
                }
                let layout = build(f, s, flags, &mut buf).map_err(|e| anyhow!("{e}"))?;
                out.push(Template {
                    bytes: buf[..layout.buf_len].to_vec(),
                    layout,
                });
            }
        }
        Ok(out)
    }

    fn run_gen(&mut self, job: GenJob) -> Result<(GenJob, GenResult)> {
        let (tx, rx) = channel();
        // The job travels to the generator and back with the result, so
        // its templates can be reused (learning rounds, timeline).
        let job = Box::new(job);
        self.gen_cmd
            .as_ref()
            .ok_or_else(|| anyhow!("generator stopped"))?
            .send(GenCmd::Run(job, tx))
            .map_err(|_| anyhow!("the generator thread is gone"))?;
        let (job, res) = recv_gen(&rx)?;
        Ok((job, res))
    }

    fn rx_send(&self, c: RxCmd) -> Result<()> {
        self.rx_cmd
            .as_ref()
            .ok_or_else(|| anyhow!("receiver stopped"))?
            .send(c)
            .map_err(|_| anyhow!("the receiver thread is gone"))
    }

    fn tester_rx_drops(&self) -> u64 {
        self.ports.iter().map(|p| p.rx_drops()).sum()
    }
}

fn recv_gen(rx: &Receiver<(Box<GenJob>, GenResult)>) -> Result<(GenJob, GenResult)> {
    let (j, r) = rx
        .recv()
        .map_err(|_| anyhow!("the generator thread died during a trial"))?;
    Ok((*j, r))
}

impl Trial for NetTrial {
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
        if let Some(p) = self.probe.as_mut() {
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

        let mut own = gen::own_limits(&g);
        if rx_drops > 0 {
            own.push(format!(
                "tester RX dropped {rx_drops} frames (AF_XDP ring full / no fill buffers)"
            ));
        }
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

/// How a trial's generator kept to its schedule, as both backends (AF_XDP
/// and xdp) report it.
pub(crate) struct SendTiming {
    /// Frames sent per port.
    pub port_frames: Vec<u64>,
    pub start_ns: u64,
    pub end_ns: u64,
    /// The schedule's length.
    pub ideal_ns: u64,
    pub fell_behind: bool,
    pub max_lag_ns: u64,
}

/// What the receive side counted in a trial.
pub(crate) struct Counted {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub reordered: u64,
    pub duplicates: u64,
    pub non_test: u64,
    pub latency: LatencySummary,
    pub timeline: Option<LossTimeline>,
}

impl SendTiming {
    /// How the shared generator kept to its schedule.
    pub(crate) fn from_gen(g: &GenResult) -> SendTiming {
        SendTiming {
            port_frames: g.port_frames.clone(),
            start_ns: g.start_ns,
            end_ns: g.end_ns,
            ideal_ns: g.ideal_ns,
            fell_behind: g.fell_behind,
            max_lag_ns: g.max_lag_ns,
        }
    }
}

impl NetTrial {
    /// The achieved rate per port and the reasons the tester, not the DUT,
    /// limited the trial: a generator behind its schedule, then `own` (the
    /// backend's own drops), then a missed target rate. `batch_for`: the
    /// backend's frames per round at a rate.
    pub(crate) fn tester_limits(
        &self,
        spec: &TrialSpec,
        phases: &[GenPhase],
        per_port: u64,
        t: &SendTiming,
        batch_for: fn(f64) -> u64,
        own: Vec<String>,
    ) -> (f64, Vec<String>) {
        // Achieved rate per port: frames over the time spent sending (the
        // schedule's length for frames on time; longer when behind).
        let nports = t.port_frames.len().max(1) as f64;
        let frames_per_port = t.port_frames.iter().sum::<u64>() as f64 / nports;
        let elapsed_ns = if spec.burst.is_some() {
            t.end_ns.saturating_sub(t.start_ns).max(1) as f64
        } else {
            // On schedule, the last round goes out one interval before the
            // ideal end: count that interval.
            let last_rate = phases.last().map_or(1.0, |p| p.rate_fps);
            let b = batch_for(last_rate) as f64;
            (t.end_ns.saturating_sub(t.start_ns) as f64 + b * 1e9 / last_rate)
                .max(t.ideal_ns as f64)
                .max(1.0)
        };
        let achieved = frames_per_port * 1e9 / elapsed_ns;

        let mut reasons = Vec::new();
        if t.fell_behind {
            reasons.push(format!(
                "generator fell behind its schedule: sent {:.0} of {} frames per port in the \
                 trial time (max lag {:.1} ms)",
                frames_per_port,
                per_port,
                t.max_lag_ns as f64 / 1e6
            ));
        }
        reasons.extend(own);
        if spec.burst.is_none()
            && spec.phases.is_empty()
            && achieved < spec.rate_fps * (1.0 - self.opts.rate_tolerance_pct / 100.0)
        {
            reasons.push(format!(
                "achieved {:.0} fps of {:.0} fps target per port (tolerance {}%)",
                achieved, spec.rate_fps, self.opts.rate_tolerance_pct
            ));
        }
        (achieved, reasons)
    }
}

/// A trial's outcome from what was counted, the achieved rate, the
/// tester-limit reasons and the DUT probe's sample.
pub(crate) fn outcome(
    spec: &TrialSpec,
    c: Counted,
    achieved: f64,
    mut reasons: Vec<String>,
    sample: Option<DutSample>,
) -> TrialOutcome {
    let refused = sample
        .as_ref()
        .and_then(|s| s.dut_stats.as_ref())
        .map_or(0, refused_by_tester);
    if refused > 0 {
        reasons.push(format!(
            "{refused} frames forwarded by the DUT were dropped entering the tester's \
             receive ring (tx_dropped of the DUT's veth ends): the tester did not keep up"
        ));
    }
    let limited = !reasons.is_empty();
    TrialOutcome {
        offered_rate_fps: spec.rate_fps,
        sent: c.sent,
        received: c.received,
        lost: c.lost,
        reordered: c.reordered,
        duplicates: c.duplicates,
        non_test: c.non_test,
        achieved_tx_rate_fps: achieved,
        tester_limited: limited,
        tester_limit_reason: limited.then(|| reasons.join("; ")),
        latency: c.latency,
        timeline: c.timeline,
        sys: sample.as_ref().and_then(|s| s.sys.clone()),
        dut_stats: sample.and_then(|s| s.dut_stats),
    }
}

/// Frames the DUT's veth ends could not hand to the tester's ports over a
/// trial: the sum of their `tx_dropped` (the DUT probes' `interfaces`).
///
/// Why it is the tester's: a veth transmit fails only when the receiving
/// end (a tester port) is down or its ring/backlog is full, i.e. the
/// tester's receive side fell behind, as a tester NIC would overflow if
/// its software did not drain it. Counting those frames as DUT loss would
/// report the tester's limit as the DUT's.
fn refused_by_tester(dut_stats: &serde_json::Value) -> u64 {
    dut_stats
        .get("interfaces")
        .and_then(|v| v.as_array())
        .map_or(0, |ifs| {
            ifs.iter()
                .filter_map(|i| i.get("tx_dropped")?.as_u64())
                .sum()
        })
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

impl Drop for NetTrial {
    fn drop(&mut self) {
        self.gen_cmd.take();
        self.rx_cmd.take();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn rx_thread(
    plan: TrafficPlan,
    cmds: Receiver<RxCmd>,
    shared: Arc<RxShared>,
    ready: Sender<Result<Vec<PortHandle>>>,
) {
    clock::small_timer_slack();
    cpu::pin_tester_thread();
    let setup = || -> Result<(Vec<PortHandle>, Vec<RxPort>, Pool)> {
        let nq: usize = plan.ports.len() * usize::from(plan.queues.max(1));
        let frames = (8192usize).max(2048 * nq * 2 + 4096) as u32;
        let mut pool = Pool::new(frames, ports::FRAME_SIZE).context("receiver buffer pool")?;
        let mut handles = Vec::new();
        let mut rxp = Vec::new();
        for p in &plan.ports {
            enter_netns(p.netns.as_deref())?;
            let h = PortHandle::open(p, plan.backend, plan.queues)?;
            let mut queues = Vec::new();
            for q in 0..h.rx_queues() {
                queues.push(
                    h.port()
                        .open_rx(q, &mut pool)
                        .with_context(|| format!("RX queue {q} of {}", p.iface))?,
                );
            }
            let tx = h
                .port()
                .open_tx(0, &mut pool)
                .with_context(|| format!("answer TX path of {}", p.iface))?;
            rxp.push(RxPort {
                queues,
                tx,
                me: neigh::NeighIdentity {
                    mac: p.mac,
                    v4: p.v4,
                    v6: p.v6,
                },
            });
            handles.push(h);
        }
        Ok((handles, rxp, pool))
    };
    match setup() {
        Ok((handles, rxp, pool)) => {
            let keep = handles.clone();
            let _ = ready.send(Ok(handles));
            rx::run(rxp, pool, cmds, shared);
            drop(keep);
        }
        Err(e) => {
            let _ = ready.send(Err(e));
        }
    }
}

fn gen_thread(
    senders: Vec<(usize, PortHandle, Option<String>)>,
    cmds: Receiver<GenCmd>,
    ready: Sender<Result<Vec<String>>>,
) {
    clock::small_timer_slack();
    cpu::pin_tester_thread();
    let setup = || -> Result<(Vec<GenTx>, Pool)> {
        let frames = (4096 + 2048 * senders.len()) as u32;
        let mut pool = Pool::new(frames, ports::FRAME_SIZE).context("generator buffer pool")?;
        let mut txs = Vec::new();
        for (_, h, ns) in &senders {
            enter_netns(ns.as_deref())?;
            txs.push(h.open_gen_tx(&mut pool)?);
        }
        Ok((txs, pool))
    };
    let (mut txs, mut pool) = match setup() {
        Ok(x) => x,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let _ = ready.send(Ok(txs.iter().map(|t| t.describe.clone()).collect()));
    while let Ok(GenCmd::Run(job, reply)) = cmds.recv() {
        let r = gen::run(&job, &mut txs, &mut pool);
        let _ = reply.send((job, r));
    }
    for t in txs.iter_mut() {
        t.q.release(&mut pool);
    }
    drop(txs);
    drop(pool);
}

/// `size` as a [`FrameSize`] check: every size the tester can send.
pub fn supported_size(size: &FrameSize, ipv6: bool) -> Result<()> {
    for s in size.effective(ipv6).sizes() {
        if s > MAX_TESTER_FRAME {
            bail!("frame size {s} above the tester's maximum {MAX_TESTER_FRAME}");
        }
    }
    Ok(())
}
