//! Compiles a crate's BPF programs, `bpf/<name>.bpf.c`, with clang
//! (Debian's, installed by `scripts/setup.sh`) into `$OUT_DIR/<name>.bpf.o`,
//! for the crate to embed with `aya::include_bytes_aligned!`.
//!
//! Why at build time: the programs are source like the rest of the project
//! (reviewed, diffed, tested); the objects are never committed. Why a crate
//! of its own: every crate with BPF programs (the tester, the router's XDP
//! fast path, the floor DUT) builds them the same way, and a build
//! dependency with no dependencies of its own costs nothing to compile.
//!
//! Every program is compiled with this crate's `include/` on its include
//! path: the project's one C vocabulary, `sr_layout.h` (packet offsets,
//! FIB and neighbour words, the fast path's map values, the floor DUT's
//! hop and the tester generator's shared memory, generated from the Rust
//! constants and structs by `crates/fastpath/tests/vocabulary.rs`), and
//! `csum.h`, the one checksum helper.

use std::path::PathBuf;
use std::process::Command;

/// Compile `bpf/<name>.bpf.c` for every name (call from `build.rs`).
///
/// # Panics
/// If clang is missing or fails (the build cannot go on; the message says
/// how to install it).
pub fn compile(programs: &[&str]) {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    println!("cargo:rerun-if-env-changed=CLANG");
    let include = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include");
    for dir in [PathBuf::from("bpf"), include.clone()] {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = entry.expect("directory entry").path();
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    // asm/types.h lives under the multiarch include directory on Debian.
    let multiarch = format!("/usr/include/{}-linux-gnu", std::env::consts::ARCH);
    for name in programs {
        let src = format!("bpf/{name}.bpf.c");
        let obj = out.join(format!("{name}.bpf.o"));
        // cc.sh (for scripts that compile a revision outside cargo)
        // repeats these flags: keep the two in step.
        let status = Command::new(&clang)
            .args([
                "-O2", "-g", "-target", "bpf", "-mcpu=v3", "-Wall", "-Werror",
            ])
            .arg(format!("-I{multiarch}"))
            .arg(format!("-I{}", include.display()))
            .args(["-c", &src, "-o"])
            .arg(&obj)
            .status()
            .unwrap_or_else(|e| {
                panic!(
                    "running {clang} to compile {src}: {e}\n\
                     the BPF programs need clang and libbpf-dev: run scripts/setup.sh"
                )
            });
        assert!(status.success(), "{clang} failed on {src} (see above)");
    }
}
