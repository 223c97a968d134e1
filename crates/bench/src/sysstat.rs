//! Internal measurements with every trial (papers 000 and 004): per-core
//! CPU availability, interrupt rates, NET_RX/NET_TX softirq rates.
//!
//! Why: throughput alone does not say *why* a DUT saturates. The papers
//! plot CPU availability (idle share per core) and interrupt rates next to
//! every load point; the report here does the same. Take a [`Snapshot`]
//! before and after a trial (inside the DUT's namespace the files are the
//! host's: /proc/stat, /proc/interrupts and /proc/softirqs are not
//! namespaced, so the figures cover the whole host) and [`delta`] them.
//!
//! Availability per CPU = (idle + iowait) / all jiffies over the interval,
//! in percent; "all" includes steal and excludes guest (already counted in
//! user/nice).

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// Jiffy counters of one CPU line of /proc/stat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// idle + iowait.
    pub idle: u64,
    /// All counted time (user..steal).
    pub total: u64,
    /// Steal: time a VM's CPU was runnable but its host ran something else.
    pub steal: u64,
}

/// Raw counters at one instant.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// When it was taken.
    pub at: Option<Instant>,
    /// Per CPU (index = cpu number).
    pub cpus: BTreeMap<u32, CpuTimes>,
    /// Per IRQ line: (description, count summed over CPUs).
    pub irqs: BTreeMap<String, (String, u64)>,
    /// Per softirq name, per CPU.
    pub softirqs: BTreeMap<String, Vec<u64>>,
}

impl Snapshot {
    /// Read /proc/stat, /proc/interrupts and /proc/softirqs.
    pub fn take() -> Result<Snapshot> {
        let read = |p: &str| std::fs::read_to_string(p).with_context(|| format!("reading {p}"));
        let mut s = Snapshot::parse(
            &read("/proc/stat")?,
            &read("/proc/interrupts")?,
            &read("/proc/softirqs")?,
        );
        s.at = Some(Instant::now());
        Ok(s)
    }

    /// Build from file contents (no timestamp).
    pub fn parse(stat: &str, interrupts: &str, softirqs: &str) -> Snapshot {
        Snapshot {
            at: None,
            cpus: parse_stat(stat),
            irqs: parse_interrupts(interrupts),
            softirqs: parse_softirqs(softirqs),
        }
    }
}

/// Per-CPU lines (`cpuN ...`) of /proc/stat.
pub fn parse_stat(s: &str) -> BTreeMap<u32, CpuTimes> {
    let mut m = BTreeMap::new();
    for line in s.lines() {
        let mut it = line.split_whitespace();
        let Some(name) = it.next() else { continue };
        let Some(n) = name.strip_prefix("cpu").and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let v: Vec<u64> = it.filter_map(|x| x.parse().ok()).collect();
        // user nice system idle iowait irq softirq steal guest guest_nice
        let total: u64 = v.iter().take(8).sum();
        let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
        let steal = v.get(7).copied().unwrap_or(0);
        m.insert(n, CpuTimes { idle, total, steal });
    }
    m
}

/// Steal per CPU between two readings of [`parse_stat`], % of each CPU's
/// counted time (index = CPU number; 0 for a CPU without time or absent
/// from either reading). Why per CPU: a VM's host steals one vCPU at a
/// time, and the DUT's CPUs are not the tester's.
pub fn steal_pct(a: &BTreeMap<u32, CpuTimes>, b: &BTreeMap<u32, CpuTimes>) -> Vec<f64> {
    let n = b.keys().next_back().map_or(0, |&c| c as usize + 1);
    let mut out = vec![0.0; n];
    for (&cpu, tb) in b {
        let Some(ta) = a.get(&cpu) else { continue };
        let total = tb.total.saturating_sub(ta.total);
        if total > 0 {
            out[cpu as usize] = tb.steal.saturating_sub(ta.steal) as f64 * 100.0 / total as f64;
        }
    }
    out
}

/// /proc/interrupts: IRQ id -> (description, total over CPUs).
pub fn parse_interrupts(s: &str) -> BTreeMap<String, (String, u64)> {
    let mut lines = s.lines();
    let ncpu = lines
        .next()
        .map(|h| {
            h.split_whitespace()
                .filter(|w| w.starts_with("CPU"))
                .count()
        })
        .unwrap_or(0);
    let mut m = BTreeMap::new();
    for line in lines {
        let Some((id, rest)) = line.split_once(':') else {
            continue;
        };
        let mut total = 0u64;
        let mut words = rest.split_whitespace();
        let mut taken = 0;
        let mut desc_words = Vec::new();
        for w in words.by_ref() {
            if taken < ncpu {
                if let Ok(v) = w.parse::<u64>() {
                    total += v;
                    taken += 1;
                    continue;
                }
            }
            desc_words.push(w);
            break;
        }
        desc_words.extend(words);
        m.insert(id.trim().to_string(), (desc_words.join(" "), total));
    }
    m
}

