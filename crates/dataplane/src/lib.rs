//! softrouter's dataplane: everything a packet meets between "received"
//! and "sent".
//!
//! * [`Router`] builds the routing state from the configuration and is its
//!   single writer; [`Shared`] is what workers read, lock-free
//!   (`shared.rs`, with the slow-path entry points).
//! * [`Worker`] owns a pool, its RX queues and one TX queue per port, and
//!   runs the pipeline to completion on bursts of up to 64 packets. Each
//!   stage has its own file and gets only what it needs from the worker
//!   (a `Cx`, `cx.rs`: routing state, time, pool, TX staging, counters).
//!   The stages call each other one way, in this order:
//!   `worker.rs`: the round loop, RX, bulk FIB lookup;
//!   `input.rs`: Ethernet filter, 802.1Q removal, header checks;
//!   `forward.rs`: next hop, TTL, MTU;
//!   `local.rs`: ARP, ND, echo, port unreachable;
//!   `hold.rs`: neighbour resolution, hold queues and solicitations;
//!   `output.rs`: MAC rewrite, hand-off to `frag.rs` (IPv4
//!   fragmentation);
//!   `tx.rs`: TX staging;
//!   `icmp.rs`: errors, functions over the `Cx`, limited by a token bucket
//!   (`tokens.rs`).
//! * [`neighbor`] documents the neighbour model (what is learned, states,
//!   timers, per-port bounds, rate limits and garbage collection);
//!   `control/neigh_table.rs` is its control side (in `Control`, `control/mod.rs`,
//!   the writer state behind `Shared::control`, with `control/gateways.rs`).
//! * [`WorkerStats`] are per-worker counters ([`stats`]); see
//!   [`accounting`] for the identity every frame satisfies and its check,
//!   and [`report`] for the statistics file softrouter writes from them.
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
//!   under the control mutex, bounded per port and garbage collected (see
//!   [`neighbor`]); held packets live in per-worker preallocated hold
//!   queues.
//! * Directed broadcasts (to a connected subnet's network or broadcast
//!   address) are not forwarded (RFC 2644; `directed_broadcast`), nor are
//!   packets to a connected subnet's IPv6 Subnet-Router anycast address
//!   (`subnet_router_anycast`).

pub mod accounting;
mod control;
mod cx;
pub mod drop;
mod forward;
mod frag;
pub mod fuzzing;
mod hold;
mod icmp;
mod input;
pub mod inspect;
pub mod kernel_neigh;
mod local;
pub mod neighbor;
mod output;
pub mod report;
pub mod router;
pub mod shared;
pub mod stats;
mod tokens;
pub mod tsc;
mod tx;
mod worker;

pub use accounting::{accounting_violations, assert_accounting};
pub use control::gateways::RouteSource;
pub use drop::DropReason;
pub use neighbor::NeighLimits;
pub use router::{Router, RouterPlan, TableSizes};
pub use shared::{PortCtx, Shared};
pub use stats::{PortCounters, SnapshotChecks, StageCycles, StatsSnapshot, WorkerStats};
pub use worker::Worker;
