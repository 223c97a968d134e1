//! The XDP live-frame generator (`bpf/gen.bpf.c`) from user space: write
//! the trial's plan and frames into the program's maps, run it with one
//! long `BPF_PROG_TEST_RUN` call (live frames), read what it did.
//!
//! How a trial runs:
//! * the plan: up to [`MAX_PHASES`] phases (frames and rate, all sending
//!   ports together; rate 0 = a burst at full speed), up to [`MAX_PORTS`]
//!   sending ports with their streams, and a size schedule (IMIX);
//! * the call asks for up to `u32::MAX` iterations; a thread timer
//!   interrupts it at the trial's deadline (the last frame's due time plus
//!   a grace), or it ends by itself when every phase is a burst (then each
//!   iteration sends a frame, so the iteration count is known);
//! * a call that ends early (its `repeat` ran out, or a stray signal) is
//!   continued from where the program left off (its state is in the map).
//!
//! The calling thread must be in the tester ports' network namespace (the
//! ifindexes are resolved there) and should be pinned to the tester CPU:
//! the call runs the program on the calling CPU.

use std::mem::offset_of;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use aya::programs::{TestRun, TestRunAttrs, TestRunOptions};

use crate::programs::{self, Loaded};
use crate::timer::{mono_ns, ThreadTimer};
use crate::MmapArray;
use layout::{CCtl, CPhase, CPort, CTmpl};

pub mod layout;

/// Sizes of `bpf/gen.h`'s tables (`GEN_MAX_*` and `GEN_TMPL_CAP` in
/// `sr_layout.h`, generated from these). The first three are powers of
/// two: the program masks its indices with them.
pub const MAX_PORTS: usize = 8;
pub const MAX_PHASES: usize = 8;
pub const MAX_SCHED: usize = 1024;
/// Largest frame in a template (buffer bytes, i.e. a 1518-byte frame is
/// 1514 here; room to spare for VLAN tags).
pub const TMPL_CAP: usize = 1536;

/// The most a late start may add to a trial's deadline.
const MAX_SETUP_NS: u64 = 100_000_000;

/// When a call must end: the last frame's due time plus a grace, moved by
/// a late start (the schedule's shift); [`Generator::run`] adds what
/// stalls moved the schedule by during the call.
///
/// The shift is known only once the first frame went, so the timer is
/// armed for the usual late start (`setup`, how late recent calls began);
/// a start later than that moves the deadline and the interrupted call
/// continues (a second call costs a page pool and an RCU grace period,
/// ~25 ms, so only then). The grace is kept in full either way.
#[derive(Debug, Clone, Copy)]
struct Deadline {
    ideal_end: u64,
    grace: u64,
    setup: u64,
}

impl Deadline {
    fn at(&self, shift_ns: u64) -> u64 {
        self.ideal_end + self.grace + self.setup.max(shift_ns)
    }
}

/// One template: `struct gen_tmpl`, its frame at `data`.
const TMPL_SIZE: usize = std::mem::size_of::<CTmpl>();

/// `struct xdp_md` as `ctx_in` of a test run.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct XdpMd {
    data: u32,
    data_end: u32,
    data_meta: u32,
    ingress_ifindex: u32,
    rx_queue_index: u32,
    egress_ifindex: u32,
}

/// A frame to send, with sequence 0 and timestamp 0 (valid checksums),
/// and where the program writes those.
#[derive(Debug, Clone)]
pub struct Frame {
    pub bytes: Vec<u8>,
    pub udp_csum_off: usize,
    /// Sequence number; the timestamp follows it directly.
    pub seq_off: usize,
    /// 64-bit fields (long header form) or 32-bit (short).
    pub long: bool,
    /// UDP after IPv6 (else after a 20-byte IPv4 header).
    pub ipv6: bool,
}

