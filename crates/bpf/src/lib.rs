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

pub use load::{load, Loaded};
pub use mmap::MmapArray;
pub use test_run::{run_once, XDP_ABORTED, XDP_DROP, XDP_PASS, XDP_REDIRECT, XDP_TX};
