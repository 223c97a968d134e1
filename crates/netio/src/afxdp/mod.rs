//! The `afxdp` port: a live interface through AF_XDP sockets, the kernel
//! bypass path (frames land in the worker's pool, the UMEM, and are sent
//! from it; in zero-copy mode the NIC DMAs straight into it).
//!
//! ## Set-up ([`AfXdpPort::open`])
//! 1. Interface facts from the kernel (index, MAC, MTU, RX queues by
//!    `ETHTOOL_GCHANNELS`) unless overridden. `PortInfo.rx_queues` is
//!    `min(configured queues, real queues)`.
//! 2. An XSKMAP with one slot per real queue and the hand-assembled
//!    redirect program ([`xdp_prog`]), loaded with raw `bpf(2)` calls
//!    ([`bpf`]): no libbpf, no clang. Or the caller's program and XSKMAP
//!    ([`SharedProgram`]: softrouter's XDP fast path), the port's queues
//!    at the keys it was given (`attach.rs`).
//! 3. The program is attached with `BPF_LINK_CREATE` (native:
//!    `XDP_FLAGS_DRV_MODE`, generic: `XDP_FLAGS_SKB_MODE`; `Auto` tries
//!    native first). A link detaches when its last fd closes, so the
//!    program goes away with the port ([`Port::finish`] or `Drop`) and with
//!    the process, even after a crash. Attaching fails with "busy" when
//!    another program is attached.
//!
//! ## Queues
//! - [`Port::open_rx`]`(q, pool)` creates an AF_XDP socket bound to queue
//!   `q` with RX and TX rings on the worker's pool (the first socket of a
//!   pool registers it as UMEM, later ones share it: see [`socket`]), and
//!   puts it in the XSKMAP at `q`. The fill ring is kept topped up from the
//!   pool in batches; `rx_burst` peeks the RX ring and returns descriptors
//!   as `Buf`s (address includes the 256-byte XDP headroom).
//! - [`Port::open_tx`]`(worker, pool)`: every worker needs a TX path of its
//!   own on every port, but two sockets of different UMEMs (workers) can
//!   never bind the same (device, queue) (`EBUSY`), and a veth often has one
//!   queue for two workers. So, in order of preference:
//!   1. the TX ring of the socket this worker (same pool) receives on at
//!      this port — **call `open_rx` for a worker's queues before its
//!      `open_tx`**;
//!   2. a TX-only AF_XDP socket on a queue nobody receives on (queues
//!      `rx_queues..real_queues`), if one is free;
//!   3. an AF_PACKET socket ([`crate::afpacket::PacketTx`]: `sendmmsg` per
//!      burst, `PACKET_QDISC_BYPASS`), which copies but needs no queue.
//!
//!   [`AfXdpPort::tx_paths`] tells which were used.
//! - TX: `tx_burst` reserves TX descriptors and submits them; `flush` kicks
//!   with `sendto(MSG_DONTWAIT)` when the ring asks for a wakeup (always in
//!   copy mode, where each kick sends at most 32 frames, so it kicks until
//!   the kernel consumed the ring or a bound is reached) and reaps the
//!   completion ring back into the pool.
//! - Each queue tracks which frames it has handed to the kernel (one bit
//!   per pool frame), so `release` returns exactly those, whatever mode.
//!
//! Sockets belong to the network namespace of the thread that creates
//! them: open the port and its queues from a thread in the interface's
//! namespace (checked: opening a queue from another namespace fails rather
//! than binding whatever device has the same index there). Needs root, or
//! CAP_NET_ADMIN + CAP_BPF (+ CAP_NET_RAW).
//!
//! ## Fill depth
//! Each RX queue keeps `min(fill_ring, max(pool frames / 4, 64))` frames
//! on its fill ring or in the kernel, so a worker with several ports keeps
//! frames for TX and locally generated packets. Drops counted as
//! `rx_fill_ring_empty` in [`AfXdpPort::rx_stats`] mean the worker fell
//! behind by that many frames: give it a bigger pool and fill ring.
//!
//! ## Statistics
//! [`RxQueue::counters`] and [`TxQueue::counters`] return the socket's
//! `XDP_STATISTICS` (RX and TX halves) as [`crate::QueueCounter`]s
//! (`xdp_rx_dropped`, `xdp_rx_ring_full`, ...), plus the frames found in
//! the RX ring at `release` (`rx_unread_at_shutdown`). A port whose MTU
//! (the interface's or the configured one, the larger) does not fit a
//! UMEM frame is refused by `open_rx` ([`crate::check_mtu_fits`]).
//!
//! ## Kernel behaviour seen on Linux 6.18 with veth
//! - Native XDP works on veth (`Auto` picks it); zero-copy does not (bind
//!   with `XDP_ZEROCOPY` fails with `EOPNOTSUPP`), so `Auto` ends in copy
//!   mode and TX needs a `sendto` kick per 32 frames.
//! - On a multi-queue veth, only native XDP reports the real RX queue
//!   (frames spread over queues by the sender's TX queue choice); generic
//!   XDP reports queue 0 for every frame, so all traffic goes to the
//!   socket of queue 0.
//! - A second XDP link on the same device fails with `EBUSY`.

