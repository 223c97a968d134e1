//! The BPF objects built from `bpf/*.bpf.c` (see `build.rs`); they are
//! loaded with [`bpf::load`] (map sizes set per trial plan).

/// The generator (`bpf/gen.bpf.c`).
pub const GEN_OBJ: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/gen.bpf.o"));
/// The counter (`bpf/count.bpf.c`).
pub const COUNT_OBJ: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/count.bpf.o"));

pub use bpf::{load, load_raw_tracepoints, Loaded};
/// The receive-gap meter (`bpf/gap.bpf.c`), a raw tracepoint program.
pub const GAP_OBJ: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/gap.bpf.o"));
