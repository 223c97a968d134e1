//! fib's route file parser: never panics; every line it accepts is
//! reported once, lines it rejects name a line number inside the input, and
//! an accepted route re-parses from its canonical text to the same route.
//! The configuration's streamed routes-file check (`config::routes_file`,
//! against the pipeline target's `FUZZ_CONFIG`) on the same bytes: no
//! panic, an error names a line inside the input and quotes little.
//!
//! Shared by the cargo-fuzz target (fuzz/fuzz_targets/routes_file.rs) and
//! the stable test crates/softrouter/tests/fuzz_targets.rs.

use std::path::Path;
use std::sync::OnceLock;

fn fuzz_config() -> &'static config::Config {
    static C: OnceLock<config::Config> = OnceLock::new();
    C.get_or_init(|| {
        config::parse(dataplane::fuzzing::FUZZ_CONFIG, Path::new("fuzz.toml")).expect("fuzz config")
    })
}

/// The target's body: any bytes; panics on a broken invariant.
pub fn run(data: &[u8]) {
    let lines = data.split(|&b| b == b'\n').count();
    match fib::routes_file::parse(data) {
        Ok(routes) => {
            for (prefix, nh) in routes {
                let line = format!("{prefix} {nh}");
                let again = fib::routes_file::parse_line(&line)
                    .unwrap_or_else(|e| panic!("{line:?} does not re-parse: {e}"));
                assert_eq!(again, Some((prefix, nh)), "{line:?}");
            }
        }
        Err(e) => {
            assert!(e.line >= 1 && e.line <= lines, "{e} of {lines} lines");
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        for line in text.lines() {
            let _ = fib::routes_file::parse_line(line);
        }
    }
    match config::routes_file::check_reader(fuzz_config(), Path::new("r.txt"), data, 1 << 16) {
        Ok(s) => assert!(s.routes <= lines, "{s:?} from {lines} lines"),
        Err(e) => {
            assert!(e.line >= 1 && e.line <= lines, "{e} of {lines} lines");
            assert!(e.to_string().len() < 1000, "{} bytes", e.to_string().len());
        }
    }
}