impl Frame {
    /// A frame built by [`packet::test_frame::build`] (sequence and timestamp 0).
    pub fn from_layout(bytes: &[u8], l: &packet::test_frame::FrameLayout) -> Frame {
        debug_assert_eq!(l.ts_off, l.seq_off + if l.long { 8 } else { 4 });
        Frame {
            bytes: bytes[..l.buf_len].to_vec(),
            udp_csum_off: l.udp_csum_off,
            seq_off: l.seq_off,
            long: l.long,
            ipv6: u16::from_be_bytes([bytes[12], bytes[13]]) == 0x86DD,
        }
    }
}

/// One sending port of a trial.
#[derive(Debug, Clone)]
pub struct Port {
    /// The tester's veth end (frames leave through it).
    pub ifindex: u32,
    /// Its streams, sent round robin.
    pub streams: Vec<u32>,
}

/// A constant-rate stretch of a trial, all sending ports together. A
/// phase's schedule starts where the previous one's ends by its rate; a
/// burst takes no time in that schedule, so put bursts last (or alone).
#[derive(Debug, Clone, Copy)]
pub struct Phase {
    /// Frames over all ports.
    pub frames: u64,
    /// Frames per second over all ports; `None`: a burst at full speed.
    pub rate_fps: Option<f64>,
}

/// One trial's plan.
#[derive(Debug, Clone)]
pub struct Plan {
    pub ports: Vec<Port>,
    pub phases: Vec<Phase>,
    /// Size indices, one period (the IMIX schedule); a stream's frame `k`
    /// has size slot `(k) mod len` (each port advances its slot when its
    /// stream cursor wraps).
    pub schedule: Vec<u16>,
    /// Iterations per test-run batch (redirected frames are flushed per
    /// batch). 1..=256.
    pub batch: u32,
    /// The longest catch-up burst, in frames: a frame due longer ago than
    /// this many intervals moves the rest of the schedule rather than
    /// leave with all the others due meanwhile ([`Sent::stall_ns`]); 0
    /// catches up everything. [`CATCHUP_FRAMES`] unless a test says.
    pub catchup_frames: u32,
    /// When to give up on a paced trial that fell behind: this long after
    /// the last frame's due time.
    pub grace: Duration,
    /// Start this long from now (time to write the plan and enter the
    /// call).
    pub lead: Duration,
    /// Latency samples: one frame in this many per stream (a power of
    /// two) carries an exact send time; give the counter the same
    /// ([`crate::count::Counter::set_latency_every`], [`latency_every`]).
    pub latency_every: u32,
}

/// The longest catch-up burst a trial allows: the frames due while the
/// generator was kept off its CPU for up to 128 intervals go at once, and
/// a longer stall moves the schedule. Why a bound: a 2 ms stall at 0.17
/// Mpps left 340 frames to go back to back at ~5 Mfps, which a DUT that
/// forwards 1 Mpps meets with a full 256-frame veth ring; that loss was
/// the tester's, and it decided zero-loss searches. Why 128: a burst of N
/// frames at the generator's speed G into a DUT draining at D fills its
/// ring to about N (1 - D/G), 110 frames here at worst, well inside a
/// veth's 256 (a NIC's ring holds 512-4096); and at 1 Mpps 128 intervals
/// are 128 µs, longer than the tester's own NAPI threads usually keep the
/// generator waiting (with 64, at 1.1 Mpps, those waits alone moved the
/// schedule for 17 % of a trial).
pub const CATCHUP_FRAMES: u32 = 128;

/// A pause of the generator at least this long is the host's (a task or
/// the hypervisor took the tester's CPU), not a wait behind the tester's
/// own receive work: the tester's NAPI threads, which preempt the
/// generator to count what comes back, run for tens of µs at a time even
/// at its maximum rate. Long pauses are reported as noise and are not
/// sending time; short ones are the tester at work, and count against
/// the rate it achieved.
pub const LONG_PAUSE_NS: u64 = 1_000_000;

