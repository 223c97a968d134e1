//! AF_XDP single-producer/single-consumer rings, as libxdp's `xsk.h` does
//! them: the shared `producer`/`consumer` indices are touched only when the
//! cached copies run out, with Acquire loads of the other side's index and
//! Release stores of ours, so a burst costs two atomic operations.
//!
//! - producer side (fill, TX): [`ProdRing::reserve`] then
//!   [`ProdRing::submit`] (`xsk_ring_prod__reserve/submit`);
//! - consumer side (RX, completion): [`ConsRing::peek`] then
//!   [`ConsRing::release`] (`xsk_ring_cons__peek/release`).
//!
//! Indices are free-running `u32`s; `idx & mask` is the slot.

use crate::sys::Mmap;
use std::sync::atomic::{AtomicU32, Ordering};

/// The mapped parts of one ring.
struct Raw {
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    flags: *const AtomicU32,
    desc: *mut u8,
    mask: u32,
    size: u32,
    /// Keeps the mapping alive as long as the ring.
    _map: Mmap,
}

// SAFETY: a ring is used by one thread at a time (it moves with its
// queue); the kernel side is synchronised through the atomics.
unsafe impl Send for Raw {}

impl Raw {
    fn new(map: Mmap, off: &libc::xdp_ring_offset, size: u32) -> Raw {
        // SAFETY: the offsets come from XDP_MMAP_OFFSETS for this mapping.
        unsafe {
            Raw {
                producer: map.ptr.add(off.producer as usize).cast(),
                consumer: map.ptr.add(off.consumer as usize).cast(),
                flags: map.ptr.add(off.flags as usize).cast(),
                desc: map.ptr.add(off.desc as usize),
                mask: size - 1,
                size,
                _map: map,
            }
        }
    }
    #[inline]
    fn producer(&self) -> &AtomicU32 {
        // SAFETY: points into the live mapping, 4-byte aligned.
        unsafe { &*self.producer }
    }
    #[inline]
    fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as above.
        unsafe { &*self.consumer }
    }
    #[inline]
    fn needs_wakeup(&self) -> bool {
        // SAFETY: as above. A relaxed read, as xsk_ring_prod__needs_wakeup.
        unsafe { &*self.flags }.load(Ordering::Relaxed) & libc::XDP_RING_NEED_WAKEUP != 0
    }
}

/// Producer side of a ring of `T` (u64 addresses or `xdp_desc`).
pub struct ProdRing<T: Copy> {
    raw: Raw,
    cached_prod: u32,
    cached_cons: u32,
    _t: std::marker::PhantomData<T>,
}

impl<T: Copy> ProdRing<T> {
    pub(crate) fn new(map: Mmap, off: &libc::xdp_ring_offset, size: u32) -> Self {
        let raw = Raw::new(map, off, size);
        let cached_prod = raw.producer().load(Ordering::Relaxed);
        let cached_cons = raw.consumer().load(Ordering::Relaxed).wrapping_add(size);
        ProdRing {
            raw,
            cached_prod,
            cached_cons,
            _t: std::marker::PhantomData,
        }
    }

    pub fn size(&self) -> u32 {
        self.raw.size
    }

    /// Free slots, refreshing the consumer index only if fewer than `want`
    /// are known free (`xsk_prod_nb_free`).
    #[inline]
    pub fn free(&mut self, want: u32) -> u32 {
        let free = self.cached_cons.wrapping_sub(self.cached_prod);
        if free >= want {
            return free;
        }
        self.cached_cons = self
            .raw
            .consumer()
            .load(Ordering::Acquire)
            .wrapping_add(self.raw.size);
        self.cached_cons.wrapping_sub(self.cached_prod)
    }

    /// Reserves up to `n` slots; returns the first index and the count.
    #[inline]
    pub fn reserve(&mut self, n: u32) -> (u32, u32) {
        let n = n.min(self.free(n));
        let idx = self.cached_prod;
        self.cached_prod = self.cached_prod.wrapping_add(n);
        (idx, n)
    }

    /// Writes slot `idx` (a reserved index).
    #[inline]
    pub fn write(&mut self, idx: u32, v: T) {
        // SAFETY: slot is inside the descriptor array (masked index).
        unsafe {
            self.raw
                .desc
                .cast::<T>()
                .add((idx & self.raw.mask) as usize)
                .write(v)
        }
    }

    /// Publishes `n` reserved slots to the kernel.
    #[inline]
    pub fn submit(&mut self, n: u32) {
        let p = self.raw.producer();
        p.store(p.load(Ordering::Relaxed).wrapping_add(n), Ordering::Release);
    }

    #[inline]
    pub fn needs_wakeup(&self) -> bool {
        self.raw.needs_wakeup()
    }

    /// Slots submitted that the kernel has not consumed yet.
    #[inline]
    pub fn pending(&self) -> u32 {
        self.raw
            .producer()
            .load(Ordering::Relaxed)
            .wrapping_sub(self.raw.consumer().load(Ordering::Acquire))
    }
}

/// Consumer side of a ring of `T`.
pub struct ConsRing<T: Copy> {
    raw: Raw,
    cached_prod: u32,
    cached_cons: u32,
    _t: std::marker::PhantomData<T>,
}

impl<T: Copy> ConsRing<T> {
    pub(crate) fn new(map: Mmap, off: &libc::xdp_ring_offset, size: u32) -> Self {
        let raw = Raw::new(map, off, size);
        let cached_prod = raw.producer().load(Ordering::Relaxed);
        let cached_cons = raw.consumer().load(Ordering::Relaxed);
        ConsRing {
            raw,
            cached_prod,
            cached_cons,
            _t: std::marker::PhantomData,
        }
    }

    /// Takes up to `n` available entries (`xsk_ring_cons__peek`); returns
    /// the first index and the count.
    #[inline]
    pub fn peek(&mut self, n: u32) -> (u32, u32) {
        let mut avail = self.cached_prod.wrapping_sub(self.cached_cons);
        if avail == 0 {
            self.cached_prod = self.raw.producer().load(Ordering::Acquire);
            avail = self.cached_prod.wrapping_sub(self.cached_cons);
        }
        let n = n.min(avail);
        let idx = self.cached_cons;
        self.cached_cons = self.cached_cons.wrapping_add(n);
        (idx, n)
    }

    #[inline]
    pub fn read(&self, idx: u32) -> T {
        // SAFETY: slot is inside the descriptor array (masked index).
        unsafe {
            self.raw
                .desc
                .cast::<T>()
                .add((idx & self.raw.mask) as usize)
                .read()
        }
    }

    /// Gives `n` peeked entries back to the kernel.
    #[inline]
    pub fn release(&mut self, n: u32) {
        let c = self.raw.consumer();
        c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Release);
    }
}
