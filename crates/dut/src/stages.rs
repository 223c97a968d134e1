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

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

/// The stages of paper 001's Table II, and `other`.
pub const STAGE_NAMES: [&str; 6] = ["rx", "tx", "memory", "skb", "processing", "other"];

/// Default sampling frequency, Hz (not a multiple of the tick rate, so
/// samples do not fall in step with timer work).
pub const DEFAULT_FREQ: u32 = 2999;

/// Symbol patterns and their stage, first match wins. A pattern is a
/// name, `prefix*`, `*suffix` or `*infix*`; it is matched against the
/// symbol without compiler suffixes (`.isra.0`, `.constprop.0`, `.cold`).
/// `[u]` entries apply to user-space symbols only, `[ctx]` entries only
/// in the DUT's contexts (its threads, NAPI threads, ksoftirqd, the soakers,
/// idle; see [`classify`]).
///
/// The two `[ctx]` entries are the interrupt entry of the receive path
/// with threaded NAPI (which the bench's xdp tester needs): the tester's
/// transmit wakes the DUT's NAPI thread with an IPI, which preempts the
/// soaker. That interrupt runs with interrupts disabled, so `cpu-clock`
/// charges it to where they are enabled again: on the way back to the
/// interrupted task (`irqentry_exit_to_user_mode`) or after the switch to
/// the NAPI thread (`finish_task_switch`).
pub const STAGES: &[(&str, &[&str])] = &[
    // ---- TX: from dev_queue_xmit down, with the qdisc; on veth also the
    // hand-over to the peer's receive queue (see the module docs).
    (
        "tx",
        &[
            "__dev_queue_xmit",
            "dev_queue_xmit*",
            "sch_direct_xmit",
            "dev_hard_start_xmit",
            "*qdisc*",
            "pfifo_*",
            "netdev_core_pick_tx",
            "netdev_pick_tx",
            "netif_skb_features",
            "validate_xmit_*",
            "skb_network_protocol",
            "dev_xmit_*",
            "txq_*",
            "veth_xmit",
            "veth_forward_skb",
            "veth_xdp_xmit",
            "veth_xdp_rx",
            "veth_skb_is_eligible_for_gro",
            "__dev_forward_skb*",
            "dev_forward_skb*",
            "netif_rx*",
            "__netif_rx",
            "enqueue_to_backlog",
            "__napi_schedule*",
            "____napi_schedule",
            "napi_schedule*",
            "net_rps_send_ipi",
            "br_dev_queue_push_xmit",
            "packet_sendmsg",
            "packet_snd",
            "packet_direct_xmit",
            "*sys_sendto",
            "*sys_sendmsg",
            "*sys_sendmmsg",
            "sock_sendmsg*",
            "__sock_sendmsg",
            "[u] netdev_linux_send*",
            "[u] netdev_send*",
            "[u] sendmmsg",
            "[u] sendmsg",
            "[u] sendto",
            "[u] __libc_send*",
        ],
    ),
    // ---- RX: driver and stack receive, with softirq/IPI entry.
    (
        "rx",
        &[
            "*netif_receive_skb*",
            "__netif_receive*",
            "netif_receive_*",
            "net_rx_action",
            "__napi_poll",
            "napi_poll",
            "napi_threaded_poll*",
            "napi_thread_wait",
            "napi_complete_done",
            "napi_gro_*",
            "napi_busy_loop*",
            "process_backlog",
            "rps_trigger_softirq",
            "veth_*",
            "*gro_receive*",
            "*gro_complete*",
            "gro_*",
            "dev_gro_*",
            "eth_type_trans",
            "skb_defer_rx_timestamp",
            "__do_softirq",
            "handle_softirqs",
            "do_softirq*",
            "__irq_exit_rcu",
            "irq_exit*",
            "*sysvec_call_function*",
            "generic_smp_call_function_single_interrupt",
            "__flush_smp_call_function_queue",
            "[ctx] irqentry_exit*",
            "[ctx] finish_task_switch*",
            "packet_rcv",
            "tpacket_rcv",
            "packet_recvmsg",
            "*sys_recvfrom",
            "*sys_recvmsg",
            "*sys_recvmmsg",
            "do_recvmmsg",
            "sock_recvmsg*",
            "__skb_recv_datagram",
            "__skb_try_recv_datagram",
            "skb_copy_datagram_iter",
            "__skb_datagram_iter",
            "xdp_do_*",
            "bpf_prog_*",
            "[u] netdev_linux_rxq_*",
            "[u] netdev_rxq_recv",
            "[u] recvmmsg",
            "[u] recvmsg",
            "[u] recvfrom",
            "[u] __libc_recv*",
        ],
    ),
    // ---- Memory: allocating and freeing packet memory (not skb init).
    (
        "memory",
        &[
            "kmem_cache_*",
            "__kmem_cache_*",
            "kfree",
            "kfree_skbmem",
            "__kmalloc*",
            "kmalloc*",
            "*slab_alloc*",
            "*slab_free*",
            "__slab_*",
            "slab_*",
            "page_pool_*",
            "__page_pool_*",
            "napi_pp_*",
            "skb_pp_*",
            "napi_skb_cache_*",
            "skb_free_head",
            "*alloc_skb*",
            "*page_frag*",
            "__alloc_pages*",
            "alloc_pages*",
            "__free_pages*",
            "free_pages*",
            "free_unref_page*",
            "*free_frozen_pages*",
            "get_page_from_freelist",
            "rmqueue*",
            "__folio_put",
            "put_page",
            "__put_page",
            "[u] dp_packet_new*",
            "[u] dp_packet_delete*",
            "[u] dp_packet_uninit",
            "[u] malloc",
            "[u] free",
            "[u] cfree",
            "[u] _int_malloc",
            "[u] _int_free*",
            "[u] xmalloc*",
            "[u] xzalloc*",
        ],
    ),
    // ---- Processing: everything that reaches the forwarding decision
    // (IP, FIB, neighbours, netfilter, the bridge, OVS).
    (
        "processing",
        &[
            "ip_*",
            "__ip_*",
            "ip6_*",
            "__ip6_*",
            "ipv4_*",
            "ipv6_*",
            "fib_*",
            "fib4_*",
            "fib6_*",
            "__fib_*",
            "rt6_*",
            "l3mdev_*",
            "neigh_*",
            "__neigh_*",
            "dst_*",
            "nf_*",
            "__nf_*",
            "ipt_*",
            "ip6t_*",
            "xt_*",
            "br_*",
            "__br_*",
            "nbp_*",
            "fdb_*",
            "ovs_*",
        ],
    ),
    // ---- skb: initialising, releasing or changing an skbuff (not the
    // memory it lives in).
    ("skb", &["*skb*"]),
];

