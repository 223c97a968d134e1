//! cargo-fuzz target `bench_frame`: the body is `fuzz/harness/bench_frame.rs` (what it
//! checks is documented there and in fuzz/README.md), shared with the stable
//! test `crates/softrouter/tests/fuzz_targets.rs` so the two cannot drift.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../harness/bench_frame.rs"]
mod harness;

fuzz_target!(|data: &[u8]| harness::run(data));
