//! Neighbour events for the operator's log: resolved, moved to another
//! MAC, failed, gone.
//!
//! The workers resolve neighbours in the fast path, where a log line (a
//! `write(2)` and formatting) has no place, and a hostile link could turn
//! per-packet events into a flood of them. So the supervisor looks
//! instead: once a second it compares the neighbour table with what it
//! saw last and logs the differences, at most [`MAX_LINES`] a round (the
//! rest summed in one line). Reachable and stale are the same here (a
//! stale entry is still used and probed; logging every ageing would be
//! noise).

use std::collections::HashMap;
use std::net::IpAddr;

use dataplane::inspect::NeighInfo;

/// Lines a round may log before the rest are only counted.
const MAX_LINES: usize = 20;

/// What was seen of one neighbour.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seen {
    Resolved([u8; 6]),
    Incomplete,
    Failed,
}

fn seen(n: &NeighInfo) -> Seen {
    match (n.state, n.mac) {
        ("failed", _) => Seen::Failed,
        (_, Some(m)) => Seen::Resolved(m),
        _ => Seen::Incomplete,
    }
}

#[derive(Default)]
pub struct NeighLog {
    last: HashMap<(usize, IpAddr), Seen>,
}

impl NeighLog {
    /// Logs what changed since the last call; `port_name` names ports.
    pub fn update(&mut self, now: &[NeighInfo], port_name: impl Fn(usize) -> String) {
        let mut lines = 0usize;
        let mut more = 0usize;
        let mut next = HashMap::with_capacity(now.len());
        for n in now {
            let key = (n.port, n.address);
            let s = seen(n);
            next.insert(key, s);
            let before = self.last.get(&key).copied();
            if before == Some(s) || (before.is_none() && s == Seen::Incomplete) {
                continue;
            }
            if lines == MAX_LINES {
                more += 1;
                continue;
            }
            lines += 1;
            let (ip, port) = (n.address, port_name(n.port));
            match (before, s) {
                (Some(Seen::Resolved(old)), Seen::Resolved(m)) => tracing::warn!(
                    neighbour = %ip, port, old = mac(&old), new = mac(&m),
                    "neighbour {ip} moved to another MAC"
                ),
                (_, Seen::Resolved(m)) => tracing::info!(
                    neighbour = %ip, port, mac = mac(&m), state = n.state,
                    "neighbour {ip} resolved"
                ),
                (_, Seen::Failed) => {
                    tracing::warn!(neighbour = %ip, port, "neighbour {ip}: resolution failed")
                }
                (_, Seen::Incomplete) => {
                    tracing::info!(neighbour = %ip, port, "neighbour {ip}: resolving again")
                }
            }
        }
        for key in self.last.keys() {
            if !next.contains_key(key) {
                tracing::debug!(neighbour = %key.1, port = port_name(key.0), "neighbour {} forgotten", key.1);
            }
        }
        if more > 0 {
            tracing::info!("{more} more neighbour changes in the last second");
        }
        self.last = next;
    }
}

fn mac(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}
