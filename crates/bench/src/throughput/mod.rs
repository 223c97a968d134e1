//! Throughput as RFC 9971 (Multiple Loss Ratio Search) defines it: one
//! search serves several [`SearchGoal`]s, and each goal's result is its
//! relevant lower and upper bounds and its conditional throughput.
//!
//! Why RFC 9971 and not RFC 2544's binary search: on a host whose
//! scheduler stalls the DUT for a millisecond now and then, veth's
//! 256-frame ring overflows at random, one lost frame failed a zero-loss
//! trial, and the search landed wherever a stall happened: the same
//! command gave zero-loss rates ten times apart. RFC 9971 counts the
//! host's noise as part of the system under test and classifies a load
//! from the *sum* of trial durations there against a goal exceed ratio,
//! so a rare stall no longer decides a load while a DUT that loses frames
//! at every trial still makes it an upper bound. The strict RFC 2544
//! goal (zero loss, zero exceed ratio, 60 s) stays available by name.
//!
//! Layout: [`classify`] holds what the RFC specifies about one load (its
//! appendices A and B, tested on the RFC's worked example); [`search`]
//! chooses the loads and durations (the RFC leaves that to the
//! implementation); this file holds the types and the result.
//!
//! # Tester limits and measurement faults
//!
//! A trial the tester spoiled (`measurement_fault`: frames lost in its
//! own receive ring, frames its generator did not send, a long host
//! pause) says nothing about the system under test where the fault could
//! change a goal's verdict: it is run again, at most [`MAX_REPEATS`]
//! times, and the discarded attempts are kept in the records
//! (`discarded`) and counted (`measurement_repeats`). A trial still
//! limited by the tester after that (or flagged tester-limited by the
//! achieved-rate check) counts as high-loss at its load, as the RFC
//! recommends for an offered load far from the intended one, unless its
//! verdict for the goal is known anyway: the DUT's own loss already made
//! it high-loss, or the load was offered as asked (`load_held`) and even
//! the whole loss, the tester's drops included, is low. Such a load is marked
//! `tester_limited`, and a goal whose relevant upper bound is one is a
//! lower bound of the DUT's throughput, flagged so.

pub mod classify;
mod search;
#[cfg(test)]
mod tests;
pub mod window;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::search::TrialRecord;
pub use crate::settings::SearchGoal;
use crate::sizes::FrameSize;
pub use classify::{Class, LoadSums};
pub use search::throughput;

/// The lowest load the search tries, frames/s (RFC 9971's Min Load):
/// far below any maximum rate, so that a slow DUT (a debug build, a
/// loaded machine) is measured rather than reported as forwarding
/// nothing.
pub const MIN_RATE_FPS: f64 = 1_000.0;

/// At most this many streams per search (a stream is one trial, or the
/// windows of [`ThroughputConfig::stream_seconds`]): a DUT whose loss has
/// nothing to do with the load could otherwise keep the bounds moving.
pub const MAX_TRIALS: usize = 300;

/// The shortest stream the bench sends for throughput trials, s: trials
/// of a goal shorter than this are its windows ([`window`]'s docs).
pub const STREAM_SECONDS: f64 = 1.0;

/// A trial with a measurement fault is run again at most this many times.
pub const MAX_REPEATS: u32 = 2;

/// Throughput search settings (R7, R8).
#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputConfig {
    /// Frame size or mix.
    pub size: FrameSize,
    /// The maximum load: line rate or the tester's calibrated maximum
    /// (R2; RFC 9971's Max Load).
    pub max_rate_fps: f64,
    /// The goals, in order; the first is the one the other tests start
    /// from.
    pub goals: Vec<SearchGoal>,
    /// Achieved-rate tolerance before a trial counts as tester-limited, %.
    pub rate_tolerance_pct: f64,
    /// The shortest stream sent, s: a trial shorter than this is one
    /// window of a stream of such trials at the same load, counted by the
    /// stream's loss timeline ([`window`]'s docs), but a stream holds no
    /// more trials than the goal's duration sum; 0: every trial its own
    /// stream.
    pub stream_seconds: f64,
}

/// One load as a goal saw it at the end of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadResult {
    /// The intended load, frames/s per port.
    pub fps: f64,
    /// Lower bound, upper bound or undecided.
    pub class: Class,
    /// Trials there (discarded ones not counted; each window of a stream
    /// is one).
    pub trials: u32,
    /// Windows that did not count: the tester could decide them (its
    /// receive drops in their stream, a load it did not offer as asked;
    /// [`window`]'s docs).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub spoiled_windows: u32,
    /// Their duration sums for this goal.
    pub sums: LoadSums,
    /// The tester, not the DUT, could not hold this load.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tester_limited: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The result of one goal (RFC 9971's Goal Result, with this
/// implementation's flags).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GoalResult {
    /// The goal.
    pub goal: Option<SearchGoal>,
    /// Conditional throughput at the relevant lower bound, frames/s per
    /// port: the figure to compare (RFC 9971 recommends it for
    /// repeatability); `None` when no load was a lower bound.
    pub fps: Option<f64>,
    /// The relevant lower bound: the highest load below the relevant
    /// upper bound classified as a lower bound.
    pub lower_fps: Option<f64>,
    /// The relevant upper bound: the lowest load classified as an upper
    /// bound; `None` when none was (the maximum load was a lower bound).
    pub upper_fps: Option<f64>,
    /// Both bounds exist and lie within the goal width (RFC 9971's
    /// regular result); otherwise the result is irregular and says why
    /// by its other fields.
    pub regular: bool,
    /// Layer-2 bit rate at `fps` (with FCS).
    pub l2_bps: Option<f64>,
    /// Wire bit rate at `fps` (with preamble and gap).
    pub wire_bps: Option<f64>,
    /// `fps` as % of the maximum load.
    pub pct_of_max: Option<f64>,
    /// The DUT's throughput may be higher: no load above the lower bound
    /// was an upper bound (the maximum load passed), or the only upper
    /// bound was the tester's.
    pub lower_bound: bool,
    /// The tester, not the DUT, ended the search (the relevant upper
    /// bound is a load the tester could not hold): `fps` is a lower bound.
    pub tester_limited: bool,
    /// Why it was tester-limited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tester_limit_reason: Option<String>,
    /// The loss ratio, %, that the conditional throughput was taken at
    /// (the exceed-ratio quantile of the lower bound's trials).
    pub loss_at_bound_pct: Option<f64>,
    /// Every load the search measured, as this goal classified it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loads: Vec<LoadResult>,
}

impl GoalResult {
    /// The goal's name (`?` for a result without one).
    pub fn name(&self) -> &str {
        self.goal.as_ref().map_or("?", |g| g.name.as_str())
    }
}

/// Result of the throughput search.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThroughputResult {
    /// The maximum load searched from.
    pub max_rate_fps: f64,
    /// One result per goal, in the goals' order.
    pub goals: Vec<GoalResult>,
    /// Trials run again because the tester spoiled them.
    #[serde(default)]
    pub measurement_repeats: u32,
    /// Every trial (moved to `TestResult::trials` in results files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trials: Vec<TrialRecord>,
}

impl ThroughputResult {
    /// The result of the goal named `name`.
    pub fn goal(&self, name: &str) -> Option<&GoalResult> {
        self.goals.iter().find(|g| g.name() == name)
    }

    /// The first goal's result: the rate latency, back-to-back and
    /// recovery start from.
    pub fn first(&self) -> Option<&GoalResult> {
        self.goals.first()
    }
}
