//! The statistics file written by `softrouter run --stats-json`.
//!
//! Field names are part of the interface: the benchmark and users' scripts
//! read `elapsed_s`, `ports[].{name, rx_packets, tx_packets, rx_bytes,
//! tx_bytes}`, `drops` and `cycles_per_packet.{rx, process, tx}`.
//!
//! Each port also carries its accounting (`received`, `forwarded`,
//! `local`, `held`, `drops`, `output_drops`, `events`, `rx_queues`; see
//! `dataplane::stats`), so that `received = forwarded + local + held +
//! sum(drops)` can be checked per port (`dataplane::assert_accounting`).
//! Snapshots of running workers are taken by the workers between two
//! rounds, so the identity holds in every file written, not only the last.

use anyhow::{Context, Result};
use config::Config;
use dataplane::stats::RxQueueReport;
use dataplane::{PortCounters, StatsSnapshot, WorkerStats};
use netio::Port;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// One port, summed over workers: traffic and the port's accounting
/// (`dataplane::PortCounters`, with the configured name).
#[derive(Serialize, Debug, Clone)]
pub struct PortReport {
    pub name: String,
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub received: u64,
    pub forwarded: u64,
    pub local: u64,
    pub held: u64,
    pub drops: BTreeMap<&'static str, u64>,
    pub output_drops: BTreeMap<&'static str, u64>,
    pub events: BTreeMap<&'static str, u64>,
    pub rx_queues: Vec<RxQueueReport>,
}

impl PortReport {
    fn new(name: String, c: PortCounters) -> PortReport {
        PortReport {
            name,
            rx_packets: c.rx_packets,
            tx_packets: c.tx_packets,
            rx_bytes: c.rx_bytes,
            tx_bytes: c.tx_bytes,
            received: c.received,
            forwarded: c.forwarded,
            local: c.local,
            held: c.held,
            drops: c.drops,
            output_drops: c.output_drops,
            events: c.events,
            rx_queues: c.rx_queues,
        }
    }
}

#[derive(Serialize, Debug, Clone)]
pub struct Cycles {
    pub rx: f64,
    pub process: f64,
    pub tx: f64,
    pub total: f64,
}

#[derive(Serialize, Debug, Clone)]
pub struct Report {
    pub version: &'static str,
    pub elapsed_s: f64,
    pub workers: usize,
    pub mode: String,
    pub ports: Vec<PortReport>,
    pub drops: BTreeMap<String, u64>,
    pub cycles_per_packet: Cycles,
    /// Times idle workers went to sleep (interrupt/adaptive modes).
    pub sleeps: u64,
    /// Anything accepted and not delivered, or other problems at exit.
    pub notes: Vec<String>,
    /// The summed worker counters in full.
    pub totals: StatsSnapshot,
    /// Each worker's counters.
    pub per_worker: Vec<StatsSnapshot>,
}

/// How long a snapshot waits for a running worker to answer (a worker
/// sleeps at most 10 ms between rounds); a worker that does not answer is
/// read directly.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_millis(500);

pub fn build(
    cfg: &Config,
    ports: &[Arc<dyn Port>],
    stats: &[Arc<WorkerStats>],
    elapsed: Duration,
    notes: &[String],
) -> Report {
    // Ask every worker at once, then collect: each answers at the end of
    // its current round (a stopped worker is read directly).
    let tickets: Vec<u64> = stats.iter().map(|s| s.request_snapshot()).collect();
    let per_worker: Vec<StatsSnapshot> = stats
        .iter()
        .zip(tickets)
        .map(|(s, t)| s.wait_snapshot(t, SNAPSHOT_TIMEOUT))
        .collect();
    let mut totals = StatsSnapshot::default();
    for s in &per_worker {
        totals.merge(s);
    }
    let port_reports = ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let c = totals.ports.get(i).cloned().unwrap_or_default();
            // The configured name, not the interface's: users and the
            // benchmark look ports up by the names they wrote.
            let name = cfg
                .ports
                .get(i)
                .map_or_else(|| p.info().name.clone(), |c| c.name.clone());
            PortReport::new(name, c)
        })
        .collect();
    let (rx, process, tx) = totals.cycles_per_packet();
    Report {
        version: env!("CARGO_PKG_VERSION"),
        elapsed_s: elapsed.as_secs_f64(),
        workers: cfg.router.workers,
        mode: format!("{:?}", cfg.router.mode).to_lowercase(),
        ports: port_reports,
        drops: totals
            .drops
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        cycles_per_packet: Cycles {
            rx,
            process,
            tx,
            total: rx + process + tx,
        },
        sleeps: 0,
        notes: notes.to_vec(),
        totals,
        per_worker,
    }
}

/// Writes the report atomically (temp file + rename), so a reader polling
/// the file never sees half of it.
pub fn write(r: &Report, path: &Path) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(r)?;
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
