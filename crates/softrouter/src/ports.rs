//! Opening the configured ports with their backends.

use anyhow::{Context, Result};
use config::{Config, Driver};
use netio::Port;
use std::sync::Arc;

/// An XDP program a port attached (the fast path's).
#[derive(Clone, Debug)]
pub struct Attached {
    pub iface: String,
    pub ifindex: u32,
    /// `Native` or `Generic`.
    pub mode: netio::afxdp::XdpMode,
}

/// The opened ports, and which XDP program each attached.
pub type Opened = (Vec<Arc<dyn Port>>, Vec<Option<Attached>>);

/// Opens every port of `cfg`. `mem` ports get one RX queue per worker
/// unless `queues` says otherwise, so every worker has input. `afxdp`
/// ports attach `program_for(port index)` when it gives one (the XDP
/// tier's, which builds on what the ports attached: ports come first);
/// the second list says which did.
pub fn open_all(
    cfg: &Config,
    program_for: impl Fn(usize) -> Option<netio::afxdp::SharedProgram>,
) -> Result<Opened> {
    let mut ports = Vec::new();
    let mut attached = Vec::new();
    for (i, p) in cfg.ports.iter().enumerate() {
        let program = program_for(i);
        let (port, a) = open(cfg, p, program)?;
        ports.push(port);
        attached.push(a);
    }
    Ok((ports, attached))
}

/// The (port name, interface) of every live port.
pub fn live_interfaces(cfg: &Config) -> Vec<(String, String)> {
    cfg.ports
        .iter()
        .filter_map(|p| Some((p.name.clone(), p.iface.clone()?)))
        .collect()
}

/// Locks the interface of every live port (see [`crate::iflock`]) so a
/// second softrouter on one of them refuses to start. An interface that
/// does not exist is skipped: opening the port reports it.
pub fn lock_interfaces(cfg: &Config) -> Result<Vec<crate::iflock::IfaceLock>> {
    let dir = crate::iflock::run_dir();
    let mut locks = Vec::new();
    for (port, iface) in live_interfaces(cfg) {
        if let Some(index) = crate::iflock::ifindex(&iface) {
            // One port per interface: a second port on the same interface
            // would conflict with the first as a second router would.
            locks.push(crate::iflock::lock(&dir, &port, &iface, index)?);
        }
    }
    Ok(locks)
}

fn open(
    cfg: &Config,
    p: &config::Port,
    program: Option<netio::afxdp::SharedProgram>,
) -> Result<(Arc<dyn Port>, Option<Attached>)> {
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
        Driver::AfXdp | Driver::AfPacket => return live::open(cfg, p, program),
    };
    Ok((port, None))
}

/// The kernel-bypass backends. Interface MAC and MTU come from the
/// kernel unless the config overrides them.
mod live {
    use super::*;
    use config::XdpMode;

    pub fn open(
        cfg: &Config,
        p: &config::Port,
        program: Option<netio::afxdp::SharedProgram>,
    ) -> Result<(Arc<dyn Port>, Option<Attached>)> {
        let iface = p
            .iface
            .as_deref()
            .expect("validated: live ports have an iface");
        let what = || format!("port {:?} (interface {iface:?})", p.name);
        Ok(match p.driver {
            Driver::AfXdp => {
                check_queues_served(cfg, p, iface)?;
                let mut c = netio::afxdp::AfXdpConfig::new(iface, cfg.router.frame_size);
                c.queues = p.queues;
                c.xdp_mode = match p.xdp_mode {
                    XdpMode::Auto => netio::afxdp::XdpMode::Auto,
                    XdpMode::Native => netio::afxdp::XdpMode::Native,
                    XdpMode::Generic => netio::afxdp::XdpMode::Generic,
                };
                c.zero_copy = match p.zero_copy {
                    None => netio::afxdp::ZeroCopy::Auto,
                    Some(true) => netio::afxdp::ZeroCopy::On,
                    Some(false) => netio::afxdp::ZeroCopy::Off,
                };
                // One size for all four rings: the fill ring must be as deep
                // as the RX ring or the kernel drops when a worker is late.
                c.rx_ring = p.ring_size;
                c.tx_ring = p.ring_size;
                c.fill_ring = p.ring_size;
                c.comp_ring = p.ring_size;
                c.mac = p.mac;
                c.mtu = p.mtu;
                let shared = program.is_some();
                c.program = program;
                let port = netio::afxdp::AfXdpPort::open(c).with_context(what)?;
                let a = shared.then(|| Attached {
                    iface: iface.to_string(),
                    ifindex: port.ifindex(),
                    mode: port.mode(),
                });
                (Arc::new(port), a)
            }
            Driver::AfPacket => {
                let mut c = netio::afpacket::AfPacketConfig::new(iface);
                c.queues = p.queues;
                c.mac = p.mac;
                c.mtu = p.mtu;
                (
                    Arc::new(netio::afpacket::AfPacketPort::open(c).with_context(what)?),
                    None,
                )
            }
            Driver::Pcap | Driver::Mem => unreachable!("offline drivers are opened above"),
        })
    }
}

/// Refuses an `afxdp` port whose `queues` leaves some of the interface's
/// RX queues unserved. The NIC (or a veth's sender) spreads flows over all
/// its queues; an XDP program sees the frames of every queue, but only the
/// served ones have a socket, so the rest would go to the kernel's stack:
/// whole flows (pings to the router among them) lost or answered by the
/// wrong stack, silently. A router must not start like that, and a warning
/// at start is too easy to miss: the operator either serves every queue
/// (`queues = N`, or no `queues`) or gives the interface fewer queues
/// (`ethtool -L`). (AF_PACKET sockets see every queue, so they need no
/// such check; more `queues` than the interface has are served as many
/// as there are.)
fn check_queues_served(cfg: &Config, p: &config::Port, iface: &str) -> Result<()> {
    let Some(want) = p.queues else {
        return Ok(());
    };
    // An interface that cannot be asked is reported when it is opened.
    let Ok(info) = netio::ifinfo::query(iface) else {
        return Ok(());
    };
    let have = info.rx_queues;
    anyhow::ensure!(
        want >= have,
        "{}: port {:?} (interface {iface:?}): queues = {want}, but the interface has {have} RX queues: frames on queues {want}..{} would bypass the router; set queues = {have} (or remove queues), or give the interface {want} queue(s) with `ethtool -L {iface} combined {want}` (or `rx {want}`)",
        cfg.source.display(),
        p.name,
        have - 1,
    );
    Ok(())
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
