//! The `xdp` tester backends: counting in an XDP program on every tester
//! port (generic mode, so it runs where the port's RPS steers it), and
//! generation either with AF_PACKET (`xdp`) or with
//! `BPF_PROG_TEST_RUN` live frames (`xdp-live`).
//!
//! Why: on a small VM the AF_XDP tester spends most of its receive time
//! waking its receiver thread and copying every frame into user space; it
//! tops out near the kernel DUT's own forwarding rate. Counting in the
//! kernel's receive path costs a few dozen instructions per frame: the
//! counting program ([`count_prog`]) accounts each test frame in mmapped
//! maps (per-stream counters, a sequence bitmap, a latency histogram) and
//! drops it; user space reads the maps after the drain.
//!
//! * Generation, `xdp` ([`XdpGen::Packet`]): the shared paced generator
//!   (`traffic::gen`, AF_PACKET `sendmmsg` with qdisc bypass, sequence and
//!   time stamped in user space), run by this backend's worker.
//! * Generation, `xdp-live` ([`XdpGen::Live`]): one `bpf(BPF_PROG_TEST_RUN)`
//!   call transmits a batch of up to 256 frames (the generator program
//!   stamps sequence and time into each, see [`gen_prog`]); user space
//!   only paces batches.
//! * One worker thread lives in the ports' namespace (sockets, test runs
//!   and XDP links resolve ifindexes in the caller's namespace); the
//!   caller's thread never changes namespace. The worker sleeps between
//!   batches (`clock_nanosleep`), it never spins.
//! * Live pacing: per phase, batches of `rate x 100 us` frames (1..=256),
//!   one test run per sending port per round, the port's streams in round
//!   robin (so a stream's frames leave in batches, and an IMIX size
//!   changes per batch, not per frame).
//! * Live veth delivery: XDP_TX of a live frame is a redirect to the
//!   ingress veth, whose `ndo_xdp_xmit` drops everything unless the *peer*
//!   has NAPI (an XDP program attached, or GRO on). Tester ports carry the
//!   counting program; DUT ports need XDP (softrouter's afxdp driver) or
//!   GRO (the linux DUT turns it on for this backend).
//!   Such drops are silent: the frames count as sent and lost.
//! * Known limit of live frames (kernel 6.18, this VM): a test run whose
//!   frames all return to its private page pool before the call ends
//!   (loopback; high rates) pays an RCU grace period when the pool is
//!   destroyed, ~24 ms per call: about 40 calls/s, i.e. <= 10 kfps at 256
//!   frames per call. With `/sys/kernel/rcu_expedited` = 1 it is ~0.7 ms
//!   (~0.36 Mfps measured). Hence `xdp` generates with AF_PACKET.
//! * ARP/ND: non-test frames pass to the kernel, which owns the tester
//!   addresses in the tester namespace and answers.

mod asm;
pub(crate) mod count_prog;
pub(crate) mod gen_prog;
mod packet;
pub(crate) mod sys;
mod trial;

use std::os::fd::OwnedFd;
use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use super::clock::{mono_ns, sleep_until, small_timer_slack};
use super::gen::{GenPhase, Template};
use super::ports::{enter_netns, GenTx};
use super::{Counted, LearningReport, SendTiming, TrafficOptions};
use crate::analyzer::LatencySummary;
use crate::plan::TrafficPlan;
use crate::search::LossTimeline;
use count_prog::*;
use netio::{bpf, Pool};
use sys::ArrayMap;

/// How the xdp backend generates (counting is the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum XdpGen {
    /// AF_PACKET `sendmmsg` through the shared generator (`traffic::gen`).
    Packet,
    /// `BPF_PROG_TEST_RUN` live frames with [`gen_prog`].
    Live,
}

impl XdpGen {
    /// Frames per round at `rate_fps`, as the generator batches them.
    pub fn batch_for(self) -> fn(f64) -> u64 {
        match self {
            XdpGen::Packet => super::gen::batch_for,
            XdpGen::Live => batch_for,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            XdpGen::Packet => "AF_PACKET sendmmsg (qdisc bypass), XDP counting",
            XdpGen::Live => "XDP live frames (BPF_PROG_RUN), XDP counting",
        }
    }
}

