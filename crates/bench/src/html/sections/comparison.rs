//! The runs side by side: each DUT's throughput against the baseline's
//! and, with `--repeat`, every DUT's median and range over its rounds.

use super::*;

/// `repeats[]`: a row per size and DUT, each goal's median over the
/// rounds with its range, the ratio of the medians with the range of
/// the per-round ratios, and the DUT's cycles a packet over the rounds.
fn repeats(out: &mut String, r: &BenchResults) {
    let Some(first) = r.repeats.first() else {
        return;
    };
    let base = first.baseline.clone();
    let goals = first.goal_names();
    let floor = crate::tables::repeats_have_floor(r);
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for row in &r.repeats {
        for d in &row.duts {
            let goal = |name: &str| d.goals.iter().find(|g| g.goal == name);
            let mut cells = vec![
                Cell::text(format!("{} v{}", row.size, row.ip)),
                Cell::text(&d.dut),
                Cell::num(d.rounds.to_string()),
            ];
            for g in &goals {
                cells.push(match goal(g) {
                    Some(g) if g.lower_bound => {
                        Cell::lower_bound(format!("≥ {}", crate::tables::median_range(g, false)))
                    }
                    Some(g) => Cell::num(crate::tables::median_cell(g)),
                    None => Cell::num("-"),
                });
            }
            for g in &goals {
                cells.push(match goal(g) {
                    Some(g) if d.dut != row.baseline => Cell::num(crate::tables::ratio_cell(g)),
                    _ => Cell::num("-"),
                });
            }
            cells.push(Cell::num(crate::tables::cycles_cell(d)));
            if floor {
                cells.extend(crate::tables::floor_cells(d).map(Cell::num));
            }
            rows.push(cells);
        }
    }
    out.push_str("<h3>Repeated runs</h3>\n");
    let mut headers: Vec<String> = vec!["size".into(), "DUT".into(), "rounds".into()];
    headers.extend(
        goals
            .iter()
            .map(|g| format!("{} median (min-max)", g.to_uppercase())),
    );
    headers.extend(
        goals
            .iter()
            .map(|g| format!("{} / {base}", g.to_uppercase())),
    );
    headers.push("cycles a packet".into());
    if floor {
        headers.extend(["cycles x floor".into(), "capacity x floor".into()]);
    }
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let floor_note = if floor {
        "; x floor: the median and range of the rounds' ratios to the floor DUT of the same \
         round (cycles a packet at the highest load offered, capacity; ~: some round's capacity \
         is projected)"
    } else {
        ""
    };
    table(
        out,
        &format!(
            "each DUT over {} rounds run in turn: the median conditional throughput, Mpps per \
             port, with the lowest and highest round; ratio: the medians' against {base}, with \
             the lowest and highest per-round ratio (round i against {base}'s round i); ≥: some \
             round's figure is a lower bound; cycles a packet: the DUT's busy cycles per \
             forwarded packet at its throughput, median and range over the rounds (a DUT that \
             forwards until its CPU is spent moves its rate with these){floor_note}",
            r.rounds()
        ),
        &headers,
        &rows,
    );
}

/// `comparison[]` as the results give it: a row per size and run, each
/// goal's rate and its ratio to the baseline run's (of the same round);
/// with repeated runs, [`repeats`] first.
pub(in crate::html) fn comparison(out: &mut String, r: &BenchResults) {
    repeats(out, r);
    let Some(first) = r.comparison.first() else {
        return;
    };
    let rounds = r.rounds() > 1;
    let base = first.baseline.clone();
    let goals = first.goal_names();
    let floor = r
        .comparison
        .iter()
        .flat_map(|c| &c.duts)
        .any(|d| d.x_floor.is_some());
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for c in &r.comparison {
        let base_goal = |name: &str| {
            c.duts
                .iter()
                .find(|d| d.dut == c.baseline)
                .and_then(|d| d.goals.iter().find(|g| g.goal == name))
        };
        for d in &c.duts {
            let dut = if rounds {
                format!("{} (round {})", d.dut, d.round.max(1))
            } else {
                d.dut.clone()
            };
            let mut cells = vec![Cell::text(format!("{} v{}", c.size, c.ip)), Cell::text(dut)];
            let goal = |name: &str| d.goals.iter().find(|g| g.goal == name);
            for g in &goals {
                cells.push(
                    match goal(g).and_then(|g| g.fps.map(|f| (f, g.lower_bound))) {
                        None => Cell::num("-"),
                        Some((f, true)) => Cell::lower_bound(format!("≥ {}", mpps(f))),
                        Some((f, false)) => Cell::num(mpps(f)),
                    },
                );
            }
            for g in &goals {
                // A ratio with a lower bound on either side is not exact.
                let bound = goal(g).is_some_and(|g| g.lower_bound)
                    || base_goal(g).is_some_and(|g| g.lower_bound);
                cells.push(match goal(g).and_then(|g| g.ratio) {
                    Some(x) if d.dut != c.baseline => {
                        if bound {
                            Cell::lower_bound(format!("{x:.2} (bound)"))
                        } else {
                            Cell::num(format!("{x:.2}"))
                        }
                    }
                    _ => Cell::num("-"),
                });
            }
            cells.push(Cell::num(opt(d.cycles_per_packet, |v| format!("{v:.0}"))));
            cells.push(d.projection.map_or(Cell::num("-"), |p| {
                Cell::projected(format!(
                    "{} ({:.0} % busy)",
                    mpps(p.projected_fps),
                    p.busy_pct
                ))
            }));
            if floor {
                let f = d.x_floor.unwrap_or_default();
                let x = |v: Option<f64>| opt(v, |v| format!("x{v:.2}"));
                cells.push(Cell::num(x(f.fps)));
                cells.push(Cell::num(x(f.cycles_per_packet)));
                cells.push(if f.projected && f.capacity.is_some() {
                    Cell::projected(x(f.capacity))
                } else {
                    Cell::num(x(f.capacity))
                });
            }
            rows.push(cells);
        }
    }
    out.push_str("<h3>Comparison</h3>\n");
    let mut headers: Vec<String> = vec!["size".into(), "DUT".into()];
    headers.extend(goals.iter().map(|g| g.to_uppercase()));
    headers.extend(
        goals
            .iter()
            .map(|g| format!("{} / {base}", g.to_uppercase())),
    );
    headers.push("cyc/pkt".into());
    headers.push("projected capacity".into());
    if floor {
        headers.extend(["rate x floor", "cyc/pkt x floor", "capacity x floor"].map(String::from));
    }
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    table(
        out,
        &format!(
            "throughput side by side, Mpps per port (conditional throughput); ratio: each run / \
             {base} (\"bound\": a lower bound is involved, the ratio is not exact); projected \
             capacity: a tester-limited run's rate / its DUT CPUs' busy share (a projection, \
             not a measurement); x floor: against the floor DUT (an XDP redirect with the MAC \
             rewrite and nothing else) of the same round"
        ),
        &headers,
        &rows,
    );
}
