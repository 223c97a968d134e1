//! Compiles `bpf/fwd.bpf.c` (see `softrouter-bpf-build`).

fn main() {
    bpf_build::compile(&["fwd"]);
}
