//! The HTML report's charts besides [`crate::plot`]'s bars: a line chart
//! (loss against offered load) and horizontal stacked bars (cycles per
//! packet by stage, CPU time by kind).
//!
//! Hand-written SVG for the reason `plot` gives: no plotting crate and no
//! font rendering; text in the charts is escaped like the page's.

use std::fmt::Write as _;

use super::esc;
use crate::plot::{fmt_num, nice_ceiling, COLOURS};

const W: f64 = 760.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 60.0;

/// One line: its name and points (x, y, hollow).
pub(super) struct LineSeries {
    pub name: String,
    pub points: Vec<(f64, f64, bool)>,
}

/// Lines on 0..max axes; x in % of the maximum rate, y in %.
pub(super) fn lines(title: &str, series: &[LineSeries]) -> String {
    let (top, h) = (44.0, 240.0);
    let total_h = top + h + 50.0;
    let xmax = nice_ceiling(
        series
            .iter()
            .flat_map(|s| &s.points)
            .map(|p| p.0)
            .fold(100.0, f64::max),
    );
    let ymax = nice_ceiling(
        series
            .iter()
            .flat_map(|s| &s.points)
            .map(|p| p.1)
            .fold(1.0, f64::max),
    );
    let pw = W - LEFT - RIGHT;
    let x_of = |x: f64| LEFT + x / xmax * pw;
    let y_of = |y: f64| top + h - y / ymax * h;
    let mut s = open(total_h);
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="16" font-weight="bold">{}</text>"#,
        esc(title)
    );
    legend(&mut s, series.iter().map(|l| l.name.as_str()), 22.0);
    for k in 0..=4 {
        let v = ymax * f64::from(k) / 4.0;
        let y = y_of(v);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            fmt_num(v)
        );
        let xv = xmax * f64::from(k) / 4.0;
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x_of(xv),
            top + h + 16.0,
            fmt_num(xv)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">offered load, % of the maximum rate</text>"#,
        LEFT + pw / 2.0,
        top + h + 34.0
    );
    for (i, l) in series.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        let pts: Vec<String> = l
            .points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x_of(p.0), y_of(p.1)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"/>"#,
            pts.join(" ")
        );
        for &(x, y, hollow) in &l.points {
            let fill = if hollow { "white" } else { c };
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{fill}" stroke="{c}" stroke-width="2"><title>{}</title></circle>"#,
                x_of(x),
                y_of(y),
                esc(&format!(
                    "{}: {x:.0} % load, {y:.3} % loss{}",
                    l.name,
                    if hollow { " (tester-limited)" } else { "" }
                ))
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

/// One horizontal bar of stacked segments (segment name, value).
pub(super) struct StackRow {
    pub label: String,
    pub segments: Vec<(String, f64)>,
}

/// Horizontal stacked bars; `kinds` orders the segment names and gives
/// their colours and the legend.
pub(super) fn stacked(title: &str, rows: &[StackRow], kinds: &[&str]) -> String {
    let (top, bar_h, label_w) = (44.0, 20.0, 270.0);
    let h = top + rows.len() as f64 * (bar_h + 6.0) + 36.0;
    let xmax = nice_ceiling(
        rows.iter()
            .map(|r| r.segments.iter().map(|s| s.1.max(0.0)).sum::<f64>())
            .fold(0.0, f64::max),
    );
    let x0 = label_w + 10.0;
    let pw = W - x0 - RIGHT;
    let x_of = |v: f64| x0 + v / xmax * pw;
    let mut s = open(h);
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="16" font-weight="bold">{}</text>"#,
        esc(title)
    );
    legend(&mut s, kinds.iter().copied(), 22.0);
    let axis_y = top + rows.len() as f64 * (bar_h + 6.0);
    for k in 0..=4 {
        let v = xmax * f64::from(k) / 4.0;
        let x = x_of(v);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{axis_y:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            axis_y + 16.0,
            fmt_num(v)
        );
    }
    for (j, r) in rows.iter().enumerate() {
        let y = top + j as f64 * (bar_h + 6.0);
        let _ = writeln!(
            s,
            r#"<text x="{label_w}" y="{:.1}" text-anchor="end">{}</text>"#,
            y + bar_h * 0.7,
            esc(&r.label)
        );
        let mut at = 0.0;
        for (name, v) in &r.segments {
            let v = v.max(0.0);
            let k = kinds.iter().position(|k| k == name).unwrap_or(0);
            let _ = writeln!(
                s,
                r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{bar_h}" fill="{}"><title>{}</title></rect>"#,
                x_of(at),
                x_of(at + v) - x_of(at),
                COLOURS[k % COLOURS.len()],
                esc(&format!("{}: {name} {}", r.label, fmt_num(v)))
            );
            at += v;
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
            x_of(at) + 4.0,
            y + bar_h * 0.7,
            fmt_num(at)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn open(h: f64) -> String {
    format!(
        "<svg width=\"{W}\" height=\"{h}\" viewBox=\"0 0 {W} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    )
}

fn legend<'a>(s: &mut String, names: impl Iterator<Item = &'a str>, y: f64) {
    for (i, n) in names.enumerate() {
        let x = LEFT + i as f64 * 150.0;
        let _ = writeln!(
            s,
            r#"<rect x="{x}" y="{y}" width="12" height="12" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            COLOURS[i % COLOURS.len()],
            x + 16.0,
            y + 10.0,
            esc(n)
        );
    }
}
