//! What a calibration trial says: whether the tester held its rate.

use std::time::Duration;

use bench::search::TrialOutcome;

/// Whether a calibration trial passed: the tester sent, was not limited,
/// and lost nothing itself. Through a DUT (`through_dut`) the frames the
/// DUT's own ring refused or it dropped are the DUT's: a stall on the
/// floor DUT's CPU says nothing of what the tester holds, and counting
/// them made the floor calibration land anywhere from 0.47 to 1.41 Mfps
/// at 64 B in three quiet runs.
///
/// With a loss timeline of [`WINDOW`]s (every calibration trial has one),
/// a trial in which the tester lost frames itself still holds when the
/// load was offered as asked and those losses fit in at most half of the
/// windows ([`fewest_windows_holding`]): a stall of the tester's CPU
/// overflows its ring in the window it falls in, a rate beyond the
/// tester in every window. Why: a few dozen drops a second at rates the
/// tester otherwise holds (the generator and the receive side share its
/// CPU) failed every 1 s confirmation from 1.98 down to 1.81 Mfps in one
/// run, and the maximum came out 1.30, 1.36 and 1.64 Mfps in three.
pub fn tester_held(o: &TrialOutcome, through_dut: bool) -> bool {
    let dut_loss = if through_dut {
        o.loss_split
            .as_ref()
            .map_or(0, |s| s.dut_ring + s.dut_drops)
    } else {
        0
    };
    if o.sent == 0 {
        return false;
    }
    if !o.tester_limited && o.lost.saturating_sub(dut_loss) == 0 {
        return true;
    }
    let windows = o.timeline.as_ref().and_then(|t| {
        // A last bucket of a few frames due right at the end is no window.
        let short_tail = t.sent.len() > 1 && 2 * t.sent[t.sent.len() - 1] < t.sent[0];
        let n = t.sent.len() - usize::from(short_tail);
        bench::throughput::window::split(o, n as u32)
    });
    let receive_only = o.load_held && !o.fault_beyond_receive;
    let own = o.lost.saturating_sub(dut_loss);
    windows.is_some_and(|w| receive_only && 2 * fewest_windows_holding(own, &w) <= w.len())
}

/// The fewest of `windows` (`(sent, lost)`) whose losses can hold `own`
/// lost frames: where the tester's own losses lie is unknown, only that
/// they are among the windows' losses; through a DUT, a stall of the
/// DUT's CPU adds losses of its own to other windows.
pub(super) fn fewest_windows_holding(own: u64, windows: &[(u64, u64)]) -> usize {
    let mut losses: Vec<u64> = windows.iter().map(|w| w.1).filter(|&l| l > 0).collect();
    losses.sort_unstable_by(|a, b| b.cmp(a));
    let mut left = own;
    let mut n = 0;
    for l in losses {
        if left == 0 {
            break;
        }
        left = left.saturating_sub(l);
        n += 1;
    }
    n
}

/// The windows calibration trials are judged by ([`tester_held`]).
pub(super) const WINDOW: Duration = Duration::from_millis(100);