/// Where a sample goes: a stage, or left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Stage(&'static str),
    /// A soaker's own spinning (user space of an `sr-soak-*` thread).
    Soaker,
    /// The idle loop.
    Idle,
    /// perf itself.
    Profiler,
    /// Another process's work: its user space, or kernel work in its
    /// context that is no part of the network stack (a compiler's page
    /// faults, say; see [`classify`]).
    Foreign,
}

/// Threads in whose context the kernel does the DUT's work: NAPI threads,
/// ksoftirqd, the soakers (softirqs interrupt them) and the idle task.
const DUT_CONTEXTS: &[&str] = &["napi/*", "ksoftirqd/*", "sr-soak-*", "swapper*"];

/// ovs-vswitchd's threads (its netdev datapath polls system ports in the
/// main thread; the others are its upcall handlers and RCU).
pub const OVS_THREADS: &[&str] = &[
    "ovs-vswitchd",
    "handler*",
    "revalidator*",
    "urcu*",
    "pmd*",
    "ct_clean*",
    "ipf_clean*",
];

/// The idle loop's functions (left out).
const IDLE: &[&str] = &[
    "default_idle*",
    "*safe_halt",
    "native_halt",
    "cpuidle_*",
    "do_idle",
    "cpu_startup_entry",
    "cpu_idle_poll*",
    "arch_cpu_idle*",
    "acpi_idle*",
    "acpi_safe_halt",
    "intel_idle*",
    "mwait_idle*",
    "poll_idle",
];

