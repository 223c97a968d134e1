//! DUT launchers: build the testbed for a pattern, bring the device under
//! test up on it, and hand the traffic engine a [`TrafficPlan`] and a
//! [`DutProbe`].
//!
//! Why one trait for four very different DUTs: the trial loop must not
//! care whether frames are forwarded by softrouter, the Linux kernel, a
//! user's command or a box on a real wire. Each kind lives in its own file:
//!
//! | kind | file | testbed | DUT |
//! |---|---|---|---|
//! | `softrouter` | [`softrouter`] | bare DUT veths | `softrouter run` child in the DUT namespace (AF_XDP by default) |
//! | `linux` | [`linux`] | kernel addresses + routes | `ip_forward`, permanent neighbors, `rp_filter` off, NAPI budget, RPS masks |
//! | `command` | [`command`] | kernel addresses (optional) | `sh -c <command>` in the DUT namespace with the plan in `$SR_*` |
//! | `external` | [`external`] | none: the user's interfaces | nothing; the user asserts isolation |
//! | `floor` | [`floor`] | bare DUT veths | an XDP redirect with the MAC rewrite and nothing else: the wire's own cost |
//!
//! The testbed and the outside view of a DUT (MACs, counters, pings) are in
//! [`bed`]; the per-trial CPU figures every probe reports are in [`probe`],
//! measured with the CPU soakers of [`soak`] (which the run starts on the
//! DUT's CPUs; the traffic engine never uses them).
//! Namespaces are removed when the [`Dut`] is stopped or dropped (and by
//! `testbed`'s cleanup registry on signals).
//!
//! Why a crate of its own (`softrouter-dut`): the launchers are the only
//! part of the bench that knows the router (`schema` for the file it
//! writes and the statistics it reads back, `config` to validate the file) and the
//! host's kernel settings; the procedures (`bench`) run without any of it,
//! and the tester engine (`traffic`) never sees a DUT but through the
//! [`TrafficPlan`] and [`DutProbe`] contract of `bench::plan`. So cargo
//! keeps the engine and the launchers apart: neither crate depends on the
//! other, and only `bench_cli` puts them together. The public API is
//! [`start`] and the [`Dut`] it returns, [`DutOptions`], the testbed view
//! of [`bed`] (for tests and probes), and the launchers' modules; the
//! helpers the launchers share stay `pub(crate)`.

pub mod bed;
pub mod bridge;
pub mod command;
pub mod external;
pub mod floor;
pub mod linux;
pub mod ovs;
pub mod probe;
pub mod soak;
pub mod softrouter;
pub mod stages;

use std::path::PathBuf;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use anyhow::Result;
use schema::dut_description::{DutDescription, FinalStats, ReceiveCpus, Testbed};

use bench::plan::{DutProbe, TesterBackend, TrafficPlan};
use bench::settings::{DutSettings, Pattern};

use bed::IfCounters;
pub use bed::{pairs, ping_through, Bed, BedPort, Detour, RxMechanism, RxPlacement};
use schema::dut_sample::NamedCounters;

/// How to start a DUT, beyond its own settings.
#[derive(Debug, Clone)]
pub struct DutOptions {
    /// TX/RX queues per veth end (1 = single queue).
    pub queues: u32,
    /// The `softrouter` binary for the `softrouter` kind (the CLI passes
    /// `std::env::current_exe()`; `None`: `softrouter` from `$PATH`).
    pub softrouter_bin: Option<PathBuf>,
    /// The tester's packet I/O backend (goes into the plan).
    pub backend: TesterBackend,
    /// How long a DUT may take to become ready.
    pub ready_timeout: Duration,
    /// CPUs for the DUT's work (the tester has the others; see
    /// `traffic::cpu`): softrouter's workers are pinned to them, and the
    /// linux DUT's receive processing is steered there with RPS unless
    /// the settings choose an RPS mode. `None`: wherever the scheduler
    /// puts it.
    pub dut_cpus: Option<Vec<usize>>,
    /// The tester's CPU; with `dut_cpus` it places each veth end's receive
    /// work on its own side (see [`RxPlacement`]).
    pub tester_cpu: Option<usize>,
    /// Profile the kernel DUTs' CPUs in every trial and split their cycles
    /// per packet by stage ([`stages`]); the other kinds ignore it.
    pub profile_stages: bool,
}

