//! softrouter's XDP fast path: `bpf/fwd.bpf.c` forwards the common case in
//! the driver hook and punts everything else to the workers over AF_XDP;
//! this crate loads it and gives the router its maps.
//!
//! One FIB, two readers: the program's table maps are `BPF_F_MMAPABLE`
//! arrays, and [`FastPath::memory`] hands them to the FIB's constructors
//! ([`fib::memory::TableMemory`]), so the workers' tables *are* the
//! program's; the single writer updates both tiers with the same stores.
//! The neighbour entries ([`MapMemory::neighbours`]) are shared the same
//! way. Reuse of what the writer retires waits for the kernel's RCU grace
//! period as well as the workers' ([`fib::ExternalReader`], driven by
//! [`grace_period`]).
//!
//! What the program forwards, and why everything else is punted, is in
//! its own header comment; [`layout`] holds the Rust twins of its maps'
//! values.

pub mod layout;
mod memory;

use anyhow::{anyhow, bail, Context, Result};
use aya::maps::{DevMap, HashMap as BpfHashMap, PerCpuArray, XskMap};
use aya::programs::{Xdp, XdpMode};

pub use layout::{Clock, Counter, Counters, Identity, PortSlot, PORT_KERNEL_LOCAL, PORT_XDP_TX};
pub use memory::MapMemory;

/// The program object (`bpf/fwd.bpf.c`).
const FWD_OBJ: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/fwd.bpf.o"));

/// The name of the XDP program in the object.
const PROGRAM: &str = "sr_fwd";
/// The egress drop counters (tracepoint programs).
const XMIT_PROGRAM: &str = "sr_xmit_drops";
const ERR_PROGRAM: &str = "sr_redirect_err";

/// Where the kernel offers tracefs.
const TRACEFS: &str = "/sys/kernel/tracing";

