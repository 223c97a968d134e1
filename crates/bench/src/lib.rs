//! softrouter's RFC 2544 benchmark.
//!
//! Layers, bottom up. The core never uses the engine or the launchers,
//! `settings` uses nothing but the frame sizes, and the
//! modules form no cycle (`tests/modules.rs` checks all three):
//!
//! - The network-independent core, tested against the simulated DUT:
//!   - [`frame`]: RFC 2544 Appendix C test frames, build / patch / parse.
//!   - [`sizes`]: frame sizes, IMIX, theoretical rates.
//!   - [`settings`]: every option, typed, loadable from and savable to an
//!     experiment TOML file, and validated there.
//!   - [`analyzer`]: exact loss / reorder / duplicate counts and latency.
//!   - [`sysstat`]: DUT CPU, interrupt and softirq rates from `/proc`.
//!   - [`plan`]: the contract between the DUT launchers and the engine.
//!   - [`search`]: the `Trial` trait and the RFC 2544 procedures
//!     (loss series, back-to-back, recovery, latency).
//!   - [`throughput`]: the NDR and PDR from one MLRsearch-style search.
//!   - [`sim`]: a simulated DUT (and tester) implementing `Trial`.
//!   - [`results`]: the results schema, JSON/CSV writers; [`report`]:
//!     terminal tables; [`plot`]: SVG charts.
//!   - [`suite`]: the tests of a `Settings` in order, against one `Trial`.
//! - [`traffic`]: the tester engine (generators, receivers, calibration).
//!
//! The DUT launchers are the `softrouter-dut` crate (`dut`); one run of the
//! bench and the command line are the `softrouter-bench-cli` crate
//! (`bench_cli`), on top of all of these.

pub mod analyzer;
pub use tester::frame;
pub mod plan;
pub mod plot;
pub mod report;
pub mod results;
pub mod search;
pub mod settings;
pub mod sim;
pub mod sizes;
pub mod suite;
pub mod sysstat;
pub mod throughput;
pub mod traffic;