/// Frames per test run (one batch): about 100 us of traffic, 1..=256.
pub(crate) fn batch_for(rate_fps: f64) -> u64 {
    ((rate_fps * 100e-6).round() as u64).clamp(1, 256)
}

type Work = Box<dyn FnOnce(&mut Engine) + Send>;

/// Handle on the worker thread.
pub(crate) struct XdpNet {
    mode: XdpGen,
    cmd: Option<Sender<Work>>,
    thread: Option<JoinHandle<()>>,
}

/// One trial for the worker.
pub(crate) struct XdpJob {
    /// Per sending port: (plan port index, its streams).
    pub ports: Vec<(usize, Vec<u32>)>,
    /// `templates[stream * nsizes + size_index]`.
    pub templates: Vec<Template>,
    pub nsizes: usize,
    pub schedule: Vec<u16>,
    pub phases: Vec<GenPhase>,
    pub timeline_ns: Option<u64>,
    pub expected_per_stream: u64,
    pub drain_quiet: Duration,
    pub drain_max: Duration,
}

/// What the worker measured.
pub(crate) struct XdpOut {
    /// The counts, latency and timeline, as the trial outcome takes them.
    pub counted: Counted,
    /// How the generator kept to its schedule.
    pub timing: SendTiming,
    pub clock_errors: u64,
    /// Tester-side limits of the generator (ring/pool), as reasons.
    pub own: Vec<String>,
}

