//! Network-namespace testbeds for softrouter's integration tests and the
//! RFC 2544 benchmark.
//!
//! Everything here builds *isolated* test networks (RFC 6815, requirement
//! R16): every namespace and veth pair is created by this process, carries a
//! process-unique name (`sr<pid%10000>x<counter>...`), uses only the
//! benchmarking ranges 198.18.0.0/15 and 2001:2::/48, and is removed again
//! on `Drop` (also when a test panics) or by [`cleanup_all`] from a signal
//! handler. Nothing ever touches the root namespace's interfaces or routes:
//! veth pairs are created directly inside their namespaces
//! (`ip -n A link add X type veth peer name Y netns B`).
//!
//! Layout:
//! - [`netns`]: [`Netns`] (one namespace; run commands inside it) and
//!   [`VethPair`] (a veth between two namespaces, optionally multi-queue),
//!   plus the process-wide registry and [`cleanup_all`].
//! - [`link`]: an interface's MAC address, read back from the kernel
//!   (veth ends get random ones) and parsed/formatted.
//! - [`cpu_latency`]: the CPUs kept out of deep idle for a run (PM QoS).
//! - [`journal`]: what this process changed (namespaces, global
//!   settings), on disk, so the next process undoes it after a SIGKILL.
//! - [`placement`]: how far apart the host placed two CPUs (a cache
//!   line's round trip), and waiting for the near placement.
//! - [`napi`]: threaded NAPI: a veth end's receive work in kthreads
//!   pinned to its owner's CPUs (the tester's at a real-time priority).
//! - [`rps`]: a veth end's receive processing on its owner's CPUs (so
//!   each side of a veth pays for its own receive work).
//! - [`testbed`]: [`Testbed`], a builder composing namespaces and veths.
//! - [`topology`]: the standard topologies ([`three_hosts`], [`star`]) and
//!   their addressing plan.

pub mod cpu_latency;
pub mod journal;
pub mod link;
pub mod napi;
pub mod netns;
pub mod placement;
mod root;
pub mod rps;
pub mod shield;
pub mod testbed;
pub mod topology;

pub use netns::{
    cleanup_all, install_ctrlc_cleanup, netns_available, require_root, unique_name, Netns, VethPair,
};
pub use rps::steer_rps;
pub use testbed::{Testbed, TestbedBuilder};
pub use topology::three_hosts_addr;
pub use topology::{
    star, star_with, three_hosts, three_hosts_with, RouterMode, Star, StarPort, ThreeHosts,
    TopologyOptions,
};
