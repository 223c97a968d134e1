//! Cycles per packet by stage for the kernel DUTs (`linux`, `bridge`,
//! `ovs`): paper 001's Table II (Emmerich et al. 2015, section V), which
//! profiled kernel forwarding and split the CPU time into RX, TX, Memory,
//! skb and Processing.
//!
//! # How
//!
//! Each trial, [`StageProfiler::begin`] starts `perf record -e cpu-clock
//! -F <freq> -C <DUT CPUs>` and waits until its events are enabled;
//! [`StageProfiler::end`] stops it, reads `perf report --sort comm,sym`
//! (samples per thread name and symbol), drops what is not DUT work,
//! classifies every symbol by [`STAGES`] and turns the shares into cycles
//! per packet with the trial's measured busy cycles per forwarded packet
//! (`soak_cycles_per_packet` when present, else `dut_cycles_per_packet`,
//! see [`crate::probe`]): `share × cycles per packet`. The sampling only
//! splits; the total is the bench's own measure, so the stages always add
//! up to the figure the comparison uses.
//!
//! Why the `perf` tool and not `perf_event_open` here: perf resolves
//! kernel *and* module symbols (veth, bridge) and user-space symbols of
//! ovs-vswitchd and its libraries (which a /proc/kallsyms lookup cannot),
//! handles the ring buffers, lost samples and throttling, and its data
//! file can be inspected by hand when a split looks odd. Its readiness is
//! exact: it starts with its events disabled (`-D -1`), and `--control
//! fifo:ctl,ack` acknowledges the `enable` command only after the events
//! are on, so no part of the trial goes unsampled. It costs a process start
//! per trial and about a second for the report after it, between trials.
//!
//! Why `cpu-clock`: this VM has no hardware PMU (no `cycles` event). The
//! software clock samples from an hrtimer interrupt, so time spent with
//! interrupts disabled is charged to the instruction that enables them
//! again (e.g. `__napi_schedule`'s irq restore after waking the peer's
//! NAPI thread): the split is by function *where time became visible*,
//! a little coarser than the paper's cycle counter.
//!
//! # What is left out
//!
//! Not DUT work, counted in `excluded` and left out of the shares: the CPU
//! soakers' own spinning ([`crate::soak`]; threads `sr-soak-<cpu>`, user
//! space only: kernel work done in their context, e.g. a softirq that
//! interrupted them, is the DUT's), the idle loop (on a soaked CPU there
//! is almost none), perf itself, and other processes that ran on the DUT's
//! CPUs (`other_processes`: their user space, and their kernel work that
//! is not in the network stack; see [`classify`]). The shares are of the
//! rest, so the stages add up to the trial's cycles per packet; a large
//! `other_processes` count says that the machine was not idle and that
//! figure (the soakers' busy time) is too high as well.
//!
//! The `stages` object: `source`, `cpus`, `samples` (DUT-work samples),
//! `excluded`, `share_pct` and `cycles_per_packet` per stage (null
//! without forwarded packets), `cycles_per_packet_of` (which measure was
//! split) and `total_cycles_per_packet`, `threads` (the five threads with
//! most DUT-work samples) and `top` (the ten hottest symbols with their
//! stage and share, to check the classification; user-space symbols end
//! in ` (user)`). A failed profile gives `{"source", "error"}` and does not
//! fail the trial. Thread names are those perf knows when it starts (a
//! thread renamed during the trial keeps its old name), which is what the
//! DUTs' long-lived threads have.
//!
//! # Classification
//!
//! By the sampled function alone (no call chains: they would multiply the
//! data and the report time), first match in [`STAGES`] wins. Generic
//! helpers that serve every stage (memcpy, locks, RCU, checksums, the
//! scheduler) are `other`, as are unresolved addresses. On veth the
//! transmit path *is* the peer's receive: `veth_xmit` hands the frame to
//! the other end with `__dev_forward_skb`/`netif_rx`, or to its NAPI with
//! `__napi_schedule`, all called from `dev_queue_xmit` on the sending CPU;
//! those are `tx` here (the DUT's own NAPI is scheduled by the tester's
//! transmit, on the tester's CPU, which is not sampled). User-space
//! samples (OVS's netdev datapath runs in ovs-vswitchd) are `processing`
//! except a few functions recognisably of its packet I/O (`rx`/`tx`) or of
//! its buffer management (`memory`); the kernel side of its packet sockets
//! (`packet_rcv`, `packet_sendmsg`, the syscalls) is `rx`/`tx`.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use schema::dut_sample::{CpuFigures, StageReport};