/// Frames per latency sample at `rate_fps` per port (`None`: a burst):
/// every frame up to 64 kfps, then the power of two that keeps samples
/// between 32 and 64 k per second and port. Why sample at all: reading the
/// clock costs ~40 ns on each side, a quarter of what a frame costs the
/// tester; RFC 2544 asks for one timestamped frame per latency trial, and
/// testers such as TRex and MoonGen time a sampled stream, not every frame.
pub fn latency_every(rate_fps: Option<f64>) -> u32 {
    const SAMPLES_PER_S: f64 = 65_536.0;
    let r = rate_fps.unwrap_or(f64::INFINITY);
    if r <= SAMPLES_PER_S {
        return 1;
    }
    ((r / SAMPLES_PER_S).ceil().min(f64::from(MAX_LATENCY_EVERY)) as u32).next_power_of_two()
}

/// The sparsest sampling: one frame in this many.
pub const MAX_LATENCY_EVERY: u32 = 1 << 10;

/// What the program did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sent {
    /// Frames per plan port.
    pub port_frames: Vec<u64>,
    /// Frames per stream (= the next sequence number).
    pub stream_frames: Vec<u64>,
    /// Frames sent (all ports).
    pub sent: u64,
    /// Frames the plan asked for.
    pub planned: u64,
    /// Worst lateness of a frame against its due time (after a stall
    /// moved the schedule: at most [`Plan::catchup_frames`] intervals).
    pub max_lag_ns: u64,
    /// Time of the first and last frame (CLOCK_MONOTONIC).
    pub first_ns: u64,
    pub last_ns: u64,
    /// When the schedule started and when its last frame was due (after
    /// the shift).
    pub t0_ns: u64,
    pub ideal_end_ns: u64,
    /// How late the call started: the whole schedule moved by this much.
    pub shift_ns: u64,
    /// How far stalls during the trial moved the rest of the schedule
    /// (the generator was kept off its CPU longer than its catch-up
    /// allows), in all, how many times, and the longest: pauses in the
    /// offered load that the tester made.
    pub stall_ns: u64,
    pub stalls: u64,
    pub max_stall_ns: u64,
    /// The moves of at least [`LONG_PAUSE_NS`], in all and how many: the
    /// host's stalls.
    pub long_stall_ns: u64,
    pub long_stalls: u64,
    /// Iterations that found no frame due (the pacing's idle time).
    pub early: u64,
    /// Clock readings (the program reads the clock only when it must).
    pub clock_reads: u64,
    /// Iterations that failed, and the last reason.
    pub errors: u64,
    pub last_error: Option<&'static str>,
    /// Test-run calls it took (1 unless a call was interrupted early).
    pub calls: u32,
    /// Per phase: (t0, interval ps) of its schedule (for loss timelines).
    pub phase_clock: Vec<(u64, u64)>,
    /// Per phase: frames planned (all ports).
    pub phase_frames: Vec<u64>,
}

/// The loaded generator and its maps.
pub struct Generator {
    obj: Loaded,
    ctl: MmapArray,
    streams: MmapArray,
    seq: MmapArray,
    tmpl: MmapArray,
    n_streams: usize,
    nsizes: usize,
    /// Frame length of each template, by stream x size (0: not set).
    tmpl_len: Vec<usize>,
    timer: ThreadTimer,
    /// How late calls have started (the schedule's shift), decaying max:
    /// added to the deadline so a usual late start does not cut a trial.
    setup_ns: u64,
}