mod attach;
pub mod bpf;
pub mod ring;
pub mod socket;
pub mod xdp_prog;

use crate::afpacket::PacketTx;
use crate::ifinfo;
use crate::sys;
use crate::{
    Buf, Burst, NetioError, Pool, Port, PortInfo, QueueCounter, QueueCounters, RxQueue, TxQueue,
};
use ring::{ConsRing, ProdRing};
use socket::{XdpDesc, Xsk, XskParams};
use std::fmt;
use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::sync::{Arc, Mutex, Weak};

/// Where the XDP program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum XdpMode {
    /// Native if the driver supports it, else generic.
    #[default]
    Auto,
    /// In the driver, before an skb exists (`XDP_FLAGS_DRV_MODE`).
    Native,
    /// After the skb is built, any driver (`XDP_FLAGS_SKB_MODE`).
    Generic,
}

impl fmt::Display for XdpMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            XdpMode::Auto => "auto",
            XdpMode::Native => "native",
            XdpMode::Generic => "generic",
        })
    }
}

/// Whether sockets bind with `XDP_ZEROCOPY`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ZeroCopy {
    /// Zero-copy if the driver supports it, else copy.
    #[default]
    Auto,
    /// Zero-copy or fail.
    On,
    /// Copy mode (`XDP_COPY`).
    Off,
}

/// Configuration of an `afxdp` port.
#[derive(Clone, Debug)]
pub struct AfXdpConfig {
    pub iface: String,
    /// RX queues to use (default: all the device has).
    pub queues: Option<u16>,
    pub xdp_mode: XdpMode,
    pub zero_copy: ZeroCopy,
    /// UMEM chunk size: must equal the workers' pool frame size.
    pub frame_size: u32,
    /// Ring sizes (powers of two).
    pub rx_ring: u32,
    pub tx_ring: u32,
    pub fill_ring: u32,
    pub comp_ring: u32,
    /// Overrides of what the kernel reports.
    pub mac: Option<[u8; 6]>,
    pub mtu: Option<u16>,
    /// Attach this program instead of the port's own redirect program
    /// (softrouter's XDP fast path, which forwards some frames itself and
    /// redirects the rest to the sockets registered in its XSKMAP).
    pub program: Option<SharedProgram>,
}

/// A caller's XDP program for an `afxdp` port ([`AfXdpConfig::program`]):
/// the port attaches `prog` and registers the socket of its RX queue `q`
/// in `xskmap` at key `key_base + q`. The fds are shared (several ports
/// attach one program), so they are reference-counted.
#[derive(Clone, Debug)]
pub struct SharedProgram {
    pub prog: Arc<OwnedFd>,
    pub xskmap: Arc<OwnedFd>,
    pub key_base: u32,
    /// Slots of `xskmap` from `key_base` on that belong to this port.
    pub max_queues: u16,
}

impl AfXdpConfig {
    pub fn new(iface: &str, frame_size: u32) -> Self {
        AfXdpConfig {
            iface: iface.to_string(),
            queues: None,
            xdp_mode: XdpMode::Auto,
            zero_copy: ZeroCopy::Auto,
            frame_size,
            rx_ring: 2048,
            tx_ring: 2048,
            fill_ring: 2048,
            comp_ring: 2048,
            mac: None,
            mtu: None,
            program: None,
        }
    }
}

