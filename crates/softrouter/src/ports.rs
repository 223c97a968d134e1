//! Opening the configured ports with their backends.

use anyhow::{Context, Result};
use config::{Config, Driver};
use netio::Port;
use std::sync::Arc;

/// Opens every port of `cfg`. `mem` ports get one RX queue per worker
/// unless `queues` says otherwise, so every worker has input.
pub fn open_all(cfg: &Config) -> Result<Vec<Arc<dyn Port>>> {
    cfg.ports.iter().map(|p| open(cfg, p)).collect()
}

fn open(cfg: &Config, p: &config::Port) -> Result<Arc<dyn Port>> {
    let mtu = p.mtu.unwrap_or(1500);
    let port: Arc<dyn Port> = match p.driver {
        Driver::Pcap => Arc::new(
            netio::pcap::PcapPort::open(
                &p.name,
                p.mac.expect("validated: pcap ports have a mac"),
                mtu,
                p.rx_pcap.as_deref(),
                p.tx_pcap.as_deref(),
            )
            .with_context(|| format!("port {:?}", p.name))?,
        ),
        Driver::Mem => Arc::new(
            netio::mem::MemPort::open(
                &p.name,
                p.mac.expect("validated: mem ports have a mac"),
                mtu,
                p.rx_pcap.as_deref(),
                p.queues.unwrap_or(cfg.router.workers as u16),
            )
            .with_context(|| format!("port {:?}", p.name))?,
        ),
        Driver::AfXdp | Driver::AfPacket => crate::ports::live::open(cfg, p)?,
    };
    Ok(port)
}

mod live {
    use super::*;

    pub fn open(_cfg: &Config, p: &config::Port) -> Result<Arc<dyn Port>> {
        anyhow::bail!("port {:?}: live drivers are not wired yet", p.name)
    }
}

/// Which worker receives on which (port, queue): the configured map, else
/// queues dealt round-robin over workers, port by port (as l3fwd's default).
pub fn assign_queues(cfg: &Config, ports: &[Arc<dyn Port>]) -> Result<Vec<Vec<(usize, u16)>>> {
    let workers = cfg.router.workers;
    let mut per_worker = vec![Vec::new(); workers];
    if cfg.router.queue_map.is_empty() {
        let mut next = 0;
        for (pi, port) in ports.iter().enumerate() {
            for q in 0..port.info().rx_queues {
                per_worker[next % workers].push((pi, q));
                next += 1;
            }
        }
    } else {
        for m in &cfg.router.queue_map {
            let have = ports[m.port].info().rx_queues;
            anyhow::ensure!(
                m.queue < have,
                "{}: [[queue]] port {:?} queue {}: the port has {} RX queue(s)",
                cfg.source.display(),
                cfg.ports[m.port].name,
                m.queue,
                have
            );
            per_worker[m.worker].push((m.port, m.queue));
        }
    }
    Ok(per_worker)
}
