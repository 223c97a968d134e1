//! cargo-fuzz target `routes_file`: the body is `fuzz/harness/routes_file.rs` (what it
//! checks is documented there and in fuzz/README.md), shared with the stable
//! test `crates/softrouter/tests/fuzz_targets.rs` so the two cannot drift.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../harness/routes_file.rs"]
mod harness;

fuzz_target!(|data: &[u8]| harness::run(data));
