//! The one allocator of softrouter's big regions: the packet pool (which
//! is also the AF_XDP UMEM), the FIB's DIR-24-8 and IPv6 tables, the
//! next-hop and neighbour tables.
//!
//! Why: those regions are read at random per packet. On 4 KiB pages a
//! 64 MiB tbl24 is 16,384 TLB entries and nearly every lookup misses the
//! TLB; on 2 MiB pages it is 32. DPDK runs its mbufs and tables on huge
//! pages, and asking for transparent huge pages after the fact
//! (`madvise` on memory already touched, or on a range not 2 MiB aligned)
//! gets almost none. So each region is, in order of preference:
//!
//! 1. **explicit** 2 MiB huge pages (`MAP_HUGETLB`), when the host has
//!    enough free (`/sys/kernel/mm/hugepages/hugepages-2048kB`);
//! 2. **THP** that actually takes: a 2 MiB-aligned mapping advised with
//!    `MADV_HUGEPAGE` *before* the first touch, then touched (works with
//!    the system THP mode `madvise` or `always`);
//! 3. **small** 4 KiB pages.
//!
//! [`Policy`] (`[router] hugepages`) chooses: `auto` tries all three,
//! `require` only the first (and fails naming the region and the pages it
//! needs), `off` only the last (with `MADV_NOHUGEPAGE`, so `off` holds even
//! when the system THP mode is `always`). Regions under [`MIN_HUGE`] are
//! always on small pages: a 2 MiB page for a 4 KiB table wastes memory and
//! saves no TLB entry worth having.
//!
//! Every region is zeroed and touched when handed out (no page fault in
//! the fast path later), and registered by name while it lives, so
//! [`report`] can say per region how many bytes are on huge pages: the
//! explicit ones by construction, the THP ones from `/proc/self/smaps`
//! (`AnonHugePages` of the mapping), as the kernel may have given fewer
//! than asked for.

use std::collections::BTreeMap;
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

mod smaps;

/// The huge page size used (x86-64's and aarch64's default).
pub const HUGE_PAGE: usize = 2 << 20;
/// Regions smaller than this stay on small pages whatever the policy.
pub const MIN_HUGE: usize = 1 << 20;
/// A region at least this large that ends up on small pages is worth a
/// warning at start.
pub const WARN_SMALL: usize = 8 << 20;

const SMALL_PAGE: usize = 4096;
const NR_HUGEPAGES: &str = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
const FREE_HUGEPAGES: &str = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages";

/// Which pages the big regions may be on (`[router] hugepages`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Policy {
    /// Explicit huge pages, else THP, else small pages.
    #[default]
    Auto,
    /// Explicit huge pages or an error.
    Require,
    /// Small pages only.
    Off,
}

impl Policy {
    fn to_u8(self) -> u8 {
        self as u8
    }

    fn from_u8(v: u8) -> Policy {
        match v {
            1 => Policy::Require,
            2 => Policy::Off,
            _ => Policy::Auto,
        }
    }
}

/// What a region was mapped with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pages {
    /// `MAP_HUGETLB`, 2 MiB pages.
    Explicit,
    /// 2 MiB aligned and advised for THP before the first touch (how much
    /// the kernel gave is in [`report`]).
    Thp,
    /// 4 KiB pages.
    Small,
}

impl Pages {
    pub fn name(self) -> &'static str {
        match self {
            Pages::Explicit => "explicit",
            Pages::Thp => "thp",
            Pages::Small => "small",
        }
    }
}

/// Process-wide, set once at start from the configuration before the
/// regions are allocated (the tables are built deep inside the FIB and
/// the engine; threading the setting through every constructor would
/// change a dozen signatures for one startup choice).
static POLICY: AtomicU8 = AtomicU8::new(0);

pub fn set_policy(p: Policy) {
    POLICY.store(p.to_u8(), Ordering::Relaxed);
}

pub fn policy() -> Policy {
    Policy::from_u8(POLICY.load(Ordering::Relaxed))
}

/// A live region, for [`report`].
struct Live {
    id: u64,
    name: &'static str,
    addr: usize,
    len: usize,
    pages: Pages,
}