impl DutOptions {
    /// The receive placement for the testbed, when both sides have CPUs.
    pub fn rx_placement(&self) -> Option<RxPlacement> {
        let dut = self.dut_cpus.clone().filter(|c| !c.is_empty())?;
        Some(RxPlacement {
            tester_cpus: vec![self.tester_cpu?],
            dut_cpus: dut,
            mechanism: if self.backend.counts_in_xdp() {
                RxMechanism::ThreadedNapi
            } else {
                RxMechanism::Rps
            },
        })
    }
}

impl Default for DutOptions {
    fn default() -> Self {
        DutOptions {
            queues: 1,
            softrouter_bin: None,
            backend: TesterBackend::default(),
            ready_timeout: Duration::from_secs(20),
            dut_cpus: None,
            tester_cpu: None,
            profile_stages: false,
        }
    }
}

/// A running device under test on its testbed.
pub trait Dut: Send {
    /// `softrouter`, `linux`, `command` or `external`.
    fn kind(&self) -> &'static str;
    /// The tester ports, what they are cabled to, and the pattern's pairs.
    fn plan(&self, ipv6: bool, flows_per_pair: u32) -> TrafficPlan;
    /// A fresh probe for per-trial measurements.
    fn probe(&self) -> Box<dyn DutProbe>;
    /// Kind, version and effective configuration, for the results (R15).
    fn describe(&self) -> DutDescription;
    /// The testbed (ports, namespaces), e.g. for [`ping_through`].
    fn bed(&self) -> &Bed;
    /// Final DUT statistics; stops the DUT and removes the testbed.
    fn stop(self: Box<Self>) -> Result<FinalStats>;
}

/// Build the testbed for `pattern`, start and configure the DUT, and wait
/// until it is ready.
pub fn start(settings: &DutSettings, pattern: Pattern, opts: &DutOptions) -> Result<Box<dyn Dut>> {
    Ok(match settings {
        DutSettings::Softrouter { .. } => {
            Box::new(softrouter::SoftrouterDut::start(settings, pattern, opts)?)
        }
        DutSettings::Linux { .. } => Box::new(linux::LinuxDut::start(settings, pattern, opts)?),
        DutSettings::Bridge {} => Box::new(bridge::BridgeDut::start(pattern, opts)?),
        DutSettings::Ovs {} => Box::new(ovs::OvsDut::start(pattern, opts)?),
        DutSettings::Floor {} => Box::new(floor::FloorDut::start(pattern, opts)?),
        DutSettings::Command { .. } => {
            Box::new(command::CommandDut::start(settings, pattern, opts)?)
        }
        DutSettings::External { .. } => {
            Box::new(external::ExternalDut::start(settings, pattern, opts)?)
        }
    })
}

