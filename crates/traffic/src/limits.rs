//! Whether the tester, not the DUT, limited a trial, and the trial's
//! outcome that says so: the achieved rate per port, the reasons (a
//! generator behind its schedule, the backend's own drops, a missed target
//! rate, frames the DUT forwarded but the tester's ports refused), the
//! counts, where the lost frames were lost ([`split_loss`]), whether the
//! tester spoiled the trial (`measurement_fault`) and the host's noise.
//! Shared by both backends (the user-space trial and `xdp::trial`).
//!
//! Why it matters: a tester-limited result is never the DUT's (R6 and the
//! search's contract, see [`bench::search`]); a trial the tester spoiled
//! says nothing of the DUT and is run again.

use super::gen::{GenPhase, GenResult};
use super::NetTrial;
use bench::analyzer::LatencySummary;
use bench::plan::DutSample;
use bench::search::{LossSplit, LossTimeline, Noise, TrialOutcome, TrialSpec};

/// How a trial's generator kept to its schedule, as both backends (AF_XDP
/// and xdp) report it.
pub(crate) struct SendTiming {
    /// Frames sent per port.
    pub port_frames: Vec<u64>,
    pub start_ns: u64,
    pub end_ns: u64,
    /// The schedule's length.
    pub ideal_ns: u64,
    pub fell_behind: bool,
    pub max_lag_ns: u64,
    /// How long the host's stalls paused the offered load (moves of the
    /// schedule of at least `tester::gen::LONG_PAUSE_NS`).
    pub paused_ns: u64,
}

/// The share of a trial the generator's pauses may take before the trial
/// is a measurement fault ([`pause_fault`]): a pause gives the DUT a rest, and past a tenth of the
/// trial the load it met is no longer the one asked for. Below it the
/// pauses are noise (reported with the trial, `noise.generator_paused_us`)
/// and the achieved rate is over the time spent sending. Why not the rate
/// tolerance (1 %): the kernel's fair server runs a starved task for
/// 7-12 ms once a second on the tester's CPU here, about 1 % of every
/// trial, which would make every trial the tester's.
pub(crate) const MAX_PAUSED_SHARE: f64 = 0.1;

/// What the receive side counted in a trial.
pub(crate) struct Counted {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub reordered: u64,
    pub duplicates: u64,
    pub non_test: u64,
    pub latency: LatencySummary,
    pub timeline: Option<LossTimeline>,
}

/// What a backend saw beside the counts: where frames went, whether its
/// generator did what it was asked, and the host's noise.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// Frames the DUT's full receive ring refused (xdp: the tester ends'
    /// `xdp_xmit_errors`; AF_PACKET: the peer's refusals).
    pub dut_ring: u64,
    /// Frames the tester's own receive path dropped (its veth ring, its
    /// AF_XDP ring); the DUT ends' `tx_dropped` are read by [`outcome`].
    pub tester_rx: u64,
    /// How the tester failed other than by its receive drops (frames its
    /// generator did not send, errors; see [`faults`]): each a
    /// measurement fault.
    pub faults: Vec<String>,
    /// The host kept the generator off its CPU too long ([`pause_fault`]).
    pub pause: Option<String>,
    /// Steal and the longest receive gap ([`super::noise`]).
    pub noise: Noise,
    /// The host moved the tester's and the DUT's CPUs apart during the
    /// trial ([`super::noise::NoiseMeter::moved_apart`]): a fault.
    pub moved: Option<String>,
}

impl SendTiming {
    /// How the shared generator kept to its schedule.
    pub(crate) fn from_gen(g: &GenResult) -> SendTiming {
        SendTiming {
            port_frames: g.port_frames.clone(),
            start_ns: g.start_ns,
            end_ns: g.end_ns,
            ideal_ns: g.ideal_ns,
            fell_behind: g.fell_behind,
            max_lag_ns: g.max_lag_ns,
            paused_ns: g.long_stall_ns,
        }
    }
}

