//! The Linux kernel as the DUT: IP forwarding in the DUT namespace.
//!
//! Configured: the `star` addresses and routes (198.19.i.0/24 and
//! 2001:2:0:(100+i)::/64 via the tester's `.2`/`::2`), IPv4 and IPv6
//! forwarding, permanent neighbor entries for the tester addresses (the
//! tester's AF_XDP ports never let its kernel answer ARP/ND), and
//! `rp_filter` off (test sources on one port are legitimately routed back
//! through another in mesh patterns).
//!
//! Knobs (paper 000):
//!
//! - **NAPI budget**: `net.core.netdev_budget`, the packets one NET_RX
//!   softirq may process over all devices. It is a *global* sysctl (only
//!   the initial namespace has it), so it is written from this process's
//!   namespace and the old value is restored at stop/drop.
//! - **Receive-processing affinity**: veth has no interrupts (a frame is
//!   received on the CPU that sent it), so the IRQ `smp_affinity` of the
//!   paper has no meaning here; its analog is RPS, which hands each
//!   received frame to a CPU chosen from the receive queue's `rps_cpus`
//!   mask. Modes ([`RpsMode`]): `off` (mask 0: processing stays on the
//!   sender's CPU), `all` (hash over every CPU), `per-port` (port i on CPU
//!   i mod #CPUs, one core per input port as in the paper's mode I), one
//!   hex mask for all ports, or a list of masks, one per port (to build the
//!   paper's modes I and II by hand). Written inside the DUT namespace to
//!   `/sys/class/net/<if>/queues/rx-<q>/rps_cpus`; gone with the namespace.
//! - **veth NAPI** (`napi = true`): GRO on the DUT veth ends, which makes
//!   veth receive through a per-queue NAPI instance with its own poll
//!   weight, as a NIC driver does, instead of the per-CPU backlog. Default:
//!   left as created (GRO off, the kernel's default for veth) so that
//!   "linux" means the stock configuration; the budget applies either way
//!   (the backlog is polled by net_rx_action too).
//! - **Interrupt coalescing, software form** (`napi_defer_hard_irqs = N`,
//!   `gro_flush_timeout_us = U`): the kernel's per-device sysfs files of
//!   those names, written on every DUT veth end inside the DUT namespace
//!   (the timeout in ns) and read back into [`Dut::describe`]
//!   (`napi_coalescing`); gone with the namespace. A NIC driver re-arms its
//!   interrupt when NAPI completes; with N > 0 the kernel skips that for N
//!   completions in a row and polls again from a `U` µs hrtimer instead.
//!   veth's "interrupt" is the sender waking the receiver's NAPI (thread)
//!   for each burst, masked by `rx_notify_masked` while NAPI runs: a
//!   deferred completion leaves it masked, so senders only queue into the
//!   ring and the timer polls — fewer wakeups and IPIs, more latency, and
//!   veth's fixed 256-frame ring must hold whatever arrives until the timer
//!   fires (a burst loses frames at rates the uncoalesced DUT forwards
//!   without loss). Both act on the veth's NAPI instances only: setting
//!   either turns `napi` on (GRO), and `napi = false` with them is refused.
//!   N without U does nothing (the kernel re-arms at once when no timer is
//!   set): refused. U alone only delays GRO flushes (no effect on the UDP
//!   test frames, which GRO does not hold while `rx-udp-gro-forwarding` is
//!   off, as it is).
//! - **Busy polling: none for forwarding.** `net.core.busy_poll` and
//!   `busy_read` act for sockets (a `poll`/`read` spins on the NAPI its
//!   socket's last frame came from); kernel forwarding has no socket, so
//!   they change nothing here. Threaded NAPI busy polling (a NAPI thread
//!   that never sleeps, `threaded` = 2 / netlink `napi-set threaded
//!   busy-poll`) was merged for Linux 6.19; this kernel (6.18) refuses it:
//!   `echo 2 > /sys/class/net/<veth>/threaded` fails with "write error:
//!   Operation not supported" (EOPNOTSUPP), GRO on or off, and netlink
//!   `napi-set` with `threaded` = 2 with ERANGE (its policy knows only
//!   disabled and enabled). Not offered.
//!
//! When the bench splits CPUs between tester and DUT (the default), the
//! testbed already steers every DUT end's receive processing to the DUT's
//! CPUs with RPS (`testbed::rps`, the same placement softrouter's ports
//! get); an `rps` setting here overrides it.
//!
//! What a veth cannot emulate (so these knobs of paper 000 have no analog
//! here, or only the software one above):
//!
//! - hardware interrupts and their CPU affinity (`smp_affinity`): veth
//!   raises none; RPS is the analog of steering them;
//! - NIC interrupt coalescing (`ethtool -C`): `ethtool -c` on a veth says
//!   "netlink error: Operation not supported" (veth has no coalescing
//!   parameters); the NAPI deferral above is the software form;
//! - the paper's interrupt disable-enable (DE) driver, which masks the
//!   NIC's interrupt in hardware while polling;
//! - NIC ring sizes: veth's receive ring is a fixed 256-frame `ptr_ring`
//!   (`ethtool -g` on a veth: "netlink error: Operation not supported");
//! - DMA, PCIe and front-side-bus effects: a veth "transmits" by handing a
//!   pointer to the peer's ring, with no copy over a bus.

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};
use schema::dut_description::{
    self as description, DutDescription, FinalStats, GlobalSysctls, NapiCoalescing, NetdevBudget,
};
use schema::dut_sample::{DutStats, KernelTrial};
use testbed::RouterMode;

