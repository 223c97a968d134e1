//! The buffer pool: one contiguous region of fixed-size frames, allocated
//! once per worker and recycled forever.
//!
//! The region comes from [`hugemem`] (region `packet_pool`: explicit 2 MiB
//! pages, else THP, else small pages, per `[router] hugepages`; page aligned
//! and touched up front), because the `afxdp` backend registers it as the
//! socket's UMEM: the same frames are then filled by the NIC,
//! routed and transmitted without a copy. Frames are a power of two in size,
//! so a descriptor's frame index is `addr >> shift` and any address inside a
//! frame identifies it (what AF_XDP's aligned mode expects on completion).
//!
//! A pool belongs to one worker and is never shared: allocation and free are
//! a push/pop on a preallocated stack of frame indices, no atomics, no locks,
//! no system calls.

use std::io;
use std::os::fd::OwnedFd;
use std::ptr::NonNull;
use std::sync::{Arc, Weak};

/// Bytes kept free before the packet data of a freshly allocated buffer, so
/// headers can be prepended in place. Equal to the kernel's
/// `XDP_PACKET_HEADROOM`, where AF_XDP places received data.
pub const HEADROOM: u32 = 256;

/// The pools' region name in [`hugemem::report`] (also the AF_XDP UMEM).
pub const REGION: &str = "packet_pool";

/// A packet buffer descriptor: where the data starts (byte offset from the
/// start of the pool region) and how long it is. `Copy` and 16 bytes, the
/// same shape as AF_XDP's `xdp_desc`, so moving a packet never touches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Buf {
    pub addr: u64,
    pub len: u32,
}

impl Buf {
    pub const EMPTY: Buf = Buf { addr: 0, len: 0 };

    #[inline]
    pub const fn new(addr: u64, len: u32) -> Self {
        Buf { addr, len }
    }
}

pub struct Pool {
    /// Owns the region (unmapped when the pool drops).
    _mem: hugemem::Mapping,
    base: NonNull<u8>,
    size: usize,
    shift: u32,
    frames: u32,
    /// Stack of free frame indices; capacity `frames`, never reallocates.
    free: Vec<u32>,
    /// One bit per frame, set while the frame is allocated: catches double
    /// frees and frees of foreign addresses in debug builds.
    #[cfg(debug_assertions)]
    in_use: Vec<u64>,
    /// AF_XDP: the socket that registered this region as a UMEM, so the
    /// worker's later sockets can share it (`XDP_SHARED_UMEM`). Weak: the
    /// pool does not keep the socket open; once it is closed, the next
    /// socket registers the region again.
    umem_owner: Option<Weak<OwnedFd>>,
}

// SAFETY: the region is owned exclusively by the pool (private anonymous
// mapping); moving the pool to another thread moves that ownership.
unsafe impl Send for Pool {}

