//! The [`Trial`] trait and the RFC 2544 procedures over it (R7-R12).
//!
//! Why a trait: the procedures (binary search, loss series, back-to-back,
//! recovery, latency) are pure logic over trial outcomes. Keeping them
//! behind `&mut dyn Trial` lets them be tested against the simulated DUT in
//! [`crate::sim`] with known answers, and lets the traffic engine (AF_XDP
//! generator + receivers, written separately) plug in unchanged.
//!
//! Layout: the trial contract is [`spec`] (what to send) and [`outcome`]
//! (what was measured, the record of a trial, and [`run_checked`], the
//! tester-limit check every procedure runs its trials through); each
//! procedure has its own file: [`loss_series`](mod@loss_series),
//! [`back_to_back`](mod@back_to_back), [`recovery`](mod@recovery),
//! [`latency`](mod@latency). The throughput search, the largest, lives in
//! [`crate::throughput`].
//!
//! # What a `Trial` implementation must guarantee
//!
//! * R6: send learning frames and wait before the trial; after the last
//!   frame wait the drain time; read counters only then.
//! * Count `sent` as frames actually handed to the wire, per the analyzer
//!   rules (`lost = sent - unique received`).
//! * Report `achieved_tx_rate_fps` (frames sent / time actually spent
//!   sending) and set `tester_limited` with a reason when its own
//!   transmit path backed up, fell behind the schedule or dropped frames
//!   before the wire. The procedures here additionally flag any trial whose
//!   achieved rate is below the target by more than the rate tolerance.
//! * For [`TrialSpec::phases`] (system recovery, R12) send the phases back
//!   to back and fill [`TrialOutcome::timeline`]: per-interval sent/lost
//!   counts and the transmit time offset of the last lost frame, all
//!   measured from the start of the first phase on the generator's clock
//!   (the generator knows each sequence number's send time; the analyzer
//!   gives the lost sequence numbers).
//!
//! # Tester limits are never DUT results
//!
//! A trial that is tester-limited says nothing about the DUT at the target
//! rate, only at the rate the tester achieved. The throughput search
//! ([`crate::throughput`]) uses that: loss-free at the achieved rate means
//! "at least X" (the search stops, `tester_limited` set, reports print a
//! lower bound); loss at the achieved rate is a real failure there, and
//! the search goes on below it, where the tester is fast enough.

mod back_to_back;
mod latency;
mod loss_series;
mod outcome;
mod recovery;
mod spec;

pub use back_to_back::{back_to_back, BackToBackConfig, BackToBackResult};
pub use latency::{latency, LatencyConfig, LatencyResult, CONTROL_PURPOSE};
pub use loss_series::{loss_series, LossPoint, LossSeriesConfig, LossSeriesResult};
pub use outcome::{run_checked, LossSplit, LossTimeline, Noise, TrialOutcome, TrialRecord};
pub use recovery::{recovery, RecoveryConfig, RecoveryResult};
pub use spec::{secs_f64, Phase, TrialSpec};

use anyhow::Result;

/// A device under test plus the tester that drives it.
pub trait Trial {
    /// Run one trial (learning, trial, drain, counters) and report it.
    fn run(&mut self, spec: &TrialSpec) -> Result<TrialOutcome>;
    /// What the last trial was for and what it said, in words (`search
    /// ndr: low loss`), for progress lines; told by the procedure that
    /// ran it.
    fn verdict(&mut self, _text: &str) {}
    /// Whether the DUT has a control plane a trial can time
    /// ([`TrialSpec::sample_control`]; softrouter's `ctl` and metrics).
    fn times_control_plane(&self) -> bool {
        false
    }
}
