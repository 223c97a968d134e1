//! The program's table maps as the FIB's memory, and the kernel's grace
//! periods for the program as a reader.

use std::collections::HashSet;
use std::ptr::NonNull;

use anyhow::{bail, Result};
use fib::memory::{names, Region, TableMemory, Zeroed};
use fib::FibError;

use crate::layout::{neigh, TABLE_VALUE};
use crate::Sizes;

/// The neighbour entries' map (one 64-byte entry per next-hop id).
pub const NEIGH: &str = "neigh";

/// Bytes of each shared table map, from the FIB's capacities.
fn table_bytes(s: &Sizes) -> [(&'static str, u64); 8] {
    let (u32s, u64s) = (4u64, 8u64);
    [
        (names::LPM4_TBL24, (1 << 24) * u32s),
        (names::LPM4_TBL8, u64::from(s.lpm4_tbl8_groups) * 256 * u32s),
        (names::LPM6_TBL24, (1 << 24) * u32s),
        (names::LPM6_TBL8, u64::from(s.lpm6_tbl8_groups) * 256 * u32s),
        (names::NH_DESC, u64::from(s.next_hops) * u64s),
        (names::NH_GROUPS, u64::from(s.groups) * u64s),
        (names::NH_MEMBERS, u64::from(s.group_members) * u32s),
        (NEIGH, u64::from(s.next_hops) * neigh::SIZE as u64),
    ]
}

/// `max_entries` of every shared map (the loader sets them).
pub(crate) fn map_entries(s: &Sizes) -> Result<Vec<(&'static str, u32)>> {
    table_bytes(s)
        .into_iter()
        .map(|(name, bytes)| {
            let value = if name == NEIGH {
                neigh::SIZE
            } else {
                TABLE_VALUE
            } as u64;
            let n = bytes.div_ceil(value).max(1);
            match u32::try_from(n) {
                Ok(n) => Ok((name, n)),
                Err(_) => bail!("table {name} of {bytes} bytes is too large for a BPF map"),
            }
        })
        .collect()
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
        if !self.given.insert(name) {
            return Err(FibError::Memory(format!("{name} handed out twice")));
        }
        let value = if name == NEIGH {
            neigh::SIZE
        } else {
            TABLE_VALUE
        };
        let entries = (bytes as usize).div_ceil(value).max(1);
        let mapped = self
            .obj
            .mmap(name, value, entries)
            .map_err(|e| FibError::Memory(format!("{name}: {e:#}")))?;
        let ptr = NonNull::new(mapped.as_ptr() as *mut T)
            .ok_or_else(|| FibError::Memory(format!("{name}: null mapping")))?;
        // SAFETY: the mapping is page-aligned, holds `bytes >= want`
        // bytes, is zeroed (a new array map) and lives as long as the
        // MmapArray that the region owns; `given` keeps it from being
        // handed out twice.
        Ok(unsafe { Region::from_raw(ptr, len, Box::new(mapped)) })
    }
}

impl MapMemory<'_> {
    /// The neighbour entries: one `T` (the dataplane's `NeighEntry`, 64
    /// bytes with the layout in [`neigh`]) per next-hop id.
    pub fn neighbours<T: Zeroed>(&mut self) -> Result<Region<T>, FibError> {
        if std::mem::size_of::<T>() != neigh::SIZE || std::mem::align_of::<T>() > 4096 {
            return Err(FibError::Memory(format!(
                "a neighbour entry must be {} bytes, not {}",
                neigh::SIZE,
                std::mem::size_of::<T>()
            )));
        }
        self.region(NEIGH, self.sizes.next_hops as usize)
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