/// How many TX queues of each kind a port handed out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxPaths {
    /// On the worker's own RX socket.
    pub shared_rx_socket: u32,
    /// TX-only AF_XDP sockets on otherwise unused queues.
    pub tx_only_socket: u32,
    /// AF_PACKET fallback sockets.
    pub af_packet: u32,
}

/// `struct xdp_statistics` of one socket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XskStats {
    pub rx_dropped: u64,
    pub rx_invalid_descs: u64,
    pub tx_invalid_descs: u64,
    pub rx_ring_full: u64,
    pub rx_fill_ring_empty: u64,
    pub tx_ring_empty: u64,
}

const XDP_STATISTICS: i32 = 7;

/// `getsockopt(SOL_XDP, XDP_STATISTICS)` of one socket. Kernels before 5.9
/// fill only the first three fields; the others stay zero.
fn read_stats(fd: RawFd) -> Option<XskStats> {
    // SAFETY: all-zero is a valid xdp_statistics.
    let mut s: libc::xdp_statistics = unsafe { std::mem::zeroed() };
    sys::getsockopt(fd, libc::SOL_XDP, XDP_STATISTICS, &mut s).ok()?;
    Some(XskStats {
        rx_dropped: s.rx_dropped,
        rx_invalid_descs: s.rx_invalid_descs,
        tx_invalid_descs: s.tx_invalid_descs,
        rx_ring_full: s.rx_ring_full,
        rx_fill_ring_empty: s.rx_fill_ring_empty_descs,
        tx_ring_empty: s.tx_ring_empty_descs,
    })
}

struct Parked {
    pool_base: usize,
    queue: u16,
    tx: XskTx,
}

#[derive(Default)]
struct State {
    rx_bound: Vec<bool>,
    /// The RX socket of each queue, for statistics.
    rx_socks: Vec<Option<Weak<Xsk>>>,
    tx_only: Vec<bool>,
    parked: Vec<Parked>,
    paths: TxPaths,
    /// Zero-copy status of every socket bound so far (None: none yet).
    zero_copy: Option<bool>,
}

struct Shared {
    name: String,
    netns: Option<u64>,
    ifindex: u32,
    /// The interface's own MTU (what can arrive, whatever `info.mtu` says).
    iface_mtu: u16,
    real_queues: u16,
    rx_queues: u16,
    cfg: AfXdpConfig,
    mode: XdpMode,
    xskmap: Arc<OwnedFd>,
    /// Key of RX queue 0 in `xskmap`.
    key_base: u32,
    _prog: Arc<OwnedFd>,
    link: Mutex<Option<OwnedFd>>,
    state: Mutex<State>,
}

pub struct AfXdpPort {
    info: PortInfo,
    sh: Arc<Shared>,
}

fn err(iface: &str, msg: impl Into<String>) -> NetioError {
    NetioError::port(iface, msg)
}

fn is_pow2(v: u32) -> bool {
    v.is_power_of_two()
}

impl AfXdpPort {
    pub fn open(cfg: AfXdpConfig) -> Result<AfXdpPort, NetioError> {
        let name = cfg.iface.clone();
        for (what, v) in [
            ("rx_ring", cfg.rx_ring),
            ("tx_ring", cfg.tx_ring),
            ("fill_ring", cfg.fill_ring),
            ("comp_ring", cfg.comp_ring),
        ] {
            if !is_pow2(v) {
                return Err(err(&name, format!("{what} = {v} is not a power of two")));
            }
        }
        let ifi = ifinfo::query(&name)
            .map_err(|e| crate::afpacket::open_error(&name, "interface query", e))?;
        let real = ifi.rx_queues.max(1);
        let rx_queues = cfg.queues.unwrap_or(real).clamp(1, real);

        let attach::Attached {
            prog,
            xskmap,
            key_base,
            mode,
            link,
        } = attach::attach(&cfg, ifi.ifindex, real)?;

        let info = PortInfo {
            name: name.clone(),
            mac: cfg.mac.unwrap_or(ifi.mac),
            mtu: cfg.mtu.unwrap_or(ifi.mtu),
            rx_queues,
        };
        let state = State {
            rx_bound: vec![false; real as usize],
            rx_socks: vec![None; real as usize],
            tx_only: vec![false; real as usize],
            ..Default::default()
        };
        Ok(AfXdpPort {
            info,
            sh: Arc::new(Shared {
                name,
                netns: sys::netns_id(),
                ifindex: ifi.ifindex,
                iface_mtu: ifi.mtu,
                real_queues: real,
                rx_queues,
                cfg,
                mode,
                xskmap,
                key_base,
                _prog: prog,
                link: Mutex::new(Some(link)),
                state: Mutex::new(state),
            }),
        })
    }

