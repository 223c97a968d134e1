//! softrouter FIB: longest-prefix match and next hops for the fast path.
//!
//! * [`lpm4`]: IPv4 DIR-24-8 (one memory access up to /24, two beyond).
//! * [`lpm6`]: IPv6 multibit trie, 24-bit first level then 8-bit strides.
//! * [`lpm`]: what the two share (tables, handles, the writer's routes).
//! * [`nexthop`]: next hops and ECMP groups; [`flow_hash`] picks the member.
//! * [`routes_file`]: route file parser and the shared test table loader.
//! * [`mod@reference`]: a slow, obviously correct LPM for tests.
//! * [`memory`]: where the readers' tables live (heap, or memory shared
//!   with the XDP fast path); [`ExternalReader`]: grace periods for a
//!   reader the kernel runs.
//!
//! Every table has one writer (the control thread, `&mut self`) and any
//! number of lock-free readers (workers). Readers never block, allocate or
//! see a half-written entry: entries are single atomic words, new structure
//! is filled before it is published with a `Release` store, and memory that
//! readers may still be in is reused only after a grace period
//! ([`qsbr`](crate::lpm::Reader::quiescent)).
//!
//! Memory on the full table (901,899 IPv4 + 160,147 IPv6 prefixes, measured
//! by `tests/full_table.rs`):
//!
//! | table | reader memory | writer shadow (depths) | tbl8 groups |
//! |-------|---------------|------------------------|-------------|
//! | IPv4  | 64.4 MiB (64 MiB tbl24 + 451 KiB) | 16.1 MiB | 451 |
//! | IPv6  | 101.2 MiB (64 MiB tbl24 + 37.2 MiB) | 25.3 MiB | 38,096 |
//!
//! plus the writers' route maps (one `HashMap` per prefix length). The tbl8
//! pools are allocated zeroed at their configured size; only touched groups
//! become resident. Lookups of a /48 touch 4 cache lines (tbl24 and three
//! groups), of a /24-or-shorter IPv4 route one.

pub mod entry;
pub mod error;
pub mod flow_hash;
pub mod lpm;
pub mod lpm4;
pub mod lpm6;
pub mod memory;
pub mod nexthop;
pub mod prefix;
mod qsbr;
pub mod reference;
pub mod routes_file;
pub mod target;

pub use error::FibError;
pub use flow_hash::{flow_hash_v4, flow_hash_v6};
pub use lpm4::{Lpm4Config, Lpm4Reader, Lpm4Writer};
pub use lpm6::{Lpm6Config, Lpm6Reader, Lpm6Writer};
pub use nexthop::{
    GroupId, HopClass, NextHop, NextHopEpoch, NextHopId, NextHopKind, NextHopReader, NextHopTable,
    NextHopWriter,
};
pub use prefix::{Prefix, Prefix4, Prefix6, PrefixParseError};
pub use qsbr::{ExternalReader, GraceStart};
pub use reference::ReferenceLpm;
pub use target::Target;
