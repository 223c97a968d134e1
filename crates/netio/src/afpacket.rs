//! The `afpacket` port: a live interface through AF_PACKET sockets, the
//! fallback where AF_XDP is unavailable.
//!
//! - RX: one socket per queue, each with a TPACKET_V3 block ring (mmap'd,
//!   blocks retired after [`AfPacketConfig::retire_ms`] even when not full),
//!   bound to the interface with `ETH_P_ALL`, `PACKET_IGNORE_OUTGOING` (it
//!   does not see the router's own transmissions) and promiscuous
//!   membership (`PACKET_MR_PROMISC`: a router port must see frames not
//!   addressed to its MAC, e.g. for other MACs it answers for). All queues
//!   of a port join one `PACKET_FANOUT_HASH` group whose id the kernel
//!   picks (`PACKET_FANOUT_FLAG_UNIQUEID`), so `queues = N` sockets split
//!   the traffic by flow. Frames are copied from the ring into pool buffers:
//!   that copy is inherent to AF_PACKET.
//! - VLAN: the kernel strips an 802.1Q/802.1ad tag before packet taps and
//!   reports it in `tp_vlan_tci` (`TP_STATUS_VLAN_VALID`). The tag is
//!   **re-inserted** into the copied frame (TPID from `tp_vlan_tpid` when
//!   valid, else 0x8100), so the dataplane sees the frame as it was on the
//!   wire; re-insertions are counted ([`AfPacketPort::stats`]).
//! - TX: one socket per worker, bound with protocol 0 (it receives
//!   nothing), `PACKET_QDISC_BYPASS`, and one `sendmmsg` per burst (the data
//!   is copied by the kernel during the call, so buffers are freed at once
//!   and nothing is ever in flight).
//!
//! The kernel stack still receives every frame of an AF_PACKET port as
//! well. The router's namespace must therefore not also route that traffic:
//! configure no IP addresses on such interfaces and disable forwarding
//! (`net.ipv4.ip_forward=0`, `net.ipv6.conf.all.forwarding=0`); that is
//! the caller's job, this module does not change system settings.
//!
//! Sockets belong to the network namespace of the thread that creates them:
//! open the port and its queues from a thread in the interface's namespace.

use crate::ifinfo;
use crate::sys::{self, bd, bind_ll, setsockopt, socket, Mmap, Tpacket3Hdr};
use crate::{
    Buf, Burst, NetioError, Pool, Port, PortInfo, QueueCounter, QueueCounters, RxQueue, TxQueue,
    BURST_SIZE,
};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Configuration of an `afpacket` port.
#[derive(Clone, Debug)]
pub struct AfPacketConfig {
    pub iface: String,
    /// Fanout sockets (RX queues) to offer; default 1.
    pub queues: Option<u16>,
    /// TPACKET_V3 block size in bytes (power of two, multiple of the page
    /// size); default 1 MiB.
    pub block_size: u32,
    /// Blocks per ring; default 8.
    pub block_nr: u32,
    /// Block retire timeout in milliseconds; default 1.
    pub retire_ms: u32,
    /// Promiscuous membership on the interface; default true.
    pub promisc: bool,
    /// Overrides of what the kernel reports.
    pub mac: Option<[u8; 6]>,
    pub mtu: Option<u16>,
}

impl AfPacketConfig {
    pub fn new(iface: &str) -> Self {
        AfPacketConfig {
            iface: iface.to_string(),
            queues: None,
            block_size: 1 << 20,
            block_nr: 8,
            retire_ms: 1,
            promisc: true,
            mac: None,
            mtu: None,
        }
    }
}

/// Counters of unusual RX events, summed over the port's queues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AfPacketStats {
    /// Frames whose kernel-stripped VLAN tag was put back.
    pub vlan_reinserted: u64,
    /// Frames dropped because they did not fit a ring frame or a buffer
    /// (also in the queues' `rx_oversize` counter).
    pub truncated: u64,
}

#[derive(Default)]
struct SharedStats {
    vlan_reinserted: AtomicU64,
    truncated: AtomicU64,
}

pub struct AfPacketPort {
    info: PortInfo,
    /// The interface's own MTU (what can arrive, whatever `info.mtu` says).
    iface_mtu: u16,
    ifindex: u32,
    cfg: AfPacketConfig,
    /// Fanout group id, picked by the kernel for the first RX socket.
    fanout_id: Mutex<Option<u16>>,
    stats: Arc<SharedStats>,
    netns: Option<u64>,
}