/// Prepare a DUT child: its own process group (so stop/drop can signal
/// everything it started, and a Ctrl-C meant for the benchmark reaches
/// the benchmark, which then stops the DUT in order), and SIGTERM when the
/// thread that started it exits (so a benchmark killed without cleanup
/// leaves no DUT process behind; start DUTs from a thread that outlives
/// them, e.g. the main thread).
pub(crate) fn child_setup(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    // SAFETY: prctl is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Start the child on `cpus` only (the DUT's CPUs), every thread it makes
/// included: a DUT's control-plane threads (statistics, metrics, control)
/// are its own work. Left to the scheduler they land on the tester's CPU,
/// take it from the generator for a time slice (2.7 ms for one metrics
/// scrape, seen in a scheduler trace) and stall the traffic mid-trial.
pub(crate) fn confine_child(cmd: &mut std::process::Command, cpus: Option<&[usize]>) {
    use std::os::unix::process::CommandExt;
    let Some(cpus) = cpus.filter(|c| !c.is_empty()) else {
        return;
    };
    // SAFETY: cpu_set_t is plain data, filled before the fork.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c < libc::CPU_SETSIZE as usize {
            // SAFETY: c is within the set.
            unsafe { libc::CPU_SET(c, &mut set) };
        }
    }
    // SAFETY: sched_setaffinity is async-signal-safe; `set` is a copy.
    unsafe {
        cmd.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// `sh -c <cmd>` output (stdout, trimmed), or the error text.
pub(crate) fn shell_output(ns: Option<&str>, cmd: &str) -> String {
    let mut c = match ns {
        Some(ns) => {
            let mut c = std::process::Command::new("ip");
            c.args(["netns", "exec", ns, "sh", "-c", cmd]);
            c
        }
        None => {
            let mut c = std::process::Command::new("sh");
            c.args(["-c", cmd]);
            c
        }
    };
    match c.stdin(std::process::Stdio::null()).output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => format!(
            "({cmd:?} failed: {} {})",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => format!("({cmd:?} failed: {e})"),
    }
}

/// The running kernel's release (`uname -r`).
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The name of the testbed's DUT namespace, if it has one.
pub(crate) fn dut_ns(bed: &Bed) -> Option<String> {
    bed.dut().map(|n| n.name().to_string())
}

/// The testbed facts the kinds with a DUT namespace report in
/// [`Dut::describe`].
pub(crate) fn describe_bed(bed: &Bed) -> Testbed {
    Testbed {
        queues_per_port: bed.queues,
        pattern: String::from(bed.pattern),
        namespaces: bed.namespaces(),
        ports: bed.describe_ports(),
        receive_cpus: bed.rx_placement.as_ref().map(|r| ReceiveCpus {
            tester_cpus: r.tester_cpus.clone(),
            dut_cpus: r.dut_cpus.clone(),
            mechanism: r.mechanism.name().into(),
        }),
        napi_threads: bed.napi_threads.clone(),
    }
}

/// Interface counters over a trial: `after - before`, per interface.
pub(crate) fn counters_since(after: &[IfCounters], before: &[IfCounters]) -> Vec<IfCounters> {
    after.iter().zip(before).map(|(b, a)| b.since(a)).collect()
}

/// Frames the DUT's interfaces dropped on receive over a trial (their
/// `rx_dropped`): a kernel DUT's own drops, as far as cheap counters
/// tell. Every probe reports its DUT's drops as `dut_stats.dropped`; the
/// traffic engine counts them in the trial's `loss_split.dut_drops`.
pub(crate) fn rx_dropped(counters: &[IfCounters]) -> u64 {
    counters.iter().map(|c| c.rx_dropped).sum()
}

/// Interface counters with the interface's name.
pub(crate) fn named_counters(ifaces: &[String], counters: &[IfCounters]) -> Vec<NamedCounters> {
    ifaces
        .iter()
        .zip(counters)
        .map(|(n, c)| NamedCounters {
            name: n.clone(),
            counters: *c,
        })
        .collect()
}

/// The last `max` bytes (at a character boundary) of a DUT's log file,
/// trimmed; empty when it cannot be read.
pub(crate) fn log_tail(path: &std::path::Path, max: usize) -> String {
    let s = std::fs::read_to_string(path).unwrap_or_default();
    let start = s.len().saturating_sub(max);
    let start = (start..s.len())
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(s.len());
    s[start..].trim().to_string()
}

/// How a DUT child ended under [`terminate_group`].
pub(crate) enum Ended {
    /// It had exited before it was signalled.
    Before(ExitStatus),
    /// It exited after SIGTERM, within the grace time.
    Exited(ExitStatus),
    /// It was still running at the deadline and got SIGKILL (`None`: the
    /// wait for it failed).
    Killed(Option<ExitStatus>),
}

/// Stops `child`, the leader of process group `pgid` (see
/// [`child_setup`]): SIGTERM to the group, wait up to `grace`, then
/// SIGKILL to the group.
pub(crate) fn terminate_group(child: &mut Child, pgid: i32, grace: Duration) -> Ended {
    if let Ok(Some(st)) = child.try_wait() {
        return Ended::Before(st);
    }
    // SAFETY: signalling the process group of a child we started.
    unsafe { libc::kill(-pgid, libc::SIGTERM) };
    let deadline = Instant::now() + grace;
    loop {
        if let Ok(Some(st)) = child.try_wait() {
            return Ended::Exited(st);
        }
        if Instant::now() > deadline {
            // SAFETY: as above.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            return Ended::Killed(child.wait().ok());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
