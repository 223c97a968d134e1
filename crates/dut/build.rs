//! Compiles the floor DUT's XDP program, `bpf/floor.bpf.c` (see
//! `softrouter-bpf-build`), which `src/floor.rs` embeds.

fn main() {
    bpf_build::compile(&["floor"]);
}