pub(crate) fn open_error(iface: &str, what: &str, e: io::Error) -> NetioError {
    let msg = if e.raw_os_error() == Some(libc::ENODEV) {
        format!("interface {iface:?} not found (in this network namespace)")
    } else if sys::is_perm(&e) {
        format!("{what}: {e}: raw sockets need root or CAP_NET_RAW (AF_XDP also CAP_NET_ADMIN and CAP_BPF)")
    } else {
        format!("{what}: {e}")
    };
    NetioError::port(iface, msg)
}

impl AfPacketPort {
    pub fn open(cfg: AfPacketConfig) -> Result<AfPacketPort, NetioError> {
        let ifi = ifinfo::query(&cfg.iface).map_err(|e| open_error(&cfg.iface, "query", e))?;
        if !cfg.block_size.is_power_of_two() || cfg.block_size < 4096 || cfg.block_nr == 0 {
            return Err(NetioError::port(
                &cfg.iface,
                "block_size must be a power of two >= 4096 and block_nr >= 1",
            ));
        }
        Ok(AfPacketPort {
            info: PortInfo {
                name: cfg.iface.clone(),
                mac: cfg.mac.unwrap_or(ifi.mac),
                mtu: cfg.mtu.unwrap_or(ifi.mtu),
                rx_queues: cfg.queues.unwrap_or(1).max(1),
            },
            iface_mtu: ifi.mtu,
            ifindex: ifi.ifindex,
            cfg,
            fanout_id: Mutex::new(None),
            stats: Arc::new(SharedStats::default()),
            netns: sys::netns_id(),
        })
    }

    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// The kernel-assigned fanout group id, once an RX queue is open.
    pub fn fanout_group(&self) -> Option<u16> {
        *self.fanout_id.lock().unwrap()
    }

    pub fn stats(&self) -> AfPacketStats {
        AfPacketStats {
            vlan_reinserted: self.stats.vlan_reinserted.load(Ordering::Relaxed),
            truncated: self.stats.truncated.load(Ordering::Relaxed),
        }
    }

    fn open_rx_socket(&self) -> io::Result<(OwnedFd, Mmap)> {
        let c = &self.cfg;
        // Protocol 0: receives nothing until bound below, after the ring
        // exists.
        let sock = socket(libc::AF_PACKET, libc::SOCK_RAW, 0)?;
        let fd = sock.as_raw_fd();
        let ctx = |what: &str, e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
        setsockopt(fd, libc::SOL_PACKET, sys::PACKET_VERSION, &sys::TPACKET_V3)
            .map_err(|e| ctx("PACKET_VERSION", e))?;
        let frame_size = 2048u32.min(c.block_size);
        let req = sys::TpacketReq3 {
            tp_block_size: c.block_size,
            tp_block_nr: c.block_nr,
            tp_frame_size: frame_size,
            tp_frame_nr: c.block_size / frame_size * c.block_nr,
            tp_retire_blk_tov: c.retire_ms.max(1),
            ..Default::default()
        };
        setsockopt(fd, libc::SOL_PACKET, sys::PACKET_RX_RING, &req)
            .map_err(|e| ctx("PACKET_RX_RING", e))?;
        let ring = Mmap::new(fd, c.block_size as usize * c.block_nr as usize, 0)
            .map_err(|e| ctx("mmap of the TPACKET_V3 ring", e))?;
        let one: i32 = 1;
        setsockopt(fd, libc::SOL_PACKET, sys::PACKET_IGNORE_OUTGOING, &one)
            .map_err(|e| ctx("PACKET_IGNORE_OUTGOING", e))?;
        bind_ll(fd, self.ifindex, sys::ETH_P_ALL).map_err(|e| ctx("bind", e))?;
        if c.promisc {
            let mr = sys::PacketMreq {
                mr_ifindex: self.ifindex as i32,
                mr_type: sys::PACKET_MR_PROMISC,
                ..Default::default()
            };
            setsockopt(fd, libc::SOL_PACKET, sys::PACKET_ADD_MEMBERSHIP, &mr)
                .map_err(|e| ctx("PACKET_ADD_MEMBERSHIP (promiscuous)", e))?;
        }
        let mut id = self.fanout_id.lock().unwrap();
        match *id {
            None => {
                let arg: u32 = (sys::PACKET_FANOUT_HASH | sys::PACKET_FANOUT_FLAG_UNIQUEID) << 16;
                setsockopt(fd, libc::SOL_PACKET, sys::PACKET_FANOUT, &arg)
                    .map_err(|e| ctx("PACKET_FANOUT (new group)", e))?;
                let mut got: u32 = 0;
                sys::getsockopt(fd, libc::SOL_PACKET, sys::PACKET_FANOUT, &mut got)
                    .map_err(|e| ctx("getsockopt PACKET_FANOUT", e))?;
                *id = Some((got & 0xffff) as u16);
            }
            Some(g) => {
                let arg: u32 = g as u32 | (sys::PACKET_FANOUT_HASH << 16);
                setsockopt(fd, libc::SOL_PACKET, sys::PACKET_FANOUT, &arg)
                    .map_err(|e| ctx("PACKET_FANOUT (join)", e))?;
            }
        }
        Ok((sock, ring))
    }
}

