//! DUT CPU measurement around every trial, the same for every DUT kind.
//!
//! # What "DUT CPU" means on a veth testbed
//!
//! On veth nothing happens in interrupts: a frame written into one end is
//! received by the other end *on the sending CPU*, in NET_RX softirq,
//! usually inside the sender's own system call. So the Linux kernel's
//! forwarding work runs in the softirq context of the tester's generator
//! threads (unless RPS moves it), softrouter's AF_XDP receive path (veth
//! NAPI + XDP redirect) runs there too, and softrouter's transmit path runs
//! the tester's receive path in softrouter's context. This kernel has no
//! `CONFIG_IRQ_TIME_ACCOUNTING` (tick sampling), so softirq time is also
//! charged to whichever task was interrupted: no per-process figure
//! separates DUT work from tester work. Worse, with tickless idle the
//! softirq work a CPU does between idle periods counts as idle. The bench
//! therefore steers each side's receive work to its own CPUs
//! (`testbed::rps`) and measures each CPU's use with soakers
//! (`dut::soak`).
//!
//! The figures, all over the trial interval and in seconds of CPU time:
//!
//! | field | meaning |
//! |---|---|
//! | `machine_busy_s` | all CPUs, non-idle time from /proc/stat (user+nice+system+irq+softirq+steal) |
//! | `machine_softirq_s`, `machine_system_s`, `machine_user_s`, `machine_irq_s` | its parts |
//! | `bench_cpu_s`, `bench_user_s` | this (benchmark) process: utime+stime, and utime alone (/proc/self/stat) |
//! | `dut_cpu_s` | **the fair measure**. With the bench's CPU split and no soakers (`dut_cpu_source` = `dut_cpus`): the DUT's CPUs' busy time from their /proc/stat lines (every veth end's receive work runs in threaded NAPI on its owner's CPUs, so it is the DUT's). Otherwise (`machine`): `machine_busy_s - bench_user_s`, everything but the tester's own user-space work, an upper bound that includes the tester's kernel I/O path (the same per frame for every DUT kind with the same tester backend) |
//! | `dut_cpu_lower_s` | the same as `dut_cpu_s` with the split; else `machine_busy_s - bench_cpu_s`: a lower bound (misses DUT work done in the tester's softirq context, e.g. the kernel's forwarding with RPS off) |
//! | `direct_cpu_s`, `direct_source` | the DUT's own figure: `process` = the DUT process group's utime+stime (softrouter, command); `softirq` = all CPUs' softirq time (linux) |
//! | `forwarded_packets`, `forwarded_source` | packets the DUT forwarded in the trial (softrouter's counter, the kernel's ForwDatagrams, or DUT interface TX) |
//! | `tsc_hz` | TSC frequency (calibrated against the monotonic clock) |
//! | `dut_cycles_per_packet` | `dut_cpu_s * tsc_hz / forwarded_packets`; likewise `dut_cycles_per_packet_lower`, `direct_cycles_per_packet` (null without forwarded packets) |
//! | `soak[]` | per soaked (DUT) CPU (`dut::soak`): `cpu`, `busy_pct` = 100 - the idle soaker's share; null without soakers |
//! | `soak_dut_cpu_s`, `soak_cycles_per_packet` | **the measure the comparison uses when present**: the DUT CPUs' busy time by the soakers (immune to the tick accounting's blind spot below), and per forwarded packet |
//!
//! Every figure but `direct_cpu_s` and a `dut_cpus` `dut_cpu_s` is machine-wide: run the benchmark on an
//! otherwise idle machine, or other processes' CPU time (a compiler, a
//! traffic source other than this process) is counted as the DUT's.
//!
//! `softnet` adds the per-CPU deltas of /proc/net/softnet_stat:
//! `processed`, `dropped` (backlog full) and `time_squeeze` (net_rx_action
//! ran out of NAPI budget or time, paper 000's budget knob at work).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::soak::{self, SoakMark};
use bench::sysstat::{self, Snapshot, SysStats};
pub use schema::dut_sample::SoftnetDelta;
use schema::dut_sample::{CpuFigures, CpuSample};

/// Clock ticks per second of /proc/stat and /proc/<pid>/stat.
pub fn clk_tck() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// The TSC frequency in Hz: calibrated once against the monotonic clock
/// over 50 ms on x86_64 (the unit softrouter's cycle counters use), else
/// /proc/cpuinfo's "cpu MHz".
pub fn tsc_hz() -> f64 {
    static HZ: OnceLock<f64> = OnceLock::new();
    *HZ.get_or_init(|| calibrate_tsc().unwrap_or_else(cpuinfo_hz))
}