    /// The XDP mode obtained (`Native` or `Generic`, never `Auto`).
    pub fn mode(&self) -> XdpMode {
        self.sh.mode
    }

    /// Whether the sockets bound so far are zero-copy: `None` before the
    /// first socket, `Some(false)` if any is in copy mode.
    pub fn zero_copy(&self) -> Option<bool> {
        self.sh.state.lock().unwrap().zero_copy
    }

    /// RX queues the device really has.
    pub fn real_queues(&self) -> u16 {
        self.sh.real_queues
    }

    pub fn ifindex(&self) -> u32 {
        self.sh.ifindex
    }

    /// Kernel counters (`XDP_STATISTICS`) of the socket receiving on
    /// `queue`, while it is open. `fill_ring_empty` drops mean the worker
    /// did not return buffers fast enough.
    pub fn rx_stats(&self, queue: u16) -> Option<XskStats> {
        let st = self.sh.state.lock().unwrap();
        let xsk = st.rx_socks.get(queue as usize)?.as_ref()?.upgrade()?;
        read_stats(xsk.raw())
    }

    /// Which TX paths `open_tx` handed out so far.
    pub fn tx_paths(&self) -> TxPaths {
        self.sh.state.lock().unwrap().paths
    }

    /// One line for logs and benchmark reports, e.g.
    /// `afxdp veth0: native XDP, copy mode, 1/1 queues`.
    pub fn describe(&self) -> String {
        let zc = match self.zero_copy() {
            None => "no socket yet",
            Some(true) => "zero-copy",
            Some(false) => "copy mode",
        };
        format!(
            "afxdp {}: {} XDP, {zc}, {}/{} queues",
            self.sh.name, self.sh.mode, self.sh.rx_queues, self.sh.real_queues
        )
    }

    fn check_pool(&self, pool: &Pool) -> Result<(), NetioError> {
        sys::check_netns(self.sh.netns, &self.sh.name)?;
        if pool.frame_size() != self.sh.cfg.frame_size {
            return Err(err(
                &self.sh.name,
                format!(
                    "pool frame size {} differs from the port's UMEM chunk size {}",
                    pool.frame_size(),
                    self.sh.cfg.frame_size
                ),
            ));
        }
        Ok(())
    }

    fn params(&self, queue: u16, rx: bool) -> XskParams {
        let c = &self.sh.cfg;
        XskParams {
            ifindex: self.sh.ifindex,
            queue: queue as u32,
            rx,
            rx_size: c.rx_ring,
            tx_size: c.tx_ring,
            fill_size: c.fill_ring,
            comp_size: c.comp_ring,
            zero_copy: c.zero_copy,
        }
    }
}

fn bpf_err(iface: &str, what: &str, e: io::Error) -> NetioError {
    if sys::is_perm(&e) {
        err(
            iface,
            format!("{what}: {e}: not permitted; AF_XDP needs root or CAP_NET_ADMIN + CAP_BPF"),
        )
    } else {
        err(iface, format!("{what}: {e}"))
    }
}

fn note_zc(st: &mut State, zc: bool) {
    st.zero_copy = Some(st.zero_copy.unwrap_or(true) && zc);
}

impl Port for AfXdpPort {
    fn info(&self) -> &PortInfo {
        &self.info
    }