impl Pool {
    /// Maps `frames` frames of `frame_size` bytes (a power of two, 2048 to
    /// 65536). Fails with the OS error if memory cannot be had.
    pub fn new(frames: u32, frame_size: u32) -> io::Result<Pool> {
        if !frame_size.is_power_of_two() || !(2048..=65536).contains(&frame_size) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("frame size {frame_size} must be a power of two from 2048 to 65536"),
            ));
        }
        if frames == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a pool needs at least one frame",
            ));
        }
        let size = frames as usize * frame_size as usize;
        let mem = hugemem::Mapping::new(REGION, size)?;
        let base = NonNull::new(mem.as_ptr()).expect("mapping is non-null");
        let free = (0..frames).rev().collect();
        Ok(Pool {
            _mem: mem,
            base,
            size,
            shift: frame_size.trailing_zeros(),
            frames,
            free,
            #[cfg(debug_assertions)]
            in_use: vec![0; (frames as usize).div_ceil(64)],
            umem_owner: None,
        })
    }

    #[inline]
    pub fn frame_size(&self) -> u32 {
        1 << self.shift
    }

    #[inline]
    pub fn frames(&self) -> u32 {
        self.frames
    }

    /// Frames currently free.
    #[inline]
    pub fn available(&self) -> usize {
        self.free.len()
    }

    /// Start and length of the region, for registering it as a UMEM.
    pub fn region(&self) -> (*mut u8, usize) {
        (self.base.as_ptr(), self.size)
    }

    /// The still-open AF_XDP socket that registered this region as its
    /// UMEM, if any (see [`Pool::set_umem_owner`]).
    pub fn umem_owner(&self) -> Option<Arc<OwnedFd>> {
        self.umem_owner.as_ref().and_then(Weak::upgrade)
    }

    /// Remembers the AF_XDP socket that registered this region as a UMEM
    /// (`XDP_UMEM_REG`), for later sockets to bind with `XDP_SHARED_UMEM`.
    pub fn set_umem_owner(&mut self, socket: &Arc<OwnedFd>) {
        self.umem_owner = Some(Arc::downgrade(socket));
    }

    /// Takes a frame and returns its base address (offset in the region),
    /// for backends that hand whole frames to a device (AF_XDP fill ring).
    #[inline]
    pub fn alloc_frame(&mut self) -> Option<u64> {
        let idx = self.free.pop()?;
        self.mark(idx, true);
        Some((idx as u64) << self.shift)
    }

    /// Takes a buffer with [`HEADROOM`] bytes before its (empty) data.
    #[inline]
    pub fn alloc(&mut self) -> Option<Buf> {
        self.alloc_frame()
            .map(|base| Buf::new(base + HEADROOM as u64, 0))
    }

    /// Fills `bufs` with as many fresh buffers as the pool has (each as
    /// [`Pool::alloc`] gives them, in the same order) and returns how many:
    /// a burst's buffers in one step, one length check instead of one per
    /// buffer (DPDK's `rte_pktmbuf_alloc_bulk`).
    #[inline]
    pub fn alloc_bulk(&mut self, bufs: &mut [Buf]) -> usize {
        let n = bufs.len().min(self.free.len());
        let rest = self.free.len() - n;
        for (b, &idx) in bufs.iter_mut().zip(self.free[rest..].iter().rev()) {
            *b = Buf::new(((idx as u64) << self.shift) + HEADROOM as u64, 0);
        }
        #[cfg(debug_assertions)]
        for i in rest..self.free.len() {
            self.mark(self.free[i], true);
        }
        self.free.truncate(rest);
        n
    }

    /// Returns the frame holding `addr` (any address inside the frame).
    #[inline]
    pub fn free_addr(&mut self, addr: u64) {
        let idx = (addr >> self.shift) as u32;
        debug_assert!(idx < self.frames, "free of an address outside the pool");
        if idx >= self.frames {
            return;
        }
        self.mark(idx, false);
        debug_assert!(self.free.len() < self.frames as usize);
        self.free.push(idx);
    }

    #[inline]
    pub fn free(&mut self, buf: Buf) {
        self.free_addr(buf.addr)
    }

    /// Frees every buffer of a slice.
    #[inline]
    pub fn free_all(&mut self, bufs: &[Buf]) {
        for b in bufs {
            self.free_addr(b.addr);
        }
    }

    /// Asks the CPU to bring the first cache line of `buf`'s data (the
    /// headers) into cache, as DPDK's l3fwd does a few frames ahead of the
    /// one it processes: a NIC wrote the frame by DMA, so its headers are
    /// not cached yet. A hint: no fault, no effect on the bytes; nothing on
    /// other architectures.
    #[inline]
    pub fn prefetch(&self, buf: Buf) {
        #[cfg(target_arch = "x86_64")]
        {
            // Not clamped like `data`: a prefetch of any address never
            // faults, and the clamp would cost a branch per packet.
            let p = self.base.as_ptr().wrapping_add(buf.addr as usize);
            // SAFETY: a prefetch never faults nor reads into the program.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(p as *const i8);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = buf;
    }

    /// The packet bytes of `buf`.
    #[inline]
    pub fn data(&self, buf: Buf) -> &[u8] {
        let (start, end) = self.bounds(buf, buf.len as usize);
        // SAFETY: bounds() keeps the range inside one frame of the region.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(start), end - start) }
    }

    /// The packet bytes of `buf`, writable.
    #[inline]
    pub fn data_mut(&mut self, buf: Buf) -> &mut [u8] {
        let (start, end) = self.bounds(buf, buf.len as usize);
        // SAFETY: as in data(); &mut self guarantees no other live borrow.
        unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr().add(start), end - start) }
    }

    /// Everything from the data start to the end of the frame: room to build
    /// or grow a packet before setting `buf.len`.
    #[inline]
    pub fn room_mut(&mut self, buf: Buf) -> &mut [u8] {
        let (start, end) = self.bounds(buf, usize::MAX);
        // SAFETY: as in data_mut().
        unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr().add(start), end - start) }
    }

    /// Bytes available before the data start inside its frame.
    #[inline]
    pub fn headroom(&self, buf: Buf) -> u32 {
        (buf.addr & ((1u64 << self.shift) - 1)) as u32
    }

    /// Two distinct buffers at once: one to read, one to write (building an
    /// ICMP error that quotes a received packet, fragmenting).
    pub fn pair_mut(&mut self, read: Buf, write: Buf) -> (&[u8], &mut [u8]) {
        assert_ne!(
            read.addr >> self.shift,
            write.addr >> self.shift,
            "pair_mut needs two different frames"
        );
        let (rs, re) = self.bounds(read, read.len as usize);
        let (ws, we) = self.bounds(write, usize::MAX);
        // SAFETY: two ranges inside two different frames never overlap.
        unsafe {
            (
                std::slice::from_raw_parts(self.base.as_ptr().add(rs), re - rs),
                std::slice::from_raw_parts_mut(self.base.as_ptr().add(ws), we - ws),
            )
        }
    }

    /// The byte range of `buf` clamped to its frame: a corrupt descriptor
    /// can never reach another frame or outside the region (an address
    /// beyond the region gives an empty range at its end).
    ///
    /// On the fast path several times per packet, so in its cheapest form:
    /// the region is exactly `frames` frames of a power-of-two size, so the
    /// room left in the frame is the frame size minus the offset in it, and
    /// the one branch (a descriptor outside the region) is never taken.
    #[inline]
    fn bounds(&self, buf: Buf, len: usize) -> (usize, usize) {
        if buf.addr >> self.shift >= u64::from(self.frames) {
            return (self.size, self.size);
        }
        let start = buf.addr as usize;
        let room = (1usize << self.shift) - (start & ((1usize << self.shift) - 1));
        (start, start + len.min(room))
    }

    #[inline]
    #[allow(unused_variables)]
    fn mark(&mut self, idx: u32, used: bool) {
        #[cfg(debug_assertions)]
        {
            let (w, bit) = (idx as usize / 64, 1u64 << (idx % 64));
            if used {
                debug_assert!(self.in_use[w] & bit == 0, "frame {idx} allocated twice");
                self.in_use[w] |= bit;
            } else {
                debug_assert!(self.in_use[w] & bit != 0, "frame {idx} freed twice");
                self.in_use[w] &= !bit;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_free_recycles_every_frame() {
        let mut p = Pool::new(8, 2048).unwrap();
        let bufs: Vec<Buf> = (0..8).map(|_| p.alloc().unwrap()).collect();
        assert!(p.alloc().is_none());
        for b in &bufs {
            assert_eq!(p.headroom(*b), HEADROOM);
        }
        p.free_all(&bufs);
        assert_eq!(p.available(), 8);
    }

    /// A bulk allocation gives the buffers single ones would, in the same
    /// order, and stops at what the pool has.
    #[test]
    fn alloc_bulk_is_alloc_in_a_loop() {
        let mut a = Pool::new(10, 2048).unwrap();
        let mut b = Pool::new(10, 2048).unwrap();
        let first = b.alloc().unwrap();
        assert_eq!(a.alloc().unwrap(), first);
        let mut bulk = [Buf::EMPTY; 4];
        assert_eq!(a.alloc_bulk(&mut bulk), 4);
        let single: Vec<Buf> = (0..4).map(|_| b.alloc().unwrap()).collect();
        assert_eq!(bulk[..], single[..]);
        let mut rest = [Buf::EMPTY; 8];
        assert_eq!(a.alloc_bulk(&mut rest), 5);
        assert_eq!(a.available(), 0);
        assert_eq!(a.alloc_bulk(&mut rest), 0);
        a.free_all(&bulk);
        a.free_all(&rest[..5]);
        a.free(first);
        assert_eq!(a.available(), 10);
    }

    #[test]
    fn data_is_clamped_to_the_frame() {
        let mut p = Pool::new(2, 2048).unwrap();
        let b = p.alloc().unwrap();
        let big = Buf::new(b.addr, 100_000);
        assert_eq!(p.data(big).len(), 2048 - HEADROOM as usize);
        p.room_mut(b)[..4].copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(p.data(Buf::new(b.addr, 4)), &[1, 2, 3, 4]);
    }

    /// The fast form of `bounds` gives what the clamping rule says: the
    /// range from the address to at most the end of its frame, empty at
    /// the region's end for an address beyond it, for any length.
    #[test]
    fn bounds_clamp_to_the_frame_and_the_region() {
        let p = Pool::new(3, 2048).unwrap();
        let rule = |addr: u64, len: usize| {
            let frame_end = (((u128::from(addr) >> 11) + 1) << 11).min(3 * 2048) as usize;
            let start = (addr as usize).min(frame_end);
            (start, start.saturating_add(len).min(frame_end))
        };
        let addrs = (0..3 * 2048 + 4096).step_by(7).chain([
            2047,
            2048,
            3 * 2048 - 1,
            3 * 2048,
            u64::MAX / 2,
            u64::MAX,
        ]);
        for addr in addrs {
            for len in [0, 1, 60, 2047, 2048, 5000, u32::MAX as usize, usize::MAX] {
                assert_eq!(
                    p.bounds(Buf::new(addr, 0), len),
                    rule(addr, len),
                    "{addr} {len}"
                );
            }
        }
    }

    #[test]
    fn rejects_bad_frame_sizes() {
        assert!(Pool::new(4, 3000).is_err());
        assert!(Pool::new(4, 1024).is_err());
        assert!(Pool::new(0, 2048).is_err());
    }

    #[test]
    fn pair_mut_reads_one_writes_other() {
        let mut p = Pool::new(2, 2048).unwrap();
        let a = p.alloc().unwrap();
        let b = p.alloc().unwrap();
        p.room_mut(a)[..3].copy_from_slice(b"abc");
        let (r, w) = p.pair_mut(Buf::new(a.addr, 3), b);
        w[..3].copy_from_slice(r);
        assert_eq!(p.data(Buf::new(b.addr, 3)), b"abc");
    }
}