/// Mounts tracefs on [`TRACEFS`] unless something is mounted there (the
/// directory is then not empty) or at the debugfs location.
fn mount_tracefs() -> Result<()> {
    let populated = |p: &str| {
        std::fs::read_dir(p)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false)
    };
    if populated(TRACEFS) || populated("/sys/kernel/debug/tracing") {
        return Ok(());
    }
    let c = |s: &str| std::ffi::CString::new(s).unwrap();
    let (src, dst, fs) = (c("tracefs"), c(TRACEFS), c("tracefs"));
    // SAFETY: valid C strings, no data argument.
    let r = unsafe { libc::mount(src.as_ptr(), dst.as_ptr(), fs.as_ptr(), 0, std::ptr::null()) };
    if r != 0 {
        bail!(
            "mounting tracefs on {TRACEFS} for the xdp_redirect_err tracepoint: {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

/// The cookie of this process's network namespace (`SO_NETNS_COOKIE`,
/// Linux 5.14), as the kernel's `struct net` holds it. Read from a Unix
/// socket: one needs neither an address nor the loopback up.
fn netns_cookie() -> Result<u64> {
    const SO_NETNS_COOKIE: libc::c_int = 71;
    let s = std::os::unix::net::UnixDatagram::unbound()
        .context("a socket to read the network namespace's cookie")?;
    let mut cookie: u64 = 0;
    let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
    // SAFETY: a valid socket, and a u64 with its length.
    let r = unsafe {
        libc::getsockopt(
            std::os::fd::AsRawFd::as_raw_fd(&s),
            libc::SOL_SOCKET,
            SO_NETNS_COOKIE,
            (&mut cookie as *mut u64).cast(),
            &mut len,
        )
    };
    if r != 0 {
        bail!(
            "the network namespace's cookie (SO_NETNS_COOKIE): {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(cookie)
}

/// Capacities of the tables the program shares with the workers (the
/// FIB's configuration; the maps are sized from it at load).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    pub lpm4_tbl8_groups: u32,
    pub lpm6_tbl8_groups: u32,
    pub next_hops: u32,
    pub groups: u32,
    pub group_members: u32,
}

/// The loaded program and its maps.
pub struct FastPath {
    obj: bpf::Loaded,
    sizes: Sizes,
    clock: bpf::MmapArray,
}

impl FastPath {
    /// Load the program with its table maps sized for `sizes` (nothing is
    /// attached yet).
    pub fn load(sizes: Sizes) -> Result<FastPath> {
        Self::load_object(FWD_OBJ, sizes)
    }

    /// The same with another build of `bpf/fwd.bpf.c` (its maps and
    /// layout must be this one's): the cost test runs a base revision's
    /// program beside this one's (`bench/fastpath/cost.sh --base`).
    #[doc(hidden)]
    pub fn load_object(object: &[u8], sizes: Sizes) -> Result<FastPath> {
        let entries = memory::map_entries(&sizes)?;
        let obj = bpf::load("XDP fast path", object, &entries, &[], PROGRAM)?;
        let clock = obj.mmap("clock", std::mem::size_of::<Clock>(), 1)?;
        Ok(FastPath { obj, sizes, clock })
    }

    /// The table sizes the maps were created with.
    pub fn sizes(&self) -> Sizes {
        self.sizes
    }

    /// Memory for the FIB's tables: the program's maps by name (each one
    /// once), the heap for tables the program does not read.
    pub fn memory(&self) -> MapMemory<'_> {
        MapMemory::new(&self.obj, self.sizes)
    }

    /// Tell the program the workers' clock and reachable time.
    pub fn set_clock(&self, clock: Clock) {
        let words = [clock.epoch_ns, clock.offset_ms, clock.reachable_ms];
        for (i, w) in words.into_iter().enumerate() {
            self.clock.set(i, w);
        }
    }

    /// Serve router port `port` on interface `ifindex`: frames arriving
    /// there are the program's, and it may redirect to it when
    /// `slot.flags` has [`PORT_XDP_TX`].
    pub fn set_port(&mut self, port: u32, ifindex: u32, slot: PortSlot) -> Result<()> {
        if port as usize >= layout::MAX_PORTS {
            bail!(
                "port {port} beyond the fast path's {} ports",
                layout::MAX_PORTS
            );
        }
        let mut ports: aya::maps::Array<_, PortSlot> = self.map("ports")?;
        ports.set(port, slot, 0).context("ports map")?;
        let mut tx: DevMap<_> = self.map("tx_ports")?;
        tx.set(port, ifindex, None, 0)
            .map_err(|e| anyhow!("tx_ports map, port {port} -> ifindex {ifindex}: {e}"))?;
        let mut inp: BpfHashMap<_, u32, u32> = self.map("in_ports")?;
        inp.insert(ifindex, port, 0).context("in_ports map")?;
        // The hash first: an interface the cache loses stays found there.
        let mut cache: aya::maps::Array<_, layout::InSlot> = self.map("in_slots")?;
        let slot = ifindex % layout::IN_SLOTS as u32;
        cache
            .set(slot, layout::InSlot { ifindex, port }, 0)
            .context("in_slots map")?;
        Ok(())
    }

    /// Punt frames of `port`'s RX queue `queue` to the AF_XDP socket `fd`.
    pub fn set_socket(
        &mut self,
        port: u32,
        queue: u32,
        fd: impl std::os::fd::AsRawFd,
    ) -> Result<()> {
        if port as usize >= layout::MAX_PORTS || queue as usize >= layout::MAX_QUEUES {
            bail!("port {port} queue {queue} beyond the fast path's maps");
        }
        let mut xsks: XskMap<_> = self.map("xsks")?;
        xsks.set(Self::xsk_key(port) + queue, fd, 0)
            .context("xsks map")?;
        Ok(())
    }

    /// New fds of the program and of its XSKMAP, for ports that attach
    /// the program and register their sockets themselves (softrouter's
    /// `afxdp` ports: RX queue `q` of router port `p` at key
    /// `p * MAX_QUEUES + q`, see [`FastPath::xsk_key`]).
    pub fn fds(&mut self) -> Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
        use std::os::fd::AsFd;
        let prog = self
            .program()?
            .fd()
            .map_err(|e| anyhow!("program fd: {e}"))?
            .as_fd()
            .try_clone_to_owned()
            .context("dup of the program fd")?;
        Ok((prog, self.obj.map_fd("xsks")?))
    }

    /// The XSKMAP key of router port `port`'s RX queue 0.
    pub fn xsk_key(port: u32) -> u32 {
        port * layout::MAX_QUEUES as u32
    }

    /// Count what egress drivers drop of the redirected frames, and stop
    /// redirecting to a port whose driver refuses them: attaches the
    /// object's `xdp:xdp_redirect_err` tracepoint and `xdp_devmap_xmit`
    /// raw tracepoint programs (see their comments in `bpf/fwd.bpf.c`).
    /// Mounts tracefs where the kernel offers it if nothing is mounted
    /// there (`ip netns exec` remounts `/sys` without it).
    pub fn watch_egress(&mut self) -> Result<()> {
        mount_tracefs()?;
        let prog_id = self
            .program()?
            .info()
            .map_err(|e| anyhow!("program info: {e}"))?
            .id();
        let tx_map_id = match self.obj.ebpf.map("tx_ports") {
            Some(aya::maps::Map::DevMap(d)) => d.info().map_err(|e| anyhow!("tx_ports: {e}"))?.id(),
            _ => bail!("no DEVMAP tx_ports"),
        };
        let mut ident: aya::maps::Array<_, Identity> = self.map("identity")?;
        ident
            .set(
                0,
                Identity {
                    prog_id,
                    tx_map_id,
                    netns_cookie: netns_cookie()?,
                },
                0,
            )
            .context("identity map")?;
        let tp: &mut aya::programs::TracePoint = self.obj.program(ERR_PROGRAM)?;
        tp.load()
            .map_err(|e| anyhow!("loading {ERR_PROGRAM}: {e}"))?;
        tp.attach("xdp", "xdp_redirect_err")
            .map_err(|e| anyhow!("attaching to the tracepoint xdp:xdp_redirect_err: {e}"))?;
        // It reads the devices' ifindex through their kernel structures,
        // relocated at load against the kernel's BTF.
        if !bpf::has_kernel_btf() {
            bail!("the kernel has no BTF (/sys/kernel/btf/vmlinux) for {XMIT_PROGRAM}");
        }
        let raw: &mut aya::programs::RawTracePoint = self.obj.program(XMIT_PROGRAM)?;
        raw.load()
            .map_err(|e| anyhow!("loading {XMIT_PROGRAM}: {e}"))?;
        raw.attach("xdp_devmap_xmit")
            .map_err(|e| anyhow!("attaching to the raw tracepoint xdp_devmap_xmit: {e}"))?;
        Ok(())
    }

    /// Router port `port`'s slot as the program sees it now (the
    /// tracepoint program clears [`PORT_XDP_TX`] on a refusal).
    pub fn port_slot(&mut self, port: u32) -> Result<PortSlot> {
        let ports: aya::maps::Array<_, PortSlot> = self.map("ports")?;
        ports.get(&port, 0).context("ports map")
    }

    /// Attach the program to interface `ifname`.
    pub fn attach(&mut self, ifname: &str, mode: XdpMode) -> Result<aya::programs::xdp::XdpLinkId> {
        self.program()?
            .attach(ifname, mode)
            .with_context(|| format!("attaching the XDP fast path to {ifname}"))
    }

    /// Port `port`'s counters, summed over CPUs.
    pub fn counters(&self, port: u32) -> Result<Counters> {
        let map = self
            .obj
            .ebpf
            .map("counters")
            .ok_or_else(|| anyhow!("no counters map"))?;
        let arr: PerCpuArray<_, Counters> = PerCpuArray::try_from(map)?;
        let per_cpu = arr.get(&port, 0).context("counters map")?;
        let mut sum = Counters::default();
        for c in per_cpu.iter() {
            for (s, v) in sum.0.iter_mut().zip(c.0) {
                *s += v;
            }
        }
        Ok(sum)
    }

    /// The program (tests run it with `BPF_PROG_TEST_RUN`).
    pub fn program(&mut self) -> Result<&mut Xdp> {
        self.obj.xdp(PROGRAM)
    }

    fn map<'a, M>(&'a mut self, name: &str) -> Result<M>
    where
        M: TryFrom<&'a mut aya::maps::Map, Error = aya::maps::MapError>,
    {
        let m = self
            .obj
            .ebpf
            .map_mut(name)
            .ok_or_else(|| anyhow!("no map {name} in the fast path"))?;
        M::try_from(m).map_err(|e| anyhow!("map {name}: {e}"))
    }
}

pub use memory::{grace_period, NEIGH};
