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

    /// Look up a burst: `out[i] = lookup(addrs[i])`.
    ///
    /// Level-synchronous walk: every lookup of a chunk takes one step per
    /// pass, so the (independent) cache misses of all lookups at one level
    /// are in flight together instead of one dependent chain after another.
    /// All lookups still walking are at the same level, so they share
    /// `shift`.
    ///
    /// # Panics
    /// If `out` is shorter than `addrs`.
    pub fn lookup_bulk(&self, addrs: &[u128], out: &mut [Option<Target>]) {
        assert!(out.len() >= addrs.len(), "output shorter than input");
        let t = &*self.tables;
        const CHUNK: usize = 64;
        let mut raw = [0u32; CHUNK];
        for (a, o) in addrs.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            let raw = &mut raw[..a.len()];
            let mut walking = false;
            for (r, &addr) in raw.iter_mut().zip(a) {
                *r = t.tbl24[(addr >> 104) as usize].load(Acquire);
                walking |= is_ext(*r);
            }
            let mut shift = 104;
            while walking {
                walking = false;
                shift -= 8;
                for (r, &addr) in raw.iter_mut().zip(a) {
                    if is_ext(*r) {
                        let i = (*r & PAYLOAD) as usize * GROUP_SIZE
                            + ((addr >> shift) as usize & 0xff);
                        *r = t.tbl8[i].load(Acquire);
                        walking |= is_ext(*r);
                    }
                }
            }
            for (o, &e) in o.iter_mut().zip(raw.iter()) {
                *o = target(e);
            }
        }
    }
}
