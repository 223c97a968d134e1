//! The one validator: `softrouter run` and `softrouter check-config` both
//! load a configuration through [`load`], so they accept and reject the
//! same files with the same file:line messages. `check-config` then does
//! what `run` does next without opening a port ([`dry_run`]): it reads the
//! input captures with the reader the pcap ports use and builds the routing
//! state with the code the router uses, so a capacity or capture problem is
//! found before the router is started, too. What only the real ports can
//! tell (an interface that does not exist, permissions, RX queues) is left
//! to `run`.

use config::{Config, ConfigError, Driver};
use std::path::Path;

/// The checked configuration and what its routes file holds.
pub struct Loaded {
    pub config: Config,
    pub routes_file: config::routes_file::Summary,
}

/// Reads and validates a configuration and its routes file (streamed,
/// file:line errors); the next hops must fit the router's table.
pub fn load(path: &Path) -> Result<Loaded, ConfigError> {
    let config = config::load(path)?;
    let routes_file =
        config::routes_file::check(&config, dataplane::router::MAX_NEXT_HOPS as usize)?;
    Ok(Loaded {
        config,
        routes_file,
    })
}

/// What `run` does after [`load`] that can be done without ports: read the
/// input captures, check the output captures' folders, build the FIB.
pub fn dry_run(cfg: &Config) -> Result<(), String> {
    for p in &cfg.ports {
        if let Some(rx) = &p.rx_pcap {
            // The same call as the pcap and mem ports make when opened,
            // so the same captures are refused (pcapng, truncated, ...).
            netio::pcap::load_capture(rx).map_err(|e| format!("port {:?}: {e}", p.name))?;
        }
        if let Some(tx) = &p.tx_pcap {
            let dir = match tx.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            if !dir.is_dir() {
                return Err(format!(
                    "port {:?}: tx_pcap: the folder {} does not exist",
                    p.name,
                    dir.display()
                ));
            }
            if tx.is_dir() {
                return Err(format!(
                    "port {:?}: tx_pcap: {} is a folder",
                    p.name,
                    tx.display()
                ));
            }
        }
    }
    let infos: Vec<netio::PortInfo> = cfg
        .ports
        .iter()
        .map(|p| netio::PortInfo {
            name: p.name.clone(),
            // Live ports take the interface's MAC and MTU; neither changes
            // what the routing state accepts.
            mac: p.mac.unwrap_or([2, 0, 0, 0, 0, 1]),
            mtu: p.mtu.unwrap_or(1500),
            rx_queues: match p.driver {
                Driver::Mem => p.queues.unwrap_or(cfg.router.workers as u16),
                _ => p.queues.unwrap_or(1),
            },
        })
        .collect();
    dataplane::Router::new(cfg, &infos)
        .map(|_| ())
        .map_err(|e| {
            format!(
                "{}: building the routing state: {e:#}",
                cfg.source.display()
            )
        })
}

/// `check-config`: [`load`] + [`dry_run`]; a one-line summary, or the
/// error naming file, line and field.
pub fn check(path: &Path) -> Result<String, String> {
    let loaded = load(path).map_err(|e| e.to_string())?;
    let cfg = &loaded.config;
    dry_run(cfg)?;
    Ok(format!(
        "{} ports, {} routes, {} routes from file, {} neighbors, {} workers, {} next hops",
        cfg.ports.len(),
        cfg.routes.len(),
        loaded.routes_file.routes,
        cfg.neighbors.len(),
        cfg.router.workers,
        loaded.routes_file.next_hops,
    ))
}