impl Generator {
    /// Load the generator for `n_streams` streams of `nsizes` sizes each.
    /// The thread that calls [`Generator::run`] must be this one (the
    /// timer signals its creator).
    pub fn new(n_streams: usize, nsizes: usize) -> Result<Generator> {
        if n_streams == 0 || nsizes == 0 {
            bail!("generator without streams or sizes");
        }
        let ntmpl = n_streams
            .checked_mul(nsizes)
            .filter(|&n| n * TMPL_SIZE <= 1 << 30)
            .context("too many streams x sizes for the generator's templates")?;
        let obj = programs::load(
            "generator",
            programs::GEN_OBJ,
            &[
                ("gen_streams", n_streams as u32),
                ("gen_seq", n_streams as u32),
                ("gen_tmpl", ntmpl as u32),
            ],
            &[],
            "sr_gen",
        )?;
        let ctl = obj.mmap("gen_ctl", std::mem::size_of::<CCtl>(), 1)?;
        let streams = obj.mmap("gen_streams", 4, n_streams)?;
        let seq = obj.mmap("gen_seq", 8, n_streams)?;
        let tmpl = obj.mmap("gen_tmpl", TMPL_SIZE, ntmpl)?;
        Ok(Generator {
            obj,
            ctl,
            streams,
            seq,
            tmpl,
            n_streams,
            nsizes,
            tmpl_len: vec![0; ntmpl],
            timer: ThreadTimer::new().context("the generator's phase timer")?,
            setup_ns: 0,
        })
    }

    /// Template of `stream` at size index `size`.
    pub fn set_frame(&mut self, stream: u32, size: usize, f: &Frame) -> Result<()> {
        if stream as usize >= self.n_streams || size >= self.nsizes {
            bail!("template ({stream}, {size}) outside the generator's tables");
        }
        let len = f.bytes.len();
        if !(60..=TMPL_CAP).contains(&len) {
            bail!(
                "a {}-byte frame: the xdp generator sends 64..={} byte frames \
                 (use --tester afxdp for jumbo frames)",
                len + 4,
                TMPL_CAP + 4
            );
        }
        let width = if f.long { 16 } else { 8 };
        let l4 = if f.ipv6 { 54 } else { 34 };
        if f.seq_off + width > len
            || f.udp_csum_off != l4 + 6
            || f.seq_off != l4 + 8 + if f.long { 16 } else { 4 }
        {
            bail!("template fields not where the generator writes them");
        }
        let base = self.tmpl_key(stream, size) * TMPL_SIZE;
        let put = |field: usize, bytes: &[u8]| self.tmpl.write(base + field, bytes);
        put(offset_of!(CTmpl, len), &(len as u16).to_ne_bytes());
        put(
            offset_of!(CTmpl, csum_off),
            &(f.udp_csum_off as u16).to_ne_bytes(),
        );
        put(
            offset_of!(CTmpl, seq_off),
            &(f.seq_off as u16).to_ne_bytes(),
        );
        put(offset_of!(CTmpl, long_form), &[u8::from(f.long)]);
        put(offset_of!(CTmpl, ipv6), &[u8::from(f.ipv6)]);
        put(offset_of!(CTmpl, data), &f.bytes);
        const _: () = assert!(
            TMPL_SIZE.is_multiple_of(8),
            "array values are 8-byte strided"
        );
        let key = self.tmpl_key(stream, size);
        self.tmpl_len[key] = len;
        Ok(())
    }

    /// Sizes per stream the tables hold.
    pub fn nsizes(&self) -> usize {
        self.nsizes
    }

    /// Restart every stream's sequence at 0.
    pub fn reset_sequences(&mut self) {
        self.seq.zero();
    }