/// `pat` (see [`STAGES`]) matches `name`.
fn glob(pat: &str, name: &str) -> bool {
    match (pat.strip_prefix('*'), pat.strip_suffix('*')) {
        (Some(_), Some(_)) if pat.len() >= 2 => name.contains(&pat[1..pat.len() - 1]),
        (Some(suffix), None) => name.ends_with(suffix),
        (None, Some(prefix)) => name.starts_with(prefix),
        _ => name == pat,
    }
}

/// The symbol without compiler suffixes: `veth_xdp_rcv_bulk_skb.isra.0`
/// -> `veth_xdp_rcv_bulk_skb`. C++/Rust names with `::` keep theirs.
fn base_name(sym: &str) -> &str {
    let s = sym.trim();
    if s.contains("::") {
        return s;
    }
    s.split('.').next().unwrap_or(s)
}

/// The stage of symbol `sym` (`user`: sampled in user space).
pub fn stage_of(sym: &str, user: bool) -> &'static str {
    stage_in(sym, user, false)
}

/// [`stage_of`], `ctx`: the sample is in one of the DUT's contexts.
fn stage_in(sym: &str, user: bool, ctx: bool) -> &'static str {
    let name = base_name(sym);
    if name.is_empty() || name.starts_with("0x") || name.starts_with("[unknown]") {
        return if user { "processing" } else { "other" };
    }
    for (stage, pats) in STAGES {
        for p in pats.iter() {
            let (u_only, p) = match p.strip_prefix("[u] ") {
                Some(p) => (true, p),
                None => (false, *p),
            };
            if u_only && !user {
                continue;
            }
            let (ctx_only, p) = match p.strip_prefix("[ctx] ") {
                Some(p) => (true, p),
                None => (false, p),
            };
            if ctx_only && (!ctx || user) {
                continue;
            }
            if glob(p, name) {
                return stage;
            }
        }
    }
    if user {
        "processing"
    } else {
        "other"
    }
}

/// The class of a sample of thread `comm` in `sym`; `dut_threads`: the
/// DUT's own user-space threads (patterns as in [`STAGES`]; none for the
/// kernel's forwarding and the bridge, [`OVS_THREADS`] for OVS).
///
/// The DUT CPUs are shared with whatever else the machine runs (the bench's
/// own unpinned threads, a compiler): user-space samples of any other
/// thread are [`Class::Foreign`], and so are its kernel samples unless
/// they are in the network stack (a softirq that interrupted it: on the
/// DUT's CPUs all network work is the DUT's).
pub fn classify(comm: &str, sym: &str, user: bool, dut_threads: &[&str]) -> Class {
    if comm.starts_with("sr-soak-") && user {
        return Class::Soaker;
    }
    if comm == "perf" || comm.starts_with("perf-") {
        return Class::Profiler;
    }
    if !user && IDLE.iter().any(|p| glob(p, base_name(sym))) {
        return Class::Idle;
    }
    let own = dut_threads.iter().any(|p| glob(p, comm));
    if user && !own {
        return Class::Foreign;
    }
    let ctx = own || DUT_CONTEXTS.iter().any(|p| glob(p, comm));
    let stage = stage_in(sym, user, ctx);
    if stage == "other" && !ctx {
        return Class::Foreign;
    }
    Class::Stage(stage)
}