#[cfg(target_arch = "x86_64")]
fn calibrate_tsc() -> Option<f64> {
    #[allow(unused_unsafe)]
    // SAFETY: rdtsc has no preconditions on x86_64.
    let rd = || unsafe { core::arch::x86_64::_rdtsc() };
    let (t0, c0) = (Instant::now(), rd());
    std::thread::sleep(Duration::from_millis(50));
    let (t1, c1) = (Instant::now(), rd());
    let s = t1.duration_since(t0).as_secs_f64();
    (s > 0.0 && c1 > c0).then(|| (c1 - c0) as f64 / s)
}

#[cfg(not(target_arch = "x86_64"))]
fn calibrate_tsc() -> Option<f64> {
    None
}

fn cpuinfo_hz() -> f64 {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("cpu MHz"))
                .and_then(|l| l.split(':').nth(1))
                .and_then(|v| v.trim().parse::<f64>().ok())
        })
        .map_or(1e9, |mhz| mhz * 1e6)
}

/// The aggregate `cpu` line of /proc/stat, in ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MachineTimes {
    pub user: u64,
    pub system: u64,
    pub idle: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl MachineTimes {
    /// Parse /proc/stat text.
    pub fn parse(stat: &str) -> MachineTimes {
        Self::parse_line(stat, "cpu ")
    }

    /// One CPU's line of /proc/stat text (`cpuN`).
    pub fn parse_cpu(stat: &str, cpu: usize) -> MachineTimes {
        Self::parse_line(stat, &format!("cpu{cpu} "))
    }

    fn parse_line(stat: &str, prefix: &str) -> MachineTimes {
        let Some(line) = stat.lines().find(|l| l.starts_with(prefix)) else {
            return MachineTimes::default();
        };
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        let g = |i: usize| v.get(i).copied().unwrap_or(0);
        // user nice system idle iowait irq softirq steal guest guest_nice
        MachineTimes {
            user: g(0) + g(1),
            system: g(2),
            idle: g(3) + g(4),
            irq: g(5),
            softirq: g(6),
            steal: g(7),
        }
    }

    /// The whole machine and each of `cpus`.
    fn read(cpus: &[usize]) -> Result<(MachineTimes, Vec<MachineTimes>)> {
        let stat = std::fs::read_to_string("/proc/stat").context("reading /proc/stat")?;
        let each = cpus.iter().map(|&c| Self::parse_cpu(&stat, c)).collect();
        Ok((MachineTimes::parse(&stat), each))
    }

    fn busy(&self) -> u64 {
        self.user + self.system + self.irq + self.softirq + self.steal
    }
}

/// (utime, stime) in ticks from a /proc/<pid>/stat line.
pub fn parse_pid_stat(s: &str) -> Option<(u64, u64, i32)> {
    // The command name may contain spaces and parentheses: fields follow
    // the last ')'. After it: state(3) ppid(4) pgrp(5) ... utime(14) stime(15).
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let pgrp = f.get(2)?.parse().ok()?;
    Some((f.get(11)?.parse().ok()?, f.get(12)?.parse().ok()?, pgrp))
}

/// utime and stime of this process, ticks.
fn self_times() -> Result<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/self/stat").context("reading /proc/self/stat")?;
    parse_pid_stat(&s)
        .map(|(u, s, _)| (u, s))
        .context("parsing /proc/self/stat")
}

/// utime+stime of all live processes in process group `pgid`, ticks.
pub fn group_ticks(pgid: i32) -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|s| parse_pid_stat(&s))
        .filter(|&(_, _, g)| g == pgid)
        .map(|(u, s, _)| u + s)
        .sum()
}

/// Per-CPU (processed, dropped, time_squeeze) of /proc/net/softnet_stat.
pub fn parse_softnet(s: &str) -> Vec<[u64; 3]> {
    s.lines()
        .map(|l| {
            let v: Vec<u64> = l
                .split_whitespace()
                .map(|x| u64::from_str_radix(x, 16).unwrap_or(0))
                .collect();
            [
                v.first().copied().unwrap_or(0),
                v.get(1).copied().unwrap_or(0),
                v.get(2).copied().unwrap_or(0),
            ]
        })
        .collect()
}

