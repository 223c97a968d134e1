//! Where the readers' tables live: on the heap, or in memory the FIB shares
//! with a reader outside this process.
//!
//! Why: softrouter's XDP fast path reads the *same* tables as the workers
//! (one FIB, two readers): the tables are BPF array maps created with
//! `BPF_F_MMAPABLE` and mapped into the process, and the single writer
//! stores into them exactly as it stores into heap memory. So a route
//! change is seen by both tiers at once and no second copy exists. The
//! tables do not know where their memory came from; a [`TableMemory`]
//! hands it out by table name ([`names`]), and [`Heap`] (this process's
//! memory, on huge pages when the host has them: [`hugemem`]) is the default.
//!
//! Memory is always zeroed when handed out (an all-zero entry means "no
//! route"), and the element types are atomics (or, in the dataplane,
//! structs of atomics), so a foreign reader sees every store whole.

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64};

use crate::FibError;

/// The table names a [`TableMemory`] is asked for (stable: the XDP
/// program's maps carry the same names).
pub mod names {
    /// IPv4 first level, 2^24 `AtomicU32` entries.
    pub const LPM4_TBL24: &str = "lpm4_tbl24";
    /// IPv4 tbl8 groups, 256 `AtomicU32` each.
    pub const LPM4_TBL8: &str = "lpm4_tbl8";
    /// IPv6 first level, 2^24 `AtomicU32` entries.
    pub const LPM6_TBL24: &str = "lpm6_tbl24";
    /// IPv6 tbl8 groups, 256 `AtomicU32` each.
    pub const LPM6_TBL8: &str = "lpm6_tbl8";
    /// Next-hop descriptors (`AtomicU64`, layout in [`crate::nexthop`]).
    pub const NH_DESC: &str = "nh_desc";
    /// Gateway addresses, high halves (`AtomicU64`).
    pub const NH_GW_HI: &str = "nh_gw_hi";
    /// Gateway addresses, low halves (`AtomicU64`).
    pub const NH_GW_LO: &str = "nh_gw_lo";
    /// ECMP group descriptors (`AtomicU64`).
    pub const NH_GROUPS: &str = "nh_groups";
    /// ECMP group members (`AtomicU32` next-hop ids).
    pub const NH_MEMBERS: &str = "nh_members";
}

/// A type whose all-zero bit pattern is a valid value, and which may be
/// shared with a reader outside Rust (no pointers, no padding that
/// matters).
///
/// # Safety
/// Implement only for types that are valid when zeroed and whose fields
/// are all atomics or plain integers.
pub unsafe trait Zeroed: Sync + Send {}

// SAFETY: atomics of integers: zero is valid, no pointers.
unsafe impl Zeroed for AtomicU32 {}
// SAFETY: as above.
unsafe impl Zeroed for AtomicU64 {}
// SAFETY: an array of zero-valid elements is zero-valid.
unsafe impl<T: Zeroed, const N: usize> Zeroed for [T; N] {}

/// What keeps foreign memory mapped (e.g. a BPF map and its mmap).
pub type Owner = Box<dyn Send + Sync>;

/// `len` zeroed elements of `T`, in memory of this process or owned by
/// something else.
pub struct Region<T: Zeroed> {
    ptr: NonNull<T>,
    len: usize,
    owner: Owner_,
}

