//! One AF_XDP socket bound to one (device, queue), with its mapped rings.
//!
//! UMEM sharing: a worker's pool is one UMEM. The first socket of the
//! worker registers it (`XDP_UMEM_REG`, chunk = frame size, headroom 0) and
//! the pool remembers that socket ([`Pool::set_umem_owner`]); every later
//! socket of the worker gets its own fill and completion ring
//! (`XDP_UMEM_FILL_RING`/`XDP_UMEM_COMPLETION_RING` before bind, Linux
//! 5.10+) and binds with `XDP_SHARED_UMEM` and the owner's fd. A shared
//! socket inherits the owner's copy/zero-copy mode and may pass no other
//! bind flag; if a shared bind fails (e.g. the owner is zero-copy and this
//! device cannot be), the socket registers the same memory as a second
//! UMEM instead, which the kernel allows.

use super::ring::{ConsRing, ProdRing};
use super::ZeroCopy;
use crate::sys::{cvt, getsockopt, setsockopt, socket, Mmap};
use crate::Pool;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

const XDP_OPTIONS: i32 = 8;
const XDP_OPTIONS_ZEROCOPY: u32 = 1;

/// `struct xdp_desc`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct XdpDesc {
    pub addr: u64,
    pub len: u32,
    pub options: u32,
}

pub(crate) struct XskParams {
    pub ifindex: u32,
    pub queue: u32,
    /// Create an RX ring (false: a TX-only socket).
    pub rx: bool,
    pub rx_size: u32,
    pub tx_size: u32,
    pub fill_size: u32,
    pub comp_size: u32,
    pub zero_copy: ZeroCopy,
}

/// The socket itself: closed when the last ring half holding it drops.
pub(crate) struct Xsk {
    pub fd: Arc<OwnedFd>,
    pub zero_copy: bool,
}

