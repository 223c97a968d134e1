//! Opening tester ports inside their namespaces, and the tester's TX paths.
//!
//! Why a module: sockets belong to the network namespace of the thread that
//! creates them, and AF_XDP refuses queues opened from another namespace.
//! Every thread that opens a queue therefore first enters the port's
//! namespace ([`enter_netns`]); it is per thread, so the caller's own
//! namespace never changes.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use netio::afpacket::{AfPacketConfig, AfPacketPort, PacketTx};
use netio::afxdp::{AfXdpConfig, AfXdpPort, XskStats};
use netio::{Pool, Port, TxQueue};

use bench::plan::{TesterBackend, TesterPort};

/// Pool frame size (and AF_XDP chunk size) of the tester: frames up to
/// 2048 - 256 bytes of headroom, i.e. every standard size up to 1518.
pub const FRAME_SIZE: u32 = 2048;
/// Largest frame (with FCS) the tester can send with [`FRAME_SIZE`].
pub const MAX_TESTER_FRAME: usize = (FRAME_SIZE - netio::HEADROOM) as usize + 4;

/// Move the calling thread into network namespace `name` (from
/// `/var/run/netns`); `None` leaves it where it is. Threads it spawns
/// afterwards inherit the namespace.
pub fn enter_netns(name: Option<&str>) -> Result<()> {
    let Some(name) = name else { return Ok(()) };
    let path = format!("/var/run/netns/{name}");
    let f = File::open(&path).with_context(|| format!("opening {path}"))?;
    // SAFETY: plain syscall on a valid fd; affects only this thread.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        bail!(
            "setns into {name}: {} (needs root / CAP_SYS_ADMIN)",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

/// An open tester port of either backend.
#[derive(Clone)]
pub enum PortHandle {
    Xdp(Arc<AfXdpPort>),
    Packet(Arc<AfPacketPort>),
}

impl PortHandle {
    /// Open `p` with `backend` and `queues` RX queues. The calling thread
    /// must already be in `p.netns`.
    pub fn open(p: &TesterPort, backend: TesterBackend, queues: u16) -> Result<PortHandle> {
        Ok(match backend {
            TesterBackend::AfXdp => {
                let mut c = AfXdpConfig::new(&p.iface, FRAME_SIZE);
                c.queues = Some(queues.max(1));
                // A deep RX ring absorbs the receiver's wake-up latency
                // (it sleeps in poll when idle, it never spins).
                c.rx_ring = 4096;
                c.fill_ring = 4096;
                c.mac = Some(p.mac);
                if p.netns.is_some() && super::cpu::tester_cpu().is_some() {
                    // veth testbed with the receive work steered to the
                    // tester's CPU (`testbed::rps`): generic XDP runs there,
                    // native XDP would run on the sending DUT's CPU.
                    c.xdp_mode = netio::afxdp::XdpMode::Generic;
                }
                PortHandle::Xdp(Arc::new(
                    AfXdpPort::open(c).with_context(|| format!("tester port {}", p.iface))?,
                ))
            }
            TesterBackend::Xdp => {
                bail!("the xdp tester backends open no receive sockets")
            }
            TesterBackend::AfPacket => {
                let mut c = AfPacketConfig::new(&p.iface);
                c.queues = Some(queues.max(1));
                c.mac = Some(p.mac);
                PortHandle::Packet(Arc::new(
                    AfPacketPort::open(c).with_context(|| format!("tester port {}", p.iface))?,
                ))
            }
        })
    }

    pub fn port(&self) -> &dyn Port {
        match self {
            PortHandle::Xdp(p) => &**p,
            PortHandle::Packet(p) => &**p,
        }
    }

    pub fn rx_queues(&self) -> u16 {
        self.port().info().rx_queues
    }

    fn ifindex(&self) -> u32 {
        match self {
            PortHandle::Xdp(p) => p.ifindex(),
            PortHandle::Packet(p) => p.ifindex(),
        }
    }

    /// Sum of the AF_XDP socket drop counters over the RX queues (frames
    /// the tester itself lost: RX ring full, no fill buffers, other).
    pub fn rx_drops(&self) -> u64 {
        match self {
            PortHandle::Xdp(p) => (0..p.info().rx_queues)
                .filter_map(|q| p.rx_stats(q))
                .map(|s: XskStats| s.rx_dropped + s.rx_ring_full + s.rx_fill_ring_empty)
                .sum(),
            PortHandle::Packet(_) => 0,
        }
    }

    /// The generator's TX path on this port, in a pool of its own.
    ///
    /// AF_XDP: a TX-only socket if the device has a queue nobody receives
    /// on; otherwise (the usual single-queue veth, whose one socket belongs
    /// to the receiver's pool) an AF_PACKET socket of our own, so its send
    /// buffer can be raised (see [`GenTx`]).
    pub fn open_gen_tx(&self, pool: &mut Pool) -> Result<GenTx> {
        if let PortHandle::Xdp(p) = self {
            let before = p.tx_paths();
            let q = p.open_tx(1, pool).context("generator TX queue")?;
            if p.tx_paths().tx_only_socket > before.tx_only_socket {
                return Ok(GenTx {
                    q,
                    xdp: true,
                    describe: "AF_XDP TX-only socket".into(),
                });
            }
            drop(q);
        }
        GenTx::packet(self.ifindex())
    }
}

impl GenTx {
    /// An AF_PACKET `sendmmsg` TX path (qdisc bypass) on `ifindex` in the
    /// calling thread's namespace.
    pub fn packet(ifindex: u32) -> Result<GenTx> {
        let tx = PacketTx::open(ifindex).context("AF_PACKET TX socket")?;
        // The default send buffer (~200 kB) bounds the frames queued in
        // the kernel behind a veth peer that processes them later (RPS,
        // ksoftirqd); running out would be a tester-side refusal. 8 MB
        // makes that impossible at any rate this tester reaches.
        let big: libc::c_int = 8 << 20;
        // SAFETY: setsockopt with a valid int; failure only leaves the
        // default (SO_SNDBUFFORCE needs CAP_NET_ADMIN).
        unsafe {
            libc::setsockopt(
                tx.fd(),
                libc::SOL_SOCKET,
                libc::SO_SNDBUFFORCE,
                (&big as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        Ok(GenTx {
            q: Box::new(tx),
            xdp: false,
            describe: "AF_PACKET sendmmsg (qdisc bypass)".into(),
        })
    }
}

/// The generator's transmit path on one port.
///
/// The two kinds differ in what a short `tx_burst` means, which decides
/// whether a refusal is the tester's or the DUT's:
///
/// * AF_XDP (`xdp`): the frames did not fit our own TX ring: the tester's
///   transmit path backed up. They are retried; if they still do not fit,
///   the trial is tester-limited.
/// * AF_PACKET: `PACKET_QDISC_BYPASS` hands each frame straight to the
///   driver; on veth a refusal (ENOBUFS) means the *peer* dropped it (the
///   DUT's input backlog or ring was full), exactly what a NIC on a wire
///   cannot even see. Those frames count as sent and lost, like frames an
///   AF_XDP copy-mode transmit hands to a full peer (the kernel drops those
///   silently). Calling them tester-limited would report every overload
///   of the DUT as a tester limit.
pub struct GenTx {
    pub q: Box<dyn TxQueue>,
    pub xdp: bool,
    pub describe: String,
}
