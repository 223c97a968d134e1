//! The project's one way to use its BPF programs from Rust (the tester's
//! generator and counter, the router's XDP fast path):
//!
//! * [`load`]: load an object built by `softrouter-bpf-build`, with map
//!   sizes and globals set at load time;
//! * [`MmapArray`]: a `BPF_F_MMAPABLE` array map mapped into the process
//!   (shared memory with the program: no syscall per element);
//! * [`run_once`]: run an XDP program once on a frame with
//!   `BPF_PROG_TEST_RUN` (how the programs are tested).

mod load;
mod mmap;
mod test_run;

pub use load::{has_kernel_btf, load, load_raw_tracepoints, Loaded};
pub use mmap::MmapArray;
pub use test_run::{run_once, XDP_ABORTED, XDP_DROP, XDP_PASS, XDP_REDIRECT, XDP_TX};

/// CLOCK_MONOTONIC now, ns: the clock `bpf_ktime_get_ns` and
/// `bpf_ktime_get_coarse_ns` read, so user space and the programs compare
/// times directly (and what `std::time::Instant` uses on Linux).
#[inline]
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
