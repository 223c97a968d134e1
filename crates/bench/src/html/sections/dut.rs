//! The DUT's side of an experiment: CPU time and cycles a packet (by
//! stage for softrouter), interrupts, and softrouter's own figures.

use super::*;

/// CPU time and cycles per packet, softrouter's by stage.
pub(in crate::html) fn cpu(out: &mut String, runs: &[RunResults]) {
    let mut cycles = Vec::new();
    let mut time = Vec::new();
    let mut rows = Vec::new();
    for r in runs {
        let dut = r.meta.dut.label();
        for (label, at, tr) in figure_trials(r) {
            let Some(d) = tr.outcome.dut_stats.as_ref() else {
                continue;
            };
            let c = d.cpu.as_ref();
            let sr = d.softrouter.as_ref();
            // The workers' cycles cover only the packets they handled,
            // not those the XDP tier forwarded: say how many, and leave
            // out a handful (a few punted frames) that would stand for
            // the whole trial's cost.
            let n = sr.map_or(0, |s| s.cycles.packets);
            if let Some(s) = sr.filter(|s| n > 0 && n.saturating_mul(100) >= s.forwarded) {
                let per = &s.cycles_per_packet;
                cycles.push(StackRow {
                    label: format!("{dut} {label}: workers, {n} pkts"),
                    segments: [("rx", per.rx), ("process", per.process), ("tx", per.tx)]
                        .map(|(k, v)| (k.to_string(), v))
                        .into(),
                });
            }
            // The kernel DUTs' split by perf (`dut::stages`, paper 001's
            // Table II), its processing drawn as softrouter's process.
            let ks = d
                .stages
                .as_ref()
                .and_then(StageReport::split)
                .map(|s| s.cycles_per_packet);
            if let Some(ks) = ks {
                let kernel = [
                    ("rx", ks.rx),
                    ("process", ks.processing),
                    ("tx", ks.tx),
                    ("memory", ks.memory),
                    ("skb", ks.skb),
                    ("other", ks.other),
                ];
                if kernel.iter().all(|(_, v)| v.is_some()) {
                    cycles.push(StackRow {
                        label: format!("{dut} {label}: by stage (perf)"),
                        segments: kernel
                            .map(|(name, v)| (name.to_string(), v.unwrap_or(0.0)))
                            .into(),
                    });
                }
            }
            if let Some(w) = d.cycles_per_packet() {
                cycles.push(StackRow {
                    label: format!("{dut} {label}: DUT CPUs"),
                    segments: vec![("DUT CPUs".to_string(), w)],
                });
            }
            if let Some((c, i)) = c.map(|c| (c, c.interval_s)).filter(|&(_, i)| i > 0.0) {
                time.push(StackRow {
                    label: format!("{dut} {label}"),
                    segments: ["user", "system", "irq", "softirq"]
                        .iter()
                        .map(|k| {
                            let s = c.machine_s(k).unwrap_or(0.0);
                            (k.to_string(), s / i * 100.0)
                        })
                        .collect(),
                });
            }
            let cyc = |f: fn(&CpuFigures) -> Option<f64>| opt(c.and_then(f), |v| format!("{v:.0}"));
            let soak_busy = c.and_then(|c| c.soak.as_ref()).map(|v| {
                v.iter()
                    .map(|x| format!("{}: {:.0} %", x.cpu, x.busy_pct))
                    .collect::<Vec<_>>()
                    .join(", ")
            });
            let xdp = match sr {
                Some(s) if s.forwarded > 0 => {
                    format!(
                        "{:.1}",
                        s.fast_path_forwarded as f64 / s.forwarded as f64 * 100.0
                    )
                }
                _ => "n/a".into(),
            };
            rows.push(vec![
                Cell::text(dut),
                Cell::text(&label),
                Cell::text(at),
                rate_cell(at, tr),
                Cell::num(opt(c.map(|c| c.dut_cpu_s), |v| format!("{v:.3}"))),
                Cell::num(xdp),
                Cell::num(cyc(|c| c.soak_cycles_per_packet)),
                Cell::num(cyc(|c| c.dut_cycles_per_packet)),
                Cell::num(format!(
                    "{} {}",
                    cyc(|c| c.direct_cycles_per_packet),
                    c.map_or("-", |c| c.direct_source.as_str())
                )),
                Cell::num(match sr {
                    Some(s) => format!("{:.0} ({n} pkts)", s.cycles_per_packet.total),
                    None => "n/a".into(),
                }),
                Cell::text(soak_busy.unwrap_or_else(|| "n/a".into())),
            ]);
        }
    }
    if rows.is_empty() {
        return;
    }
    out.push_str("<h3>CPU and cycles per packet</h3>\n");
    if !cycles.is_empty() {
        figure(
            out,
            &chart::stacked(
                "cycles per forwarded packet at the NDR",
                &cycles,
                &["rx", "process", "tx", "memory", "skb", "other", "DUT CPUs"],
            ),
            "softrouter's workers count their cycles per stage (rx, process, tx) over the \
             packets they handled, not those its XDP tier forwarded; \"DUT CPUs\" is every \
             DUT CPU's busy time per forwarded packet as the soakers (else /proc/stat) \
             measure it, for any DUT; \"by stage (perf)\" splits that time of a kernel DUT \
             by perf's cpu-clock samples of its CPUs (profile_stages; paper 001's rx, tx, \
             memory, skb and processing, drawn as process)",
        );
    }
    if !time.is_empty() {
        figure(
            out,
            &chart::stacked(
                "CPU time of the whole machine by kind, % of one CPU",
                &time,
                &["user", "system", "irq", "softirq"],
            ),
            "/proc/stat over the trial, all CPUs (tester included: on veth the tester's \
             and the DUT's kernel work share CPUs)",
        );
    }
    table(
        out,
        "CPU figures of the trial at the NDR (dut::probe): cycles per forwarded packet \
         from the soakers, /proc/stat and the DUT's own time (process or softirq); \
         XDP %: share forwarded by softrouter's XDP tier",
        &[
            "DUT",
            "size",
            "trial",
            "Mpps",
            "DUT CPU s",
            "XDP %",
            "soak cyc/pkt",
            "stat cyc/pkt",
            "direct cyc/pkt",
            "worker cyc/pkt",
            "DUT CPUs busy",
        ],
        &rows,
    );
}

