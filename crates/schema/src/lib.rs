//! What crosses softrouter's parts: the documents one part writes and
//! another reads, as plain serde types with no datapath, socket or parser
//! behind them.
//!
//! * [`stats`] and [`report`]: the statistics file (`softrouter run
//!   --stats-json`, `ctl stats`), written by softrouter from the workers'
//!   counters, read by the metrics endpoint and the bench's softrouter
//!   launcher;
//! * [`protocol`]: the control socket's requests and responses
//!   (`softrouter ctl`, the bench's control-latency sampler);
//! * [`config_file`] (with [`addr`]): the configuration file's own shape,
//!   for programs that write one (the bench's softrouter launcher); the
//!   `config` crate validates it;
//! * [`dut_sample`]: what the bench's DUT probes measured over a trial
//!   (CPU, stage split, softrouter's counters, control latency), written
//!   by the launchers (`dut`) and read by the bench's report;
//! * [`dut_description`]: what a launcher says about the DUT it started
//!   and its final counters (a run's `meta.dut.config`).
//!
//! Why a crate of its own: a reader of one of these documents should not
//! link the part that writes it. The bench's DUT launchers read the
//! statistics file and write a configuration without the datapath, and the
//! control socket serves a report without depending on the workers that
//! count it. This crate depends on nothing of the workspace.

pub mod addr;
pub mod config_file;
pub mod dut_description;
pub mod dut_sample;
pub mod protocol;
pub mod report;
pub mod stats;
