//! The cargo-fuzz targets' bodies on stable Rust, so `cargo test
//! --workspace` exercises them on a machine without cargo-fuzz: each
//! target's body (`fuzz/harness/<target>.rs`, the very file the fuzz
//! target compiles; `packet_parsers` uses `crates/packet/tests/support/
//! walk.rs`, as its target does) runs over the committed seed corpus
//! (`fuzz/seeds/<target>/`) and then over [`RANDOM_INPUTS`] inputs derived
//! from a fixed seed: mutations of the seeds (bit flips, byte sets,
//! insertions, deletions, truncations, splices) and random bytes.
//!
//! A failing input is written to the temp folder and named in the panic,
//! ready for `cargo fuzz run <target> <file>`.

#[path = "../../../fuzz/harness/bench_frame.rs"]
mod bench_frame;
#[path = "../../../fuzz/harness/config.rs"]
mod config_target;
#[path = "../../../fuzz/harness/pcap.rs"]
mod pcap;
#[path = "../../../fuzz/harness/pipeline.rs"]
mod pipeline;
#[path = "../../../fuzz/harness/routes_file.rs"]
mod routes_file;
#[path = "../../packet/tests/support/walk.rs"]
mod walk;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::path::PathBuf;

/// Random inputs per target after the seeds.
const RANDOM_INPUTS: usize = 2000;

fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The committed seeds of `target` (sorted by name: a fixed order).
fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = fuzz_dir().join("seeds").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|e| e != "py"))
        .collect();
    files.sort();
    files.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// One mutation of a seed, or random bytes.
fn mutate(rng: &mut SmallRng, seeds: &[Vec<u8>]) -> Vec<u8> {
    if seeds.is_empty() || rng.gen_ratio(1, 8) {
        let n = rng.gen_range(0..512);
        return (0..n).map(|_| rng.gen()).collect();
    }
    let mut v = seeds[rng.gen_range(0..seeds.len())].clone();
    for _ in 0..rng.gen_range(1..=8) {
        let len = v.len();
        match rng.gen_range(0..7) {
            0 if len > 0 => {
                let i = rng.gen_range(0..len);
                v[i] ^= 1 << rng.gen_range(0..8);
            }
            1 if len > 0 => {
                let i = rng.gen_range(0..len);
                v[i] = *[0u8, 0xff, 0x7f, 0x80, b'\n', b'"', b'#', b'/']
                    .get(rng.gen_range(0..8))
                    .unwrap();
            }
            2 => {
                let i = rng.gen_range(0..=len);
                let n = rng.gen_range(1..16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                v.splice(i..i, bytes);
            }
            3 if len > 0 => {
                let i = rng.gen_range(0..len);
                let n = rng.gen_range(1..=(len - i).min(32));
                v.drain(i..i + n);
            }
            4 if len > 0 => v.truncate(rng.gen_range(0..len)),
            5 => {
                let other = &seeds[rng.gen_range(0..seeds.len())];
                let at = rng.gen_range(0..=v.len());
                let from = rng.gen_range(0..=other.len());
                v.truncate(at);
                v.extend_from_slice(&other[from..]);
            }
            _ if len > 0 => {
                // Repeat a slice (long lines, many records).
                let i = rng.gen_range(0..len);
                let n = rng.gen_range(1..=(len - i).min(64));
                let s = v[i..i + n].to_vec();
                for _ in 0..rng.gen_range(1..8) {
                    v.extend_from_slice(&s);
                }
            }
            _ => {}
        }
    }
    v
}

/// Runs `body` over the seeds of `seed_dir` and [`RANDOM_INPUTS`] more.
fn exercise(target: &str, seed_dir: &str, body: fn(&[u8])) {
    let seeds = seeds(seed_dir);
    assert!(!seeds.is_empty(), "no seeds for {target}");
    let mut rng = SmallRng::seed_from_u64(0x5eed_0012);
    let inputs = seeds
        .iter()
        .cloned()
        .chain((0..RANDOM_INPUTS).map(|_| mutate(&mut rng, &seeds)));
    for (i, input) in inputs.enumerate() {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&input)));
        if r.is_err() {
            let path = std::env::temp_dir().join(format!("fuzz-{target}-crash-{i}"));
            std::fs::write(&path, &input).unwrap();
            panic!(
                "fuzz target {target}: input {i} failed; saved to {} (cd fuzz && cargo fuzz run {target} {})",
                path.display(),
                path.display()
            );
        }
    }
}

#[test]
fn config() {
    exercise("config", "config", config_target::run);
}

#[test]
fn routes_file() {
    exercise("routes_file", "routes_file", routes_file::run);
}

#[test]
fn pcap() {
    exercise("pcap", "pcap", pcap::run);
}

#[test]
fn bench_frame() {
    exercise("bench_frame", "bench_frame", bench_frame::run);
}

#[test]
fn pipeline() {
    exercise("pipeline", "pipeline", pipeline::run);
}

#[test]
fn packet_parsers() {
    exercise("packet_parsers", "packet_parsers", walk::walk);
}
