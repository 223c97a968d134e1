//! What one trial sends: a constant rate for a duration, a burst, or
//! phases back to back (system recovery), of one frame size or a mix.
//!
//! Why plain data: the procedures build specs, the engines (the traffic
//! engine, the simulated DUT) run them, and results files record them, so
//! they serialize as they are (durations as seconds).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::sizes::FrameSize;

/// Serde helper: a `Duration` as floating-point seconds.
pub mod secs_f64 {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    /// Serialize as seconds.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    /// Deserialize from seconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }
}

/// One constant-rate phase of a multi-phase trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// Offered rate per port, frames/s.
    pub rate_fps: f64,
    /// How long.
    #[serde(with = "secs_f64")]
    pub duration: Duration,
}

/// What to send in one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialSpec {
    /// Offered rate per port, frames/s (for a burst: the rate inside the
    /// burst, normally the maximum rate, i.e. minimum gap).
    pub rate_fps: f64,
    /// Trial duration (ignored for bursts and phases).
    #[serde(with = "secs_f64")]
    pub duration: Duration,
    /// Frame size or mix.
    pub size: FrameSize,
    /// Send exactly this many frames back to back, once (R11).
    pub burst: Option<u64>,
    /// If not empty: send these phases back to back instead of
    /// `rate_fps`/`duration` (R12), and report a loss timeline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<Phase>,
    /// Bucket width of the loss timeline (phases only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline_interval: Option<Duration>,
    /// Also time the DUT's control plane over the trial (the bench asks
    /// what an operator's tools ask, [`super::Trial::times_control_plane`]).
    /// Only in a trial of its own: the asking is the bench's work and
    /// would otherwise disturb the trials it does not measure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sample_control: bool,
}

impl TrialSpec {
    /// A constant-rate trial.
    pub fn constant(rate_fps: f64, duration: Duration, size: FrameSize) -> TrialSpec {
        TrialSpec {
            rate_fps,
            duration,
            size,
            burst: None,
            phases: Vec::new(),
            timeline_interval: None,
            sample_control: false,
        }
    }

    /// Frames a perfect generator would send for this spec.
    pub fn planned_frames(&self) -> u64 {
        if let Some(b) = self.burst {
            return b;
        }
        if !self.phases.is_empty() {
            return self
                .phases
                .iter()
                .map(|p| (p.rate_fps * p.duration.as_secs_f64()).round() as u64)
                .sum();
        }
        (self.rate_fps * self.duration.as_secs_f64()).round() as u64
    }
}
