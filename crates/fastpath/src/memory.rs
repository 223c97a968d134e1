//! The program's table maps as the FIB's memory, and the kernel's grace
//! periods for the program as a reader.

use std::collections::HashSet;
use std::ptr::NonNull;

use anyhow::{bail, Result};
use fib::memory::{names, Region, TableMemory, Zeroed};
use fib::FibError;

use crate::layout::TABLE_VALUE;
use crate::Sizes;

/// The neighbour entries' map: one entry per next-hop id, of the C
/// layout of `struct fp_neigh` (the dataplane's `NeighEntry`).
pub const NEIGH: &str = "neigh";

/// Bytes of each FIB table the program reads, from the FIB's capacities.
fn table_bytes(s: &Sizes) -> [(&'static str, u64); 7] {
    let (u32s, u64s) = (4u64, 8u64);
    [
        (names::LPM4_TBL24, (1 << 24) * u32s),
        (names::LPM4_TBL8, u64::from(s.lpm4_tbl8_groups) * 256 * u32s),
        (names::LPM6_TBL24, (1 << 24) * u32s),
        (names::LPM6_TBL8, u64::from(s.lpm6_tbl8_groups) * 256 * u32s),
        (names::NH_DESC, u64::from(s.next_hops) * u64s),
        (names::NH_GROUPS, u64::from(s.groups) * u64s),
        (names::NH_MEMBERS, u64::from(s.group_members) * u32s),
    ]
}

/// `max_entries` of every shared map (the loader sets them): the tables
/// in [`TABLE_VALUE`]-byte values, the neighbour entries one a next hop.
pub(crate) fn map_entries(s: &Sizes) -> Result<Vec<(&'static str, u32)>> {
    let mut entries = Vec::new();
    for (name, bytes) in table_bytes(s) {
        match u32::try_from(bytes.div_ceil(TABLE_VALUE as u64).max(1)) {
            Ok(n) => entries.push((name, n)),
            Err(_) => bail!("table {name} of {bytes} bytes is too large for a BPF map"),
        }
    }
    entries.push((NEIGH, s.next_hops.max(1)));
    Ok(entries)
}

/// Hands out the program's maps as FIB table memory (see
/// [`crate::FastPath::memory`]).
pub struct MapMemory<'a> {
    obj: &'a bpf::Loaded,
    sizes: Sizes,
    given: HashSet<&'static str>,
}

impl<'a> MapMemory<'a> {
    pub(crate) fn new(obj: &'a bpf::Loaded, sizes: Sizes) -> MapMemory<'a> {
        MapMemory {
            obj,
            sizes,
            given: HashSet::new(),
        }
    }

    /// `len` values of `T` in map `name`, which has `entries` values of
    /// `value` bytes, each map handed out once.
    fn mapped<T: Zeroed>(
        &mut self,
        name: &'static str,
        len: usize,
        value: usize,
        entries: usize,
    ) -> Result<Region<T>, FibError> {
        if !self.given.insert(name) {
            return Err(FibError::Memory(format!("{name} handed out twice")));
        }
        let mapped = self
            .obj
            .mmap(name, value, entries)
            .map_err(|e| FibError::Memory(format!("{name}: {e:#}")))?;
        let ptr = NonNull::new(mapped.as_ptr() as *mut T)
            .ok_or_else(|| FibError::Memory(format!("{name}: null mapping")))?;
        // SAFETY: the mapping is page-aligned, holds `entries * value`
        // bytes, which the callers checked to cover `len` values of `T`,
        // is zeroed (a new array map) and lives as long as the MmapArray
        // that the region owns; `given` keeps it from being handed out
        // twice.
        Ok(unsafe { Region::from_raw(ptr, len, Box::new(mapped)) })
    }
}

impl TableMemory for MapMemory<'_> {
    fn region<T: Zeroed>(&mut self, name: &'static str, len: usize) -> Result<Region<T>, FibError> {
        let Some(&(_, bytes)) = table_bytes(&self.sizes).iter().find(|(n, _)| *n == name) else {
            // A table the program does not read (gateway addresses).
            return Region::heap(name, len);
        };
        let want = len as u64 * std::mem::size_of::<T>() as u64;
        if want > bytes {
            return Err(FibError::Memory(format!(
                "{name}: {want} bytes asked for, the fast path's map holds {bytes}"
            )));
        }
        let entries = (bytes as usize).div_ceil(TABLE_VALUE).max(1);
        self.mapped(name, len, TABLE_VALUE, entries)
    }
}

impl MapMemory<'_> {
    /// The neighbour entries: one `T` (the dataplane's `NeighEntry`) per
    /// next-hop id. `T` must have the size of the map's values, `struct
    /// fp_neigh`, which the program's build asserts against `NeighEntry`.
    pub fn neighbours<T: Zeroed>(&mut self) -> Result<Region<T>, FibError> {
        let value = self
            .obj
            .value_size(NEIGH)
            .map_err(|e| FibError::Memory(format!("{NEIGH}: {e:#}")))?;
        if std::mem::size_of::<T>() != value || std::mem::align_of::<T>() > 4096 {
            return Err(FibError::Memory(format!(
                "a neighbour entry must be {value} bytes, not {}",
                std::mem::size_of::<T>()
            )));
        }
        let n = self.sizes.next_hops as usize;
        self.mapped(NEIGH, n, value, n.max(1))
    }
}

/// One grace period of the kernel for the program as a reader of the
/// tables: every program run that began before this call has ended when it
/// returns, and `reader` is told so.
///
/// How: `membarrier(MEMBARRIER_CMD_GLOBAL)`, which the kernel completes
/// with `synchronize_rcu()`; XDP programs run inside RCU read-side
/// sections (the driver's NAPI poll), so that is exactly the wait needed.
/// It takes milliseconds: call it from the control thread, not a worker.
/// On a `nohz_full` kernel the call is refused; the error says so and the
/// registration keeps holding back reuse (safe; the writer runs out of
/// room rather than reuse early).
pub fn grace_period(reader: &fib::ExternalReader) -> std::io::Result<()> {
    const MEMBARRIER_CMD_GLOBAL: libc::c_int = 1;
    let start = reader.start();
    // SAFETY: membarrier with a command and no pointers.
    let r = unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    reader.passed(&start);
    Ok(())
}