impl NetTrial {
    /// The achieved rate per port and the reasons the tester, not the DUT,
    /// limited the trial: a generator behind its schedule, then `own` (the
    /// backend's own drops), then a missed target rate. `batch_for`: the
    /// backend's frames per round at a rate.
    pub(crate) fn tester_limits(
        &self,
        spec: &TrialSpec,
        phases: &[GenPhase],
        per_port: u64,
        t: &SendTiming,
        batch_for: fn(f64) -> u64,
        own: Vec<String>,
    ) -> (f64, Vec<String>) {
        // Achieved rate per port: frames over the time spent sending (the
        // schedule's length for frames on time; longer when behind).
        let nports = t.port_frames.len().max(1) as f64;
        let frames_per_port = t.port_frames.iter().sum::<u64>() as f64 / nports;
        let elapsed_ns = if spec.burst.is_some() {
            t.end_ns.saturating_sub(t.start_ns).max(1) as f64
        } else {
            // On schedule, the last round goes out one interval before the
            // ideal end: count that interval.
            let last_rate = phases.last().map_or(1.0, |p| p.rate_fps);
            let b = batch_for(last_rate) as f64;
            // Pauses (a stall moved the schedule) are not sending time.
            let sending = t
                .end_ns
                .saturating_sub(t.start_ns)
                .saturating_sub(t.paused_ns);
            (sending as f64 + b * 1e9 / last_rate)
                .max(t.ideal_ns as f64)
                .max(1.0)
        };
        let achieved = frames_per_port * 1e9 / elapsed_ns;

        let mut reasons = Vec::new();
        if t.fell_behind {
            reasons.push(format!(
                "generator fell behind its schedule: sent {:.0} of {} frames per port in the \
                 trial time (max lag {:.1} ms)",
                frames_per_port,
                per_port,
                t.max_lag_ns as f64 / 1e6
            ));
        }
        reasons.extend(own);
        if spec.burst.is_none()
            && spec.phases.is_empty()
            && achieved < spec.rate_fps * (1.0 - self.opts.rate_tolerance_pct / 100.0)
        {
            reasons.push(format!(
                "achieved {:.0} fps of {:.0} fps target per port (tolerance {}%)",
                achieved, spec.rate_fps, self.opts.rate_tolerance_pct
            ));
        }
        (achieved, reasons)
    }
}

/// A trial's outcome from what was counted, the achieved rate, the
/// tester-limit reasons, what the backend saw and the DUT probe's sample.
pub(crate) fn outcome(
    spec: &TrialSpec,
    c: Counted,
    achieved: f64,
    mut reasons: Vec<String>,
    seen: Seen,
    sample: Option<DutSample>,
) -> TrialOutcome {
    let dut_stats = sample.as_ref().and_then(|s| s.dut_stats.as_ref());
    let refused = dut_stats.map_or(0, refused_by_tester);
    let dut_drops = dut_stats.and_then(|d| d.dropped).unwrap_or(0);
    let tester_ring = refused + seen.tester_rx;
    let split = split_loss(c.lost, tester_ring, seen.dut_ring, dut_drops);
    let mut faults = seen.faults;
    faults.extend(seen.moved);
    if split.tester_ring > 0 {
        faults.push(format!(
            "{} lost frames were lost in the tester's own receive path ({} dropped by its \
             receive ring, {refused} refused entering it)",
            split.tester_ring, seen.tester_rx
        ));
    }
    // The load was offered as asked unless the generator failed it; what
    // the receive side dropped below spoils only the count.
    let load_held = reasons.is_empty() && seen.pause.is_none();
    if tester_ring > 0 {
        reasons.push(format!(
            "the tester's receive side dropped {tester_ring} frames the DUT forwarded ({} in \
             its receive ring, {refused} refused entering it: tx_dropped of the DUT's veth \
             ends): the tester did not keep up",
            seen.tester_rx
        ));
    }
    // A long pause in a trial the tester otherwise held is the host's: a
    // fault, run again. Beside other limits (its ring overflowing, a
    // missed rate) the pauses are the tester's own receive work holding
    // its CPU at a rate it cannot carry: a limit, as the others.
    match seen.pause {
        Some(p) if reasons.is_empty() => faults.push(p),
        Some(p) => reasons.push(p),
        None => {}
    }
    let limited = !reasons.is_empty();
    let fault_beyond_receive = faults.len() > usize::from(split.tester_ring > 0);
    TrialOutcome {
        offered_rate_fps: spec.rate_fps,
        sent: c.sent,
        received: c.received,
        lost: c.lost,
        reordered: c.reordered,
        duplicates: c.duplicates,
        non_test: c.non_test,
        achieved_tx_rate_fps: achieved,
        tester_limited: limited,
        tester_limit_reason: limited.then(|| reasons.join("; ")),
        tester_dropped: tester_ring.min(c.lost),
        load_held,
        latency: c.latency,
        timeline: c.timeline,
        sys: sample.as_ref().and_then(|s| s.sys.clone()),
        dut_stats: sample.and_then(|s| s.dut_stats),
        loss_split: Some(split),
        measurement_fault: (!faults.is_empty()).then(|| faults.join("; ")),
        fault_beyond_receive,
        noise: Some(seen.noise),
    }
}