static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A zeroed, touched, page-aligned anonymous mapping of at least the size
/// asked for. Unmapped on drop.
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
    pages: Pages,
    id: u64,
}

// SAFETY: a private anonymous mapping owned by this value alone.
unsafe impl Send for Mapping {}
// SAFETY: shared access only hands out the pointer; users synchronise.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// `bytes` (> 0) for region `name` under the process policy.
    pub fn new(name: &'static str, bytes: usize) -> io::Result<Mapping> {
        Mapping::with_policy(name, bytes, policy())
    }

    /// As [`Mapping::new`] with an explicit policy.
    pub fn with_policy(name: &'static str, bytes: usize, policy: Policy) -> io::Result<Mapping> {
        if bytes == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name}: empty region"),
            ));
        }
        if bytes < MIN_HUGE {
            return Mapping::forced(name, bytes, Pages::Small);
        }
        match policy {
            Policy::Off => Mapping::forced(name, bytes, Pages::Small),
            Policy::Require => Mapping::forced(name, bytes, Pages::Explicit).map_err(|e| {
                let need = bytes.div_ceil(HUGE_PAGE);
                io::Error::new(
                    e.kind(),
                    format!(
                        "region {name}: {bytes} bytes need {need} free 2 MiB huge pages, {} free ({e}); \
                         reserve more (echo N > {NR_HUGEPAGES}) or set [router] hugepages = \"auto\"",
                        free_huge_pages().map_or("unknown".into(), |n| n.to_string())
                    ),
                )
            }),
            Policy::Auto => Mapping::forced(name, bytes, Pages::Explicit)
                .or_else(|_| Mapping::forced(name, bytes, Pages::Thp))
                .or_else(|_| Mapping::forced(name, bytes, Pages::Small)),
        }
    }

    /// Exactly one way of mapping, no fallback (what the tests force).
    pub fn forced(name: &'static str, bytes: usize, pages: Pages) -> io::Result<Mapping> {
        let (ptr, len) = match pages {
            Pages::Explicit => map_explicit(bytes)?,
            Pages::Thp => map_thp(bytes)?,
            Pages::Small => map_small(bytes)?,
        };
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let live = Live {
            id,
            name,
            addr: ptr.as_ptr() as usize,
            len,
            pages,
        };
        LIVE.lock().unwrap_or_else(|e| e.into_inner()).push(live);
        Ok(Mapping {
            ptr,
            len,
            pages,
            id,
        })
    }

    #[inline]
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Mapped length (the size asked for rounded up to the page size).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn pages(&self) -> Pages {
        self.pages
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        LIVE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|l| l.id != self.id);
        // SAFETY: unmapping exactly the mapping made by map_*.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Free 2 MiB huge pages on the host, if it says.
