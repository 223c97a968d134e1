//! Compiles the BPF programs in `bpf/` with clang (Debian's, installed by
//! `scripts/setup.sh`) into objects that `src/programs.rs` embeds.
//!
//! Why at build time: the programs are source like the rest of the project
//! (reviewed, diffed, tested); the objects are never committed.

use std::path::PathBuf;
use std::process::Command;

const PROGRAMS: &[&str] = &["gen", "count"];

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    println!("cargo:rerun-if-env-changed=CLANG");
    for entry in std::fs::read_dir("bpf").expect("bpf/") {
        let p = entry.expect("bpf/ entry").path();
        println!("cargo:rerun-if-changed={}", p.display());
    }
    // asm/types.h lives under the multiarch include directory on Debian.
    let multiarch = format!("/usr/include/{}-linux-gnu", std::env::consts::ARCH);
    for name in PROGRAMS {
        let src = format!("bpf/{name}.bpf.c");
        let obj = out.join(format!("{name}.bpf.o"));
        let status = Command::new(&clang)
            .args([
                "-O2", "-g", "-target", "bpf", "-mcpu=v3", "-Wall", "-Werror",
            ])
            .arg(format!("-I{multiarch}"))
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
