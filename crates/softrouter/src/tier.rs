//! The XDP tier in `softrouter run` (`[router] fast_path = "xdp"`, the
//! default; design in docs/fastpath.md).
//!
//! One program (`crates/fastpath`) is attached to every `afxdp` port
//! instead of the port's own redirect program. It forwards the common case
//! in the driver and punts the rest, unchanged, to the workers' AF_XDP
//! sockets, which the ports register in its XSKMAP. The workers' tables
//! are built in its maps ([`Tier::build_router`]), so both tiers read one
//! FIB. Start-up order, each step needing the one before:
//!
//! 1. [`Tier::load`]: the program and its maps, sized from the
//!    [`RouterPlan`] (the configuration and routes file read);
//! 2. the ports open and attach it ([`Tier::program_for`]);
//! 3. [`Tier::build_router`]: the FIB and neighbour entries in the maps;
//! 4. [`Tier::start`]: ports, MACs, MTUs and the workers' clock written to
//!    the program's maps, and the monitor thread started.
//!
//! The monitor (every [`MONITOR_INTERVAL`]) passes one kernel grace period
//! for the program as a table reader (so the writer may reuse retired tbl8
//! groups and next-hop ids), re-reads which egress ports take redirected
//! XDP frames (the kernel's `xdp_features`: a veth only while its peer can
//! receive them; without it, traffic to the port is punted to the
//! workers), and reads what the egress drivers dropped ([`EgressDrops`]),
//! so nothing the router sends is lost silently.

use crate::ports::Attached;
use anyhow::{Context, Result};
use config::{Config, Driver, FastPath as FastPathMode};
use dataplane::report::FastPathPort;
use dataplane::{Router, RouterPlan, TableSizes};
use fastpath::{Clock, Counter, FastPath, PortSlot, PORT_KERNEL_LOCAL, PORT_XDP_TX};
use netio::afxdp::{SharedProgram, XdpMode};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the monitor runs.
pub const MONITOR_INTERVAL: Duration = Duration::from_millis(200);

/// The loaded program, before the router exists.
pub struct Tier {
    fp: FastPath,
    prog: Arc<OwnedFd>,
    xskmap: Arc<OwnedFd>,
    /// Router ports the program is attached to (the `afxdp` ones).
    served: Vec<bool>,
    /// `[kernel] local`: the flag every served port's slot carries.
    kernel_local: bool,
}

impl Tier {
    /// Loads the program when `cfg` asks for the tier and has `afxdp`
    /// ports; `None` otherwise.
    pub fn load(cfg: &Config, sizes: TableSizes) -> Result<Option<Tier>> {
        let served: Vec<bool> = cfg
            .ports
            .iter()
            .map(|p| p.driver == Driver::AfXdp)
            .collect();
        if cfg.router.fast_path == FastPathMode::Off || !served.contains(&true) {
            return Ok(None);
        }
        if cfg.ports.len() > fastpath::layout::MAX_PORTS {
            anyhow::bail!(
                "{}: the XDP fast path serves at most {} ports; set [router] fast_path = \"off\"",
                cfg.source.display(),
                fastpath::layout::MAX_PORTS
            );
        }
        let mut fp = FastPath::load(fastpath::Sizes {
            lpm4_tbl8_groups: sizes.lpm4_tbl8_groups,
            lpm6_tbl8_groups: sizes.lpm6_tbl8_groups,
            next_hops: sizes.next_hops,
            groups: sizes.groups,
            group_members: sizes.group_members,
        })
        .context("the XDP fast path ([router] fast_path = \"off\" runs without it)")?;
        let (prog, xskmap) = fp.fds()?;
        Ok(Some(Tier {
            fp,
            prog: Arc::new(prog),
            xskmap: Arc::new(xskmap),
            served,
            kernel_local: cfg.kernel_local,
        }))
    }

    /// The program router port `port` attaches, if the tier serves it.
    pub fn program_for(&self, port: usize) -> Option<SharedProgram> {
        self.served
            .get(port)
            .copied()
            .unwrap_or(false)
            .then(|| SharedProgram {
                prog: self.prog.clone(),
                xskmap: self.xskmap.clone(),
                key_base: FastPath::xsk_key(port as u32),
                max_queues: fastpath::layout::MAX_QUEUES as u16,
            })
    }

