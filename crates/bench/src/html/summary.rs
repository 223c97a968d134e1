//! The first screen of an experiment: which DUT is faster, by how much,
//! and whether to trust it, before any chart.
//!
//! Why a section of its own: the comparison table at the end answers the
//! first two for a reader who knows where to look; this one puts them
//! first, per size and goal, with what bounds their trust: a lower bound
//! (the tester's limit, not the DUT's), the spread over `--repeat`
//! rounds, and how many trials the host or the tester disturbed.

use std::fmt::Write as _;

use super::{esc, table, Cell};
use crate::chart;
use crate::repeat::{RepeatedDut, RepeatedGoal};
use crate::results::BenchResults;

/// Largest distance of a goal's rounds from its median, % of it.
fn spread_pct(g: &RepeatedGoal) -> Option<f64> {
    let (m, lo, hi) = (g.median_fps?, g.min_fps?, g.max_fps?);
    (m > 0.0).then(|| (m - lo).max(hi - m) / m * 100.0)
}

/// A DUT's figure for `goal` at one size, if it has one.
fn goal_of<'a>(d: &'a RepeatedDut, goal: &str) -> Option<&'a RepeatedGoal> {
    d.goals
        .iter()
        .find(|g| g.goal == goal && g.median_fps.is_some())
}

/// What limits the trust in "`best` is `ratio` x `second`".
fn trust(best: &RepeatedGoal, second: Option<&RepeatedGoal>, rounds: u32) -> String {
    let mut why = Vec::new();
    if best.lower_bound {
        why.push("the fastest figure is a lower bound (the tester's limit)".to_string());
    }
    if second.is_some_and(|s| s.lower_bound) {
        why.push("the runner-up's figure is a lower bound".to_string());
    }
    if rounds > 1 {
        let worst = [Some(best), second]
            .into_iter()
            .flatten()
            .filter_map(spread_pct)
            .fold(0.0f64, f64::max);
        why.push(format!("{rounds} rounds agree within ±{worst:.0} %"));
    } else {
        why.push("one run: `--repeat 3` shows the spread".to_string());
    }
    why.join("; ")
}

/// The rows of the first screen and the line on disturbed trials.
pub(super) fn summary(out: &mut String, r: &BenchResults) {
    let rounds = r.rounds();
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for c in &r.comparison {
        let rep = c.repeats();
        let mut goals: Vec<&str> = Vec::new();
        for g in rep.duts.iter().flat_map(|d| &d.goals) {
            if !goals.contains(&g.goal.as_str()) {
                goals.push(&g.goal);
            }
        }
        for goal in goals {
            let mut ranked: Vec<(&RepeatedDut, &RepeatedGoal)> = rep
                .duts
                .iter()
                .filter_map(|d| goal_of(d, goal).map(|g| (d, g)))
                .collect();
            ranked.sort_by(|a, b| {
                let m = |g: &RepeatedGoal| g.median_fps.unwrap_or(0.0);
                m(b.1).total_cmp(&m(a.1))
            });
            let Some(&(best, bg)) = ranked.first() else {
                continue;
            };
            let second = ranked.get(1).copied();
            let bm = bg.median_fps.unwrap_or(0.0);
            let by = match second {
                Some((d, g)) => match g.median_fps.filter(|&m| m > 0.0) {
                    Some(m) => format!("{}x {}", chart::sig(bm / m, 3), d.dut),
                    None => "-".into(),
                },
                None => "(the only DUT)".into(),
            };
            let rate = format!(
                "{}{}",
                if bg.lower_bound { "≥ " } else { "" },
                chart::sig(bm / 1e6, 3)
            );
            rows.push(vec![
                Cell::text(format!("{} v{}", c.size, c.ip)),
                Cell::text(goal.to_uppercase()),
                Cell::text(&best.dut),
                if bg.lower_bound {
                    Cell::lower_bound(rate)
                } else {
                    Cell::num(rate)
                },
                Cell::text(by),
                Cell::wrap(trust(bg, second.map(|s| s.1), rounds)),
            ]);
        }
    }
    if rows.is_empty() {
        return;
    }
    out.push_str("<h3>In short</h3>\n");
    table(
        out,
        &format!(
            "per size and search goal: the DUT with the highest conditional throughput{}, \
             Mpps per port, and how many times the next DUT's; ≥: a lower bound",
            if rounds > 1 {
                " (median of the rounds)"
            } else {
                ""
            }
        ),
        &["size", "goal", "fastest", "Mpps", "by", "can I trust it"],
        &rows,
    );
    let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&disturbed(r)));
}

/// How many trials the tester spoiled (run again) and how many the host
/// disturbed (the generator paused, or a lossy trial's DUT stalled longer
/// than its ring holds): what the figures above stood up to.
fn disturbed(r: &BenchResults) -> String {
    let trials = r
        .runs
        .iter()
        .flat_map(|run| &run.tests)
        .flat_map(|t| &t.trials);
    let (mut n, mut faults, mut paused, mut stalled) = (0, 0, 0, 0);
    for t in trials {
        n += 1;
        faults += usize::from(t.discarded);
        let noise = t.outcome.noise.as_ref();
        paused += usize::from(noise.and_then(|x| x.generator_paused_us).unwrap_or(0.0) > 0.0);
        stalled += usize::from(noise.is_some_and(|x| x.note.is_some()));
    }
    format!(
        "Of {n} trials, {faults} were spoiled by the tester and run again, {paused} had the \
         host pause the generator (1 ms or more: the offered load paused, no burst followed), \
         and {stalled} lost frames while the DUT's receive work stalled longer than its ring \
         holds. The exceed ratio of each goal keeps a few such trials from deciding a result; \
         see each trial in the JSON (`noise`, `measurement_fault`)."
    )
}
