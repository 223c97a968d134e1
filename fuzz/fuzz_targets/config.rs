//! The TOML configuration parser and validator (`config::parse`): any
//! text either parses into a `Config` or gives an error that names the
//! file and a line inside the text; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let path = Path::new("fuzz.toml");
    match config::parse(&text, path) {
        Ok(cfg) => {
            // Debug-format the whole model: touches every field.
            let _ = format!("{cfg:?}");
        }
        Err(e) => {
            let lines = text.lines().count() + 1;
            assert!(e.line <= lines, "error line {} beyond {lines} lines: {e}", e.line);
            let msg = e.to_string();
            assert!(msg.starts_with("fuzz.toml:"), "{msg}");
        }
    }
});
