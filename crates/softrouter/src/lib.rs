//! The `softrouter` program: configuration in, pinned workers running, and
//! statistics out. The packet work itself lives in the `dataplane` crate;
//! this crate opens the ports, places queues and workers on cores, decides
//! how idle workers wait, and reports.

pub mod affinity;
pub mod bell;
pub mod check;
pub mod cli;
pub mod controller;
pub mod ctl;
pub mod engine;
pub mod iflock;
pub mod kernel;
pub mod kernel_neigh;
pub mod kernel_sync;
pub mod neigh_log;
pub mod notify;
pub mod ports;
pub mod reload;
pub mod stats_file;
pub mod tier;
pub mod waiting;
pub mod watch;
