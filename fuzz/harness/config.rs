//! The TOML configuration parser and validator (`config::parse`): any
//! text either parses into a `Config` or gives an error that names the
//! file and a line inside the text, with a short message (user input is
//! quoted as an excerpt); never a panic. An accepted configuration also
//! checks the input as its routes file (`config::routes_file`, the
//! validator `run` and `check-config` share): no panic, errors name a line
//! inside the input.
//!
//! Shared by the cargo-fuzz target (fuzz/fuzz_targets/config.rs) and the
//! stable test crates/softrouter/tests/fuzz_targets.rs.

use std::path::Path;

/// Longest error message accepted (a message quotes at most excerpts).
const MAX_MESSAGE: usize = 1000;

/// The target's body: any bytes; panics on a broken invariant.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let path = Path::new("fuzz.toml");
    match config::parse(&text, path) {
        Ok(cfg) => {
            // Debug-format the whole model: touches every field.
            let _ = format!("{cfg:?}");
            let routes = Path::new("fuzz-routes.txt");
            if let Err(e) = config::routes_file::check_reader(&cfg, routes, data, 1 << 16) {
                let lines = data.split(|&b| b == b'\n').count();
                assert!(
                    e.line <= lines,
                    "routes line {} beyond {lines} lines: {e}",
                    e.line
                );
                assert!(
                    e.to_string().len() < MAX_MESSAGE,
                    "{} bytes",
                    e.to_string().len()
                );
            }
        }
        Err(e) => {
            let lines = text.lines().count() + 1;
            assert!(
                e.line <= lines,
                "error line {} beyond {lines} lines: {e}",
                e.line
            );
            let msg = e.to_string();
            assert!(msg.starts_with("fuzz.toml:"), "{msg}");
            assert!(
                msg.len() < MAX_MESSAGE,
                "{} bytes: {}",
                msg.len(),
                msg.chars().take(200).collect::<String>()
            );
        }
    }
}
