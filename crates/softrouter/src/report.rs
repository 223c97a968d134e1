//! The statistics file written by `softrouter run --stats-json`.
//!
//! Field names are part of the interface: the benchmark and users' scripts
//! read `elapsed_s`, `ports[].{name, rx_packets, tx_packets, rx_bytes,
//! tx_bytes}`, `drops` and `cycles_per_packet.{rx, process, tx}`.

use anyhow::{Context, Result};
use config::Config;
use dataplane::{StatsSnapshot, WorkerStats};
use netio::Port;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

#[derive(Serialize, Debug, Clone)]
pub struct PortReport {
    pub name: String,
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
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

pub fn build(
    cfg: &Config,
    ports: &[Arc<dyn Port>],
    stats: &[Arc<WorkerStats>],
    elapsed: Duration,
    notes: &[String],
) -> Report {
    let per_worker: Vec<StatsSnapshot> = stats.iter().map(|s| s.snapshot()).collect();
    let mut totals = StatsSnapshot::default();
    for s in &per_worker {
        totals.merge(s);
    }
    let port_reports = ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let c = totals.ports.get(i).cloned().unwrap_or_default();
            PortReport {
                // The configured name, not the interface's: users and the
                // benchmark look ports up by the names they wrote.
                name: cfg
                    .ports
                    .get(i)
                    .map_or_else(|| p.info().name.clone(), |c| c.name.clone()),
                rx_packets: c.rx_packets,
                tx_packets: c.tx_packets,
                rx_bytes: c.rx_bytes,
                tx_bytes: c.tx_bytes,
            }
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