mod classify;
mod split;

pub use classify::{classify, stage_of, Class, OVS_THREADS, STAGES, STAGE_NAMES};
pub use split::{parse_report, Row, Split};

/// Default sampling frequency, Hz (not a multiple of the tick rate, so
/// samples do not fall in step with timer work).
pub const DEFAULT_FREQ: u32 = 2999;
/// `perf` is there and runs.
pub fn check_perf() -> Result<String> {
    let o = Command::new("perf")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .context("running `perf --version` (install linux-perf: scripts/setup.sh does)")?;
    if !o.status.success() {
        bail!(
            "`perf --version` failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// A `perf record` running for one trial.
struct Recording {
    child: Child,
    dir: PathBuf,
}

impl Recording {
    fn data(&self) -> PathBuf {
        self.dir.join("perf.data")
    }

    fn log(&self) -> String {
        super::log_tail(&self.dir.join("perf.log"), 2000)
    }

    /// Stop perf (SIGINT: it writes its file and exits).
    fn stop(&mut self) -> Result<()> {
        if let Ok(Some(_)) = self.child.try_wait() {
            return Ok(());
        }
        // SAFETY: signalling the perf child we started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                return Ok(());
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                bail!("perf record did not stop within 20 s: {}", self.log());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Per-trial stage profiling of the DUT's CPUs (see the module docs).
pub struct StageProfiler {
    /// The CPUs to sample (`None`: all).
    cpus: Option<Vec<usize>>,
    freq: u32,
    /// The DUT's user-space threads ([`classify`]).
    dut_threads: &'static [&'static str],
    run: Option<Recording>,
    /// Why this trial's [`StageProfiler::begin_or_note`] failed.
    failed: Option<String>,
}

impl StageProfiler {
    /// A profiler of `cpus` (`None`: all CPUs); fails when perf is missing.
    pub fn new(cpus: Option<Vec<usize>>) -> Result<StageProfiler> {
        check_perf()?;
        Ok(StageProfiler {
            cpus: cpus.filter(|c| !c.is_empty()),
            freq: DEFAULT_FREQ,
            dut_threads: &[],
            run: None,
            failed: None,
        })
    }

    /// The DUT's user-space threads (default none: the kernel forwards).
    pub fn with_dut_threads(self, dut_threads: &'static [&'static str]) -> StageProfiler {
        StageProfiler {
            dut_threads,
            ..self
        }
    }

    /// The profiler a kernel DUT keeps when `opts` ask for one (checked
    /// at its start, so a missing perf fails the run before any trial).
    pub fn for_dut(opts: &super::DutOptions) -> Result<Option<StageProfiler>> {
        if !opts.profile_stages {
            return Ok(None);
        }
        StageProfiler::new(opts.dut_cpus.clone()).map(Some)
    }

    /// A new profiler with the same CPUs and frequency (one per probe).
    pub fn fresh(&self) -> StageProfiler {
        StageProfiler {
            cpus: self.cpus.clone(),
            freq: self.freq,
            dut_threads: self.dut_threads,
            run: None,
            failed: None,
        }
    }

    /// What the `source` field says.
    pub fn source(&self) -> String {
        format!("perf cpu-clock {} Hz", self.freq)
    }

    /// Start sampling; returns once perf's events are enabled.
    pub fn begin(&mut self) -> Result<()> {
        self.run = None;
        let dir = super::softrouter::private_dir("sr-stages-").context("making perf's folder")?;
        let ctl = dir.join("ctl");
        let ack = dir.join("ack");
        for f in [&ctl, &ack] {
            mkfifo(f)?;
        }
        let log = File::create(dir.join("perf.log")).context("creating perf.log")?;
        let mut cmd = Command::new("perf");
        cmd.args(["record", "-e", "cpu-clock", "-F", &self.freq.to_string()]);
        match &self.cpus {
            Some(c) => cmd.args([
                "-C",
                &c.iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            ]),
            None => cmd.arg("-a"),
        };
        cmd.args(["-D", "-1", "--no-buildid", "-q"])
            .arg("--control")
            .arg(format!("fifo:{},{}", ctl.display(), ack.display()))
            .arg("-o")
            .arg(dir.join("perf.data"))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        super::child_setup(&mut cmd);
        let child = cmd.spawn().context("starting perf record")?;
        let mut rec = Recording { child, dir };
        // Both ends opened read-write: neither open blocks, and what we
        // write waits in the pipe until perf reads it.
        let mut ctl_f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&ctl)
            .context("opening perf's control fifo")?;
        let mut ack_f = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&ack)
            .context("opening perf's ack fifo")?;
        ctl_f.write_all(b"enable\n")?;
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut got = Vec::new();
        loop {
            let mut pfd = libc::pollfd {
                fd: ack_f.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut pfd, 1, 100) };
            let mut buf = [0u8; 64];
            match ack_f.read(&mut buf) {
                Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
                _ => {}
            }
            if got.windows(3).any(|w| w == b"ack") {
                break;
            }
            if let Ok(Some(st)) = rec.child.try_wait() {
                bail!("perf record exited ({st}) before sampling: {}", rec.log());
            }
            if Instant::now() > deadline {
                bail!(
                    "perf record did not enable its events within 30 s: {}",
                    rec.log()
                );
            }
        }
        self.run = Some(rec);
        Ok(())
    }

    /// Stop sampling and split the trial: the `stages` of `dut_stats`
    /// (`cpu`: the trial's `dut_stats.cpu`).
    pub fn end(&mut self, cpu: &CpuFigures) -> Result<StageReport> {
        let mut rec = self
            .run
            .take()
            .context("stage profiler: end() without begin()")?;
        rec.stop()?;
        let out = Command::new("perf")
            .args(["report", "--stdio", "--no-children", "--sort", "comm,sym"])
            .args(["-n", "-q", "--percent-limit", "0", "-i"])
            .arg(rec.data())
            .stdin(Stdio::null())
            .output()
            .context("running perf report")?;
        if !out.status.success() {
            bail!(
                "perf report failed: {} (perf record: {})",
                String::from_utf8_lossy(&out.stderr).trim(),
                rec.log()
            );
        }
        let text = String::from_utf8_lossy(&out.stdout);
        if std::env::var_os("SR_STAGES_DEBUG").is_some() {
            eprintln!("perf report:\n{text}");
        }
        let rows = parse_report(&text);
        let split = Split::of(&rows, self.dut_threads);
        Ok(StageReport::Split(Box::new(split.report(
            &self.source(),
            self.cpus.as_deref(),
            cpu,
        ))))
    }

    /// [`StageProfiler::begin`] that never fails the trial (a profile is
    /// an extra; a long run should not end for it): the error is noted for
    /// [`StageProfiler::end_or_error`] and logged.
    pub fn begin_or_note(&mut self) {
        self.failed = self.begin().err().map(|e| {
            eprintln!("warning: stage profiling failed to start: {e:#}");
            format!("{e:#}")
        });
    }

    /// [`StageProfiler::end`] that never fails the trial: an error goes
    /// into the report ([`StageReport::Failed`]) and to the log.
    pub fn end_or_error(&mut self, cpu: &CpuFigures) -> StageReport {
        let source = self.source();
        let failed = |error| StageReport::Failed { source, error };
        if let Some(e) = self.failed.take() {
            return failed(e);
        }
        match self.end(cpu) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("warning: stage profiling failed: {e:#}");
                failed(format!("{e:#}"))
            }
        }
    }
}

fn mkfifo(p: &Path) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes())?;
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("mkfifo {}", p.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