pub fn free_huge_pages() -> Option<u64> {
    std::fs::read_to_string(FREE_HUGEPAGES)
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn mmap(len: usize, flags: libc::c_int) -> io::Result<NonNull<u8>> {
    // SAFETY: anonymous private mapping; checked for MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(NonNull::new(p.cast()).expect("mmap returned null"))
}

/// Writes one byte per small page so every page is faulted in now, with
/// the advice already in place (a huge page per 2 MiB when THP takes).
fn touch(ptr: NonNull<u8>, len: usize) {
    for off in (0..len).step_by(SMALL_PAGE) {
        // SAFETY: inside the mapping; volatile so the store is not elided.
        unsafe { std::ptr::write_volatile(ptr.as_ptr().add(off), 0) };
    }
}

fn map_explicit(bytes: usize) -> io::Result<(NonNull<u8>, usize)> {
    let len = bytes.next_multiple_of(HUGE_PAGE);
    // hugetlb reserves at mmap time: ENOMEM here, never SIGBUS later.
    let p = mmap(len, libc::MAP_HUGETLB | libc::MAP_POPULATE)?;
    Ok((p, len))
}

fn map_thp(bytes: usize) -> io::Result<(NonNull<u8>, usize)> {
    let len = bytes.next_multiple_of(HUGE_PAGE);
    // Over-map by one huge page and trim, so the region is 2 MiB aligned
    // (THP only backs aligned 2 MiB ranges).
    let raw = mmap(len + HUGE_PAGE, 0)?;
    let start = raw.as_ptr() as usize;
    let aligned = start.next_multiple_of(HUGE_PAGE);
    let (head, tail) = (aligned - start, HUGE_PAGE - (aligned - start));
    // SAFETY: unmapping the unaligned head and the tail of our own mapping.
    unsafe {
        if head > 0 {
            libc::munmap(start as *mut libc::c_void, head);
        }
        if tail > 0 {
            libc::munmap((aligned + len) as *mut libc::c_void, tail);
        }
    }
    let p = NonNull::new(aligned as *mut u8).expect("aligned mapping");
    // SAFETY: the advice concerns our mapping and keeps its contents.
    if unsafe { libc::madvise(p.as_ptr().cast(), len, libc::MADV_HUGEPAGE) } != 0 {
        let e = io::Error::last_os_error(); // THP compiled out or disabled
                                            // SAFETY: our mapping, not handed out.
        unsafe { libc::munmap(p.as_ptr().cast(), len) };
        return Err(e);
    }
    touch(p, len);
    Ok((p, len))
}

fn map_small(bytes: usize) -> io::Result<(NonNull<u8>, usize)> {
    let len = bytes.next_multiple_of(SMALL_PAGE);
    let p = mmap(len, 0)?;
    // Keep `off` small pages even under the system THP mode `always`.
    // SAFETY: advice on our mapping. Failure (no THP at all) is harmless.
    unsafe { libc::madvise(p.as_ptr().cast(), len, libc::MADV_NOHUGEPAGE) };
    touch(p, len);
    Ok((p, len))
}

/// What one region (all live mappings of that name) got.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegionReport {
    pub region: &'static str,
    /// Live mappings of this name (one pool per worker, ...).
    pub mappings: usize,
    pub bytes: u64,
    /// On explicit (`MAP_HUGETLB`) 2 MiB pages.
    pub huge_explicit_bytes: u64,
    /// On transparent huge pages (`AnonHugePages` in `/proc/self/smaps`).
    pub huge_thp_bytes: u64,
}

impl RegionReport {
    pub fn small_bytes(&self) -> u64 {
        self.bytes - self.huge_explicit_bytes - self.huge_thp_bytes
    }
}

/// Per region name, the bytes mapped and on huge pages, sorted by name.
/// Reads `/proc/self/smaps` (not for the fast path; the statistics).
pub fn report() -> Vec<RegionReport> {
    let vmas = smaps::read_self();
    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let mut by_name: BTreeMap<&'static str, RegionReport> = BTreeMap::new();
    for l in live.iter() {
        let r = by_name.entry(l.name).or_insert_with(|| RegionReport {
            region: l.name,
            ..Default::default()
        });
        r.mappings += 1;
        r.bytes += l.len as u64;
        match l.pages {
            Pages::Explicit => r.huge_explicit_bytes += l.len as u64,
            Pages::Thp | Pages::Small => {
                r.huge_thp_bytes += smaps::anon_huge_in(&vmas, l.addr, l.addr + l.len)
            }
        }
    }
    by_name.into_values().collect()
}

/// One line per region of at least [`WARN_SMALL`] bytes whose memory is
/// mostly on small pages (for a warning at start).
pub fn small_page_warnings() -> Vec<String> {
    report()
        .into_iter()
        .filter(|r| r.bytes >= WARN_SMALL as u64 && r.small_bytes() * 2 > r.bytes)
        .map(|r| {
            format!(
                "region {}: {} of {} bytes on 4 KiB pages (policy {:?}; {} free 2 MiB huge pages, \
                 {} needed; reserve them in {NR_HUGEPAGES})",
                r.region,
                r.small_bytes(),
                r.bytes,
                policy(),
                free_huge_pages().map_or("unknown".into(), |n| n.to_string()),
                r.bytes.div_ceil(HUGE_PAGE as u64),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;