    /// Run one trial: returns when every frame was sent, or at the
    /// deadline (then `sent < planned`).
    pub fn run(&mut self, plan: &Plan) -> Result<Sent> {
        self.check(plan)?;
        let t0 = mono_ns() + plan.lead.as_nanos() as u64;
        let (ideal_end, phase_clock) = self.write_plan(plan, t0);
        let planned: u64 = plan.phases.iter().map(|p| p.frames).sum();
        let all_bursts = plan.phases.iter().all(|p| p.rate_fps.is_none());
        // Bursts: every iteration sends one frame, plus one iteration per
        // phase boundary; the call ends by itself.
        let exact = (planned + plan.phases.len() as u64 + 1).min(u64::from(u32::MAX)) as u32;
        // Bursts have no schedule: allow them 1 us per frame, far slower
        // than any run (a safety net; an all-burst call ends by itself).
        let burst_ns: u64 = plan
            .phases
            .iter()
            .filter(|p| p.rate_fps.is_none())
            .map(|p| p.frames * 1_000)
            .sum();
        let limit = Deadline {
            ideal_end,
            grace: plan.grace.as_nanos() as u64
                + burst_ns
                + if all_bursts { 1_000_000_000 } else { 0 },
            setup: self.setup_ns.min(MAX_SETUP_NS),
        };
        let frame = vec![0u8; self.page_len(plan)];
        let mut calls = 0;
        loop {
            let c = self.ctl_ref();
            // Only the host's pauses move it: a generator that cannot
            // keep up still runs out of time.
            let deadline = limit.at(c.shift_ns) + c.long_stall_sum_ns;
            if c.cur_phase as usize >= plan.phases.len() || mono_ns() >= deadline {
                break;
            }
            let repeat = if all_bursts { exact } else { u32::MAX };
            self.timer
                .arm_at(deadline)
                .context("arming the phase timer")?;
            calls += 1;
            let r = self.call(&frame, plan.ports[0].ifindex, repeat, plan.batch);
            self.timer.disarm();
            match r {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => return Err(e).context("BPF_PROG_TEST_RUN (live frames)"),
            }
            if all_bursts {
                break;
            }
        }
        let sent = self.results(plan, planned, t0, ideal_end, phase_clock, calls);
        self.setup_ns = (self.setup_ns - self.setup_ns / 8).max(sent.shift_ns);
        Ok(sent)
    }

    /// The length the test run's pages start at: the most common length
    /// of the plan's frames (streams x the schedule's slots).
    ///
    /// Why: every fresh page is initialised with that many bytes (the
    /// test run's pool is only its batch, so through a DUT pages are
    /// fresh often), and a frame of another length pays
    /// `bpf_xdp_adjust_tail` and a frame update. It used to be the
    /// longest template set so far, so a 64 B trial after the learning
    /// frame or an IMIX trial shrank every frame, and the tester's
    /// capacity depended on what ran before.
    fn page_len(&self, plan: &Plan) -> usize {
        let per_slot = self.slot_uses(plan);
        let mut counts = std::collections::BTreeMap::<usize, usize>::new();
        for stream in plan.ports.iter().flat_map(|p| &p.streams) {
            for (slot, &n) in per_slot.iter().enumerate().filter(|(_, &n)| n > 0) {
                *counts
                    .entry(self.tmpl_len[self.tmpl_key(*stream, slot)])
                    .or_default() += n;
            }
        }
        // The most common; of equals, the shorter (a fresh page's copy is
        // shorter).
        let best = counts
            .iter()
            .max_by_key(|&(&len, &n)| (n, std::cmp::Reverse(len)));
        best.map_or(60, |(&len, _)| len.max(60))
    }

    /// The template of `stream` at size slot `size`: its key in
    /// `gen_tmpl` (the program's `stream * nsizes + slot`) and in
    /// `tmpl_len`.
    fn tmpl_key(&self, stream: u32, size: usize) -> usize {
        stream as usize * self.nsizes + size
    }

    /// How often each size slot comes in the plan's schedule.
    fn slot_uses(&self, plan: &Plan) -> Vec<usize> {
        let mut n = vec![0; self.nsizes];
        for &s in &plan.schedule {
            n[usize::from(s)] += 1;
        }
        n
    }