/// One row of `perf report --sort comm,sym -n`.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub samples: u64,
    pub comm: String,
    /// `[k]` kernel, else user space (`[.]`).
    pub kernel: bool,
    pub sym: String,
}

/// Parse `perf report --stdio --no-children --sort comm,sym -n -q`
/// output: `  29.62%  1002  napi/sr4019x4b-  [k] __napi_schedule`.
/// Lines that do not look like that (headers, blank, warnings) are
/// skipped.
pub fn parse_report(text: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let Some((pct, after_pct)) = l.split_once(char::is_whitespace) else {
            continue;
        };
        if !pct.ends_with('%') {
            continue;
        }
        let Some((n, tail)) = after_pct.trim_start().split_once(char::is_whitespace) else {
            continue;
        };
        let Ok(samples) = n.parse::<u64>() else {
            continue;
        };
        let tail = tail.trim_start();
        // The symbol's marker: [k] kernel, [.] user, [g] guest, [u]
        // guest user, [H] hypervisor; the comm is before it.
        let Some(at) = ["[k] ", "[.] ", "[g] ", "[u] ", "[H] "]
            .iter()
            .filter_map(|m| tail.find(m).map(|i| (i, *m)))
            .min_by_key(|x| x.0)
        else {
            continue;
        };
        rows.push(Row {
            samples,
            comm: tail[..at.0].trim().to_string(),
            kernel: at.1 == "[k] ",
            sym: tail[at.0 + at.1.len()..].trim().to_string(),
        });
    }
    rows
}

/// Per-stage samples of a trial's report rows.
#[derive(Debug, Clone, Default)]
pub struct Split {
    pub by_stage: BTreeMap<&'static str, u64>,
    pub soaker: u64,
    pub idle: u64,
    pub profiler: u64,
    pub foreign: u64,
    /// DUT-work samples per thread name, most first.
    pub threads: Vec<(String, u64)>,
    /// (symbol, stage, samples), all threads together, hottest first.
    pub symbols: Vec<(String, &'static str, u64)>,
}

impl Split {
    /// Split the report rows of a trial; `dut_threads` as for [`classify`].
    pub fn of(rows: &[Row], dut_threads: &[&str]) -> Split {
        let mut s = Split::default();
        let mut syms: BTreeMap<(String, &'static str), u64> = BTreeMap::new();
        let mut threads: BTreeMap<String, u64> = BTreeMap::new();
        for r in rows {
            match classify(&r.comm, &r.sym, !r.kernel, dut_threads) {
                Class::Soaker => s.soaker += r.samples,
                Class::Idle => s.idle += r.samples,
                Class::Profiler => s.profiler += r.samples,
                Class::Foreign => s.foreign += r.samples,
                Class::Stage(st) => {
                    *s.by_stage.entry(st).or_default() += r.samples;
                    *threads.entry(r.comm.clone()).or_default() += r.samples;
                    let name = if r.kernel {
                        r.sym.clone()
                    } else {
                        format!("{} (user)", r.sym)
                    };
                    *syms.entry((name, st)).or_default() += r.samples;
                }
            }
        }
        s.symbols = syms.into_iter().map(|((n, st), c)| (n, st, c)).collect();
        s.symbols
            .sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
        s.threads = threads.into_iter().collect();
        s.threads
            .sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        s
    }

    /// DUT-work samples (everything not left out).
    pub fn samples(&self) -> u64 {
        self.by_stage.values().sum()
    }

    /// The `stages` object of a trial's `dut_stats`; `cpu` is that trial's
    /// `dut_stats.cpu` (for the cycles per packet).
    pub fn to_json(&self, source: &str, cpus: Option<&[usize]>, cpu: &Value) -> Value {
        let n = self.samples();
        let share = |st: &str| -> Option<f64> {
            (n > 0).then(|| self.by_stage.get(st).copied().unwrap_or(0) as f64 * 100.0 / n as f64)
        };
        let (per_pkt, of) = match cpu["soak_cycles_per_packet"].as_f64() {
            Some(v) => (Some(v), "soak_cycles_per_packet"),
            None => (
                cpu["dut_cycles_per_packet"].as_f64(),
                "dut_cycles_per_packet",
            ),
        };
        let mut shares = serde_json::Map::new();
        let mut cycles = serde_json::Map::new();
        for st in STAGE_NAMES {
            let sh = share(st);
            shares.insert(st.into(), json!(sh));
            cycles.insert(
                st.into(),
                json!(sh.zip(per_pkt).map(|(s, c)| s / 100.0 * c)),
            );
        }
        let top: Vec<Value> = self
            .symbols
            .iter()
            .take(10)
            .map(|(sym, st, c)| {
                json!({
                    "symbol": sym,
                    "stage": st,
                    "share_pct": *c as f64 * 100.0 / n.max(1) as f64,
                })
            })
            .collect();
        json!({
            "source": source,
            "cpus": cpus,
            "samples": n,
            "excluded": {
                "soaker": self.soaker,
                "idle": self.idle,
                "profiler": self.profiler,
                "other_processes": self.foreign,
            },
            "threads": self
                .threads
                .iter()
                .take(5)
                .map(|(t, c)| json!({"thread": t, "samples": c}))
                .collect::<Vec<_>>(),
            "share_pct": shares,
            "cycles_per_packet": cycles,
            "cycles_per_packet_of": of,
            "total_cycles_per_packet": per_pkt,
            "top": top,
        })
    }
}

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

