//! The `xdp` tester backend: XDP live frames out, XDP counting in, both
//! in the kernel (`softrouter_tester`: programs in C, loaded with aya).
//!
//! * Generation ([`tester::gen`]): one `BPF_PROG_TEST_RUN` call per trial
//!   sends every frame of every sending port, paced by the program; user
//!   space writes the plan and the templates before and reads the counts
//!   after. No skb and no syscall per frame: 5+ Mfps on one vCPU.
//! * Counting ([`tester::count`]): on every tester port (receiving ones
//!   count; all pass ARP/ND to the kernel), in driver mode (it gives the veth end NAPI, which a veth needs to take
//!   XDP frames); per-stream counts, a sequence bitmap, latency and IPDV.
//! * Placement: the tester's veth ends get threaded NAPI pinned to the
//!   tester CPU at a real-time priority (`testbed::napi`), so counting runs
//!   where the tester runs and preempts the spinning generator.
//! * One worker thread lives in the ports' namespace (test runs and XDP
//!   links resolve ifindexes in the caller's namespace) on the tester CPU;
//!   the caller's thread never changes namespace.
//! * ARP/ND: non-test frames pass to the kernel, which owns the tester
//!   addresses in the tester namespace and answers.

mod spread;
mod trial;

use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use tester::count::{Counter, Counts};
use tester::gap::GapArm;
use tester::gen::{Frame, Generator, Phase, Plan, Port, Sent};

use super::gen::{GenPhase, Template};
use super::ports::enter_netns;
use super::{LearningReport, TrafficOptions};
use bench::plan::TrafficPlan;

/// How long a DUT is given to notice the tester's ends take redirected
/// XDP frames again after the counter was reloaded (two of softrouter's
/// 200 ms tier checks, and some).
const RELOAD_SETTLE: Duration = Duration::from_millis(500);

/// Sizes the generator's tables hold before it is reloaded for more.
const MIN_SIZES: usize = 4;
/// Real-time priority of the tester's NAPI threads (above the generator).
pub(crate) const TESTER_NAPI_PRIO: i32 = 50;
/// Real-time priority of the generator while a trial's traffic runs (on
/// the tester's own CPU, below its NAPI threads, which count what comes
/// back). Why not the normal policy: a scheduler trace of the
/// per-trial 2.5 ms "DUT receive stall" (`bench/stall/`) showed a
/// normal-policy task waking on the tester's CPU (a metrics scrape, a
/// compiler) taking the CPU from the generator for its whole time slice
/// (1.3-3.7 ms on this kernel, which never preempts kernel code) while
/// frames the generator had already put in the DUT's ring waited, with
/// the DUT's NAPI thread never woken, until the generator ran again:
/// the tester's stall, counted against the DUT. Only for the traffic:
/// the thread is back at the normal policy between trials.
const GENERATOR_PRIO: i32 = 45;

type Work = Box<dyn FnOnce(&mut Engine) + Send>;

/// Handle on the worker thread.
pub(crate) struct XdpNet {
    cmd: Option<Sender<Work>>,
    thread: Option<JoinHandle<()>>,
    /// How each tester end is placed (for the results).
    pub placement: Vec<String>,
}

/// One trial for the worker.
pub(crate) struct XdpJob {
    /// Per sending port: (plan port index, its streams).
    pub ports: Vec<(usize, Vec<u32>)>,
    /// `templates[stream * nsizes + size_index]`.
    pub templates: Vec<Template>,
    pub nsizes: usize,
    pub schedule: Vec<u16>,
    /// Per port (rate and frames per port).
    pub phases: Vec<GenPhase>,
    pub expected_per_stream: u64,
    pub batch: u32,
    pub drain_quiet: Duration,
    pub drain_max: Duration,
}

/// What the worker measured.
pub(crate) struct XdpOut {
    pub sent: Sent,
    pub counts: Counts,
    /// Drops on the wire itself, from the tester ends' veth counters.
    pub wire: WireDrops,
    /// Per plan port: (stream list) as sent, for the loss timeline.
    pub ports: Vec<(usize, Vec<u32>)>,
    /// `received(stream, seq)` for the frames of the timeline, when asked.
    pub lost_bits: Option<Vec<Vec<bool>>>,
}

