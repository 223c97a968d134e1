//! softrouter's RFC 2544 benchmark: the network-independent core.
//!
//! The traffic engine (generator/receiver threads on AF_XDP) and the DUT
//! launchers live on top of this crate's [`search::Trial`] trait; everything
//! here can be tested without a network:
//!
//! - [`frame`]: RFC 2544 Appendix C test frames, build / patch / parse.
//! - [`sizes`]: frame sizes, IMIX, theoretical rates.
//! - [`analyzer`]: exact loss / reorder / duplicate counts and latency.
//! - [`search`]: the `Trial` trait and the RFC 2544 procedures.
//! - [`sim`]: a simulated DUT (and tester) implementing `Trial`.
//! - [`sysstat`]: DUT CPU, interrupt and softirq rates from `/proc`.
//! - [`results`]: the results schema, JSON/CSV writers, terminal tables.
//! - [`settings`]: all options, loadable from an experiment TOML file.
//! - [`dut`]: the DUT launchers (softrouter, linux, command, external) on
//!   their namespace testbed, producing the traffic plan and DUT probes.

pub mod analyzer;
pub mod cli;
pub mod dut;
pub use tester::frame;
pub mod plan;
pub mod plot;
pub mod results;
pub mod search;
pub mod settings;
pub mod sim;
pub mod sizes;
pub mod suite;
pub mod sysstat;
pub mod traffic;