impl Xsk {
    #[inline]
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Kicks TX processing (`sendto`, non-blocking). Transient errors
    /// (`EAGAIN`, `EBUSY`, `ENOBUFS`, `ENETDOWN`) are left for the next kick.
    #[inline]
    pub fn kick_tx(&self) {
        // SAFETY: zero-length send on a valid socket, no buffers.
        unsafe {
            libc::sendto(
                self.raw(),
                std::ptr::null(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null(),
                0,
            )
        };
    }

    /// Wakes RX processing when the fill ring asks for it.
    #[inline]
    pub fn kick_rx(&self) {
        // SAFETY: zero-length receive on a valid socket.
        unsafe {
            libc::recvfrom(
                self.raw(),
                std::ptr::null_mut(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
    }
}

pub(crate) struct XskRings {
    pub fill: ProdRing<u64>,
    pub comp: ConsRing<u64>,
    pub rx: Option<ConsRing<XdpDesc>>,
    pub tx: ProdRing<XdpDesc>,
}

/// Creates and binds a socket for `p` on `pool`'s UMEM (shared with the
/// pool's owner socket when there is one). Returns the socket, its rings,
/// and a note when a shared bind had to fall back to a new registration.
pub(crate) fn create(p: &XskParams, pool: &mut Pool) -> io::Result<(Arc<Xsk>, XskRings)> {
    let mut shared_err = None;
    if let Some(owner) = pool.umem_owner() {
        match create_one(p, pool, Some(owner.as_raw_fd()), false) {
            Ok(r) => return Ok(r),
            Err(e) => shared_err = Some(e),
        }
    }
    let attempts: &[bool] = match p.zero_copy {
        ZeroCopy::On => &[true],
        ZeroCopy::Off => &[false],
        ZeroCopy::Auto => &[true, false],
    };
    let mut last = None;
    for &zc in attempts {
        match create_one(p, pool, None, zc) {
            Ok((xsk, rings)) => {
                pool.set_umem_owner(&xsk.fd);
                return Ok((xsk, rings));
            }
            Err(e) => last = Some(e),
        }
    }
    let e = last.expect("at least one attempt");
    Err(match shared_err {
        Some(se) => io::Error::new(
            e.kind(),
            format!("{e} (binding with XDP_SHARED_UMEM failed first: {se})"),
        ),
        None => e,
    })
}

fn create_one(
    p: &XskParams,
    pool: &Pool,
    shared_fd: Option<RawFd>,
    zc: bool,
) -> io::Result<(Arc<Xsk>, XskRings)> {
    let sock = socket(libc::AF_XDP, libc::SOCK_RAW, 0)?;
    let fd = sock.as_raw_fd();
    let ctx = |what: &str, e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));

    if shared_fd.is_none() {
        let (base, len) = pool.region();
        let reg = libc::xdp_umem_reg {
            addr: base as u64,
            len: len as u64,
            chunk_size: pool.frame_size(),
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        setsockopt(fd, libc::SOL_XDP, libc::XDP_UMEM_REG, &reg).map_err(|e| {
            ctx(
                &format!("XDP_UMEM_REG ({} bytes, chunk {})", len, pool.frame_size()),
                e,
            )
        })?;
    }
    setsockopt(fd, libc::SOL_XDP, libc::XDP_UMEM_FILL_RING, &p.fill_size)
        .map_err(|e| ctx("XDP_UMEM_FILL_RING", e))?;
    setsockopt(
        fd,
        libc::SOL_XDP,
        libc::XDP_UMEM_COMPLETION_RING,
        &p.comp_size,
    )
    .map_err(|e| ctx("XDP_UMEM_COMPLETION_RING", e))?;
    if p.rx {
        setsockopt(fd, libc::SOL_XDP, libc::XDP_RX_RING, &p.rx_size)
            .map_err(|e| ctx("XDP_RX_RING", e))?;
    }
    setsockopt(fd, libc::SOL_XDP, libc::XDP_TX_RING, &p.tx_size)
        .map_err(|e| ctx("XDP_TX_RING", e))?;

    // SAFETY: all-zero is a valid xdp_mmap_offsets.
    let mut off: libc::xdp_mmap_offsets = unsafe { std::mem::zeroed() };
    getsockopt(fd, libc::SOL_XDP, libc::XDP_MMAP_OFFSETS, &mut off)
        .map_err(|e| ctx("XDP_MMAP_OFFSETS", e))?;

    let map = |o: &libc::xdp_ring_offset, n: u32, esz: usize, pgoff: u64| {
        Mmap::new(fd, o.desc as usize + n as usize * esz, pgoff as libc::off_t)
            .map_err(|e| ctx("mmap of an AF_XDP ring", e))
    };
    let fill = ProdRing::new(
        map(&off.fr, p.fill_size, 8, libc::XDP_UMEM_PGOFF_FILL_RING)?,
        &off.fr,
        p.fill_size,
    );
    let comp = ConsRing::new(
        map(
            &off.cr,
            p.comp_size,
            8,
            libc::XDP_UMEM_PGOFF_COMPLETION_RING,
        )?,
        &off.cr,
        p.comp_size,
    );
    let rx = if p.rx {
        Some(ConsRing::new(
            map(&off.rx, p.rx_size, 16, libc::XDP_PGOFF_RX_RING as u64)?,
            &off.rx,
            p.rx_size,
        ))
    } else {
        None
    };
    let tx = ProdRing::new(
        map(&off.tx, p.tx_size, 16, libc::XDP_PGOFF_TX_RING as u64)?,
        &off.tx,
        p.tx_size,
    );

    let flags = match shared_fd {
        Some(_) => libc::XDP_SHARED_UMEM,
        None => {
            libc::XDP_USE_NEED_WAKEUP
                | if zc {
                    libc::XDP_ZEROCOPY
                } else {
                    libc::XDP_COPY
                }
        }
    };
    let sa = libc::sockaddr_xdp {
        sxdp_family: libc::AF_XDP as u16,
        sxdp_flags: flags,
        sxdp_ifindex: p.ifindex,
        sxdp_queue_id: p.queue,
        sxdp_shared_umem_fd: shared_fd.unwrap_or(0) as u32,
    };
    // SAFETY: sa is a valid sockaddr_xdp of the size passed.
    cvt(unsafe {
        libc::bind(
            fd,
            (&sa as *const libc::sockaddr_xdp).cast(),
            std::mem::size_of::<libc::sockaddr_xdp>() as libc::socklen_t,
        )
    })
    .map_err(|e| {
        let how = match shared_fd {
            Some(_) => "shared UMEM".to_string(),
            None if zc => "zero-copy".to_string(),
            None => "copy mode".to_string(),
        };
        ctx(&format!("bind to queue {} ({how})", p.queue), e)
    })?;

    let mut opts: u32 = 0;
    let zero_copy = getsockopt(fd, libc::SOL_XDP, XDP_OPTIONS, &mut opts).is_ok()
        && opts & XDP_OPTIONS_ZEROCOPY != 0;
    Ok((
        Arc::new(Xsk {
            fd: Arc::new(sock),
            zero_copy,
        }),
        XskRings { fill, comp, rx, tx },
    ))
}