    /// Stop sampling and split the trial: the `stages` object for
    /// `dut_stats` (`cpu`: the trial's `dut_stats.cpu`).
    pub fn end(&mut self, cpu: &Value) -> Result<Value> {
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
        Ok(split.to_json(&self.source(), self.cpus.as_deref(), cpu))
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
    /// into the object (`{"error": ...}`) and to the log.
    pub fn end_or_error(&mut self, cpu: &Value) -> Value {
        if let Some(e) = self.failed.take() {
            return json!({ "source": self.source(), "error": e });
        }
        self.end(cpu).unwrap_or_else(|e| {
            eprintln!("warning: stage profiling failed: {e:#}");
            json!({ "source": self.source(), "error": format!("{e:#}") })
        })
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
mod tests {
    use super::*;

    /// Part of a real `perf report` of the linux DUT's CPU (threaded
    /// NAPI, xdp tester), with a soaker, idle and perf line added.
    const REPORT: &str = "\
    29.62%          1002  napi/sr4019x4b-  [k] __napi_schedule
    11.56%           391  sr-soak-0        [.] std::sys::backtrace::__rust_begin_short_backtrace
     3.72%           126  napi/sr4019x4b-  [k] veth_xmit
     2.75%            93  napi/sr4019x4b-  [k] csum_partial
     2.48%            84  napi/sr4019x4b-  [k] netif_receive_skb_list_internal
     2.42%            82  napi/sr4019x4b-  [k] __dev_queue_xmit
     2.34%            79  napi/sr4019x4b-  [k] ip_sublist_rcv
     2.10%            71  napi/sr4019x4b-  [k] ip_forward
     2.07%            70  napi/sr4019x4b-  [k] veth_xdp_rcv
     1.83%            62  napi/sr4019x4b-  [k] napi_skb_cache_get_bulk
     1.36%            46  sr-soak-0        [k] __sysvec_call_function_single
     1.06%            36  napi/sr4019x4b-  [k] veth_xdp_rcv_bulk_skb.isra.0
     1.03%            35  napi/sr4019x4b-  [k] __xdp_build_skb_from_frame
     0.98%            33  napi/sr4019x4b-  [k] skb_defer_rx_timestamp
     0.74%            25  napi/sr4019x4b-  [k] __kmem_cache_alloc_bulk
     0.50%            17  swapper          [k] pv_native_safe_halt
     0.30%            10  perf             [k] perf_output_sample
     0.20%             7  ovs-vswitchd     [.] miniflow_extract
     0.10%             3  my thread name   [.] 0x00007f0000001234
     0.10%             4  rustc            [k] irqentry_exit_to_user_mode
     0.10%             5  rustc            [k] net_rx_action
";

    #[test]
    fn parses_perf_report_rows() {
        let rows = parse_report(REPORT);
        assert_eq!(rows.len(), 21);
        assert_eq!(
            rows[0],
            Row {
                samples: 1002,
                comm: "napi/sr4019x4b-".into(),
                kernel: true,
                sym: "__napi_schedule".into(),
            }
        );
        assert!(!rows[1].kernel);
        assert_eq!(rows[1].comm, "sr-soak-0");
        assert_eq!(rows[18].comm, "my thread name", "comms with spaces");
        assert_eq!(rows[18].sym, "0x00007f0000001234");
        // Headers, blank lines and warnings are skipped.
        let noisy = format!("# Samples: 3K\n#\n\nWarning: lost samples\n{REPORT}");
        assert_eq!(parse_report(&noisy).len(), 21);
    }

    #[test]
    fn classifies_symbols_by_the_table() {
        let k = |s| stage_of(s, false);
        for s in [
            "veth_xmit",
            "__dev_queue_xmit",
            "sch_direct_xmit",
            "dev_hard_start_xmit",
            "pfifo_fast_enqueue",
            "__qdisc_run",
            "__napi_schedule",
            "__dev_forward_skb2",
            "netif_rx_internal",
        ] {
            assert_eq!(k(s), "tx", "{s}");
        }
        for s in [
            "veth_poll",
            "veth_xdp_rcv_bulk_skb.isra.0",
            "napi_threaded_poll",
            "__netif_receive_skb_core.constprop.0",
            "netif_receive_skb_list_internal",
            "net_rx_action",
            "process_backlog",
            "dev_gro_receive",
            "eth_type_trans",
            "handle_softirqs",
            "__sysvec_call_function_single",
        ] {
            assert_eq!(k(s), "rx", "{s}");
        }
        for s in [
            "kmem_cache_alloc_bulk",
            "__kmem_cache_alloc_bulk",
            "kmem_cache_free",
            "kfree",
            "__kmalloc_node_track_caller",
            "page_pool_put_unrefed_page",
            "napi_skb_cache_get_bulk",
            "__alloc_skb",
            "__napi_alloc_skb",
            "skb_free_head",
            "kfree_skbmem",
        ] {
            assert_eq!(k(s), "memory", "{s}");
        }
        for s in [
            "__build_skb_around",
            "__xdp_build_skb_from_frame",
            "skb_release_data",
            "kfree_skb_reason",
            "consume_skb",
            "napi_consume_skb",
            "skb_clone",
            "__copy_skb_header",
        ] {
            assert_eq!(k(s), "skb", "{s}");
        }
        for s in [
            "ip_forward",
            "ip_rcv_finish_core.isra.0",
            "ip_skb_dst_mtu",
            "fib_table_lookup",
            "ip6_forward",
            "neigh_resolve_output",
            "nf_hook_slow",
            "br_handle_frame",
            "br_fdb_find_rcu",
        ] {
            assert_eq!(k(s), "processing", "{s}");
        }
        for s in [
            "csum_partial",
            "_raw_spin_lock",
            "memcpy",
            "0xffffffff81000000",
        ] {
            assert_eq!(k(s), "other", "{s}");
        }
        // OVS user space.
        let u = |s| stage_of(s, true);
        assert_eq!(u("miniflow_extract"), "processing");
        assert_eq!(u("dpcls_lookup"), "processing");
        assert_eq!(u("0x00007f0000001234"), "processing");
        assert_eq!(u("netdev_linux_rxq_recv"), "rx");
        assert_eq!(u("netdev_linux_send"), "tx");
        assert_eq!(u("dp_packet_delete"), "memory");
        assert_eq!(u("free"), "memory");
        assert_eq!(k("free"), "other", "[u] patterns are user space only");
        // Left out.
        assert_eq!(
            classify("sr-soak-1", "dut::soak::soak", true, &[]),
            Class::Soaker
        );
        assert_eq!(
            classify("sr-soak-1", "__sysvec_call_function_single", false, &[]),
            Class::Stage("rx"),
            "kernel work in the soaker's context is the DUT's"
        );
        assert_eq!(
            classify("swapper", "pv_native_safe_halt", false, &[]),
            Class::Idle
        );
        assert_eq!(
            classify("swapper", "net_rx_action", false, &[]),
            Class::Stage("rx")
        );
        assert_eq!(
            classify("perf", "perf_output_sample", false, &[]),
            Class::Profiler
        );
        // Other processes' work is not the DUT's, but the network stack
        // in their context (an interrupting softirq) is.
        assert_eq!(
            classify("rustc", "computeKnownBits", true, &[]),
            Class::Foreign
        );
        assert_eq!(
            classify("rustc", "irqentry_exit_to_user_mode", false, &[]),
            Class::Foreign
        );
        assert_eq!(
            classify("rustc", "__netif_receive_skb_core", false, &[]),
            Class::Stage("rx")
        );
        assert_eq!(
            classify("napi/sr1x4b-0", "_raw_spin_lock", false, &[]),
            Class::Stage("other")
        );
        // Interrupt entry: rx in the DUT's contexts only.
        assert_eq!(
            classify("sr-soak-0", "irqentry_exit_to_user_mode", false, &[]),
            Class::Stage("rx")
        );
        assert_eq!(
            classify("napi/sr1x4b-0", "finish_task_switch.isra.0", false, &[]),
            Class::Stage("rx")
        );
        assert_eq!(stage_of("finish_task_switch.isra.0", false), "other");
        assert_eq!(
            classify("ovs-vswitchd", "miniflow_extract", true, OVS_THREADS),
            Class::Stage("processing")
        );
        assert_eq!(
            classify("handler3", "__memcpy_avx_unaligned", true, OVS_THREADS),
            Class::Stage("processing")
        );
        assert_eq!(
            classify("ovs-vswitchd", "miniflow_extract", true, &[]),
            Class::Foreign
        );
        // Every stage of the table is one of the names.
        for (st, _) in STAGES {
            assert!(STAGE_NAMES.contains(st), "{st}");
        }
    }

    #[test]
    fn splits_shares_and_cycles() {
        let split = Split::of(&parse_report(REPORT), OVS_THREADS);
        assert_eq!(split.soaker, 391);
        assert_eq!(split.idle, 17);
        assert_eq!(split.profiler, 10);
        assert_eq!(split.foreign, 3 + 4);
        let n = split.samples();
        assert_eq!(
            n,
            1002 + 126 + 93 + 84 + 82 + 79 + 71 + 70 + 62 + 46 + 36 + 35 + 33 + 25 + 7 + 5
        );
        assert_eq!(
            split.threads[0],
            ("napi/sr4019x4b-".to_string(), n - 46 - 7 - 5)
        );
        let cpu = json!({"soak_cycles_per_packet": 2000.0, "dut_cycles_per_packet": 2500.0});
        let v = split.to_json("perf cpu-clock 2999 Hz", Some(&[0]), &cpu);
        assert_eq!(v["samples"], n);
        assert_eq!(v["excluded"]["other_processes"], 7);
        assert_eq!(v["cycles_per_packet_of"], "soak_cycles_per_packet");
        let sum_share: f64 = STAGE_NAMES
            .iter()
            .map(|s| v["share_pct"][s].as_f64().unwrap())
            .sum();
        assert!((sum_share - 100.0).abs() < 1e-9, "{v}");
        let sum_cyc: f64 = STAGE_NAMES
            .iter()
            .map(|s| v["cycles_per_packet"][s].as_f64().unwrap())
            .sum();
        assert!((sum_cyc - 2000.0).abs() < 1e-6, "{v}");
        let tx = 1002 + 126 + 82;
        let want = tx as f64 * 100.0 / n as f64;
        assert!((v["share_pct"]["tx"].as_f64().unwrap() - want).abs() < 1e-9);
        let top = v["top"].as_array().unwrap();
        assert_eq!(top.len(), 10);
        assert_eq!(top[0]["symbol"], "__napi_schedule");
        assert_eq!(top[0]["stage"], "tx");
        // Without soakers: the tick-based figure.
        let v = split.to_json("x", None, &json!({"dut_cycles_per_packet": 1000.0}));
        assert_eq!(v["cycles_per_packet_of"], "dut_cycles_per_packet");
        assert!(v["cycles_per_packet"]["rx"].as_f64().unwrap() > 0.0);
        // Nothing forwarded: shares, no cycles.
        let v = split.to_json("x", None, &json!({"dut_cycles_per_packet": null}));
        assert!(v["cycles_per_packet"]["rx"].is_null());
        assert!(v["share_pct"]["rx"].is_number());
    }

    /// perf for real, on one CPU, with a busy thread there: it starts,
    /// enables, stops and reports, and the busy thread's samples are in.
    #[test]
    fn profiles_a_cpu_for_real() {
        if !testbed::require_root("stage profiler") {
            return;
        }
        if check_perf().is_err() {
            eprintln!("profiles_a_cpu_for_real: skipped (no perf)");
            return;
        }
        let cpu = 0;
        let mut p = StageProfiler::new(Some(vec![cpu]))
            .unwrap()
            .with_dut_threads(&["sr-test-busy"]);
        // The thread exists (named) before perf starts, as a DUT's do:
        // perf learns the names of threads that exist when it starts.
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let busy = std::thread::Builder::new()
            .name("sr-test-busy".into())
            .spawn(move || {
                // SAFETY: plain data and syscall on this thread.
                unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(cpu, &mut set);
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                }
                go_rx.recv().unwrap();
                let t = Instant::now();
                let mut x = 1u64;
                while t.elapsed() < Duration::from_millis(300) {
                    x = std::hint::black_box(x.wrapping_mul(3).wrapping_add(1));
                }
            })
            .unwrap();
        let t = Instant::now();
        p.begin().unwrap();
        let started = t.elapsed();
        go_tx.send(()).unwrap();
        busy.join().unwrap();
        let v = p.end(&json!({"soak_cycles_per_packet": 100.0})).unwrap();
        eprintln!("started in {started:?}: {v:#}");
        assert!(v["samples"].as_u64().unwrap() > 100, "{v}");
        assert_eq!(v["threads"][0]["thread"], "sr-test-busy", "{v}");
        assert_eq!(v["source"], format!("perf cpu-clock {DEFAULT_FREQ} Hz"));
        let sum: f64 = STAGE_NAMES
            .iter()
            .map(|s| v["cycles_per_packet"][s].as_f64().unwrap())
            .sum();
        assert!((sum - 100.0).abs() < 1e-6, "{v}");
        // The same profiler again (a second trial).
        p.begin().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(p.end(&json!({})).is_ok());
    }

    /// A profile that cannot start (no such CPU) is an error in the
    /// trial's `stages`, not a failed trial.
    #[test]
    fn a_failed_start_is_noted_not_fatal() {
        if !testbed::require_root("stage profiler") || check_perf().is_err() {
            return;
        }
        let mut p = StageProfiler::new(Some(vec![4095])).unwrap();
        p.begin_or_note();
        let v = p.end_or_error(&json!({}));
        assert!(v["error"].is_string(), "{v}");
        assert!(v["share_pct"].is_null(), "{v}");
    }
}
