//! Errors of the FIB writers and parsers.

use thiserror::Error;

/// Why a FIB update was refused. The tables are preallocated at creation
/// (the fast path never allocates), so running out of room is an error the
/// control plane must handle, not a reallocation.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FibError {
    /// Every tbl8 group is in use or still waiting for a grace period.
    #[error("tbl8 groups exhausted ({capacity} configured); raise tbl8_groups or let readers pass a quiescent point")]
    Tbl8Exhausted {
        /// Configured number of groups.
        capacity: u32,
    },
    /// A fixed-capacity table (next hops, groups, group members) is full.
    #[error("{what} capacity exhausted ({capacity})")]
    CapacityExhausted {
        /// Which table.
        what: &'static str,
        /// Its configured capacity.
        capacity: u32,
    },
    /// A prefix that cannot exist (length beyond the address width).
    #[error("invalid prefix: {0}")]
    InvalidPrefix(String),
    /// A target, next hop or group id that is out of range or unknown.
    #[error("invalid id: {0}")]
    InvalidId(String),
    /// The memory for a table could not be had (e.g. a shared BPF map
    /// could not be created or mapped).
    #[error("table memory: {0}")]
    Memory(String),
}
