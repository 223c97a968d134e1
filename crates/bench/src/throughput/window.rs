//! Short trials as the windows of one stream.
//!
//! Why: a goal whose final trial duration is short (the quick preset's
//! 0.1 s) would spend most of its time between trials if each trial were
//! run on its own: every trial pays for its learning frames, pause and
//! drain (0.6-0.7 s here). So a trial shorter than the search's stream
//! length ([`ThroughputConfig::stream_seconds`]) is sent as part of one
//! stream of such trials back to back at the same load (no more of them
//! than the goal's duration sum asks for: a goal decided by one short
//! trial gets one). The stream's loss timeline (each frame counted in the
//! window it was due in, by its sequence number, however late it
//! arrived) gives every window its own sent and lost counts: each window
//! is one trial of the goal's duration.
//!
//! The windows are not separated by a pause: a window starts with
//! whatever the one before left queued. At a load the DUT holds, that is
//! nothing. Above it, a DUT buffer of B frames hides an excess of less
//! than 2·B frames a second from a 1 s stream (it fills in more than half
//! the stream): 0.05 % for veth's 256-frame ring at 1 Mpps.
//!
//! [`ThroughputConfig::stream_seconds`]: super::ThroughputConfig::stream_seconds

use crate::search::TrialOutcome;

/// How many windows of `trial_s` seconds make a stream of at least
/// `stream_s` seconds (1 when the trial is that long already).
pub fn count(trial_s: f64, stream_s: f64) -> u32 {
    if trial_s.is_nan() || trial_s <= 0.0 || trial_s >= stream_s {
        return 1;
    }
    // 1.0 / 0.1 is 10.000000000000002: not a reason for an eleventh window.
    (stream_s / trial_s - 1e-9).ceil().max(1.0) as u32
}

/// The stream's `n` windows as `(sent, lost)`, from its loss timeline;
/// `None` when there is no timeline or it does not account for the
/// stream's frames exactly (the stream then counts as one trial).
///
/// A frame due a hair after the last window's end (rounding of the
/// schedule) counts in the last window.
///
/// Also what calibration judges the tester by (`traffic::calibrate`).
pub fn split(o: &TrialOutcome, n: u32) -> Option<Vec<(u64, u64)>> {
    let t = o.timeline.as_ref()?;
    let n = n as usize;
    if n < 2 || t.sent.len() != t.lost.len() || t.sent.is_empty() {
        return None;
    }
    let mut w: Vec<(u64, u64)> = vec![(0, 0); n];
    for (i, (&s, &l)) in t.sent.iter().zip(&t.lost).enumerate() {
        let k = i.min(n - 1);
        w[k].0 += s;
        w[k].1 += l;
    }
    let (sent, lost) = w.iter().fold((0, 0), |(s, l), &(ws, wl)| (s + ws, l + wl));
    (sent == o.sent && lost == o.lost && w.iter().all(|&(s, l)| l <= s)).then_some(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::LossTimeline;

    fn outcome(sent: &[u64], lost: &[u64]) -> TrialOutcome {
        TrialOutcome {
            sent: sent.iter().sum(),
            lost: lost.iter().sum(),
            timeline: Some(LossTimeline {
                interval_ns: 100_000_000,
                sent: sent.to_vec(),
                lost: lost.to_vec(),
                last_lost_ns: None,
            }),
            ..TrialOutcome::default()
        }
    }

    #[test]
    fn a_second_holds_ten_tenths_and_a_long_trial_is_one() {
        assert_eq!(count(0.1, 1.0), 10);
        assert_eq!(count(0.3, 1.0), 4);
        assert_eq!(count(1.0, 1.0), 1);
        assert_eq!(count(60.0, 1.0), 1);
        assert_eq!(count(0.1, 0.0), 1);
    }

    #[test]
    fn windows_are_the_timeline_buckets_with_a_late_frame_in_the_last() {
        let o = outcome(&[100, 100, 99, 1], &[0, 7, 0, 1]);
        assert_eq!(split(&o, 3), Some(vec![(100, 0), (100, 7), (100, 1)]));
    }

    #[test]
    fn a_timeline_that_misses_frames_is_not_split() {
        let mut o = outcome(&[100, 100], &[0, 3]);
        o.lost += 1;
        assert_eq!(split(&o, 2), None);
        let mut o = outcome(&[100, 100], &[0, 3]);
        o.sent += 1;
        assert_eq!(split(&o, 2), None);
        let mut o = outcome(&[100, 100], &[0, 3]);
        o.timeline = None;
        assert_eq!(split(&o, 2), None);
        assert_eq!(split(&outcome(&[100, 100], &[0, 3]), 1), None);
    }
}
