//! IPv6 lookup: walk the trie one stride per memory access.

use std::net::Ipv6Addr;
use std::sync::atomic::Ordering::Acquire;

use super::Lpm6Reader;
use crate::entry::{is_ext, target, GROUP_SIZE, PAYLOAD};
use crate::Target;

impl Lpm6Reader {
    /// Longest-prefix match of a host-order IPv6 address.
    ///
    /// tbl24 with the top 24 bits, then while the entry points to a group,
    /// that group with the next 8 bits. The writer never puts an ext entry
    /// in the last level (bits 120..128), so the walk ends by `shift == 0`.
    /// `Acquire` pairs with the writer's `Release` publication of each
    /// filled group.
    #[inline]
    pub fn lookup(&self, addr: u128) -> Option<Target> {
        let t = &*self.tables;
        let mut e = t.tbl24[(addr >> 104) as usize].load(Acquire);
        let mut shift = 104;
        while is_ext(e) {
            shift -= 8;
            let i = (e & PAYLOAD) as usize * GROUP_SIZE + ((addr >> shift) as usize & 0xff);
            e = t.tbl8[i].load(Acquire);
        }
        target(e)
    }

    /// [`lookup`](Self::lookup) of an `Ipv6Addr`.
    #[inline]
    pub fn lookup_addr(&self, addr: Ipv6Addr) -> Option<Target> {
        self.lookup(u128::from(addr))
    }

    /// Look up a burst: `out[i] = lookup(addrs[i])`. First-level loads are
    /// issued for the whole chunk first so their cache misses overlap.
    ///
    /// # Panics
    /// If `out` is shorter than `addrs`.
    pub fn lookup_bulk(&self, addrs: &[u128], out: &mut [Option<Target>]) {
        assert!(out.len() >= addrs.len(), "output shorter than input");
        let t = &*self.tables;
        const CHUNK: usize = 64;
        let mut raw = [0u32; CHUNK];
        for (a, o) in addrs.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            for (r, &addr) in raw.iter_mut().zip(a) {
                *r = t.tbl24[(addr >> 104) as usize].load(Acquire);
            }
            for ((o, &e0), &addr) in o.iter_mut().zip(&raw).zip(a) {
                let mut e = e0;
                let mut shift = 104;
                while is_ext(e) {
                    shift -= 8;
                    let i = (e & PAYLOAD) as usize * GROUP_SIZE + ((addr >> shift) as usize & 0xff);
                    e = t.tbl8[i].load(Acquire);
                }
                *o = target(e);
            }
        }
    }
}
