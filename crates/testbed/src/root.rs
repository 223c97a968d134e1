//! Whether this process runs as root: asked both by the namespaces
//! ([`crate::netns`]) and by the journal of what they change
//! ([`crate::journal`]), which the namespaces write, so it sits below both.

/// Whether we run as root.
pub fn is_root() -> bool {
    // Read the effective uid from /proc (no libc dependency needed).
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        })
        .unwrap_or(false)
}