    fn check(&self, plan: &Plan) -> Result<()> {
        if plan.ports.is_empty() || plan.ports.len() > MAX_PORTS {
            bail!("1..={MAX_PORTS} sending ports, not {}", plan.ports.len());
        }
        if plan.phases.is_empty() || plan.phases.len() > MAX_PHASES {
            bail!("1..={MAX_PHASES} phases, not {}", plan.phases.len());
        }
        if plan.schedule.is_empty() || plan.schedule.len() > MAX_SCHED {
            bail!("a size schedule of 1..={MAX_SCHED} slots");
        }
        if plan.schedule.iter().any(|&s| usize::from(s) >= self.nsizes) {
            bail!("size schedule names a size beyond the templates");
        }
        let total: usize = plan.ports.iter().map(|p| p.streams.len()).sum();
        if total > self.n_streams
            || plan.ports.iter().any(|p| p.streams.is_empty())
            || plan
                .ports
                .iter()
                .flat_map(|p| &p.streams)
                .any(|&s| s as usize >= self.n_streams)
        {
            bail!("the plan's streams do not fit the generator's tables");
        }
        if plan
            .phases
            .iter()
            .any(|p| p.rate_fps.is_some_and(|r| !(r.is_finite() && r > 0.0)))
        {
            bail!("a phase rate must be positive");
        }
        if !plan.latency_every.is_power_of_two() || plan.latency_every > MAX_LATENCY_EVERY {
            bail!(
                "latency_every must be a power of two up to {MAX_LATENCY_EVERY}, not {}",
                plan.latency_every
            );
        }
        let per_slot = self.slot_uses(plan);
        let unset = plan.ports.iter().flat_map(|p| &p.streams).any(|&st| {
            (0..self.nsizes).any(|s| per_slot[s] > 0 && self.tmpl_len[self.tmpl_key(st, s)] == 0)
        });
        if unset {
            bail!("the plan sends a stream and size with no frame set");
        }
        Ok(())
    }

    fn ctl_ref(&self) -> &CCtl {
        // SAFETY: CCtl mirrors struct gen_ctl (gen.h asserts its size and
        // offsets against sr_layout.h, generated from CCtl), any bit
        // pattern is valid; read between calls, when the program is not
        // running.
        unsafe { &*self.ctl.as_ptr().cast::<CCtl>() }
    }

    /// Write the plan and reset the program's state; returns the last
    /// frame's due time and each phase's (t0, interval).
    fn write_plan(&mut self, plan: &Plan, t0: u64) -> (u64, Vec<(u64, u64)>) {
        // SAFETY: CCtl mirrors the map value; the program is not running.
        let c: &mut CCtl = unsafe { self.ctl.as_mut() };
        c.nports = plan.ports.len() as u32;
        c.nsizes = self.nsizes as u32;
        c.sched_len = plan.schedule.len() as u32;
        c.nphases = plan.phases.len() as u32;
        c.sample_mask = plan.latency_every.max(1) - 1;
        c.catchup_frames = plan.catchup_frames;
        c.schedule = [0; MAX_SCHED];
        c.schedule[..plan.schedule.len()].copy_from_slice(&plan.schedule);
        let mut off = 0u32;
        c.port = [CPort::default(); MAX_PORTS];
        for (i, p) in plan.ports.iter().enumerate() {
            c.port[i] = CPort {
                ifindex: p.ifindex,
                nstreams: p.streams.len() as u32,
                stream_off: off,
                ..CPort::default()
            };
            for (k, &s) in p.streams.iter().enumerate() {
                self.streams.write_value(off as usize + k, &s.to_ne_bytes());
            }
            off += p.streams.len() as u32;
        }
        c.phase = [CPhase::default(); MAX_PHASES];
        let mut t = t0;
        let mut clock = Vec::new();
        let mut last_due = t0;
        for (i, ph) in plan.phases.iter().enumerate() {
            let interval_ps = ph
                .rate_fps
                .map_or(0, |r| (1e12 / r).round().max(1.0) as u64);
            c.phase[i] = CPhase {
                frames: ph.frames,
                interval_ns: interval_ps / 1000,
                t0_ns: t,
                interval_frac_ps: (interval_ps % 1000) as u32,
                paced: u32::from(ph.rate_fps.is_some()),
            };
            clock.push((t, interval_ps));
            let len = (u128::from(ph.frames) * u128::from(interval_ps) / 1000) as u64;
            if ph.frames > 0 {
                last_due = t + len.saturating_sub(interval_ps / 1000);
            }
            t += len;
        }
        (c.cur_phase, c.cur_port, c.phase_sent) = (0, 0, 0);
        (c.due_ns, c.due_rem_ps, c.clock_ns, c.clock_reads) = (t0, 0, 0, 0);
        (c.sent, c.early, c.idle, c.errors, c.error) = (0, 0, 0, 0, 0);
        (c.max_lag_ns, c.first_ns, c.last_ns, c.shift_ns) = (0, 0, 0, 0);
        (c.stall_ns, c.stalls, c.max_stall_ns) = (0, 0, 0);
        (c.long_stall_ns, c.long_stall_sum_ns, c.long_stalls) = (LONG_PAUSE_NS, 0, 0);
        (last_due, clock)
    }