impl Port for AfPacketPort {
    fn info(&self) -> &PortInfo {
        &self.info
    }

    fn open_rx(&self, queue: u16, pool: &mut Pool) -> Result<Box<dyn RxQueue>, NetioError> {
        sys::check_netns(self.netns, &self.info.name)?;
        crate::check_mtu_fits(&self.info.name, self.info.mtu.max(self.iface_mtu), pool)?;
        if queue >= self.info.rx_queues {
            return Err(NetioError::port(
                &self.info.name,
                format!(
                    "RX queue {queue} does not exist (port has {})",
                    self.info.rx_queues
                ),
            ));
        }
        let (fd, ring) = self
            .open_rx_socket()
            .map_err(|e| open_error(&self.info.name, &format!("RX queue {queue}"), e))?;
        Ok(Box::new(AfPacketRx {
            fd,
            ring,
            block_size: self.cfg.block_size as usize,
            block_nr: self.cfg.block_nr,
            block: 0,
            in_block: false,
            left: 0,
            off: 0,
            vlan: 0,
            truncated: 0,
            stats: self.stats.clone(),
            queue,
            counters: QueueCounters::default(),
            released: false,
        }))
    }

    fn open_tx(&self, _worker: usize, _pool: &mut Pool) -> Result<Box<dyn TxQueue>, NetioError> {
        sys::check_netns(self.netns, &self.info.name)?;
        let tx = PacketTx::open(self.ifindex)
            .map_err(|e| open_error(&self.info.name, "TX socket", e))?;
        Ok(Box::new(tx))
    }
}

struct AfPacketRx {
    fd: OwnedFd,
    ring: Mmap,
    block_size: usize,
    block_nr: u32,
    /// Block being read (or to read next).
    block: u32,
    in_block: bool,
    /// Packets left in the current block and offset of the next one.
    left: u32,
    off: usize,
    vlan: u64,
    truncated: u64,
    stats: Arc<SharedStats>,
    queue: u16,
    /// `rx_oversize`, `rx_unread_at_shutdown` and the accumulated
    /// `tp_drops` (the kernel resets its counter on every read).
    counters: QueueCounters,
    released: bool,
}

impl AfPacketRx {
    #[inline]
    fn block_ptr(&self) -> *mut u8 {
        // SAFETY: block < block_nr, inside the ring mapping.
        unsafe { self.ring.ptr.add(self.block as usize * self.block_size) }
    }

    #[inline]
    fn status(&self) -> &AtomicU32 {
        // SAFETY: block_status is a 4-byte aligned u32 in the block header.
        unsafe { &*self.block_ptr().add(bd::BLOCK_STATUS).cast::<AtomicU32>() }
    }