    fn open_rx(&self, queue: u16, pool: &mut Pool) -> Result<Box<dyn RxQueue>, NetioError> {
        let name = &self.sh.name;
        self.check_pool(pool)?;
        // A UMEM frame must hold the largest frame the interface accepts;
        // the kernel would drop bigger ones (`xdp_rx_dropped`).
        crate::check_mtu_fits(name, self.info.mtu.max(self.sh.iface_mtu), pool)?;
        if queue >= self.sh.rx_queues {
            return Err(err(
                name,
                format!(
                    "RX queue {queue} does not exist (using {} of {} queues)",
                    self.sh.rx_queues, self.sh.real_queues
                ),
            ));
        }
        let mut st = self.sh.state.lock().unwrap();
        if st.rx_bound[queue as usize] {
            return Err(err(name, format!("RX queue {queue} is already open")));
        }
        let (xsk, rings) = socket::create(&self.params(queue, true), pool).map_err(|e| {
            if sys::is_perm(&e) {
                err(name, format!("AF_XDP socket on queue {queue}: {e}: needs root or CAP_NET_ADMIN + CAP_NET_RAW"))
            } else {
                err(name, format!("AF_XDP socket on queue {queue}: {e}"))
            }
        })?;
        bpf::map_set(&self.sh.xskmap, self.sh.key_base + queue as u32, xsk.raw())
            .map_err(|e| err(name, format!("inserting the socket into the XSKMAP: {e}")))?;
        st.rx_bound[queue as usize] = true;
        st.rx_socks[queue as usize] = Some(Arc::downgrade(&xsk));
        note_zc(&mut st, xsk.zero_copy);
        let pool_base = pool.region().0 as usize;
        st.parked.push(Parked {
            pool_base,
            queue,
            tx: XskTx::new(xsk.clone(), rings.tx, rings.comp, pool, None),
        });
        drop(st);
        let fill_target = self
            .sh
            .cfg
            .fill_ring
            .min((pool.frames() / 4).max(64))
            .min(pool.frames());
        let mut q = XskRx {
            sh: self.sh.clone(),
            queue,
            pool_base,
            xsk,
            fill: rings.fill,
            rx: rings.rx.expect("socket created with an RX ring"),
            owned: FrameSet::new(pool),
            fill_target,
            outstanding: 0,
            released: false,
            unread_at_shutdown: 0,
        };
        q.refill(pool);
        Ok(Box::new(q))
    }

    fn open_tx(&self, _worker: usize, pool: &mut Pool) -> Result<Box<dyn TxQueue>, NetioError> {
        self.check_pool(pool)?;
        let pool_base = pool.region().0 as usize;
        let mut st = self.sh.state.lock().unwrap();
        if let Some(i) = st.parked.iter().position(|p| p.pool_base == pool_base) {
            let p = st.parked.swap_remove(i);
            st.paths.shared_rx_socket += 1;
            return Ok(Box::new(p.tx));
        }
        let free = (self.sh.rx_queues..self.sh.real_queues)
            .find(|&q| !st.tx_only[q as usize] && !st.rx_bound[q as usize]);
        let mut why = "no queue free of receivers".to_string();
        if let Some(q) = free {
            match socket::create(&self.params(q, false), pool) {
                Ok((xsk, rings)) => {
                    st.tx_only[q as usize] = true;
                    st.paths.tx_only_socket += 1;
                    note_zc(&mut st, xsk.zero_copy);
                    return Ok(Box::new(XskTx::new(
                        xsk,
                        rings.tx,
                        rings.comp,
                        pool,
                        Some((self.sh.clone(), q)),
                    )));
                }
                Err(e) => why = format!("TX-only socket on queue {q}: {e}"),
            }
        }
        let tx = PacketTx::open(self.sh.ifindex).map_err(|e| {
            crate::afpacket::open_error(&self.sh.name, &format!("AF_PACKET TX fallback ({why})"), e)
        })?;
        st.paths.af_packet += 1;
        Ok(Box::new(tx))
    }

    fn finish(&self) -> Result<(), NetioError> {
        // Closing the link fd detaches the program.
        self.sh.link.lock().unwrap().take();
        Ok(())
    }
}

impl Drop for AfXdpPort {
    fn drop(&mut self) {
        let _ = self.finish();
        // Parked TX halves nobody asked for close their sockets now.
        if let Ok(mut st) = self.sh.state.lock() {
            st.parked.clear();
        }
    }
}

/// One bit per pool frame: the frames a queue has handed to the kernel.
struct FrameSet {
    bits: Vec<u64>,
    shift: u32,
    count: u32,
}

