//! Compiles the BPF programs in `bpf/` (see `softrouter-bpf-build`) into
//! objects that `src/programs.rs` embeds.

fn main() {
    bpf_build::compile(&["gen", "count", "gap"]);
}