use super::bed::{if_counters, ping_from_tester, Bed, IfCounters};
use super::probe::{CpuMeter, Direct};
use super::stages::StageProfiler;
use super::{counters_since, describe_bed, dut_ns, named_counters, rx_dropped, Dut, DutOptions};
use bench::plan::{DutProbe, DutSample, TesterBackend, TrafficPlan};
use bench::settings::{DutSettings, Pattern};

const NETDEV_BUDGET: &str = "/proc/sys/net/core/netdev_budget";
/// Per-device sysfs files of the software interrupt coalescing.
const DEFER_HARD_IRQS: &str = "napi_defer_hard_irqs";
const GRO_FLUSH_TIMEOUT: &str = "gro_flush_timeout";

/// Receive-processing CPU placement for the DUT ports (RPS masks): a
/// setting, parsed and checked in `settings`.
pub use bench::settings::RpsMode;

/// The kernel side of an [`RpsMode`] (a trait because the mode is the
/// `bench` crate's type and the launchers' knowledge of `rps_cpus` is not).
trait RpsMask {
    /// The `rps_cpus` value for port `port` with `ncpu` online CPUs.
    fn mask_for(&self, port: usize, ncpu: usize) -> String;
}

impl RpsMask for RpsMode {
    fn mask_for(&self, port: usize, ncpu: usize) -> String {
        match self {
            RpsMode::Off => "0".into(),
            RpsMode::All => cpu_mask(&(0..ncpu.max(1)).collect::<Vec<_>>()),
            RpsMode::PerPort => cpu_mask(&[port % ncpu.max(1)]),
            RpsMode::Mask(m) => m.clone(),
            RpsMode::Masks(v) => v
                .get(port)
                .or(v.last())
                .cloned()
                .unwrap_or_else(|| "0".into()),
        }
    }
}

/// A CPU list as the kernel prints a bitmap (`rps_cpus`): hex, 32-bit
/// groups separated by commas, the leading group without zero padding.
/// The bits are `testbed::rps::cpu_mask_hex`'s, the one formatter; only
/// the padding differs, kept because the mask is recorded in the results
/// (`rps`, `rps_cpus`) as the kernel reads it back.
pub fn cpu_mask(cpus: &[usize]) -> String {
    let padded = testbed::rps::cpu_mask_hex(cpus);
    match padded.trim_start_matches('0') {
        "" => "0".into(),
        m => m.into(),
    }
}