/// A measurement fault when the host kept the generator off its CPU for
/// more than [`MAX_PAUSED_SHARE`] of a paced trial: the offered load
/// paused, so the trial met another load than the one asked for. Why a
/// fault (the trial is run again) and not a tester limit: the pause is
/// the host's stall on the tester's CPU, at any rate (seen at 0.93 Mpps,
/// a fifth of the tester's maximum, where a limit would have ended the
/// search as "tester-limited"); a tester that cannot hold a rate falls
/// behind its schedule instead (`fell_behind`, a limit). [`outcome`]
/// makes it a limit when the trial has other limits: at its maximum the
/// tester's own receive work holds its CPU for milliseconds.
pub(crate) fn pause_fault(spec: &TrialSpec, t: &SendTiming) -> Option<String> {
    (spec.burst.is_none() && t.paused_ns as f64 > t.ideal_ns as f64 * MAX_PAUSED_SHARE).then(|| {
        format!(
            "the host kept the generator off its CPU for {:.1} ms of the {:.0} ms trial (more \
             than {:.0} %): the offered load paused",
            t.paused_ns as f64 / 1e6,
            t.ideal_ns as f64 / 1e6,
            MAX_PAUSED_SHARE * 100.0
        )
    })
}

/// The tester's failures to do what it was asked, as measurement faults:
/// its generator sent `sent` of `planned` frames (all ports), or stopped
/// behind its schedule, and `own` (the backend's own reasons: errors,
/// frames its TX ring would not take).
pub(crate) fn faults(sent: u64, planned: u64, fell_behind: bool, own: Vec<String>) -> Vec<String> {
    let mut f = Vec::new();
    if sent < planned || fell_behind {
        f.push(format!(
            "the generator sent {sent} of the {planned} frames planned (it fell behind its \
             schedule beyond the grace)"
        ));
    }
    f.extend(own);
    f
}

/// Where `lost` frames were lost: the tester's own receive path first
/// (those frames say nothing of the DUT), then the DUT's full receive
/// ring, then the DUT's own drops, each capped at what is left, and the
/// rest `elsewhere`; the parts sum to `lost`. Why capped: the counters
/// also count frames that are no test frames (ARP, ND) or were dropped
/// outside the trial's frames, so they can exceed the loss.
pub(crate) fn split_loss(lost: u64, tester_ring: u64, dut_ring: u64, dut_drops: u64) -> LossSplit {
    let mut left = lost;
    let mut take = |n: u64| {
        let t = n.min(left);
        left -= t;
        t
    };
    let tester_ring = take(tester_ring);
    let dut_ring = take(dut_ring);
    let dut_drops = take(dut_drops);
    LossSplit {
        dut_ring,
        dut_drops,
        tester_ring,
        elsewhere: left,
    }
}