impl XdpNet {
    /// Start the worker in the ports' namespace: the counter on every
    /// receiving port, threaded NAPI on every tester end; `gap` is armed
    /// as each trial's traffic starts ([`super::noise`]).
    pub fn new(plan: &TrafficPlan, n_streams: usize, gap: Option<GapArm>) -> Result<XdpNet> {
        let ns = plan.ports[0].netns.clone();
        if plan.ports.iter().any(|p| p.netns != ns) {
            bail!("the xdp tester needs all its ports in one namespace");
        }
        let ifaces: Vec<String> = plan.ports.iter().map(|p| p.iface.clone()).collect();
        let (cmd, cmds) = channel::<Work>();
        let (ready_tx, ready_rx) = channel::<Result<()>>();
        let ns2 = ns.clone();
        let ifaces2 = ifaces.clone();
        let thread = std::thread::Builder::new()
            .name("sr-bench-xdp".into())
            .spawn(move || {
                super::clock::small_timer_slack();
                super::cpu::pin_tester_thread();
                let e = enter_netns(ns2.as_deref())
                    .and_then(|_| Engine::new(ns2.clone(), &ifaces2, n_streams, gap));
                let mut e = match e {
                    Ok(e) => {
                        let _ = ready_tx.send(Ok(()));
                        e
                    }
                    Err(err) => {
                        let _ = ready_tx.send(Err(err));
                        return;
                    }
                };
                while let Ok(w) = cmds.recv() {
                    w(&mut e);
                }
            })
            .context("spawning the xdp worker")?;
        let mut me = XdpNet {
            cmd: Some(cmd),
            thread: Some(thread),
            placement: Vec::new(),
        };
        ready_rx
            .recv()
            .map_err(|_| anyhow!("the xdp worker died while starting"))??;
        me.placement = me.call(|e| e.placement.clone())?;
        Ok(me)
    }

    fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Engine) -> T + Send + 'static,
    ) -> Result<T> {
        let (tx, rx) = channel();
        self.cmd
            .as_ref()
            .ok_or_else(|| anyhow!("xdp worker stopped"))?
            .send(Box::new(move |e: &mut Engine| {
                let _ = tx.send(f(e));
            }))
            .map_err(|_| anyhow!("the xdp worker is gone"))?;
        rx.recv().map_err(|_| anyhow!("the xdp worker died"))
    }

    /// Learning: rounds of one frame per flow (templates per stream, with
    /// the learning flag) until a whole round came back or the timeout.
    pub fn learn(
        &self,
        ports: Vec<(usize, Vec<u32>)>,
        templates: Vec<Template>,
        opts: &TrafficOptions,
    ) -> Result<LearningReport> {
        let (iv, timeout) = (opts.learning_interval, opts.learning_timeout);
        self.call(move |e| e.learn(&ports, &templates, iv, timeout))?
    }

    pub fn trial(&self, job: XdpJob, timeline: bool) -> Result<XdpOut> {
        self.call(move |e| e.trial(job, timeline))?
    }
}