/// Where the DUT's "direct" CPU figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direct {
    /// utime+stime of this process group (the DUT's processes).
    ProcessGroup(i32),
    /// All CPUs' softirq time (the kernel forwarding).
    Softirq,
}

/// The DUT's own CPUs, when the bench placed it (see [`set_dut_cpus`]).
static DUT_CPUS: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

/// Tell the probes which CPUs are the DUT's alone (the bench's CPU split;
/// empty: unknown). Then `dut_cpu_s` is those CPUs' busy time, unless
/// soakers run on them (their spinning is busy time too).
pub fn set_dut_cpus(cpus: &[usize]) {
    *DUT_CPUS.lock().unwrap_or_else(|p| p.into_inner()) = cpus.to_vec();
}

fn dut_cpus() -> Vec<usize> {
    DUT_CPUS.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

#[derive(Debug, Clone)]
struct Mark {
    snap: Snapshot,
    machine: MachineTimes,
    /// Each of the DUT's CPUs ([`set_dut_cpus`]).
    dut_cpus: Vec<MachineTimes>,
    bench: (u64, u64),
    group: u64,
    softnet: Vec<[u64; 3]>,
    soak: Option<SoakMark>,
    at: Instant,
}

/// The CPU part of every DUT probe: take [`CpuMeter::begin`] before the
/// trial and [`CpuMeter::end`] after it.
#[derive(Debug)]
pub struct CpuMeter {
    direct: Direct,
    start: Option<Mark>,
}

impl CpuMeter {
    pub fn new(direct: Direct) -> CpuMeter {
        // Calibrate now, not inside the first trial.
        let _ = tsc_hz();
        CpuMeter {
            direct,
            start: None,
        }
    }

    fn mark(&self) -> Result<Mark> {
        let snap = Snapshot::take()?;
        let (machine, dut_cpus) = MachineTimes::read(&dut_cpus())?;
        Ok(Mark {
            machine,
            dut_cpus,
            bench: self_times()?,
            group: match self.direct {
                Direct::ProcessGroup(g) => group_ticks(g),
                Direct::Softirq => 0,
            },
            softnet: std::fs::read_to_string("/proc/net/softnet_stat")
                .map(|s| parse_softnet(&s))
                .unwrap_or_default(),
            soak: soak::mark(),
            at: snap.at.unwrap_or_else(Instant::now),
            snap,
        })
    }

    /// Remember the counters at the start of a trial.
    pub fn begin(&mut self) -> Result<()> {
        self.start = Some(self.mark()?);
        Ok(())
    }

    /// Rates since [`CpuMeter::begin`] and the CPU figures of the module
    /// docs; `forwarded` = packets the DUT forwarded meanwhile and where
    /// that number came from.
    pub fn end(&mut self, forwarded: Option<(u64, &str)>) -> Result<(SysStats, CpuSample)> {
        let a = self
            .start
            .take()
            .context("DUT probe: end() without begin()")?;
        let b = self.mark()?;
        let sys = sysstat::delta(&a.snap, &b.snap);
        let tck = clk_tck();
        let secs = |t: u64| t as f64 / tck;
        let (ma, mb) = (a.machine, b.machine);
        let d = |f: fn(&MachineTimes) -> u64| f(&mb).saturating_sub(f(&ma));
        let busy = secs(d(MachineTimes::busy));
        let bench_user = secs(b.bench.0.saturating_sub(a.bench.0));
        let bench_cpu = secs((b.bench.0 + b.bench.1).saturating_sub(a.bench.0 + a.bench.1));
        let softirq = secs(d(|m| m.softirq));
        let (direct, source) = match self.direct {
            Direct::ProcessGroup(_) => (secs(b.group.saturating_sub(a.group)), "process"),
            Direct::Softirq => (softirq, "softirq"),
        };
        // The DUT's own CPUs' busy time when known and not soaked; else
        // the machine-wide bounds.
        let own: Option<f64> = (!b.dut_cpus.is_empty() && a.soak.is_none()).then(|| {
            a.dut_cpus
                .iter()
                .zip(&b.dut_cpus)
                .map(|(x, y)| secs(y.busy().saturating_sub(x.busy())))
                .sum()
        });
        let (dut_cpu, dut_lower, dut_source) = match own {
            Some(s) => (s, s, "dut_cpus"),
            None => (
                (busy - bench_user).max(0.0),
                (busy - bench_cpu).max(0.0),
                "machine",
            ),
        };
        let hz = tsc_hz();
        let fwd = forwarded.map(|f| f.0);
        let per_pkt = |s: f64| fwd.filter(|&n| n > 0).map(|n| s * hz / n as f64);
        let softnet: Vec<SoftnetDelta> = b
            .softnet
            .iter()
            .enumerate()
            .map(|(cpu, nb)| {
                let na = a.softnet.get(cpu).copied().unwrap_or_default();
                SoftnetDelta {
                    cpu,
                    processed: nb[0].saturating_sub(na[0]),
                    dropped: nb[1].saturating_sub(na[1]),
                    time_squeeze: nb[2].saturating_sub(na[2]),
                }
            })
            .collect();
        let interval = b.at.saturating_duration_since(a.at).as_secs_f64();
        let soaked = a.soak.as_ref().and_then(soak::busy_since);
        let soak_dut = soaked
            .as_ref()
            .map(|v| v.iter().map(|c| c.busy_pct / 100.0 * interval).sum::<f64>());
        let cpu = CpuFigures {
            interval_s: interval,
            clk_tck: tck,
            tsc_hz: hz,
            machine_busy_s: busy,
            machine_user_s: secs(d(|m| m.user)),
            machine_system_s: secs(d(|m| m.system)),
            machine_irq_s: secs(d(|m| m.irq)),
            machine_softirq_s: softirq,
            bench_cpu_s: bench_cpu,
            bench_user_s: bench_user,
            dut_cpu_s: dut_cpu,
            dut_cpu_lower_s: dut_lower,
            dut_cpu_source: Some(dut_source.into()),
            direct_cpu_s: direct,
            direct_source: source.into(),
            forwarded_packets: fwd,
            forwarded_source: forwarded.map(|f| f.1.to_string()),
            dut_cycles_per_packet: per_pkt(dut_cpu),
            dut_cycles_per_packet_lower: per_pkt(dut_lower),
            direct_cycles_per_packet: per_pkt(direct),
            soak: soaked,
            soak_dut_cpu_s: soak_dut,
            soak_cycles_per_packet: soak_dut.and_then(per_pkt),
        };
        Ok((sys, CpuSample { cpu, softnet }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pid_stat_with_odd_names() {
        let s =
            "1234 (my (odd) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 37 12 0 0 20 0 3 0 5 0 0";
        assert_eq!(parse_pid_stat(s), Some((37, 12, 1234)));
    }

    #[test]
    fn parses_machine_times() {
        let m = MachineTimes::parse("cpu  10 2 30 400 5 6 7 8 0 0\ncpu0 1 1 1 1 1 1 1 1 0 0\n");
        assert_eq!(m.user, 12);
        assert_eq!(m.idle, 405);
        assert_eq!(m.busy(), 12 + 30 + 6 + 7 + 8);
        let stat =
            "cpu  10 2 30 400 5 6 7 8 0 0\ncpu1 9 0 3 50 0 0 2 1 0 0\ncpu10 7 7 7 7 7 7 7 7 0 0\n";
        let c1 = MachineTimes::parse_cpu(stat, 1);
        assert_eq!(
            (c1.user, c1.system, c1.idle, c1.busy()),
            (9, 3, 50, 9 + 3 + 2 + 1)
        );
        // cpu1 is not cpu10's prefix match, and an absent CPU reads zero.
        assert_eq!(MachineTimes::parse_cpu(stat, 10).user, 7 + 7);
        assert_eq!(MachineTimes::parse_cpu(stat, 3), MachineTimes::default());
    }

    #[test]
    fn parses_softnet() {
        let v = parse_softnet("0000000a 00000001 00000002 00000000\n000000ff 00000000 00000010\n");
        assert_eq!(v, vec![[10, 1, 2], [255, 0, 16]]);
    }

    #[test]
    fn meter_measures_own_work() {
        let mut m = CpuMeter::new(Direct::ProcessGroup(std::process::id() as i32));
        m.begin().unwrap();
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed() < Duration::from_millis(200) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let (sys, v) = m.end(Some((1000, "test"))).unwrap();
        assert!(!sys.cpus.is_empty());
        assert!(v.cpu.bench_cpu_s > 0.05, "{v:?}");
        assert!(v.cpu.tsc_hz > 1e8);
        assert!(v.cpu.dut_cycles_per_packet.is_some());
    }
}