    /// Builds the router with its tables and neighbour entries in the
    /// program's maps.
    pub fn build_router(&self, plan: RouterPlan, ports: &[netio::PortInfo]) -> Result<Router> {
        let mut mem = self.fp.memory();
        let neigh = mem.neighbours()?;
        plan.build_in(ports, &mut mem, neigh)
    }

    /// Tells the program the ports and the workers' clock, and starts the
    /// monitor. `attached[i]` is what port `i` attached (`None` for ports
    /// without the program).
    pub fn start(
        self,
        router: &Router,
        infos: &[netio::PortInfo],
        attached: &[Option<Attached>],
    ) -> Result<RunningTier> {
        let shared = router.shared();
        let epoch_age = shared.epoch().elapsed().as_nanos() as u64;
        self.fp.set_clock(Clock {
            epoch_ns: Clock::monotonic_ns().saturating_sub(epoch_age),
            offset_ms: 0,
            reachable_ms: shared.neighbor_timeout_ms,
        });
        // Generic XDP redirects through the egress device's ordinary
        // transmit path, so any egress takes its frames; native XDP needs
        // the egress driver's ndo_xdp_xmit.
        let all_generic = attached
            .iter()
            .flatten()
            .all(|a| a.mode == XdpMode::Generic);
        let ports: Vec<TierPort> = infos
            .iter()
            .zip(attached)
            .map(|(info, a)| TierPort {
                attached: a.clone(),
                mac: info.mac,
                mtu: info.mtu,
                xdp_tx: AtomicBool::new(false),
                refused: AtomicBool::new(false),
                drops: Mutex::new((EgressDrops::default(), None)),
            })
            .collect();
        let mut fp = self.fp;
        if let Err(e) = fp.watch_egress() {
            tracing::warn!(
                "fast path: {e:#}; frames an egress driver drops are not counted, and a port \
                 that stops taking XDP frames is noticed only by the monitor"
            );
        }
        let inner = Arc::new(Inner {
            fp: Mutex::new(fp),
            ports,
            all_generic,
            kernel_local: self.kernel_local,
            reader: router.external_reader(),
            stop: AtomicBool::new(false),
        });
        inner.refresh(true)?;
        let m = inner.clone();
        let monitor = std::thread::Builder::new()
            .name("fastpath".into())
            .spawn(move || m.monitor())
            .context("spawning the fast path monitor")?;
        for (i, p) in inner.ports.iter().enumerate() {
            if let Some(a) = &p.attached {
                tracing::info!(
                    port = i,
                    iface = %a.iface,
                    mode = %a.mode,
                    xdp_tx = p.xdp_tx.load(Ordering::Relaxed),
                    "XDP fast path on"
                );
            }
        }
        Ok(RunningTier {
            inner,
            monitor: Some(monitor),
        })
    }
}

/// The tier while the router runs; the monitor stops when it drops.
pub struct RunningTier {
    inner: Arc<Inner>,
    monitor: Option<JoinHandle<()>>,
}

struct Inner {
    fp: Mutex<FastPath>,
    ports: Vec<TierPort>,
    all_generic: bool,
    kernel_local: bool,
    reader: fib::ExternalReader,
    stop: AtomicBool,
}

struct TierPort {
    attached: Option<Attached>,
    mac: [u8; 6],
    mtu: u16,
    /// The program may redirect to this port (mirrors its PortSlot flag).
    xdp_tx: AtomicBool,
    /// The driver refused redirected frames (the tracepoint program
    /// cleared the flag): stay off until the kernel's xdp_features change.
    refused: AtomicBool,
    /// What the driver dropped since start, and its counters at start.
    drops: Mutex<(EgressDrops, Option<EgressDrops>)>,
}

/// Frames an egress device dropped since the router started, whoever
/// sent them (the redirected XDP frames its driver dropped are counted
/// apart, exactly, by the program's tracepoint: `FastPathPort::xmit_drops`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EgressDrops {
    /// The device's `tx_dropped` (for a veth: the workers' copies its
    /// peer's full ring refused).
    pub device_tx_dropped: u64,
}

impl EgressDrops {
    fn read(iface: &str) -> EgressDrops {
        EgressDrops {
            device_tx_dropped: netio::ifinfo::tx_dropped(iface).unwrap_or(0),
        }
    }

    fn since(&self, start: &EgressDrops) -> EgressDrops {
        EgressDrops {
            device_tx_dropped: self
                .device_tx_dropped
                .saturating_sub(start.device_tx_dropped),
        }
    }
}

