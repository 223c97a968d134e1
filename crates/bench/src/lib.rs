//! softrouter's RFC 2544 benchmark: the procedures, with no packet I/O.
//!
//! The bench is four crates, each depending only on those before it, so
//! cargo itself keeps the layers apart:
//!
//! - `bench` (this crate, `softrouter-bench`): the network-independent
//!   core, tested against the simulated DUT;
//! - `traffic` (`softrouter-traffic`): the tester engine (generators,
//!   receivers, calibration) on real ports and the tester's XDP programs;
//! - `dut` (`softrouter-dut`): the DUT launchers (softrouter, linux,
//!   command, external) on their namespace testbed, producing the traffic
//!   plan and DUT probes; it does not use the engine, nor the engine it;
//! - `bench_cli` (`softrouter-bench-cli`): one run of the bench and the
//!   command line, linked by the `softrouter` binary's `bench` feature.
//!
//! The core's modules; `settings` uses nothing but the frame sizes, and
//! the modules form no cycle (`tests/modules.rs` checks both, and the
//! other bench crates' modules for cycles too):
//!
//! - `packet::test_frame` (not here: the packet crate, so that this core
//!   builds without the tester's BPF programs and clang): RFC 2544
//!   Appendix C test frames, build / patch / parse, shared with the
//!   tester's XDP programs.
//! - [`sizes`]: frame sizes, IMIX, theoretical rates.
//! - [`settings`]: every option, typed, loadable from and savable to an
//!   experiment TOML file, and validated there.
//! - [`analyzer`]: exact loss / reorder / duplicate counts and latency.
//! - [`sysstat`]: DUT CPU, interrupt and softirq rates from `/proc`.
//! - [`plan`]: the contract between the DUT launchers and the engine.
//! - [`search`]: the `Trial` trait and the RFC 2544 procedures
//!   (loss series, back-to-back, recovery, latency).
//! - [`throughput`]: the NDR and PDR from one MLRsearch-style search.
//! - [`sim`]: a simulated DUT (and tester) implementing `Trial`.
//! - [`results`]: the results schema, JSON/CSV writers; [`repeat`]: the
//!   median and range of repeated runs (`--repeat N`); [`tables`]:
//!   terminal tables; [`plot`]: SVG charts; [`html`]: the HTML report
//!   (`softrouter report`), one self-contained page.
//! - [`suite`]: the tests of a `Settings` in order, against one `Trial`.

pub mod analyzer;
pub(crate) mod chart;
pub mod html;
pub mod plan;
pub mod plot;
pub mod repeat;
pub mod results;
pub mod search;
pub mod settings;
pub mod sim;
pub mod sizes;
pub mod suite;
pub mod sysstat;
pub mod tables;
pub mod throughput;