impl Drop for XdpNet {
    fn drop(&mut self) {
        self.cmd.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Threaded NAPI for every tester end, pinned to the tester CPUs at a
/// real-time priority (each receive queue's thread on the CPU that feeds
/// it, see [`spread`]); returns a description per end. Without a tester
/// CPU (no pinning) the threads stay where the kernel puts them.
fn place_tester_ends(ns: Option<&str>, ifaces: &[String]) -> Result<Vec<String>> {
    let cpus = super::cpu::tester_cpus();
    if cpus.is_empty() {
        return Ok(Vec::new());
    }
    let Some(ns) = ns else {
        // An external DUT: the tester's ports are real NICs; leave them.
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for i in ifaces {
        let pids = testbed::napi::thread_napi_in(
            ns,
            i,
            &cpus,
            testbed::napi::NapiPolicy::Fifo(TESTER_NAPI_PRIO),
        )
        .with_context(|| format!("threaded NAPI for tester end {i}"))?;
        // One thread per queue, created in queue order.
        let mut on = Vec::new();
        for (q, &pid) in pids.iter().enumerate() {
            let cpu = spread::napi_cpu(q, pids.len(), &cpus);
            testbed::napi::pin(pid, &[cpu])
                .with_context(|| format!("pinning napi thread {pid} of {i}"))?;
            on.push(cpu);
        }
        let defer = defer_wakeups(ns, i)?;
        out.push(format!(
            "{i}: {} NAPI thread(s) on CPU(s) {on:?}, SCHED_FIFO {TESTER_NAPI_PRIO}{defer}",
            pids.len()
        ));
    }
    Ok(out)
}

/// Run `f` (a generator's test run) at [`GENERATOR_PRIO`] when the tester
/// is pinned, and at the normal policy again after it.
fn run_realtime<T>(f: impl FnOnce() -> T) -> T {
    let rt = super::cpu::tester_cpu().is_some()
        && testbed::napi::schedule(0, testbed::napi::NapiPolicy::Fifo(GENERATOR_PRIO)).is_ok();
    let r = f();
    if rt {
        let _ = testbed::napi::schedule(0, testbed::napi::NapiPolicy::Normal);
    }
    r
}

/// `gro_flush_timeout` (ns) and `napi_defer_hard_irqs` of the tester
/// ends: `SOFTROUTER_TESTER_DEFER=<timeout µs>[,<polls>]` (unset or 0: the
/// kernel's defaults, a wake-up per flush).
///
/// Why: a frame the DUT redirects into a tester end from the DUT's CPU
/// wakes that end's NAPI thread on the tester's CPU, a cross-CPU wake-up
/// per flush of the DUT's batch. With deferral the NAPI, once it found
/// work, keeps its wake-ups masked and is polled again by a timer on the
/// tester's own CPU, `polls` times before it waits for a wake-up again.
fn defer_wakeups(ns: &str, ifname: &str) -> Result<String> {
    let Ok(v) = std::env::var("SOFTROUTER_TESTER_DEFER") else {
        return Ok(String::new());
    };
    let mut it = v.split(',');
    let us: u64 = it
        .next()
        .unwrap_or("0")
        .trim()
        .parse()
        .context("SOFTROUTER_TESTER_DEFER")?;
    let polls: u64 = it
        .next()
        .unwrap_or("100")
        .trim()
        .parse()
        .context("SOFTROUTER_TESTER_DEFER")?;
    if us == 0 {
        return Ok(String::new());
    }
    for (file, v) in [
        ("gro_flush_timeout", us * 1000),
        ("napi_defer_hard_irqs", polls),
    ] {
        let path = format!("/sys/class/net/{ifname}/{file}");
        let out = std::process::Command::new("ip")
            .args([
                "netns",
                "exec",
                ns,
                "sh",
                "-c",
                &format!("echo {v} > {path}"),
            ])
            .stdin(std::process::Stdio::null())
            .output()
            .context("running ip netns exec")?;
        if !out.status.success() {
            bail!(
                "writing {v} to {path} in {ns}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
    }
    Ok(format!(
        ", wake-ups deferred ({us} us timer, {polls} polls)"
    ))
}

/// Everything the worker owns.
pub(crate) struct Engine {
    netns: Option<String>,
    placement: Vec<String>,
    names: Vec<String>,
    ifindex: Vec<u32>,
    rx_ifindex: Vec<u32>,
    n_streams: usize,
    gen: Option<Generator>,
    counter: Counter,
    gap: Option<GapArm>,
    /// Generators on the other tester CPUs (`--tester-cpus`).
    helpers: Vec<spread::Helper>,
}

impl Engine {
    fn new(
        netns: Option<String>,
        ifaces: &[String],
        n_streams: usize,
        gap: Option<GapArm>,
    ) -> Result<Engine> {
        let mut ifindex = Vec::new();
        for i in ifaces {
            let c = std::ffi::CString::new(i.as_str())?;
            // SAFETY: valid C string.
            let x = unsafe { libc::if_nametoindex(c.as_ptr()) };
            if x == 0 {
                bail!("interface {i} not found in the tester namespace");
            }
            ifindex.push(x);
        }
        // On every port: it gives each end NAPI (threaded on the tester
        // CPU), so the DUT's ARP/ND to a sending port is received there too.
        let rx_ifindex = ifindex.clone();
        let counter = Counter::new(n_streams, 1 << 20, &rx_ifindex)?;
        let placement = place_tester_ends(netns.as_deref(), ifaces)?;
        let helpers = super::cpu::tester_cpus()
            .iter()
            .skip(1)
            .map(|&cpu| spread::Helper::start(cpu, netns.clone(), n_streams))
            .collect::<Result<Vec<_>>>()?;
        Ok(Engine {
            netns,
            placement,
            names: ifaces.to_vec(),
            ifindex,
            rx_ifindex,
            n_streams,
            gen: None,
            counter,
            gap,
            helpers,
        })
    }

    /// The generator, reloaded when a trial needs more sizes.
    fn generator(&mut self, nsizes: usize) -> Result<&mut Generator> {
        let cap = nsizes.max(MIN_SIZES);
        if self.gen.as_ref().is_none_or(|g| g.nsizes() < nsizes) {
            self.gen = None;
            self.gen = Some(Generator::new(self.n_streams, cap)?);
        }
        Ok(self.gen.as_mut().expect("just loaded"))
    }

    /// A counter that tracks `seq_limit` sequences per stream (reloaded,
    /// and re-attached, when a trial is longer than the last).
    fn ensure_counter(&mut self, seq_limit: u64) -> Result<()> {
        if seq_limit > self.counter.seq_limit() {
            // Detach the old one first: one program per interface.
            let old = std::mem::replace(&mut self.counter, Counter::new(self.n_streams, 64, &[])?);
            drop(old);
            self.counter = Counter::new(self.n_streams, seq_limit, &self.rx_ifindex)?;
            // Detaching XDP deleted the ends' NAPI, and with it their
            // pinned threads: the new ones must be placed again.
            self.placement = place_tester_ends(self.netns.as_deref(), &self.names)?;
            // Meanwhile the ends took no redirected XDP frames, and a DUT
            // that redirects to them notices them back on its own clock
            // (softrouter's tier every 200 ms; until then its workers carry
            // the traffic, at several times the cost: the first trial at
            // 1.1 Mpps after a reload went 80 % through them and lost 8 %).
            std::thread::sleep(RELOAD_SETTLE);
        }
        Ok(())
    }

    fn learn(
        &mut self,
        ports: &[(usize, Vec<u32>)],
        templates: &[Template],
        iv: Duration,
        timeout: Duration,
    ) -> Result<LearningReport> {
        let n_streams = self.n_streams;
        let ifindex = self.ifindex.clone();
        let gen = self.generator(1)?;
        for (s, t) in templates.iter().enumerate().take(n_streams) {
            gen.set_frame(s as u32, 0, &Frame::from_layout(&t.bytes, &t.layout))?;
        }
        let mut rep = LearningReport::default();
        let start = std::time::Instant::now();
        let nf: usize = ports.iter().map(|p| p.1.len()).sum();
        loop {
            let before = self.counter.learning();
            for (p, streams) in ports {
                let gen = self.gen.as_mut().expect("loaded");
                let plan = Plan {
                    ports: vec![Port {
                        ifindex: ifindex[*p],
                        streams: streams.clone(),
                    }],
                    phases: vec![Phase {
                        frames: streams.len() as u64,
                        rate_fps: None,
                    }],
                    schedule: vec![0],
                    batch: 16,
                    grace: Duration::from_millis(20),
                    lead: Duration::ZERO,
                    latency_every: 1,
                    catchup_frames: tester::gen::CATCHUP_FRAMES,
                };
                rep.sent += gen.run(&plan)?.sent;
            }
            rep.rounds += 1;
            std::thread::sleep(iv);
            let got = self.counter.learning() - before;
            rep.received += got;
            if got >= nf as u64 {
                rep.complete = true;
                break;
            }
            if start.elapsed() >= timeout {
                break;
            }
        }
        Ok(rep)
    }

    fn trial(&mut self, job: XdpJob, timeline: bool) -> Result<XdpOut> {
        self.ensure_counter(job.expected_per_stream.saturating_mul(4).max(1 << 20))?;
        let ifindex = self.ifindex.clone();
        let gen = self.generator(job.nsizes)?;
        for (k, t) in job.templates.iter().enumerate() {
            let (s, size) = (k / job.nsizes, k % job.nsizes);
            gen.set_frame(s as u32, size, &Frame::from_layout(&t.bytes, &t.layout))?;
        }
        gen.reset_sequences();
        let plan_sampling = sampling(&job.phases);
        self.counter.reset();
        self.counter.set_latency_every(plan_sampling)?;
        let np = job.ports.len() as u64;
        // The program round-robins over the ports: rates and frame counts
        // are for all of them together.
        let plan = Plan {
            ports: job
                .ports
                .iter()
                .map(|(p, s)| Port {
                    ifindex: ifindex[*p],
                    streams: s.clone(),
                })
                .collect(),
            phases: job
                .phases
                .iter()
                .map(|ph| Phase {
                    frames: ph.frames * np,
                    rate_fps: ph.paced.then_some(ph.rate_fps * np as f64),
                })
                .collect(),
            schedule: job.schedule.clone(),
            batch: job.batch,
            grace: grace(&job.phases),
            lead: Duration::from_micros(500),
            latency_every: plan_sampling,
            catchup_frames: tester::gen::CATCHUP_FRAMES,
        };
        let before = self.veth_drops();
        super::noise::arm_for(self.gap.as_ref(), &job.phases);
        let sent = if self.helpers.is_empty() {
            run_realtime(|| self.gen.as_mut().expect("loaded").run(&plan))?
        } else {
            self.run_spread(&plan, &job)?
        };
        self.counter.drain(
            sent.sent,
            Duration::from_millis(5),
            job.drain_quiet,
            job.drain_max,
        );
        let wire = self.veth_drops().since(&before);
        let counts = self.counter.read(&sent.stream_frames);
        // The timeline maps frames to times by one generator's round
        // robin: not with several.
        let lost_bits = (timeline && self.helpers.is_empty()).then(|| {
            sent.stream_frames
                .iter()
                .enumerate()
                .map(|(s, &n)| {
                    (0..n)
                        .map(|q| !self.counter.was_received(s as u32, q))
                        .collect()
                })
                .collect()
        });
        Ok(XdpOut {
            sent,
            counts,
            wire,
            ports: job.ports,
            lost_bits,
        })
    }
}

impl Engine {
    /// `plan` over this thread's generator and the helpers', started at
    /// the same time; their results as one.
    fn run_spread(&mut self, plan: &Plan, job: &XdpJob) -> Result<Sent> {
        let parts = spread::split_plan(plan, 1 + self.helpers.len())?;
        let frames: Vec<(u32, usize, Frame)> = job
            .templates
            .iter()
            .enumerate()
            .map(|(k, t)| {
                let f = Frame::from_layout(&t.bytes, &t.layout);
                ((k / job.nsizes) as u32, k % job.nsizes, f)
            })
            .collect();
        // Time for every helper to write its frames before the start.
        let start_ns = bpf::mono_ns() + plan.lead.as_nanos() as u64 + 5_000_000;
        let mut parts = parts.into_iter();
        let mut own = parts.next().expect("one part per generator");
        for (h, part) in self.helpers.iter().zip(parts) {
            h.send(spread::Share {
                plan: part,
                frames: frames.clone(),
                nsizes: job.nsizes,
                start_ns,
            })?;
        }
        // This call last, once the helpers' calls began: a test run's
        // set-up waited 160-540 ms for another CPU that already spun in
        // one (measured; an RCU grace period is part of it).
        super::clock::sleep_until(start_ns.saturating_sub(1_000_000));
        own.lead = Duration::from_nanos(start_ns.saturating_sub(bpf::mono_ns()));
        let mine = run_realtime(|| self.gen.as_mut().expect("loaded").run(&own));
        // Every helper's answer, also when this one failed.
        let theirs: Vec<Result<Sent>> = self.helpers.iter().map(|h| h.wait()).collect();
        let mut all = vec![mine?];
        for r in theirs {
            all.push(r?);
        }
        Ok(spread::merge(all))
    }

    /// The tester ends' veth drop counters, summed over ends and queues.
    fn veth_drops(&self) -> WireDrops {
        let mut w = WireDrops::default();
        for name in &self.names {
            // Absent counters (a failed query) attribute no loss.
            for (k, v) in netio::ifinfo::nic_stats(name).unwrap_or_default() {
                if k.starts_with("tx_queue_") && k.ends_with("_xdp_xmit_errors") {
                    w.dut_ring_full += v;
                } else if k.starts_with("rx_queue_") && k.ends_with("_drops") && !k.contains("xdp")
                {
                    w.tester_rx_drops += v;
                }
            }
        }
        w
    }
}

/// Frames the wire itself dropped over a trial (a trial's `dut_stats.wire`).
pub(crate) use schema::dut_sample::WireDrops;

/// Latency sampling for a trial: by its fastest phase (per port); a
/// burst samples sparsest.
fn sampling(phases: &[GenPhase]) -> u32 {
    let fastest = phases
        .iter()
        .map(|p| p.paced.then_some(p.rate_fps))
        .try_fold(0.0f64, |m, r| r.map(|r| m.max(r)));
    tester::gen::latency_every(fastest)
}

/// How long past its schedule a trial may run before it counts as behind:
/// 2 % of its length, at least 20 ms.
fn grace(phases: &[GenPhase]) -> Duration {
    let secs: f64 = phases
        .iter()
        .filter(|p| p.paced)
        .map(|p| p.frames as f64 / p.rate_fps)
        .sum();
    Duration::from_secs_f64((secs * 0.02).max(0.02))
}
