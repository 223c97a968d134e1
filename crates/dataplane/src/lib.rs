//! softrouter's dataplane: everything a packet meets between "received"
//! and "sent".
//!
//! * [`Router`] builds the routing state from the configuration and is its
//!   single writer; [`Shared`] is what workers read, lock-free.
//! * [`Worker`] owns a pool, its RX queues and one TX queue per port, and
//!   runs the pipeline to completion on bursts of up to 64 packets
//!   (`worker.rs`: Ethernet -> input checks -> bulk FIB lookup -> TTL ->
//!   neighbor -> TX; `local.rs`: ARP, ND, echo; `icmp.rs`: errors with a
//!   token bucket; `frag.rs`: IPv4 fragmentation).
//! * [`WorkerStats`] are per-worker counters; see [`stats`] for the
//!   accounting identity every frame satisfies.
//!
//! Documented behaviour choices:
//! * One 802.1Q tag is accepted and removed: the packet is forwarded
//!   untagged (the router has no VLAN interfaces). Stacked tags are
//!   dropped (`unsupported_ethertype`).
//! * IPv4 options are validated (lengths) and forwarded unmodified: Record
//!   Route and Timestamp are not filled in. Fragmentation copies options
//!   with the copy flag to non-first fragments.
//! * ICMP errors are limited by a token bucket *per worker* of
//!   `router.icmp_rate` per second (1 s of burst), so the router as a whole
//!   sends at most `workers x icmp_rate` per second. They are sent back out
//!   the incoming port to the frame's Ethernet source (the previous hop),
//!   from the router's address on that port.
//! * Host entries for connected destinations are created on the slow path
//!   under the control mutex (see [`neighbor`]); held packets live in
//!   per-worker preallocated hold queues.

pub mod drop;
mod frag;
pub mod fuzzing;
mod icmp;
mod local;
pub mod neighbor;
pub mod router;
pub mod stats;
pub mod tsc;
pub mod wire;
mod worker;

pub use drop::DropReason;
pub use router::{Router, Shared};
pub use stats::{
    accounting_violations, assert_accounting, PortCounters, StageCycles, StatsSnapshot, WorkerStats,
};
pub use worker::Worker;