/// /proc/softirqs: name -> per-CPU counts.
pub fn parse_softirqs(s: &str) -> BTreeMap<String, Vec<u64>> {
    s.lines()
        .skip(1)
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            Some((
                name.trim().to_string(),
                rest.split_whitespace()
                    .filter_map(|w| w.parse().ok())
                    .collect(),
            ))
        })
        .collect()
}

/// CPU availability of one core.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuAvailability {
    /// CPU number.
    pub cpu: u32,
    /// Idle share (idle + iowait) over the interval, %.
    pub available_pct: f64,
}

/// Interrupt rate of one IRQ line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IrqRate {
    /// IRQ id as in /proc/interrupts (`24`, `NMI`, `LOC`).
    pub irq: String,
    /// Its description (chip, type, device).
    pub name: String,
    /// Interrupts per second, all CPUs.
    pub per_s: f64,
}

/// NET_RX / NET_TX softirq rates of one CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoftirqRate {
    /// CPU number.
    pub cpu: u32,
    /// NET_RX per second.
    pub net_rx_per_s: f64,
    /// NET_TX per second.
    pub net_tx_per_s: f64,
}

/// Rates over one trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SysStats {
    /// Interval length, s.
    pub interval_s: f64,
    /// Per-CPU availability.
    pub cpus: Vec<CpuAvailability>,
    /// All interrupts per second (numbered and named lines).
    pub irq_total_per_s: f64,
    /// Lines whose rate was non-zero, busiest first.
    pub irqs: Vec<IrqRate>,
    /// Per-CPU network softirq rates.
    pub softirqs: Vec<SoftirqRate>,
}

/// Rates between two snapshots, using their timestamps (or 1 s if either
/// has none, for parsed samples).
pub fn delta(a: &Snapshot, b: &Snapshot) -> SysStats {
    let secs = match (a.at, b.at) {
        (Some(x), Some(y)) => y.saturating_duration_since(x).as_secs_f64(),
        _ => 1.0,
    };
    delta_over(a, b, secs)
}

