//! A burst: a fixed-capacity array of buffer descriptors.
//!
//! Bursts amortise per-call costs (virtual calls, ring index updates,
//! syscalls) over up to [`BURST_SIZE`] packets, as DPDK's `rx_burst` and
//! `tx_burst` do. The array lives inline, so a burst never allocates.

use crate::pool::Buf;

/// Packets per burst. 64 matches DPDK l3fwd's `MAX_PKT_BURST`'s upper range
/// and the 32-64 the papers found to amortise per-batch costs.
pub const BURST_SIZE: usize = 64;

#[derive(Clone)]
pub struct Burst {
    bufs: [Buf; BURST_SIZE],
    len: usize,
}

impl Default for Burst {
    fn default() -> Self {
        Self::new()
    }
}

impl Burst {
    pub const fn new() -> Self {
        Burst {
            bufs: [Buf::EMPTY; BURST_SIZE],
            len: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == BURST_SIZE
    }

    /// Free slots left.
    #[inline]
    pub fn room(&self) -> usize {
        BURST_SIZE - self.len
    }

    /// Appends `buf`. The caller checks [`Burst::is_full`] first; pushing
    /// into a full burst is a logic error (checked in debug builds, and the
    /// buffer is returned so it cannot leak in release builds).
    #[inline]
    pub fn push(&mut self, buf: Buf) -> Result<(), Buf> {
        if self.len == BURST_SIZE {
            debug_assert!(false, "push into a full burst");
            return Err(buf);
        }
        self.bufs[self.len] = buf;
        self.len += 1;
        Ok(())
    }

    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    #[inline]
    pub fn as_slice(&self) -> &[Buf] {
        &self.bufs[..self.len]
    }

    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [Buf] {
        &mut self.bufs[..self.len]
    }

    /// The whole backing array, for backends that fill it directly; follow
    /// with [`Burst::set_len`].
    #[inline]
    pub fn spare_mut(&mut self) -> &mut [Buf] {
        &mut self.bufs[self.len..]
    }

    /// Sets the length after a backend filled [`Burst::spare_mut`].
    #[inline]
    pub fn set_len(&mut self, len: usize) {
        assert!(len <= BURST_SIZE);
        self.len = len;
    }

    /// Removes the first `n` entries, keeping the rest in order (used when
    /// a TX queue accepted only part of a burst).
    #[inline]
    pub fn consume_front(&mut self, n: usize) {
        let n = n.min(self.len);
        self.bufs.copy_within(n..self.len, 0);
        self.len -= n;
    }
}

impl std::ops::Index<usize> for Burst {
    type Output = Buf;
    #[inline]
    fn index(&self, i: usize) -> &Buf {
        &self.as_slice()[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_until_full_then_consume() {
        let mut b = Burst::new();
        for i in 0..BURST_SIZE {
            b.push(Buf::new(i as u64 * 2048, 60)).unwrap();
        }
        assert!(b.is_full());
        assert_eq!(b.room(), 0);
        b.consume_front(10);
        assert_eq!(b.len(), BURST_SIZE - 10);
        assert_eq!(b[0].addr, 10 * 2048);
        b.clear();
        assert!(b.is_empty());
    }
}