enum Owner_ {
    /// No memory (`len` elements of size 0, or `len` 0).
    Empty,
    /// Ours: a [`hugemem`] mapping (huge pages when the host has them).
    Own(#[allow(dead_code)] hugemem::Mapping),
    /// Someone else's (a BPF map's mmap).
    Foreign(#[allow(dead_code)] Owner),
}

// SAFETY: a region is a slice of `T: Sync + Send`; the owner is Send + Sync.
unsafe impl<T: Zeroed> Send for Region<T> {}
// SAFETY: as above (shared access is `&[T]` of atomics).
unsafe impl<T: Zeroed> Sync for Region<T> {}

impl<T: Zeroed> Region<T> {
    /// Zeroed memory of this process for table `name`, from [`hugemem`]:
    /// lookups hit the first level at random, so with 4 KiB pages nearly
    /// every lookup is a TLB miss, with 2 MiB pages the whole 64 MiB tbl24
    /// is 32 TLB entries. Touched up front (no page faults while routing).
    /// Fails only under `hugepages = "require"` without enough huge pages,
    /// or when memory cannot be had at all.
    pub fn heap(name: &'static str, len: usize) -> Result<Region<T>, FibError> {
        let layout = Layout::array::<T>(len)
            .map_err(|_| FibError::Memory(format!("{name}: {len} elements overflow")))?;
        if layout.size() == 0 {
            return Ok(Region {
                ptr: NonNull::dangling(),
                len,
                owner: Owner_::Empty,
            });
        }
        let mem = hugemem::Mapping::new(name, layout.size())
            .map_err(|e| FibError::Memory(format!("{name}: {e}")))?;
        // Page aligned, so aligned for any table element.
        let ptr = NonNull::new(mem.as_ptr() as *mut T).expect("mapping is non-null");
        Ok(Region {
            ptr,
            len,
            owner: Owner_::Own(mem),
        })
    }

    /// Memory owned by `owner` (a mapping shared with another reader).
    ///
    /// # Safety
    /// `ptr` must be aligned for `T`, valid for reads and writes of `len`
    /// elements, zeroed, and stay so while `owner` lives; nothing else in
    /// this process may hold a Rust reference into it.
    pub unsafe fn from_raw(ptr: NonNull<T>, len: usize, owner: Owner) -> Region<T> {
        Region {
            ptr,
            len,
            owner: Owner_::Foreign(owner),
        }
    }

    /// True if the memory is this process's (not shared outside it).
    pub fn is_heap(&self) -> bool {
        !matches!(self.owner, Owner_::Foreign(_))
    }
}

impl<T: Zeroed> std::ops::Deref for Region<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: valid for `len` elements while `self` lives (constructors).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

/// Hands out the tables' memory by name.
pub trait TableMemory {
    /// `len` zeroed elements for table `name` (one of [`names`]).
    fn region<T: Zeroed>(&mut self, name: &'static str, len: usize) -> Result<Region<T>, FibError>;
}

/// Every table on the heap (the default, and what a router without the
/// XDP tier uses).
#[derive(Debug, Default, Clone, Copy)]
pub struct Heap;

impl TableMemory for Heap {
    fn region<T: Zeroed>(&mut self, name: &'static str, len: usize) -> Result<Region<T>, FibError> {
        Region::heap(name, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::Relaxed;
    use std::sync::Arc;

    #[test]
    fn heap_regions_are_zeroed_and_writable() {
        let r: Region<AtomicU32> = Region::heap("t_zeroed", 1 << 20).unwrap();
        assert!(r.is_heap() && r.len() == 1 << 20);
        assert!(r.iter().step_by(4097).all(|a| a.load(Relaxed) == 0));
        r[12345].store(7, Relaxed);
        assert_eq!(r[12345].load(Relaxed), 7);
        let empty: Region<AtomicU64> = Region::heap("t_empty", 0).unwrap();
        assert!(empty.is_empty());
    }

    #[test]
    fn a_foreign_region_lives_as_long_as_its_owner() {
        let backing: Arc<Vec<AtomicU64>> = Arc::new((0..16).map(|_| AtomicU64::new(0)).collect());
        let ptr = NonNull::new(backing.as_ptr() as *mut AtomicU64).unwrap();
        // SAFETY: the Arc keeps the vector alive and nothing else refers
        // into it mutably.
        let r = unsafe { Region::from_raw(ptr, 16, Box::new(backing.clone())) };
        assert!(!r.is_heap());
        r[3].store(9, Relaxed);
        assert_eq!(backing[3].load(Relaxed), 9);
        assert_eq!(Arc::strong_count(&backing), 2);
        drop(r);
        assert_eq!(Arc::strong_count(&backing), 1);
    }
}