    /// Copies one frame out of the ring, re-inserting a stripped VLAN tag.
    #[inline]
    fn copy_frame(&mut self, pool: &mut Pool, h: &Tpacket3Hdr, data: &[u8]) -> Option<Buf> {
        let tagged = h.tp_status & sys::TP_STATUS_VLAN_VALID != 0;
        let extra = if tagged { 4 } else { 0 };
        let mut buf = pool.alloc()?;
        let room = pool.room_mut(buf);
        let total = data.len() + extra;
        // Truncated by the ring, or too long for a buffer (an empty frame
        // cannot arrive; it would be taken for the "dropped" marker).
        if h.tp_snaplen < h.tp_len || total > room.len() || data.is_empty() {
            pool.free(buf);
            self.truncated += 1;
            self.counters.add(QueueCounter::RxOversize, 1);
            return Some(Buf::EMPTY);
        }
        let reinsert = tagged && data.len() >= 12;
        if reinsert {
            let tpid = if h.tp_status & sys::TP_STATUS_VLAN_TPID_VALID != 0 && h.tp_vlan_tpid != 0 {
                h.tp_vlan_tpid
            } else {
                0x8100
            };
            room[..12].copy_from_slice(&data[..12]);
            room[12..14].copy_from_slice(&tpid.to_be_bytes());
            room[14..16].copy_from_slice(&(h.tp_vlan_tci as u16).to_be_bytes());
            room[16..total].copy_from_slice(&data[12..]);
            self.vlan += 1;
        } else {
            // A runt (no room for a tag) goes on untagged: the dataplane
            // counts it as a truncated frame.
            room[..data.len()].copy_from_slice(data);
        }
        buf.len = if reinsert { total } else { data.len() } as u32;
        Some(buf)
    }
}

impl RxQueue for AfPacketRx {
    fn rx_burst(&mut self, pool: &mut Pool, out: &mut Burst, max: usize) -> usize {
        if self.released {
            return 0;
        }
        let max = max.min(out.room());
        let mut n = 0;
        'blocks: while n < max {
            if !self.in_block {
                if self.status().load(Ordering::Acquire) & sys::TP_STATUS_USER == 0 {
                    break;
                }
                let b = self.block_ptr();
                // SAFETY: header fields of a block handed to user space.
                unsafe {
                    self.left = b.add(bd::NUM_PKTS).cast::<u32>().read();
                    self.off = b.add(bd::OFFSET_TO_FIRST_PKT).cast::<u32>().read() as usize;
                }
                self.in_block = true;
            }
            while self.left > 0 {
                if n == max {
                    break 'blocks;
                }
                let b = self.block_ptr();
                // SAFETY: off points at a tpacket3_hdr inside this block; the
                // frame lies at tp_mac within the block (kernel-written).
                let (h, data) = unsafe {
                    let hp = b.add(self.off).cast::<Tpacket3Hdr>();
                    let h = hp.read();
                    let start = (self.off + h.tp_mac as usize).min(self.block_size);
                    let len = (h.tp_snaplen as usize).min(self.block_size - start);
                    (h, std::slice::from_raw_parts(b.add(start), len))
                };
                let Some(buf) = self.copy_frame(pool, &h, data) else {
                    // Pool empty: leave the frame in the ring for later.
                    break 'blocks;
                };
                if buf.len > 0 {
                    let _ = out.push(buf);
                    n += 1;
                }
                self.off += h.tp_next_offset as usize;
                self.left -= 1;
            }
            self.status()
                .store(sys::TP_STATUS_KERNEL, Ordering::Release);
            self.in_block = false;
            self.block = (self.block + 1) % self.block_nr;
        }
        if self.vlan | self.truncated != 0 {
            self.stats
                .vlan_reinserted
                .fetch_add(std::mem::take(&mut self.vlan), Ordering::Relaxed);
            self.stats
                .truncated
                .fetch_add(std::mem::take(&mut self.truncated), Ordering::Relaxed);
        }
        n
    }

    fn wait_fd(&self) -> Option<RawFd> {
        Some(self.fd.as_raw_fd())
    }

    fn queue_id(&self) -> u16 {
        self.queue
    }

    /// Counts the frames still in the ring (never seen by the worker):
    /// the rest of the block being read and every block handed to user
    /// space after it.
    fn release(&mut self, _pool: &mut Pool) {
        if self.released {
            return;
        }
        let mut unread = 0u64;
        let current = self.block;
        for i in 0..self.block_nr {
            self.block = i;
            if i == current && self.in_block {
                unread += u64::from(self.left);
            } else if self.status().load(Ordering::Acquire) & sys::TP_STATUS_USER != 0 {
                // SAFETY: header of a block handed to user space.
                unread +=
                    u64::from(unsafe { self.block_ptr().add(bd::NUM_PKTS).cast::<u32>().read() });
            }
        }
        self.block = current;
        self.counters.add(QueueCounter::RxUnreadAtShutdown, unread);
        self.released = true;
    }

    /// `PACKET_STATISTICS`: one `getsockopt`, which also resets the
    /// kernel's counters, so `tp_drops` is accumulated here.
    fn counters(&mut self) -> QueueCounters {
        let mut st = sys::TpacketStatsV3::default();
        if sys::getsockopt(
            self.fd.as_raw_fd(),
            libc::SOL_PACKET,
            sys::PACKET_STATISTICS,
            &mut st,
        )
        .is_ok()
        {
            self.counters
                .add(QueueCounter::AfPacketTpDrops, u64::from(st.tp_drops));
        }
        self.counters
    }
}