    fn call(&self, frame: &[u8], ifindex: u32, repeat: u32, batch: u32) -> std::io::Result<()> {
        let ctx = XdpMd {
            data_end: frame.len() as u32,
            ingress_ifindex: ifindex,
            ..XdpMd::default()
        };
        // SAFETY: XdpMd is plain old data.
        let ctx_bytes = unsafe {
            std::slice::from_raw_parts(
                (&ctx as *const XdpMd).cast::<u8>(),
                std::mem::size_of::<XdpMd>(),
            )
        };
        let prog = self.prog()?;
        let opts = TestRunOptions {
            data_in: Some(frame),
            ctx_in: Some(ctx_bytes),
            repeat,
            attrs: TestRunAttrs::new().xdp_live_frames(batch.clamp(1, 256)),
            ..TestRunOptions::new()
        };
        prog.test_run(opts).map(|_| ()).map_err(to_io)
    }

    fn prog(&self) -> std::io::Result<&aya::programs::Xdp> {
        match self.obj.ebpf.program("sr_gen") {
            Some(aya::programs::Program::Xdp(p)) => Ok(p),
            _ => Err(std::io::Error::other("sr_gen missing")),
        }
    }

    fn results(
        &self,
        plan: &Plan,
        planned: u64,
        t0: u64,
        ideal_end: u64,
        phase_clock: Vec<(u64, u64)>,
        calls: u32,
    ) -> Sent {
        let c = self.ctl_ref();
        Sent {
            port_frames: (0..plan.ports.len()).map(|i| c.port[i].sent).collect(),
            stream_frames: (0..self.n_streams).map(|s| self.seq.get(s)).collect(),
            sent: c.sent,
            planned,
            max_lag_ns: c.max_lag_ns,
            first_ns: c.first_ns,
            last_ns: c.last_ns,
            t0_ns: t0 + c.shift_ns,
            ideal_end_ns: ideal_end + c.shift_ns + c.stall_ns,
            shift_ns: c.shift_ns,
            stall_ns: c.stall_ns,
            stalls: c.stalls,
            max_stall_ns: c.max_stall_ns,
            long_stall_ns: c.long_stall_sum_ns,
            long_stalls: c.long_stalls,
            early: c.early,
            clock_reads: c.clock_reads,
            errors: c.errors,
            last_error: match c.error {
                0 => None,
                1 => Some("no template for a stream and size"),
                2 => Some("template length out of range"),
                3 => Some("bpf_xdp_adjust_tail failed"),
                4 => Some("bpf_xdp_store_bytes failed"),
                5 => Some("stream without a sequence counter"),
                _ => Some("unknown"),
            },
            calls,
            phase_frames: plan.phases.iter().map(|p| p.frames).collect(),
            phase_clock: phase_clock
                .into_iter()
                .map(|(t, iv)| (t + c.shift_ns, iv))
                .collect(),
        }
    }
}

/// The io::Error inside an aya program error (EINTR is how a call ends).
fn to_io(e: aya::programs::ProgramError) -> std::io::Error {
    match e {
        aya::programs::ProgramError::SyscallError(s) => s.io_error,
        other => std::io::Error::other(other.to_string()),
    }
}

#[cfg(test)]
mod tests;