impl FrameSet {
    fn new(pool: &Pool) -> Self {
        FrameSet {
            bits: vec![0; (pool.frames() as usize).div_ceil(64)],
            shift: pool.frame_size().trailing_zeros(),
            count: 0,
        }
    }
    #[inline]
    fn slot(&self, addr: u64) -> (usize, u64) {
        let i = (addr >> self.shift) as usize;
        (i / 64, 1u64 << (i % 64))
    }
    #[inline]
    fn set(&mut self, addr: u64) {
        let (w, b) = self.slot(addr);
        if let Some(x) = self.bits.get_mut(w) {
            if *x & b == 0 {
                self.count += 1;
            }
            *x |= b;
        }
    }
    #[inline]
    fn clear(&mut self, addr: u64) -> bool {
        let (w, b) = self.slot(addr);
        match self.bits.get_mut(w) {
            Some(x) if *x & b != 0 => {
                *x &= !b;
                self.count -= 1;
                true
            }
            _ => false,
        }
    }
    /// Frees every frame still marked.
    fn drain(&mut self, pool: &mut Pool) {
        for (w, x) in self.bits.iter_mut().enumerate() {
            while *x != 0 {
                let bit = x.trailing_zeros() as u64;
                *x &= *x - 1;
                pool.free_addr(((w as u64) * 64 + bit) << self.shift);
            }
        }
        self.count = 0;
    }
}

/// Frames put on the fill ring per refill, at least.
const FILL_BATCH: u32 = 64;

struct XskRx {
    sh: Arc<Shared>,
    queue: u16,
    pool_base: usize,
    xsk: Arc<Xsk>,
    fill: ProdRing<u64>,
    rx: ConsRing<XdpDesc>,
    owned: FrameSet,
    fill_target: u32,
    /// Frames on the fill ring or in the kernel's hands.
    outstanding: u32,
    released: bool,
    /// Frames in the RX ring when the queue was released.
    unread_at_shutdown: u64,
}

impl XskRx {
    #[inline]
    fn refill(&mut self, pool: &mut Pool) {
        let want = self.fill_target.saturating_sub(self.outstanding);
        if want < FILL_BATCH.min(self.fill_target) {
            return;
        }
        let want = want.min(pool.available() as u32);
        if want == 0 {
            return;
        }
        let (idx, n) = self.fill.reserve(want);
        for i in 0..n {
            let a = pool.alloc_frame().expect("checked available");
            self.fill.write(idx.wrapping_add(i), a);
            self.owned.set(a);
        }
        self.fill.submit(n);
        self.outstanding += n;
    }
}

impl RxQueue for XskRx {
    #[inline]
    fn rx_burst(&mut self, pool: &mut Pool, out: &mut Burst, max: usize) -> usize {
        if self.released {
            return 0;
        }
        self.refill(pool);
        let (idx, n) = self.rx.peek(max.min(out.room()) as u32);
        if n == 0 {
            if self.fill.needs_wakeup() {
                self.xsk.kick_rx();
            }
            return 0;
        }
        let spare = out.spare_mut();
        for i in 0..n {
            let d = self.rx.read(idx.wrapping_add(i));
            spare[i as usize] = Buf::new(d.addr, d.len);
            self.owned.clear(d.addr);
        }
        self.rx.release(n);
        self.outstanding -= n;
        out.set_len(out.len() + n as usize);
        n as usize
    }

    fn wait_fd(&self) -> Option<RawFd> {
        Some(self.xsk.raw())
    }

    fn queue_id(&self) -> u16 {
        self.queue
    }

    /// The RX half of `XDP_STATISTICS` (one `getsockopt`; the kernel's
    /// counters are cumulative per socket) and the frames left unread.
    fn counters(&mut self) -> QueueCounters {
        let mut c = QueueCounters::default();
        if let Some(s) = read_stats(self.xsk.raw()) {
            c.set(QueueCounter::XdpRxDropped, s.rx_dropped);
            c.set(QueueCounter::XdpRxRingFull, s.rx_ring_full);
            c.set(QueueCounter::XdpRxInvalidDescs, s.rx_invalid_descs);
            c.set(QueueCounter::XdpRxFillRingEmptyDescs, s.rx_fill_ring_empty);
        }
        c.set(QueueCounter::RxUnreadAtShutdown, self.unread_at_shutdown);
        c
    }

    fn release(&mut self, pool: &mut Pool) {
        // No more redirects to this socket, then every frame it was given
        // (fill ring, in the kernel, RX ring) goes back to the pool. The
        // frames waiting in the RX ring were received for us and never
        // processed: counted.
        let _ = bpf::map_delete(&self.sh.xskmap, self.sh.key_base + self.queue as u32);
        if !self.released {
            loop {
                let (_, n) = self.rx.peek(u32::MAX);
                if n == 0 {
                    break;
                }
                self.unread_at_shutdown += u64::from(n);
            }
        }
        self.owned.drain(pool);
        self.outstanding = 0;
        self.released = true;
    }
}