/// Interrupt and softirq rates, and CPU availability.
pub(in crate::html) fn interrupts(out: &mut String, runs: &[RunResults]) {
    let mut rows = Vec::new();
    // Charts: interrupts by line (the busiest lines of all trials, the
    // rest as "other"), network softirqs by kind; both add up to totals.
    let mut lines: Vec<String> = Vec::new();
    for r in runs {
        for (_, _, tr) in figure_trials(r) {
            for i in tr.outcome.sys.iter().flat_map(|s| &s.irqs).take(3) {
                if lines.len() < 5 && !lines.contains(&i.irq) && i.irq != "ERR" && i.irq != "MIS" {
                    lines.push(i.irq.clone());
                }
            }
        }
    }
    let mut irq_rows = Vec::new();
    let mut softirq_rows = Vec::new();
    for r in runs {
        for (label, at, tr) in figure_trials(r) {
            let Some(s) = tr.outcome.sys.as_ref() else {
                continue;
            };
            let name = format!("{} {label}", r.meta.dut.label());
            let mut segments: Vec<(String, f64)> = lines
                .iter()
                .map(|l| {
                    let v = s.irqs.iter().find(|i| &i.irq == l).map_or(0.0, |i| i.per_s);
                    (l.clone(), v)
                })
                .collect();
            let known: f64 = segments.iter().map(|x| x.1).sum();
            segments.push(("other".into(), (s.irq_total_per_s - known).max(0.0)));
            irq_rows.push(StackRow {
                label: name.clone(),
                segments,
            });
            softirq_rows.push(StackRow {
                label: name,
                segments: vec![
                    (
                        "NET_RX".into(),
                        s.softirqs.iter().map(|c| c.net_rx_per_s).sum(),
                    ),
                    (
                        "NET_TX".into(),
                        s.softirqs.iter().map(|c| c.net_tx_per_s).sum(),
                    ),
                ],
            });
            let top = s
                .irqs
                .iter()
                .filter(|i| i.irq != "ERR" && i.irq != "MIS")
                .take(3)
                .map(|i| format!("{} {}: {:.0}/s", i.irq, i.name, i.per_s))
                .collect::<Vec<_>>()
                .join("; ");
            let rx: f64 = s.softirqs.iter().map(|c| c.net_rx_per_s).sum();
            let tx: f64 = s.softirqs.iter().map(|c| c.net_tx_per_s).sum();
            let per_cpu = s
                .cpus
                .iter()
                .map(|c| format!("{}: {:.0}", c.cpu, c.available_pct))
                .collect::<Vec<_>>()
                .join(", ");
            rows.push(vec![
                Cell::text(r.meta.dut.label()),
                Cell::text(&label),
                Cell::text(at),
                rate_cell(at, tr),
                Cell::num(format!("{:.0}", s.irq_total_per_s)),
                Cell::num(format!("{rx:.0}")),
                Cell::num(format!("{tx:.0}")),
                Cell::wrap(top),
                Cell::wrap(per_cpu),
            ]);
        }
    }
    if rows.is_empty() {
        return;
    }
    out.push_str("<h3>Interrupts and softirqs</h3>\n");
    let mut kinds: Vec<&str> = lines.iter().map(String::as_str).collect();
    kinds.push("other");
    figure(
        out,
        &chart::stacked("interrupts per second, by line", &irq_rows, &kinds),
        "host-wide, over the trial at the NDR; the busiest lines by their \
         /proc/interrupts id (RES: rescheduling, LOC: local timer, CAL: function call)",
    );
    figure(
        out,
        &chart::stacked(
            "network softirqs per second, all CPUs",
            &softirq_rows,
            &["NET_RX", "NET_TX"],
        ),
        "/proc/softirqs over the trial at the NDR",
    );
    table(
        out,
        "host-wide rates over the trial at the NDR (/proc/interrupts, /proc/softirqs, /proc/stat)",
        &[
            "DUT",
            "size",
            "trial",
            "rate Mpps",
            "IRQ/s",
            "NET_RX/s",
            "NET_TX/s",
            "busiest lines",
            "CPU available %",
        ],
        &rows,
    );
}

