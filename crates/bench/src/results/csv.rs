//! The CSV writer: one row per trial of every run ([`CSV_HEADER`]).

use super::{dut_busy_pct, trial_at_throughput, RunResults};

/// One CSV row per trial of `r`.
pub(super) fn csv_rows(r: &RunResults, out: &mut String) {
    let opt = |v: Option<f64>| v.map(fmt_f).unwrap_or_default();
    for t in &r.tests {
        // The projection's trial carries it (see `projection`).
        let projected = t
            .throughput_summary()
            .and_then(|s| s.projection)
            .zip(trial_at_throughput(t));
        for tr in &t.trials {
            let o = &tr.outcome;
            let projected_fps = projected
                .filter(|(_, at)| std::ptr::eq(*at, tr))
                .map(|(p, _)| p.projected_fps);
            let l = &o.latency;
            // Latency cells stay empty for a trial without a sample.
            let lat = |v: f64| opt((l.count > 0).then_some(v));
            let cpu_min = o.sys.as_ref().and_then(|s| {
                s.cpus
                    .iter()
                    .map(|c| c.available_pct)
                    .min_by(f64::total_cmp)
            });
            let split = |f: fn(&crate::search::LossSplit) -> u64| {
                o.loss_split
                    .as_ref()
                    .map(|l| f(l).to_string())
                    .unwrap_or_default()
            };
            let noise = o.noise.as_ref();
            let row: Vec<String> = vec![
                r.meta.dut.label().to_string(),
                r.meta.round().to_string(),
                t.test.name().into(),
                t.ip.to_string(),
                t.size.to_string(),
                tr.purpose.clone(),
                fmt_f(tr.spec.rate_fps),
                fmt_f(tr.spec.duration.as_secs_f64()),
                tr.spec.burst.map(|b| b.to_string()).unwrap_or_default(),
                o.sent.to_string(),
                o.received.to_string(),
                o.lost.to_string(),
                fmt_f(o.loss_pct()),
                o.reordered.to_string(),
                o.duplicates.to_string(),
                fmt_f(o.achieved_tx_rate_fps),
                o.tester_limited.to_string(),
                o.tester_limit_reason.clone().unwrap_or_default(),
                lat(l.min_ns as f64),
                lat(l.mean_ns),
                lat(l.median_ns as f64),
                lat(l.p99_ns as f64),
                lat(l.p999_ns as f64),
                lat(l.max_ns as f64),
                opt(l.ipdv_mean_abs_ns.filter(|_| l.count > 0)),
                opt(cpu_min),
                opt(o.sys.as_ref().map(|s| s.irq_total_per_s)),
                split(|l| l.dut_ring),
                split(|l| l.dut_drops),
                split(|l| l.tester_ring),
                split(|l| l.elsewhere),
                o.measurement_fault.clone().unwrap_or_default(),
                tr.discarded.to_string(),
                opt(noise.and_then(|n| n.steal_pct.iter().copied().reduce(f64::max))),
                opt(noise.and_then(|n| n.longest_rx_gap_us)),
                opt(noise.and_then(|n| n.generator_paused_us)),
                opt(dut_busy_pct(tr)),
                opt(projected_fps),
                tr.passed.to_string(),
                tr.bound_for.join(" "),
            ];
            let row: Vec<String> = row.iter().map(|c| csv_field(c)).collect();
            out.push_str(&row.join(","));
            out.push('\n');
        }
    }
}

/// Columns of the CSV file. Empty cells: not applicable or not measured
/// (e.g. `ipdv_mean_abs_ns` with a tester that does not compute IPDV, the
/// latency of a trial in which no frame arrived). `round`: the run's
/// round of `--repeat N` (1 without it). `dut_busy_pct`: the DUT CPUs'
/// busy share in the trial (soakers); `projected_fps`: a projection, not a
/// measurement ([`super::Projection`]), on the trial it was projected from.
pub const CSV_HEADER: [&str; 40] = [
    "dut",
    "round",
    "test",
    "ip",
    "size",
    "purpose",
    "rate_fps",
    "duration_s",
    "burst",
    "sent",
    "received",
    "lost",
    "loss_pct",
    "reordered",
    "duplicates",
    "achieved_tx_rate_fps",
    "tester_limited",
    "tester_limit_reason",
    "lat_min_ns",
    "lat_mean_ns",
    "lat_median_ns",
    "lat_p99_ns",
    "lat_p999_ns",
    "lat_max_ns",
    "ipdv_mean_abs_ns",
    "dut_cpu_min_available_pct",
    "dut_irq_per_s",
    "lost_dut_ring",
    "lost_dut_drops",
    "lost_tester_ring",
    "lost_elsewhere",
    "measurement_fault",
    "discarded",
    "steal_max_pct",
    "longest_rx_gap_us",
    "generator_paused_us",
    "dut_busy_pct",
    "projected_fps",
    "passed",
    "bound",
];

fn fmt_f(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// RFC 4180 quoting.
pub(super) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