/// A TX path through an AF_PACKET socket: one `sendmmsg` per burst,
/// `PACKET_QDISC_BYPASS`. Used by the `afpacket` port and by `afxdp` for
/// workers that cannot have an AF_XDP socket of their own on a port.
pub struct PacketTx {
    fd: OwnedFd,
    addr: libc::sockaddr_ll,
    msgs: [libc::mmsghdr; BURST_SIZE],
    iovs: [libc::iovec; BURST_SIZE],
    /// Frames refused by the kernel (sendmmsg errors), for diagnostics.
    pub errors: u64,
}

// SAFETY: the raw pointers in msgs/iovs are rebuilt on every call and only
// point into the pool and `addr` during that call.
unsafe impl Send for PacketTx {}

impl PacketTx {
    /// Opens a TX socket on `ifindex` in this thread's namespace.
    pub fn open(ifindex: u32) -> io::Result<PacketTx> {
        let sock = socket(libc::AF_PACKET, libc::SOCK_RAW, 0)?;
        let fd = sock.as_raw_fd();
        let one: i32 = 1;
        setsockopt(fd, libc::SOL_PACKET, sys::PACKET_QDISC_BYPASS, &one)?;
        // Protocol 0: the socket is bound to the device but receives nothing.
        bind_ll(fd, ifindex, 0)?;
        Ok(PacketTx {
            fd: sock,
            addr: sys::sockaddr_ll(ifindex, sys::ETH_P_ALL),
            // SAFETY: all-zero mmsghdr/iovec are valid (null pointers).
            msgs: unsafe { std::mem::zeroed() },
            iovs: unsafe { std::mem::zeroed() },
            errors: 0,
        })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Sends up to 64 frames with one `sendmmsg`; returns how many the
    /// kernel took. Does not free anything.
    fn send_chunk(&mut self, pool: &Pool, bufs: &[Buf]) -> usize {
        let n = bufs.len().min(BURST_SIZE);
        for (i, b) in bufs[..n].iter().enumerate() {
            let data = pool.data(*b);
            self.iovs[i] = libc::iovec {
                iov_base: data.as_ptr() as *mut libc::c_void,
                iov_len: data.len(),
            };
            let m = &mut self.msgs[i].msg_hdr;
            m.msg_name = (&mut self.addr as *mut libc::sockaddr_ll).cast();
            m.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            m.msg_iov = &mut self.iovs[i];
            m.msg_iovlen = 1;
            m.msg_control = std::ptr::null_mut();
            m.msg_controllen = 0;
            m.msg_flags = 0;
        }
        // SAFETY: n initialised mmsghdrs pointing at live iovecs and pool
        // data for the duration of the call.
        let r = unsafe {
            libc::sendmmsg(
                self.fd.as_raw_fd(),
                self.msgs.as_mut_ptr(),
                n as u32,
                libc::MSG_DONTWAIT,
            )
        };
        if r < 0 {
            let _ = sys::errno();
            self.errors += 1;
            0
        } else {
            r as usize
        }
    }
}

impl TxQueue for PacketTx {
    fn tx_burst(&mut self, pool: &mut Pool, bufs: &[Buf]) -> usize {
        let mut sent = 0;
        while sent < bufs.len() {
            let want = (bufs.len() - sent).min(BURST_SIZE);
            let k = self.send_chunk(pool, &bufs[sent..]);
            sent += k;
            if k < want {
                break;
            }
        }
        // The kernel copied the data during sendmmsg: the frames are free.
        pool.free_all(&bufs[..sent]);
        sent
    }
}
