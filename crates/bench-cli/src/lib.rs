//! `softrouter bench`: the thin layer over the RFC 2544 bench.
//!
//! - [`cli`]: the command line (and the experiment file it may name),
//!   parsed into typed [`bench::settings::Settings`];
//! - [`run`]: one run of the bench as those settings describe it: CPU
//!   placement, the tester's calibration, each DUT on a fresh testbed with
//!   its tests, and the outputs (tables, JSON, CSV, chart, HTML report);
//! - [`report`]: `softrouter report`, the HTML page of results files;
//! - `host_probe`: how fast the host was before each DUT's run.
//!
//! Why a crate of its own: it is the one part that uses every other part
//! of the bench, and the one the `softrouter` binary links, behind its
//! default `bench` feature; a router built with `--no-default-features`
//! links none of the bench. The public API is what the binary needs
//! ([`cli::BenchArgs`], [`cli::run`]) and a run from typed settings
//! ([`run::run`]).

pub mod cli;
mod host_probe;
pub mod report;
pub mod run;