/// Frames the DUT's veth ends could not hand to the tester's ports over a
/// trial: the sum of their `tx_dropped` (the DUT probes' `interfaces`).
///
/// Why it is the tester's: a veth transmit fails only when the receiving
/// end (a tester port) is down or its ring/backlog is full, i.e. the
/// tester's receive side fell behind, as a tester NIC would overflow if
/// its software did not drain it. Counting those frames as DUT loss would
/// report the tester's limit as the DUT's.
fn refused_by_tester(dut_stats: &schema::dut_sample::DutStats) -> u64 {
    dut_stats
        .interfaces
        .iter()
        .flatten()
        .map(|i| i.counters.tx_dropped)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(lost: u64, tester: u64, ring: u64, drops: u64) -> [u64; 4] {
        let s = split_loss(lost, tester, ring, drops);
        assert_eq!(
            s.tester_ring + s.dut_ring + s.dut_drops + s.elsewhere,
            lost,
            "{s:?}"
        );
        [s.tester_ring, s.dut_ring, s.dut_drops, s.elsewhere]
    }

    /// A 1 s trial of 64 B frames at `rate`.
    fn spec(rate: f64) -> TrialSpec {
        TrialSpec::constant(
            rate,
            std::time::Duration::from_secs(1),
            bench::sizes::FrameSize::Fixed(64),
        )
    }

    /// `sent` frames counted, `lost` of them lost, nothing else.
    fn counted(sent: u64, lost: u64) -> Counted {
        Counted {
            sent,
            received: sent - lost,
            lost,
            reordered: 0,
            duplicates: 0,
            non_test: 0,
            latency: LatencySummary::default(),
            timeline: None,
        }
    }

    fn timing(paused_ms: u64) -> SendTiming {
        SendTiming {
            port_frames: vec![1_000_000],
            start_ns: 0,
            end_ns: 1_000_000_000 + paused_ms * 1_000_000,
            ideal_ns: 1_000_000_000,
            fell_behind: false,
            max_lag_ns: 0,
            paused_ns: paused_ms * 1_000_000,
        }
    }

    #[test]
    fn a_long_host_pause_is_a_fault_to_run_again_not_a_limit() {
        let spec = spec(930_000.0);
        // 223 ms of a 1 s trial at a fifth of the tester's maximum (seen
        // in a quiet run): the trial is run again.
        let f = pause_fault(&spec, &timing(223)).expect("a fault");
        assert!(f.contains("223.0 ms of the 1000 ms trial"), "{f}");
        // The fair server's 7-12 ms a second is noise, not a fault.
        assert_eq!(pause_fault(&spec, &timing(12)), None);
        assert_eq!(pause_fault(&spec, &timing(100)), None);
    }

    #[test]
    fn a_pause_beside_other_limits_is_the_testers_limit() {
        let spec = spec(4_900_000.0);
        let counted = || counted(1000, 0);
        let seen = || Seen {
            pause: Some("paused".into()),
            ..Seen::default()
        };
        // Held otherwise: the host's pause, a fault to run again.
        let o = outcome(&spec, counted(), 1.0, Vec::new(), seen(), None);
        assert!(!o.tester_limited);
        assert_eq!(o.measurement_fault.as_deref(), Some("paused"));
        // Beside a missed rate: the tester at its limit.
        let o = outcome(&spec, counted(), 1.0, vec!["missed".into()], seen(), None);
        assert!(o.tester_limited);
        assert_eq!(o.tester_limit_reason.as_deref(), Some("missed; paused"));
        assert_eq!(o.measurement_fault, None);
    }

    /// A trial during which the host moved the tester's and the DUT's
    /// CPUs apart is run again, whatever it lost; the load was still
    /// offered as asked, and the tester did not limit it.
    #[test]
    fn cpus_moved_apart_is_a_fault_to_run_again_whatever_the_loss() {
        let spec = spec(1_000_000.0);
        for lost in [0, 5000] {
            let counted = counted(1_000_000, lost);
            let seen = Seen {
                dut_ring: lost,
                moved: Some("moved apart".into()),
                ..Seen::default()
            };
            let o = outcome(&spec, counted, 1e6, Vec::new(), seen, None);
            assert_eq!(
                o.measurement_fault.as_deref(),
                Some("moved apart"),
                "lost {lost}"
            );
            assert!(o.load_held && !o.tester_limited, "lost {lost}");
            assert!(o.fault_beyond_receive, "lost {lost}");
        }
    }

    /// Frames lost in the tester's own receive ring are a fault of their
    /// own kind: calibration may judge the trial by its windows.
    #[test]
    fn receive_drops_alone_are_no_fault_beyond_receive() {
        let spec = spec(1_000_000.0);
        let counted = || counted(1_000_000, 10);
        let ring = || Seen {
            tester_rx: 10,
            ..Seen::default()
        };
        let o = outcome(&spec, counted(), 1e6, Vec::new(), ring(), None);
        assert!(o.measurement_fault.is_some() && o.load_held && o.tester_limited);
        assert!(!o.fault_beyond_receive);
        let both = Seen {
            moved: Some("moved apart".into()),
            ..ring()
        };
        let o = outcome(&spec, counted(), 1e6, Vec::new(), both, None);
        assert!(o.fault_beyond_receive);
    }

    #[test]
    fn the_split_claims_each_lost_frame_once() {
        // Every counter below the loss: the rest is elsewhere.
        assert_eq!(split(100, 10, 20, 30), [10, 20, 30, 40]);
        // The counters claim more than was lost (non-test frames): the
        // tester's first, then the DUT's ring, then its drops.
        assert_eq!(split(25, 10, 20, 30), [10, 15, 0, 0]);
        assert_eq!(split(5, 10, 20, 30), [5, 0, 0, 0]);
        // Nothing lost: nothing to split, whatever the counters say.
        assert_eq!(split(0, 1, 2, 3), [0, 0, 0, 0]);
        // No counter: all elsewhere.
        assert_eq!(split(7, 0, 0, 0), [0, 0, 0, 7]);
    }
}