/// softrouter's own figures: drop reasons and the control plane's
/// answer times while the trial ran.
pub(in crate::html) fn dut_own(out: &mut String, runs: &[RunResults]) {
    let mut drops = Vec::new();
    let mut control = Vec::new();
    for r in runs {
        for (label, at, tr) in figure_trials(r) {
            let Some(d) = tr.outcome.dut_stats.as_ref() else {
                continue;
            };
            if let Some(m) = d.softrouter.as_ref().map(|s| &s.drops) {
                let list = m
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                drops.push(vec![
                    Cell::text(r.meta.dut.label()),
                    Cell::text(&label),
                    Cell::text(at),
                    Cell::wrap(if list.is_empty() { "none".into() } else { list }),
                ]);
            }
        }
        // The latency test's trial of its own at the same rate (results
        // before it carried the figures in every trial: the NDR's then).
        let timed = r.tests.iter().flat_map(|t| {
            t.trials
                .iter()
                .filter(|tr| tr.purpose == crate::search::CONTROL_PURPOSE)
                .map(move |tr| (t.label(), tr))
        });
        let old = figure_trials(r).into_iter().map(|(l, _, tr)| (l, tr));
        let mut shown = Vec::new();
        for (label, tr) in timed.chain(old) {
            let Some(m) = tr
                .outcome
                .dut_stats
                .as_ref()
                .and_then(|d| d.control_latency.as_ref())
            else {
                continue;
            };
            if shown.contains(&label) {
                continue;
            }
            shown.push(label.clone());
            for (kind, v) in m.kinds() {
                let ms = |x: Option<f64>| opt(x, |x| format!("{x:.2}"));
                control.push(vec![
                    Cell::text(r.meta.dut.label()),
                    Cell::text(&label),
                    Cell::text(kind),
                    Cell::num(v.count.to_string()),
                    Cell::num(v.errors.to_string()),
                    Cell::num(ms(v.p50_ms)),
                    Cell::num(ms(v.p99_ms)),
                    Cell::num(ms(v.max_ms)),
                ]);
            }
        }
    }
    if drops.is_empty() && control.is_empty() {
        return;
    }
    out.push_str("<h3>The DUT's own statistics</h3>\n");
    table(
        out,
        "drops by reason in the trial at the NDR",
        &["DUT", "size", "trial", "drops"],
        &drops,
    );
    table(
        out,
        "control plane answer times at the NDR's rate (requests 20 times a second, in a trial of their own)",
        &[
            "DUT", "size", "request", "count", "errors", "p50 ms", "p99 ms", "max ms",
        ],
        &control,
    );
}
