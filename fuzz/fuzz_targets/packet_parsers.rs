//! Feeds arbitrary bytes to every checked constructor, getter and
//! `Repr::parse` in the packet crate; any panic is a bug.
//!
//! The walk itself lives in crates/packet/tests/support/walk.rs so that
//! the stable-Rust test `fuzz_replay` runs exactly the same code.
#![no_main]

use libfuzzer_sys::fuzz_target;

include!("../../crates/packet/tests/support/walk.rs");

fuzz_target!(|data: &[u8]| {
    walk(data);
});