/// Rates between two snapshots `secs` apart.
pub fn delta_over(a: &Snapshot, b: &Snapshot, secs: f64) -> SysStats {
    let secs = if secs > 0.0 { secs } else { 1.0 };
    let cpus = b
        .cpus
        .iter()
        .map(|(&cpu, nb)| {
            let na = a.cpus.get(&cpu).copied().unwrap_or_default();
            let total = nb.total.saturating_sub(na.total);
            let idle = nb.idle.saturating_sub(na.idle);
            CpuAvailability {
                cpu,
                available_pct: if total == 0 {
                    100.0
                } else {
                    idle as f64 * 100.0 / total as f64
                },
            }
        })
        .collect();
    let mut irqs: Vec<IrqRate> = b
        .irqs
        .iter()
        .map(|(id, (name, nb))| {
            let na = a.irqs.get(id).map_or(0, |x| x.1);
            IrqRate {
                irq: id.clone(),
                name: name.clone(),
                per_s: nb.saturating_sub(na) as f64 / secs,
            }
        })
        .filter(|r| r.per_s > 0.0)
        .collect();
    // ERR and MIS are error counters, not interrupts.
    let irq_total_per_s = irqs
        .iter()
        .filter(|r| r.irq != "ERR" && r.irq != "MIS")
        .map(|r| r.per_s)
        .sum();
    irqs.sort_by(|x, y| y.per_s.total_cmp(&x.per_s).then(x.irq.cmp(&y.irq)));
    let get = |m: &BTreeMap<String, Vec<u64>>, k: &str, i: usize| {
        m.get(k).and_then(|v| v.get(i)).copied().unwrap_or(0)
    };
    let ncpu = b.softirqs.get("NET_RX").map_or(0, Vec::len);
    let softirqs = (0..ncpu)
        .map(|i| SoftirqRate {
            cpu: i as u32,
            net_rx_per_s: get(&b.softirqs, "NET_RX", i).saturating_sub(get(
                &a.softirqs,
                "NET_RX",
                i,
            )) as f64
                / secs,
            net_tx_per_s: get(&b.softirqs, "NET_TX", i).saturating_sub(get(
                &a.softirqs,
                "NET_TX",
                i,
            )) as f64
                / secs,
        })
        .collect();
    SysStats {
        interval_s: secs,
        cpus,
        irq_total_per_s,
        irqs,
        softirqs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_A: &str = "cpu  200 0 100 1700 0 0 0 0 0 0\n\
cpu0 100 0 50 850 0 0 0 0 0 0\n\
cpu1 100 0 50 850 0 0 0 0 0 0\n\
intr 5 0 0\nctxt 1\n";
    const STAT_B: &str = "cpu  400 0 200 1800 0 0 0 0 0 0\n\
cpu0 100 0 50 950 0 0 0 0 0 0\n\
cpu1 250 0 100 850 10 20 20 0 0 0\n\
intr 9 0 0\nctxt 2\n";
    const IRQ_A: &str = "           CPU0       CPU1       \n\
 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n\
 30:        100        200  PCI-MSI 524288-edge      eth0-rx-0\n\
NMI:          0          0   Non-maskable interrupts\n\
LOC:       1000       1000   Local timer interrupts\n\
ERR:          0\n\
MIS:          0\n";
    const IRQ_B: &str = "           CPU0       CPU1       \n\
 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n\
 30:        600        700  PCI-MSI 524288-edge      eth0-rx-0\n\
NMI:          0          0   Non-maskable interrupts\n\
LOC:       1100       1300   Local timer interrupts\n\
ERR:          3\n\
MIS:          0\n";
    const SOFT_A: &str = "                    CPU0       CPU1       \n\
          HI:          0          0\n\
      NET_TX:         43         33\n\
      NET_RX:       6561       7840\n";
    const SOFT_B: &str = "                    CPU0       CPU1       \n\
          HI:          0          0\n\
      NET_TX:         47         33\n\
      NET_RX:       8561       7850\n";

    #[test]
    fn parses_proc_files() {
        let c = parse_stat(STAT_B);
        assert_eq!(c.len(), 2, "aggregate line skipped");
        assert_eq!(
            c[&1],
            CpuTimes {
                idle: 860,
                total: 1250,
                steal: 0
            }
        );
        let i = parse_interrupts(IRQ_B);
        assert_eq!(i["30"], ("PCI-MSI 524288-edge eth0-rx-0".to_string(), 1300));
        assert_eq!(i["LOC"].1, 2400);
        assert_eq!(i["ERR"].1, 3);
        let s = parse_softirqs(SOFT_B);
        assert_eq!(s["NET_RX"], vec![8561, 7850]);
    }

    #[test]
    fn steal_per_cpu() {
        let a = parse_stat("cpu0 100 0 50 840 0 0 0 10 0 0\ncpu1 0 0 0 100 0 0 0 0 0 0\n");
        let b = parse_stat(
            "cpu0 100 0 50 880 0 0 0 70 0 0\ncpu1 0 0 0 100 0 0 0 0 0 0\n\
             cpu2 0 0 0 1 0 0 0 0 0 0\n",
        );
        // cpu0: 60 of 100 ticks stolen; cpu1 had no time; cpu2 is new.
        assert_eq!(steal_pct(&a, &b), vec![60.0, 0.0, 0.0]);
    }

    #[test]
    fn rates_between_snapshots() {
        let a = Snapshot::parse(STAT_A, IRQ_A, SOFT_A);
        let b = Snapshot::parse(STAT_B, IRQ_B, SOFT_B);
        let d = delta_over(&a, &b, 2.0);
        assert_eq!(d.cpus[0].available_pct, 100.0);
        // cpu1: total delta 1250-1000 = 250, idle delta 10 -> 4 %
        assert!((d.cpus[1].available_pct - 4.0).abs() < 1e-9);
        // irq 30: 1000 in 2 s; LOC: 400 in 2 s; ERR excluded from total
        assert_eq!(d.irqs[0].irq, "30");
        assert!((d.irqs[0].per_s - 500.0).abs() < 1e-9);
        assert!((d.irq_total_per_s - 700.0).abs() < 1e-9);
        assert!(!d.irqs.iter().any(|r| r.irq == "24"));
        assert!((d.softirqs[0].net_rx_per_s - 1000.0).abs() < 1e-9);
        assert!((d.softirqs[0].net_tx_per_s - 2.0).abs() < 1e-9);
        assert!((d.softirqs[1].net_rx_per_s - 5.0).abs() < 1e-9);
    }

    #[test]
    fn live_snapshot_works() {
        let a = Snapshot::take().unwrap();
        let b = Snapshot::take().unwrap();
        let d = delta(&a, &b);
        assert!(!d.cpus.is_empty());
        assert!(d
            .cpus
            .iter()
            .all(|c| (0.0..=100.0).contains(&c.available_pct)));
    }
}