impl Drop for XskRx {
    fn drop(&mut self) {
        let _ = bpf::map_delete(&self.sh.xskmap, self.sh.key_base + self.queue as u32);
        if let Ok(mut st) = self.sh.state.lock() {
            let (q, base) = (self.queue, self.pool_base);
            st.parked.retain(|p| !(p.queue == q && p.pool_base == base));
            st.rx_bound[q as usize] = false;
            st.rx_socks[q as usize] = None;
        }
    }
}

struct XskTx {
    xsk: Arc<Xsk>,
    tx: ProdRing<XdpDesc>,
    comp: ConsRing<u64>,
    owned: FrameSet,
    in_flight: u32,
    /// TX-only socket: the port and queue to mark free again on drop.
    tx_only: Option<(Arc<Shared>, u16)>,
}

/// Kicks per flush at most (copy mode sends 32 frames per kick).
const MAX_KICKS: u32 = 64;

impl XskTx {
    fn new(
        xsk: Arc<Xsk>,
        tx: ProdRing<XdpDesc>,
        comp: ConsRing<u64>,
        pool: &Pool,
        tx_only: Option<(Arc<Shared>, u16)>,
    ) -> Self {
        XskTx {
            xsk,
            tx,
            comp,
            owned: FrameSet::new(pool),
            in_flight: 0,
            tx_only,
        }
    }

    #[inline]
    fn reap(&mut self, pool: &mut Pool) {
        let (idx, n) = self.comp.peek(self.in_flight);
        for i in 0..n {
            let a = self.comp.read(idx.wrapping_add(i));
            if self.owned.clear(a) {
                pool.free_addr(a);
            }
        }
        self.comp.release(n);
        self.in_flight -= n;
    }

    #[inline]
    fn kick(&mut self) {
        let copy = !self.xsk.zero_copy;
        if !(copy || self.tx.needs_wakeup()) {
            return;
        }
        for _ in 0..MAX_KICKS {
            if self.tx.pending() == 0 {
                break;
            }
            self.xsk.kick_tx();
            if !copy {
                break;
            }
        }
    }
}

impl TxQueue for XskTx {
    #[inline]
    fn tx_burst(&mut self, pool: &mut Pool, bufs: &[Buf]) -> usize {
        if bufs.is_empty() {
            return 0;
        }
        let (mut idx, mut n) = self.tx.reserve(bufs.len() as u32);
        if (n as usize) < bufs.len() {
            // Ring full: let the kernel drain it and take completions.
            self.kick();
            self.reap(pool);
            let (i2, n2) = self.tx.reserve(bufs.len() as u32 - n);
            if n == 0 {
                idx = i2;
            }
            n += n2;
        }
        for (i, b) in bufs[..n as usize].iter().enumerate() {
            self.tx.write(
                idx.wrapping_add(i as u32),
                XdpDesc {
                    addr: b.addr,
                    len: b.len,
                    options: 0,
                },
            );
            self.owned.set(b.addr);
        }
        self.tx.submit(n);
        self.in_flight += n;
        n as usize
    }

    fn flush(&mut self, pool: &mut Pool) {
        if self.in_flight == 0 {
            return;
        }
        self.kick();
        self.reap(pool);
    }

    fn in_flight(&self) -> usize {
        self.in_flight as usize
    }

    fn release(&mut self, pool: &mut Pool) {
        self.reap(pool);
        self.owned.drain(pool);
        self.in_flight = 0;
    }

    /// The TX half of `XDP_STATISTICS` of the socket this queue sends on.
    fn counters(&mut self) -> QueueCounters {
        let mut c = QueueCounters::default();
        if let Some(s) = read_stats(self.xsk.raw()) {
            c.set(QueueCounter::XdpTxInvalidDescs, s.tx_invalid_descs);
            c.set(QueueCounter::XdpTxRingEmptyDescs, s.tx_ring_empty);
        }
        c
    }
}

impl Drop for XskTx {
    fn drop(&mut self) {
        if let Some((sh, q)) = &self.tx_only {
            if let Ok(mut st) = sh.state.lock() {
                st.tx_only[*q as usize] = false;
            }
        }
    }
}