/// Online CPUs.
pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        n as usize
    } else {
        1
    }
}

/// IPv4 and IPv6 MIB counters of namespace `ns` (/proc/net/snmp `Ip:` and
/// /proc/net/snmp6 `Ip6*` lines), e.g. `ForwDatagrams`,
/// `Ip6OutForwDatagrams`.
pub fn kernel_counters(ns: &str) -> Result<BTreeMap<String, u64>> {
    let out = std::process::Command::new("ip")
        .args([
            "netns",
            "exec",
            ns,
            "cat",
            "/proc/net/snmp",
            "/proc/net/snmp6",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("reading /proc/net/snmp in namespace {ns}"))?;
    if !out.status.success() {
        bail!(
            "reading /proc/net/snmp in namespace {ns}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(parse_snmp(&String::from_utf8_lossy(&out.stdout)))
}

/// Parse /proc/net/snmp (header/value line pairs, `Ip:` only) followed by
/// /proc/net/snmp6 (`name value` lines, `Ip6` only).
pub fn parse_snmp(text: &str) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let Some(h) = l.strip_prefix("Ip: ") {
            if let Some(v) = lines.get(i + 1).and_then(|n| n.strip_prefix("Ip: ")) {
                if h.split_whitespace()
                    .next()
                    .is_some_and(|w| w.parse::<u64>().is_err())
                {
                    for (k, x) in h.split_whitespace().zip(v.split_whitespace()) {
                        if let Ok(x) = x.parse() {
                            m.insert(k.to_string(), x);
                        }
                    }
                    i += 2;
                    continue;
                }
            }
        }
        let mut w = l.split_whitespace();
        if let (Some(k), Some(v), None) = (w.next(), w.next(), w.next()) {
            if k.starts_with("Ip6") {
                if let Ok(v) = v.parse() {
                    m.insert(k.to_string(), v);
                }
            }
        }
        i += 1;
    }
    m
}

/// The kernel's forwarded packets: IPv4 ForwDatagrams + IPv6
/// Ip6OutForwDatagrams.
pub fn forwarded(c: &BTreeMap<String, u64>) -> u64 {
    c.get("ForwDatagrams").copied().unwrap_or(0)
        + c.get("Ip6OutForwDatagrams").copied().unwrap_or(0)
}

/// Non-zero differences `b - a` of the counters.
pub fn counters_delta(
    a: &BTreeMap<String, u64>,
    b: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    b.iter()
        .map(|(k, v)| (k.clone(), v.saturating_sub(a.get(k).copied().unwrap_or(0))))
        .filter(|(_, v)| *v > 0)
        .collect()
}

/// Kernel forwarding in the DUT namespace.
pub struct LinuxDut {
    bed: Bed,
    backend: TesterBackend,
    /// (old, new) netdev_budget when it was changed; restored on stop/drop.
    budget: Option<(String, u32)>,
    sysctls: BTreeMap<String, String>,
    rps: BTreeMap<String, String>,
    rps_mode: Option<String>,
    napi: Option<bool>,
    /// Per DUT end: `napi_defer_hard_irqs` and `gro_flush_timeout` (ns)
    /// as read back from sysfs after start.
    coalescing: BTreeMap<String, NapiCoalescing>,
    restored: bool,
    /// Per-trial stage profiling (`DutOptions::profile_stages`).
    stages: Option<StageProfiler>,
}

impl LinuxDut {
    pub fn start(settings: &DutSettings, pattern: Pattern, opts: &DutOptions) -> Result<Self> {
        let DutSettings::Linux {
            napi_budget,
            rps,
            napi,
            napi_defer_hard_irqs,
            gro_flush_timeout_us,
        } = settings
        else {
            bail!("not linux settings: {settings:?}");
        };
        // Unless told otherwise, the kernel's forwarding runs on the DUT's
        // CPUs, not in the tester's send path on the tester's CPU: RPS to
        // those CPUs (the bed steers every end to its side's CPUs).
        let placement = opts.rx_placement();
        let rps_mode = rps.clone().or_else(|| {
            opts.dut_cpus
                .as_ref()
                .filter(|c| !c.is_empty() && placement.is_none())
                .map(|c| RpsMode::Mask(cpu_mask(c)))
        });
        let rps = &rps_mode.as_ref().map(RpsMode::to_string);
        let stages = StageProfiler::for_dut(opts)?;
        let bed = Bed::build(pattern, opts.queues, RouterMode::Kernel, placement.as_ref())?;
        // The xdp tester's frames reach a veth only if it has NAPI: GRO
        // on the DUT ends (see traffic::xdp; `thread_dut_napi` below).
        // Coalescing acts on that NAPI too (`napi = false` with it is
        // refused by the settings).
        let coalesce = napi_defer_hard_irqs.is_some() || gro_flush_timeout_us.is_some();
        let napi = &if opts.backend.counts_in_xdp() {
            Some(true)
        } else {
            napi.or(coalesce.then_some(true))
        };
        let mut dut = LinuxDut {
            bed,
            backend: opts.backend,
            budget: None,
            sysctls: BTreeMap::new(),
            rps: BTreeMap::new(),
            rps_mode: rps.clone(),
            napi: *napi,
            coalescing: BTreeMap::new(),
            restored: false,
            stages,
        };
        let ns = dut.bed.dut_ns("linux")?;
        let nsn = ns.name().to_string();
        let mut set = |k: &str, v: &str| -> Result<()> {
            ns.sysctl(k, v)
                .with_context(|| format!("sysctl {k}={v} in namespace {nsn}"))?;
            dut.sysctls.insert(k.to_string(), v.to_string());
            Ok(())
        };
        set("net.ipv4.ip_forward", "1")?;
        set("net.ipv6.conf.all.forwarding", "1")?;
        set("net.ipv4.conf.all.rp_filter", "0")?;
        set("net.ipv4.conf.default.rp_filter", "0")?;
        for p in &dut.bed.ports {
            set(&format!("net.ipv4.conf.{}.rp_filter", p.dut_if), "0")?;
        }
        dut.bed.add_dut_neighbors()?;
        if let Some(on) = napi {
            let v = if *on { "on" } else { "off" };
            for p in &dut.bed.ports {
                ns.run(&["ethtool", "-K", &p.dut_if, "gro", v])
                    .with_context(|| format!("ethtool -K {} gro {v} in {nsn}", p.dut_if))?;
            }
        }
        // The timeout first: a deferral is never in force without it.
        for (file, v) in [
            (
                GRO_FLUSH_TIMEOUT,
                gro_flush_timeout_us.map(|us| u64::from(us) * 1000),
            ),
            (DEFER_HARD_IRQS, napi_defer_hard_irqs.map(u64::from)),
        ] {
            let Some(v) = v else { continue };
            for p in &dut.bed.ports {
                let f = format!("/sys/class/net/{}/{file}", p.dut_if);
                ns.run(&["sh", "-c", &format!("echo {v} > {f}")])
                    .with_context(|| format!("writing {v} to {f} in {nsn}"))?;
            }
        }
        if let Some(mode) = &rps_mode {
            let ncpu = online_cpus();
            for p in &dut.bed.ports {
                let mask = mode.mask_for(p.index, ncpu);
                for q in 0..dut.bed.queues {
                    let file = format!("/sys/class/net/{}/queues/rx-{q}/rps_cpus", p.dut_if);
                    ns.run(&["sh", "-c", &format!("echo {mask} > {file}")])
                        .with_context(|| format!("writing RPS mask {mask} to {file} in {nsn}"))?;
                    let now = ns
                        .run(&["cat", &file])
                        .map(|s| s.trim().to_string())
                        .unwrap_or(mask.clone());
                    dut.rps.insert(format!("{}/rx-{q}", p.dut_if), now);
                }
            }
        }
        if let Some(b) = napi_budget {
            let old = std::fs::read_to_string(NETDEV_BUDGET)
                .with_context(|| format!("reading {NETDEV_BUDGET}"))?
                .trim()
                .to_string();
            testbed::journal::record_setting(NETDEV_BUDGET, &old)?;
            std::fs::write(NETDEV_BUDGET, b.to_string())
                .with_context(|| format!("writing {b} to {NETDEV_BUDGET}"))?;
            dut.budget = Some((old, *b));
        }
        // Ready when every DUT address answers (the kernel is configured
        // synchronously; this proves the links and neighbors).
        for p in &dut.bed.ports {
            let a = p.dut_v4.to_string();
            if !ping_from_tester(&dut.bed, &a, 2)? {
                bail!(
                    "linux DUT: {a} on {} in {nsn} does not answer a ping from the tester",
                    p.dut_if
                );
            }
        }
        dut.bed.thread_dut_napi()?;
        // What is in force, as the kernel reports it.
        let ns = dut.bed.dut_ns("linux")?;
        for p in &dut.bed.ports {
            let files = [DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT]
                .map(|f| format!("/sys/class/net/{}/{f}", p.dut_if));
            let out = ns
                .run(&["cat", &files[0], &files[1]])
                .with_context(|| format!("reading {files:?} in {nsn}"))?;
            let v: Vec<Option<u64>> = out.split_whitespace().map(|w| w.parse().ok()).collect();
            dut.coalescing.insert(
                p.dut_if.clone(),
                NapiCoalescing {
                    napi_defer_hard_irqs: v.first().copied().flatten(),
                    gro_flush_timeout_ns: v.get(1).copied().flatten(),
                },
            );
        }
        Ok(dut)
    }

    fn restore(&mut self) -> Result<()> {
        if self.restored {
            return Ok(());
        }
        self.restored = true;
        if let Some((old, _)) = &self.budget {
            std::fs::write(NETDEV_BUDGET, old)
                .with_context(|| format!("restoring {NETDEV_BUDGET} to {old}"))?;
            testbed::journal::setting_restored(NETDEV_BUDGET);
        }
        Ok(())
    }
}

fn read_global(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

impl Dut for LinuxDut {
    fn kind(&self) -> &'static str {
        "linux"
    }

    fn plan(&self, ipv6: bool, flows_per_pair: u32) -> TrafficPlan {
        self.bed.plan(ipv6, flows_per_pair, self.backend)
    }

    fn probe(&self) -> Box<dyn DutProbe> {
        Box::new(LinuxProbe {
            meter: CpuMeter::new(Direct::Softirq),
            ns: dut_ns(&self.bed).unwrap_or_default(),
            ifaces: self.bed.dut_ifaces(),
            start: None,
            stages: self.stages.as_ref().map(StageProfiler::fresh),
        })
    }

    fn describe(&self) -> DutDescription {
        DutDescription::Linux(description::Linux {
            version: format!("Linux {}", super::kernel_release()),
            sysctls_in_dut_namespace: self.sysctls.clone(),
            netdev_budget: self.budget.as_ref().map(|(old, new)| NetdevBudget {
                before: old.clone(),
                set: *new,
            }),
            global: GlobalSysctls {
                netdev_budget: read_global(NETDEV_BUDGET),
                netdev_budget_usecs: read_global("/proc/sys/net/core/netdev_budget_usecs"),
                dev_weight: read_global("/proc/sys/net/core/dev_weight"),
            },
            rps: self.rps_mode.clone(),
            rps_cpus: self.rps.clone(),
            veth_napi_gro: self.napi,
            napi_coalescing: self.coalescing.clone(),
            online_cpus: online_cpus(),
            stage_profiler: self.stages.as_ref().map(StageProfiler::source),
            testbed: describe_bed(&self.bed),
            final_stats: None,
        })
    }

    fn bed(&self) -> &Bed {
        &self.bed
    }

    fn stop(mut self: Box<Self>) -> Result<FinalStats> {
        let ns = dut_ns(&self.bed).unwrap_or_default();
        let counters = kernel_counters(&ns).ok();
        let ifs = if_counters(Some(&ns), &self.bed.dut_ifaces()).ok();
        let restored = self.restore();
        let v = FinalStats::Linux {
            forwarded: counters.as_ref().map(forwarded),
            kernel_counters: counters,
            interfaces: ifs.map(|c| self.bed.dut_ifaces().into_iter().zip(c).collect()),
            netdev_budget_restored: self.budget.as_ref().map(|b| b.0.clone()),
        };
        restored?;
        Ok(v)
    }
}

impl Drop for LinuxDut {
    fn drop(&mut self) {
        if let Err(e) = self.restore() {
            eprintln!("warning: {e:#}");
        }
    }
}

struct LinuxProbe {
    meter: CpuMeter,
    ns: String,
    ifaces: Vec<String>,
    start: Option<(BTreeMap<String, u64>, Vec<IfCounters>)>,
    stages: Option<StageProfiler>,
}

impl DutProbe for LinuxProbe {
    fn begin(&mut self) -> Result<()> {
        // First, so that perf's start is not in the measured interval.
        if let Some(p) = self.stages.as_mut() {
            p.begin_or_note();
        }
        let k = kernel_counters(&self.ns)?;
        let c = if_counters(Some(&self.ns), &self.ifaces)?;
        self.start = Some((k, c));
        self.meter.begin()
    }

    fn end(&mut self) -> Result<DutSample> {
        let (k0, c0) = self
            .start
            .take()
            .context("linux probe: end() without begin()")?;
        let k1 = kernel_counters(&self.ns)?;
        let c1 = if_counters(Some(&self.ns), &self.ifaces)?;
        let fwd = forwarded(&k1).saturating_sub(forwarded(&k0));
        let (sys, cpu) = self.meter.end(Some((fwd, "kernel ForwDatagrams")))?;
        let d = counters_since(&c1, &c0);
        let stats = DutStats {
            kernel: Some(KernelTrial {
                forwarded: fwd,
                counters: counters_delta(&k0, &k1),
            }),
            interfaces: Some(named_counters(&self.ifaces, &d)),
            dropped: Some(rx_dropped(&d)),
            stages: self.stages.as_mut().map(|p| p.end_or_error(&cpu.cpu)),
            ..DutStats::new("linux", cpu)
        };
        Ok(DutSample {
            sys: Some(sys),
            dut_stats: Some(stats),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rps_modes() {
        assert_eq!(RpsMode::parse("off").unwrap().mask_for(3, 2), "0");
        assert_eq!(RpsMode::parse("all").unwrap().mask_for(0, 2), "3");
        assert_eq!(RpsMode::parse("per-port").unwrap().mask_for(3, 2), "2");
        assert_eq!(RpsMode::parse("0xf").unwrap().mask_for(1, 2), "f");
        let m = RpsMode::parse("1,2").unwrap();
        assert_eq!(
            (m.mask_for(0, 2), m.mask_for(1, 2), m.mask_for(5, 2)),
            ("1".into(), "2".into(), "2".into())
        );
        assert!(RpsMode::parse("most").is_err());
        assert!(RpsMode::parse("1,zz").is_err());
        assert_eq!(cpu_mask(&[0, 33]), "2,00000001");
        assert_eq!(cpu_mask(&[1, 3]), "a");
        assert_eq!(cpu_mask(&[]), "0");
    }

    #[test]
    fn snmp_parsing() {
        let t = "Ip: Forwarding DefaultTTL InReceives ForwDatagrams\nIp: 1 64 100 42\n\
                 Icmp: InMsgs\nIcmp: 3\nIp6InReceives                   	7\nIp6OutForwDatagrams             	5\nIcmp6InMsgs 2\n";
        let m = parse_snmp(t);
        assert_eq!(m["ForwDatagrams"], 42);
        assert_eq!(m["Ip6OutForwDatagrams"], 5);
        assert!(!m.contains_key("Icmp6InMsgs"));
        assert_eq!(forwarded(&m), 47);
    }
}
