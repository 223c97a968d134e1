//! `perf report` text to samples per thread and symbol ([`parse_report`]),
//! and those to shares and cycles per packet by stage ([`Split`]).

use std::collections::BTreeMap;

use schema::dut_sample::{
    CpuFigures, Excluded, StageFigures, StageSplit, ThreadSamples, TopSymbol,
};

use super::classify::{classify, Class};

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

    /// The `stages` of a trial's `dut_stats`; `cpu` is that trial's
    /// `dut_stats.cpu` (for the cycles per packet).
    pub fn report(&self, source: &str, cpus: Option<&[usize]>, cpu: &CpuFigures) -> StageSplit {
        let n = self.samples();
        let share = |st: &str| -> Option<f64> {
            (n > 0).then(|| self.by_stage.get(st).copied().unwrap_or(0) as f64 * 100.0 / n as f64)
        };
        let (per_pkt, of) = match cpu.soak_cycles_per_packet {
            Some(v) => (Some(v), "soak_cycles_per_packet"),
            None => (cpu.dut_cycles_per_packet, "dut_cycles_per_packet"),
        };
        StageSplit {
            source: source.into(),
            cpus: cpus.map(<[usize]>::to_vec),
            samples: n,
            excluded: Excluded {
                soaker: self.soaker,
                idle: self.idle,
                profiler: self.profiler,
                other_processes: self.foreign,
            },
            threads: self
                .threads
                .iter()
                .take(5)
                .map(|(t, c)| ThreadSamples {
                    thread: t.clone(),
                    samples: *c,
                })
                .collect(),
            share_pct: StageFigures::by(share),
            cycles_per_packet: StageFigures::by(|st| {
                share(st).zip(per_pkt).map(|(s, c)| s / 100.0 * c)
            }),
            cycles_per_packet_of: of.into(),
            total_cycles_per_packet: per_pkt,
            top: self
                .symbols
                .iter()
                .take(10)
                .map(|(sym, st, c)| TopSymbol {
                    symbol: sym.clone(),
                    stage: st.to_string(),
                    share_pct: *c as f64 * 100.0 / n.max(1) as f64,
                })
                .collect(),
        }
    }
}
