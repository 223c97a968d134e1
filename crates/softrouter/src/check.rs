//! `softrouter check-config`: everything that can be checked without
//! opening ports: the file itself, and the routes file it names.

use std::path::Path;

/// Validates the configuration and its routes file; returns a one-line
/// summary, or the error naming file, line and field.
pub fn check(path: &Path) -> Result<String, String> {
    let cfg = config::load(path).map_err(|e| e.to_string())?;
    let mut bulk = 0;
    if let Some(f) = &cfg.routes_file {
        let file = std::fs::File::open(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let routes = fib::routes_file::parse(std::io::BufReader::new(file))
            .map_err(|e| format!("{}:{}: {}", f.display(), e.line, e.message))?;
        bulk = routes.len();
    }
    Ok(format!(
        "{} ports, {} routes, {} routes from file, {} neighbors, {} workers",
        cfg.ports.len(),
        cfg.routes.len(),
        bulk,
        cfg.neighbors.len(),
        cfg.router.workers
    ))
}