impl Inner {
    fn monitor(&self) {
        while !self.stop.load(Ordering::Relaxed) {
            std::thread::sleep(MONITOR_INTERVAL);
            if let Err(e) = fastpath::grace_period(&self.reader) {
                tracing::warn!(
                    "fast path: no kernel grace period ({e}); retired table entries are not reused"
                );
            }
            if let Err(e) = self.refresh(false) {
                tracing::warn!("fast path: {e:#}");
            }
        }
    }

    /// Re-reads each live port's capacity to take XDP frames and its
    /// drivers' drop counters; writes changed port slots.
    fn refresh(&self, first: bool) -> Result<()> {
        for (i, p) in self.ports.iter().enumerate() {
            let Some(a) = &p.attached else { continue };
            let takes = self.all_generic
                || netio::xdp_features::query(a.ifindex)
                    .map(|f| f & netio::xdp_features::NDO_XMIT != 0)
                    .unwrap_or(false);
            let now = EgressDrops::read(&a.iface);
            {
                let mut d = p.drops.lock().unwrap();
                match d.1 {
                    None => d.1 = Some(now),
                    Some(start) => d.0 = now.since(&start),
                }
            }
            let mut fp = self.fp.lock().unwrap();
            let slot_on = fp.port_slot(i as u32)?.flags & PORT_XDP_TX != 0;
            if !first && p.xdp_tx.load(Ordering::Relaxed) && !slot_on {
                p.refused.store(true, Ordering::Relaxed);
                tracing::warn!(
                    port = i,
                    iface = %a.iface,
                    "fast path: {}'s driver refused redirected XDP frames; its traffic goes \
                     through the workers until the device changes",
                    a.iface
                );
            }
            if !takes {
                p.refused.store(false, Ordering::Relaxed);
            }
            let want = takes && !p.refused.load(Ordering::Relaxed);
            if first || want != slot_on {
                let slot = PortSlot {
                    mac: p.mac,
                    mtu: p.mtu,
                    flags: if want { PORT_XDP_TX } else { 0 }
                        | if self.kernel_local {
                            PORT_KERNEL_LOCAL
                        } else {
                            0
                        },
                    _pad: 0,
                };
                fp.set_port(i as u32, a.ifindex, slot)
                    .with_context(|| format!("port {i} ({})", a.iface))?;
                if !first && want != p.xdp_tx.load(Ordering::Relaxed) {
                    tracing::info!(
                        port = i,
                        iface = %a.iface,
                        "fast path: {} takes redirected XDP frames {}",
                        a.iface,
                        if want {
                            "again"
                        } else {
                            "no longer; its traffic goes through the workers"
                        }
                    );
                }
            }
            p.xdp_tx.store(want, Ordering::Relaxed);
        }
        Ok(())
    }
}

impl RunningTier {
    /// Port `port`'s share of the work, if the program serves it.
    pub fn port_report(&self, port: usize) -> Option<FastPathPort> {
        let p = self.inner.ports.get(port)?;
        let a = p.attached.as_ref()?;
        let c = self.inner.fp.lock().unwrap().counters(port as u32).ok()?;
        Some(FastPathPort {
            forwarded: c.get(Counter::RxForwarded),
            forwarded_bytes: c.get(Counter::RxForwardedBytes),
            tx_packets: c.get(Counter::Tx),
            tx_bytes: c.get(Counter::TxBytes),
            xmit_drops: c.get(Counter::XmitDrops),
            to_kernel: c.get(Counter::ToKernel),
            punted: Counter::PUNTS
                .iter()
                .map(|&(k, name)| (name.to_string(), c.get(k)))
                .filter(|&(_, v)| v > 0)
                .collect(),
            xdp_tx: p.xdp_tx.load(Ordering::Relaxed),
            mode: a.mode.to_string(),
        })
    }

    /// What the driver of `port` dropped since start (as of the
    /// monitor's last look; [`MONITOR_INTERVAL`]).
    pub fn egress_drops(&self, port: usize) -> EgressDrops {
        self.inner
            .ports
            .get(port)
            .map_or_else(EgressDrops::default, |p| p.drops.lock().unwrap().0)
    }
}

impl Drop for RunningTier {
    fn drop(&mut self) {
        self.inner.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.monitor.take() {
            let _ = h.join();
        }
    }
}
