//! The bench's tester engine in the kernel: BPF programs written in C
//! (`bpf/`), compiled by clang at build time and loaded with aya.
//!
//! * [`gen`]: the XDP live-frame generator. One `BPF_PROG_TEST_RUN` call
//!   per trial sends every frame, paced by the program itself, out of the
//!   tester's veth ends, with no skb and no syscall per frame.
//! * [`count`]: the XDP counter on the tester's receiving ends: per-stream
//!   counts, a sequence bitmap, a latency histogram and IPDV, read through
//!   mmap after the drain.
//! * [`gap`]: the DUT's longest receive gap in a trial, from the
//!   `napi_poll` tracepoint (a raw tracepoint program, not XDP).
//!
//! Why in the kernel: on a small VM an skb-based generator (AF_PACKET)
//! tops out near 1 Mfps and the kernel DUT forwards about half that, so
//! the tester could not tell two DUTs apart; XDP frames reach 5-9 Mfps on
//! one vCPU.

pub mod count;
pub mod gap;
pub mod gen;
pub use bpf::MmapArray;
pub mod programs;
#[cfg(test)]
mod testutil;
mod timer;