impl XdpNet {
    /// Start the worker in the ports' namespace: maps, programs, counting
    /// program attached to every port.
    pub fn new(plan: &TrafficPlan, n_streams: usize, mode: XdpGen) -> Result<XdpNet> {
        let ns = plan.ports[0].netns.clone();
        if plan.ports.iter().any(|p| p.netns != ns) {
            bail!("the xdp tester needs all its ports in one namespace");
        }
        let ifaces: Vec<String> = plan.ports.iter().map(|p| p.iface.clone()).collect();
        let rx: Vec<bool> = (0..plan.ports.len())
            .map(|i| plan.pairs.iter().any(|&(_, r)| r == i))
            .collect();
        let (cmd, cmds) = channel::<Work>();
        let (ready_tx, ready_rx) = channel::<Result<()>>();
        let thread = std::thread::Builder::new()
            .name("sr-bench-xdp".into())
            .spawn(move || {
                small_timer_slack();
                super::cpu::pin_tester_thread();
                let e = enter_netns(ns.as_deref())
                    .and_then(|_| Engine::new(&ifaces, &rx, n_streams, mode));
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
        let me = XdpNet {
            mode,
            cmd: Some(cmd),
            thread: Some(thread),
        };
        ready_rx
            .recv()
            .map_err(|_| anyhow!("the xdp worker died while starting"))??;
        Ok(me)
    }

    pub fn mode(&self) -> XdpGen {
        self.mode
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

    pub fn trial(&self, job: XdpJob) -> Result<XdpOut> {
        self.call(move |e| e.trial(job))?
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

/// Everything the worker owns.
pub(crate) struct Engine {
    ifindex: Vec<u32>,
    /// Receiving ports: the counting program's.
    rx_ifindex: Vec<u32>,
    n_streams: usize,
    seq: ArrayMap,
    gen: OwnedFd,
    glob: ArrayMap,
    stats: ArrayMap,
    bits: ArrayMap,
    wps: u32,
    links: Vec<OwnedFd>,
    _count: OwnedFd,
    mode: XdpGen,
    /// `Packet` mode: an AF_PACKET TX path per port and their buffers.
    txs: Vec<GenTx>,
    pool: Option<Pool>,
}

/// Bitmap memory bound over all streams.
const MAX_BITMAP_BYTES: u64 = 512 << 20;

impl Engine {
    fn new(ifaces: &[String], rx: &[bool], n_streams: usize, mode: XdpGen) -> Result<Engine> {
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
        let rx_ifindex: Vec<u32> = ifindex
            .iter()
            .zip(rx)
            .filter(|p| *p.1)
            .map(|p| *p.0)
            .collect();
        let seq = ArrayMap::new("sr_gen_seq", 8, n_streams)?;
        let gen = sys::load_xdp("sr_gen", &gen_prog::program(seq.fd()))?;
        let glob = ArrayMap::new("sr_cnt_glob", G_WORDS * 8, 1)?;
        let stats = ArrayMap::new("sr_cnt_stream", ST_WORDS * 8, n_streams)?;
        let (bits, count, links, wps) =
            Self::counting(mode, &rx_ifindex, n_streams, 1 << 14, &glob, &stats)?;
        let (mut txs, mut pool) = (Vec::new(), None);
        if mode == XdpGen::Packet {
            for (&i, name) in ifindex.iter().zip(ifaces) {
                txs.push(GenTx::packet(i).with_context(|| format!("AF_PACKET TX on {name}"))?);
            }
            pool = Some(
                Pool::new(4 * netio::BURST_SIZE as u32, super::ports::FRAME_SIZE)
                    .context("generator buffer pool")?,
            );
        }
        Ok(Engine {
            ifindex,
            rx_ifindex,
            n_streams,
            seq,
            gen,
            glob,
            stats,
            bits,
            wps,
            links,
            _count: count,
            mode,
            txs,
            pool,
        })
    }

    /// Bitmap map, counting program and its links for `wps` words/stream.
    #[allow(clippy::type_complexity)]
    fn counting(
        mode: XdpGen,
        ifindex: &[u32],
        n: usize,
        wps: u32,
        glob: &ArrayMap,
        stats: &ArrayMap,
    ) -> Result<(ArrayMap, OwnedFd, Vec<OwnedFd>, u32)> {
        let bits = ArrayMap::new("sr_cnt_bits", 8, n * wps as usize)?;
        let m = CountMaps {
            glob: glob.fd(),
            stats: stats.fd(),
            bits: bits.fd(),
            words_per_stream: wps,
        };
        let prog = sys::load_xdp("sr_count", &count_prog::program(&m))?;
        // Generic mode counts after RPS, on the CPUs the tester ports are
        // steered to (`testbed::rps`); native mode on veth would count in
        // the sender's context, i.e. on the DUT's CPU. Live frames need
        // native mode: it gives the ports NAPI, without which a veth
        // drops XDP_TX frames sent to it.
        let flags = match mode {
            XdpGen::Packet => bpf::XDP_FLAGS_SKB_MODE,
            XdpGen::Live => bpf::XDP_FLAGS_DRV_MODE,
        };
        let mut links = Vec::new();
        for &i in ifindex {
            links.push(
                bpf::link_xdp(&prog, i, flags)
                    .with_context(|| format!("attaching the counting program to ifindex {i}"))?,
            );
        }
        Ok((bits, prog, links, wps))
    }

    /// Grow the bitmap so that `seq_limit` sequence numbers per stream fit.
    fn ensure_bits(&mut self, seq_limit: u64) -> Result<()> {
        let wps = seq_limit.div_ceil(64);
        if wps <= u64::from(self.wps) {
            return Ok(());
        }
        let bytes = wps * 8 * self.n_streams as u64;
        if bytes > MAX_BITMAP_BYTES || wps * self.n_streams as u64 >= 1 << 31 {
            bail!("sequence bitmap of {bytes} bytes needed: trial too long for the xdp tester");
        }
        self.links.clear();
        let (bits, count, links, wps) = Self::counting(
            self.mode,
            &self.rx_ifindex,
            self.n_streams,
            wps as u32,
            &self.glob,
            &self.stats,
        )?;
        (self.bits, self._count, self.links, self.wps) = (bits, count, links, wps);
        Ok(())
    }

    fn reset(&self) {
        self.glob.zero(G_WORDS);
        self.glob.set(G_LAT_MIN, u64::MAX);
        self.stats.zero(self.n_streams * ST_WORDS);
        self.bits.zero(self.n_streams * self.wps as usize);
        self.seq.zero(self.n_streams);
    }

    fn received(&self) -> u64 {
        (0..self.n_streams)
            .map(|s| self.stats.get(s * ST_WORDS + ST_RECEIVED))
            .sum()
    }

    fn learn(
        &mut self,
        ports: &[(usize, Vec<u32>)],
        templates: &[Template],
        iv: Duration,
        timeout: Duration,
    ) -> Result<LearningReport> {
        let mut rep = LearningReport::default();
        let end = mono_ns() + timeout.as_nanos() as u64;
        let nf: usize = ports.iter().map(|p| p.1.len()).sum();
        loop {
            let before = self.glob.get(G_LEARNING);
            for (p, streams) in ports {
                for &s in streams {
                    self.send_one(*p, &templates[s as usize].bytes)?;
                    rep.sent += 1;
                }
            }
            rep.rounds += 1;
            std::thread::sleep(iv);
            let got = self.glob.get(G_LEARNING) - before;
            rep.received += got;
            if got >= nf as u64 {
                rep.complete = true;
                break;
            }
            if mono_ns() >= end {
                break;
            }
        }
        Ok(rep)
    }

    /// One frame of `bytes` out of plan port `p`.
    fn send_one(&mut self, p: usize, bytes: &[u8]) -> Result<()> {
        match self.mode {
            XdpGen::Live => sys::run_live(&self.gen, bytes, self.ifindex[p], 1)
                .context("BPF_PROG_TEST_RUN (live frames)"),
            XdpGen::Packet => packet::send_copy(&mut self.txs[p], self.pool.as_mut(), bytes),
        }
    }

    fn trial(&mut self, job: XdpJob) -> Result<XdpOut> {
        self.ensure_bits(job.expected_per_stream.saturating_mul(4).max(1 << 20))?;
        self.reset();
        if self.mode == XdpGen::Packet {
            return self.trial_packet(job);
        }
        let job = &job;
        let np = job.ports.len();
        let mut sent = vec![0u64; self.n_streams];
        let mut port_frames = vec![0u64; np];
        let mut cursor = vec![(0usize, 0usize); np];
        // (stream, first seq, count, send offset ns) per test run.
        let mut calls: Vec<(u32, u64, u32, u64)> = Vec::new();
        let (mut fell_behind, mut max_lag) = (false, 0u64);
        let t0 = mono_ns() + 100_000;
        let (mut phase_t0, mut ideal, mut start_ns) = (t0 as f64, 0f64, 0u64);
        for ph in &job.phases {
            let b = if ph.paced {
                batch_for(ph.rate_fps)
            } else {
                256
            };
            let interval = if ph.paced {
                b as f64 * 1e9 / ph.rate_fps
            } else {
                0.0
            };
            let phase_ns = if ph.paced {
                ph.frames as f64 * 1e9 / ph.rate_fps
            } else {
                0.0
            };
            let deadline = phase_t0 + phase_ns + (phase_ns * 0.05).max(50e6);
            let (mut done, mut k) = (0u64, 0u64);
            while done < ph.frames {
                let n = b.min(ph.frames - done);
                if ph.paced {
                    let due = (phase_t0 + k as f64 * interval) as u64;
                    let mut now = mono_ns();
                    if now < due {
                        sleep_until(due);
                        now = mono_ns();
                    }
                    max_lag = max_lag.max(now.saturating_sub(due));
                    if now as f64 > deadline {
                        fell_behind = true;
                        break;
                    }
                }
                if start_ns == 0 {
                    start_ns = mono_ns();
                }
                for (pi, (port, streams)) in job.ports.iter().enumerate() {
                    let c = &mut cursor[pi];
                    let s = streams[c.0];
                    let ti = s as usize * job.nsizes + usize::from(job.schedule[c.1]);
                    c.0 += 1;
                    if c.0 == streams.len() {
                        c.0 = 0;
                        c.1 = (c.1 + 1) % job.schedule.len();
                    }
                    let t = mono_ns();
                    sys::run_live(
                        &self.gen,
                        &job.templates[ti].bytes,
                        self.ifindex[*port],
                        n as u32,
                    )
                    .context("BPF_PROG_TEST_RUN (live frames)")?;
                    if job.timeline_ns.is_some() {
                        calls.push((s, sent[s as usize], n as u32, t.saturating_sub(t0)));
                    }
                    sent[s as usize] += n;
                    port_frames[pi] += n;
                }
                done += n;
                k += 1;
            }
            if ph.paced {
                ideal += done as f64 * 1e9 / ph.rate_fps;
            }
            phase_t0 += phase_ns;
        }
        let end_ns = mono_ns();
        let expected: u64 = sent.iter().sum();
        self.drain(expected, job.drain_quiet, job.drain_max);
        Ok(self.read_out(
            job,
            &sent,
            &calls,
            XdpOut {
                counted: Counted::sent_only(expected),
                timing: SendTiming {
                    port_frames,
                    start_ns,
                    end_ns,
                    ideal_ns: ideal as u64,
                    fell_behind,
                    max_lag_ns: max_lag,
                },
                clock_errors: 0,
                own: Vec::new(),
            },
        ))
    }

    /// Wait until every frame arrived (plus 5 ms for stragglers), nothing
    /// arrived for `quiet`, or `max` passed.
    fn drain(&self, expected: u64, quiet: Duration, max: Duration) {
        let (since, quiet, max) = (mono_ns(), quiet.as_nanos() as u64, max.as_nanos() as u64);
        let (mut last, mut last_change, mut all_in) = (self.received(), since, None);
        loop {
            std::thread::sleep(Duration::from_millis(1));
            let now = mono_ns();
            let r = self.received();
            if r != last {
                (last, last_change) = (r, now);
            }
            if r >= expected && all_in.is_none() {
                all_in = Some(now);
            }
            if all_in.is_some_and(|t| now - t >= 5_000_000)
                || now - last_change >= quiet
                || now - since >= max
            {
                break;
            }
        }
    }

    fn is_set(&self, s: u32, q: u64) -> bool {
        let w = s as usize * self.wps as usize + (q / 64) as usize;
        self.bits.get(w) >> (q % 64) & 1 == 1
    }

    fn read_out(
        &self,
        job: &XdpJob,
        sent: &[u64],
        calls: &[(u32, u64, u32, u64)],
        mut o: XdpOut,
    ) -> XdpOut {
        let wps = self.wps as usize;
        let c = &mut o.counted;
        // The program may still be counting a straggler while the maps are
        // read: read until the counters held still across one reading, so
        // counters and bitmap describe the same frames.
        for _ in 0..100 {
            let before = self.received();
            (c.received, c.duplicates, c.reordered, c.lost) = (0, 0, 0, 0);
            for (s, &n) in sent.iter().enumerate() {
                let st = |w| self.stats.get(s * ST_WORDS + w);
                c.received += st(ST_RECEIVED);
                c.duplicates += st(ST_DUPLICATES);
                c.reordered += st(ST_REORDERED);
                let n = n.min(wps as u64 * 64);
                let words = self.bits.slice(s * wps, s * wps + (n / 64) as usize);
                let mut unique: u64 = words.iter().map(|w| u64::from(w.count_ones())).sum();
                for q in (n / 64) * 64..n {
                    unique += u64::from(self.is_set(s as u32, q));
                }
                c.lost += sent[s] - unique;
            }
            if self.received() == before {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        c.non_test = self.glob.get(G_NON_TEST);
        c.latency = self.latency();
        c.timeline = job.timeline_ns.map(|iv| {
            let frames = calls.iter().flat_map(|&(s, first, n, t)| {
                (first..first + u64::from(n)).map(move |q| (t, !self.is_set(s, q)))
            });
            LossTimeline::from_frames(iv, frames)
        });
        o.clock_errors = self.glob.get(G_CLOCK_ERR);
        o
    }

    fn latency(&self) -> LatencySummary {
        let g = |w| self.glob.get(w);
        let count = g(G_LAT_COUNT);
        if count == 0 {
            return LatencySummary::default();
        }
        let (min, max) = (g(G_LAT_MIN), g(G_LAT_MAX));
        let hist: Vec<u64> = (0..NBUCKETS).map(|b| g(G_BUCKETS + b)).collect();
        let total: u64 = hist.iter().sum();
        let q = |p: f64| -> u64 {
            let rank = ((p * total as f64).ceil() as u64).clamp(1, total.max(1));
            let mut acc = 0;
            for (b, &c) in hist.iter().enumerate() {
                acc += c;
                if acc >= rank {
                    let (lo, hi) = bucket_range(b);
                    return ((lo + hi) / 2).clamp(min, max);
                }
            }
            max
        };
        LatencySummary {
            count,
            min_ns: min,
            mean_ns: g(G_LAT_SUM) as f64 / count as f64,
            median_ns: q(0.5),
            p99_ns: q(0.99),
            p999_ns: q(0.999),
            max_ns: max,
            ipdv_mean_abs_ns: None,
            ipdv_max_abs_ns: None,
            pdv_ns: max - min,
        }
    }
}

#[cfg(test)]
mod tests;
