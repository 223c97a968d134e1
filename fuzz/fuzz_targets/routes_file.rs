//! fib's route file parser: never panics; every line it accepts is
//! reported once, lines it rejects name a line number inside the input, and
//! an accepted route re-parses from its canonical text to the same route.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
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
            let lines = data.split(|&b| b == b'\n').count();
            assert!(e.line >= 1 && e.line <= lines, "{e} of {lines} lines");
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        for line in text.lines() {
            let _ = fib::routes_file::parse_line(line);
        }
    }
});
