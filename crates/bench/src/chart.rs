//! The report's charts, drawn with plotters' SVG backend: grouped bars
//! (throughput), boxes (latency percentiles), lines (loss against load)
//! and horizontal stacked bars (cycles, CPU time, interrupts).
//!
//! Why plotters draws the axes and the marks but not the legend: a legend
//! inside the SVG must be laid out from estimated text widths and loses
//! entries when names are long (issue 19); the page writes it as an HTML
//! list that wraps ([`Chart::legend`]), and only the standalone file of
//! `bench --plot` lists it in the SVG, one entry per line. Without a font
//! backend plotters estimates text sizes (its `naive` font), which only
//! sizes the label areas; the browser sets the text.
//!
//! Why the axes are chosen per chart: values of one chart can span orders
//! of magnitude (0.03 Mpps beside the tester's 4 Mpps, OVS's cycles beside
//! a kernel's split), which on a linear axis leaves bars a pixel high; a
//! chart whose values span more than [`LOG_SPAN`] gets a log axis.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of every chart, px: the page's measure.
pub(crate) const W: u32 = 1000;
/// Values spanning more than this factor get a log axis.
pub(crate) const LOG_SPAN: f64 = 20.0;
const FONT: &str = "sans-serif";
/// The rounds' range of a repeated DUT.
const WHISKER: RGBColor = RGBColor(0x33, 0x33, 0x33);
/// Smallest size of a drawn mark, px, so no series vanishes.
const MIN_PX: i32 = 3;

/// Ten colours told apart also in print and by most colour-blind readers
/// (Tableau 10), each series a colour and, past ten, another marker.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// Point markers of line charts, with their legend glyph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    Down,
}

impl Marker {
    const ALL: [Marker; 5] = [
        Marker::Circle,
        Marker::Square,
        Marker::Triangle,
        Marker::Diamond,
        Marker::Down,
    ];

    fn glyph(self) -> &'static str {
        match self {
            Marker::Circle => "●",
            Marker::Square => "■",
            Marker::Triangle => "▲",
            Marker::Diamond => "◆",
            Marker::Down => "▼",
        }
    }
}

/// Series `i`'s colour and marker: distinct for 50 series.
pub(crate) fn style(i: usize) -> (RGBColor, Marker) {
    (
        PALETTE[i % PALETTE.len()],
        Marker::ALL[(i + i / PALETTE.len()) % Marker::ALL.len()],
    )
}

pub(crate) fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// One legend entry: the series' name, colour and (line charts) marker.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub name: String,
    pub colour: RGBColor,
    pub marker: Option<Marker>,
}

impl Entry {
    /// The legend glyph: the marker, else a filled square.
    pub(crate) fn glyph(&self) -> &'static str {
        self.marker.map_or("■", Marker::glyph)
    }
}

/// A drawn chart: the SVG and its legend; `kind` (`bars`, `boxes`,
/// `lines`, `stacked`) for the page's figure.
#[derive(Debug, Clone)]
pub(crate) struct Chart {
    pub svg: String,
    pub legend: Vec<Entry>,
    pub kind: &'static str,
}

/// A value axis: linear from 0, or log between powers of ten.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Axis {
    Linear { max: f64 },
    Log { lo: f64, hi: f64 },
}

impl Axis {
    /// The axis for `values` (positive ones count for a log axis).
    pub(crate) fn fit(values: impl IntoIterator<Item = f64>) -> Axis {
        let v: Vec<f64> = values
            .into_iter()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        let max = v.iter().copied().fold(0.0, f64::max);
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        if max > 0.0 && max / min > LOG_SPAN {
            // A third of a decade below the least value: its bar stands.
            Axis::Log {
                lo: 10f64.powf((min.log10() - 0.3).floor()),
                hi: 10f64.powf(max.log10().ceil()),
            }
        } else {
            Axis::Linear {
                max: nice_ceiling(max * 1.05),
            }
        }
    }

    /// The coordinate plotters draws on: the value, or its log.
    fn t(self, v: f64) -> f64 {
        match self {
            Axis::Linear { .. } => v,
            Axis::Log { lo, .. } => v.max(lo).log10(),
        }
    }

    fn range(self) -> std::ops::Range<f64> {
        match self {
            Axis::Linear { max } => 0.0..max,
            Axis::Log { lo, hi } => lo.log10()..hi.log10(),
        }
    }

    fn labels(self) -> usize {
        match self {
            Axis::Linear { .. } => 6,
            Axis::Log { lo, hi } => (hi / lo).log10().round() as usize + 1,
        }
    }

    fn label(self, t: f64) -> String {
        match self {
            Axis::Linear { .. } => short(t),
            Axis::Log { .. } => short(10f64.powf(t)),
        }
    }

    pub(crate) fn is_log(self) -> bool {
        matches!(self, Axis::Log { .. })
    }
}

/// 1, 2 or 5 times a power of ten at or above `v`.
pub(crate) fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|&c| c >= v)
        .unwrap_or(10.0 * p)
}

/// A number with three significant figures (no false precision).
pub(crate) fn fmt_num(v: f64) -> String {
    sig(v, 3)
}

/// An axis label: three significant figures without trailing zeros.
fn short(v: f64) -> String {
    let s = sig(v, 3);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `v` to `n` significant figures, without exponent.
pub(crate) fn sig(v: f64, n: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    let digits = n - 1 - v.abs().log10().floor() as i32;
    if digits <= 0 {
        let p = 10f64.powi(-digits);
        format!("{:.0}", (v / p).round() * p)
    } else {
        format!("{v:.*}", digits as usize)
    }
}

/// Text `px` high (plotters' sizes are 1.24 times the SVG font size).
fn text(px: f64) -> TextStyle<'static> {
    (FONT, px * 1.24).into_font().color(&BLACK)
}

/// Rough width of `s` at 12 px, for label areas (DejaVu Sans is wide).
pub(crate) fn text_w(s: &str) -> u32 {
    (s.chars().count() as f64 * 7.2).ceil() as u32
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draws into a fresh SVG of `h` px; `f` gets the root area.
fn svg(h: u32, f: impl FnOnce(&Area) -> Result<(), String>) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (W, h)).into_drawing_area();
        let _ = root.fill(&WHITE);
        if let Err(e) = f(&root) {
            tracing::warn!("chart not drawn: {e}");
        }
        let _ = root.present();
    }
    out
}

/// A rectangle in pixels, at least [`MIN_PX`] in both dimensions.
fn rect(area: &Area, a: (i32, i32), b: (i32, i32), s: ShapeStyle) -> Result<(), String> {
    let (x0, x1) = (a.0.min(b.0), a.0.max(b.0));
    let (y0, y1) = (a.1.min(b.1), a.1.max(b.1));
    let x1 = x1.max(x0 + MIN_PX);
    let y0 = y0.min(y1 - MIN_PX);
    area.draw(&Rectangle::new([(x0, y0), (x1, y1)], s))
        .map_err(|e| e.to_string())
}

fn label(area: &Area, s: &str, at: (i32, i32), pos: Pos, px: f64) -> Result<(), String> {
    area.draw(&Text::new(s.to_string(), at, text(px).pos(pos)))
        .map_err(|e| e.to_string())
}

/// One bar of a group: value, whether a lower bound, and a range.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Bar {
    pub value: f64,
    pub lower_bound: bool,
    pub range: Option<(f64, f64)>,
}

/// One series of bars: a bar (or none) per group; `outline` for the
/// goals after the first, drawn hollow; `entry` indexes the legend.
#[derive(Debug, Clone)]
pub(crate) struct BarSeries {
    pub entry: usize,
    pub outline: bool,
    pub bars: Vec<Option<Bar>>,
}

/// Grouped vertical bars with a tick per group (the tester's maximum),
/// on the axis [`Axis::fit`] picks for bars, ranges and ticks.
pub(crate) fn bars(
    y_desc: &str,
    groups: &[String],
    legend: Vec<Entry>,
    series: &[BarSeries],
    ticks: &[Option<f64>],
) -> Chart {
    let axis = Axis::fit(
        series
            .iter()
            .flat_map(|s| s.bars.iter().flatten())
            .flat_map(|b| [b.value, b.range.map_or(b.value, |r| r.0)])
            .chain(ticks.iter().flatten().copied()),
    );
    let h = 330;
    let svg = svg(h, |root| {
        let chart = group_frame(root, groups.len(), axis, y_desc)?;
        let y0 = axis.range().start;
        let n = series.len().max(1) as f64;
        let px = |x: f64, v: f64| chart.backend_coord(&(x, axis.t(v)));
        for (j, g) in groups.iter().enumerate() {
            let gx = j as f64 + 0.1;
            let bw = 0.8 / n;
            for (i, s) in series.iter().enumerate() {
                let Some(b) = s.bars.get(j).copied().flatten() else {
                    continue;
                };
                let c = legend[s.entry].colour;
                let x = gx + i as f64 * bw;
                let top = px(x, b.value);
                let bottom = chart.backend_coord(&(x + bw * 0.9, y0));
                let alpha = if b.lower_bound { 0.45 } else { 1.0 };
                if b.value > 0.0 && s.outline {
                    // Hollow: a pale fill and a 2 px border (plotters'
                    // rectangles draw 1 px borders).
                    rect(root, top, bottom, c.mix(0.12 * alpha).filled())?;
                    let (x0, y0, x1, y1) = (
                        top.0 + 1,
                        top.1.min(bottom.1 - MIN_PX),
                        bottom.0 - 1,
                        bottom.1,
                    );
                    let border = [(x0, y1), (x0, y0), (x1, y0), (x1, y1)];
                    root.draw(&PathElement::new(border, c.mix(alpha).stroke_width(2)))
                        .map_err(|e| e.to_string())?;
                } else if b.value > 0.0 {
                    rect(root, top, bottom, c.mix(alpha).filled())?;
                } else {
                    label(root, "0", (top.0 + 2, bottom.1 - 8), Pos::default(), 10.0)?;
                }
                if let Some((lo, hi)) = b.range {
                    let cx = (top.0 + bottom.0) / 2;
                    let (a, z) = (px(x, lo).1, px(x, hi).1);
                    let cap = ((bottom.0 - top.0) / 4).max(2);
                    for seg in [
                        [(cx, a), (cx, z)],
                        [(cx - cap, a), (cx + cap, a)],
                        [(cx - cap, z), (cx + cap, z)],
                    ] {
                        root.draw(&PathElement::new(seg, WHISKER.stroke_width(1)))
                            .map_err(|e| e.to_string())?;
                    }
                }
                // A lower bound is marked in plain sight, not by shade
                // alone; the figure itself is in the table.
                if b.lower_bound && bottom.0 - top.0 >= 9 {
                    label(
                        root,
                        "≥",
                        ((top.0 + bottom.0) / 2, top.1 - 2),
                        Pos::new(HPos::Center, VPos::Bottom),
                        11.0,
                    )?;
                }
            }
            if let Some(t) = ticks.get(j).copied().flatten() {
                let (a, b) = (px(gx, t), px(gx + 0.8, t));
                // Dashed: 6 px on, 3 off.
                for x in (a.0..b.0).step_by(9) {
                    let seg = [(x, a.1), ((x + 6).min(b.0), a.1)];
                    root.draw(&PathElement::new(seg, BLACK.stroke_width(2)))
                        .map_err(|e| e.to_string())?;
                }
            }
            let c = chart.backend_coord(&(j as f64 + 0.5, y0));
            label(
                root,
                g,
                (c.0, c.1 + 6),
                Pos::new(HPos::Center, VPos::Top),
                12.0,
            )?;
        }
        Ok(())
    });
    Chart {
        svg,
        legend,
        kind: "bars",
    }
}

/// The frame of a grouped chart (bars or boxes per group): `groups`
/// slots along x, `axis` up the side with its label and light grid.
fn group_frame<'a>(
    root: &Area<'a>,
    groups: usize,
    axis: Axis,
    y_desc: &str,
) -> Result<ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>, String> {
    let mut chart = ChartBuilder::on(root)
        .margin(10)
        .x_label_area_size(28)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..groups.max(1) as f64, axis.range())
        .map_err(|e| e.to_string())?;
    let fmt = |t: &f64| axis.label(*t);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(axis.labels())
        .y_label_formatter(&fmt)
        .y_desc(y_desc_of(y_desc, axis))
        .label_style(text(12.0))
        .axis_desc_style(text(12.0))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(chart)
}

fn y_desc_of(desc: &str, axis: Axis) -> String {
    if axis.is_log() {
        format!("{desc} (log)")
    } else {
        desc.to_string()
    }
}

/// One latency box: min, median, p99, p99.9 and max.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spread {
    pub min: f64,
    pub median: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    /// A DUT run several rounds: the lowest and highest round's median,
    /// drawn as a capped whisker beside the box.
    pub median_range: Option<(f64, f64)>,
}

/// Boxes per group and series: the box from the median (a thick line) to
/// p99, the whisker from the minimum to p99.9, a dot at the maximum.
pub(crate) fn boxes(
    y_desc: &str,
    groups: &[String],
    legend: Vec<Entry>,
    series: &[Vec<Option<Spread>>],
) -> Chart {
    let all = series.iter().flatten().flatten();
    let axis = Axis::fit(all.flat_map(|s| [s.min, s.median, s.p99, s.p999, s.max]));
    let svg = svg(330, |root| {
        let chart = group_frame(root, groups.len(), axis, y_desc)?;
        let y0 = axis.range().start;
        let n = series.len().max(1) as f64;
        let px = |x: f64, v: f64| chart.backend_coord(&(x, axis.t(v)));
        for (j, g) in groups.iter().enumerate() {
            let bw = 0.8 / n;
            for (i, s) in series.iter().enumerate() {
                let Some(b) = s.get(j).copied().flatten() else {
                    continue;
                };
                let c = legend[i].colour;
                let x = j as f64 + 0.1 + i as f64 * bw;
                let (l, r) = (px(x + bw * 0.1, b.median).0, px(x + bw * 0.9, b.median).0);
                let cx = (l + r) / 2;
                root.draw(&PathElement::new(
                    [(cx, px(x, b.min).1), (cx, px(x, b.p999).1)],
                    c.stroke_width(1),
                ))
                .map_err(|e| e.to_string())?;
                rect(
                    root,
                    (l, px(x, b.p99).1),
                    (r, px(x, b.median).1),
                    c.mix(0.35).filled(),
                )?;
                let m = px(x, b.median).1;
                rect(root, (l, m - 2), (r, m + 2), c.filled())?;
                root.draw(&Circle::new((cx, px(x, b.max).1), 3, c.stroke_width(1)))
                    .map_err(|e| e.to_string())?;
                if let Some((lo, hi)) = b.median_range {
                    // Right of the box, as the throughput bars' whiskers.
                    let wx = r + 3;
                    let (a, z) = (px(x, lo).1, px(x, hi).1);
                    for seg in [
                        [(wx, a), (wx, z)],
                        [(wx - 2, a), (wx + 2, a)],
                        [(wx - 2, z), (wx + 2, z)],
                    ] {
                        root.draw(&PathElement::new(seg, WHISKER.stroke_width(1)))
                            .map_err(|e| e.to_string())?;
                    }
                }
            }
            let c = chart.backend_coord(&(j as f64 + 0.5, y0));
            label(
                root,
                g,
                (c.0, c.1 + 6),
                Pos::new(HPos::Center, VPos::Top),
                12.0,
            )?;
        }
        Ok(())
    });
    Chart {
        svg,
        legend,
        kind: "boxes",
    }
}

/// One line: a point (x, y, hollow) per measurement.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub points: Vec<(f64, f64, bool)>,
}

/// Lines with markers on linear axes from 0 (loss has zeros).
pub(crate) fn lines(x_desc: &str, y_desc: &str, legend: Vec<Entry>, series: &[Line]) -> Chart {
    let pts = || series.iter().flat_map(|s| &s.points);
    let xmax = nice_ceiling(pts().map(|p| p.0).fold(100.0, f64::max));
    let ymax = nice_ceiling(pts().map(|p| p.1).fold(1.0, f64::max));
    let svg = svg(320, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(72)
            .build_cartesian_2d(0.0..xmax, 0.0..ymax)
            .map_err(|e| e.to_string())?;
        let fx = |v: &f64| short(*v);
        chart
            .configure_mesh()
            .x_labels(6)
            .y_labels(6)
            .x_label_formatter(&fx)
            .y_label_formatter(&fx)
            .x_desc(x_desc)
            .y_desc(y_desc)
            .label_style(text(12.0))
            .axis_desc_style(text(12.0))
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
            .draw()
            .map_err(|e| e.to_string())?;
        for (s, e) in series.iter().zip(&legend) {
            let c = e.colour;
            let p: Vec<(i32, i32)> = s
                .points
                .iter()
                .map(|p| chart.backend_coord(&(p.0, p.1)))
                .collect();
            root.draw(&PathElement::new(p.clone(), c.stroke_width(2)))
                .map_err(|e| e.to_string())?;
            for (&at, &(_, _, hollow)) in p.iter().zip(&s.points) {
                marker(root, e.marker.unwrap_or(Marker::Circle), at, c, hollow)?;
            }
        }
        Ok(())
    });
    Chart {
        svg,
        legend,
        kind: "lines",
    }
}

fn marker(
    area: &Area,
    m: Marker,
    (x, y): (i32, i32),
    c: RGBColor,
    hollow: bool,
) -> Result<(), String> {
    let r = 5;
    let poly: Vec<(i32, i32)> = match m {
        Marker::Circle => {
            let s = if hollow { WHITE.filled() } else { c.filled() };
            area.draw(&Circle::new((x, y), r - 1, s))
                .map_err(|e| e.to_string())?;
            return area
                .draw(&Circle::new((x, y), r - 1, c.stroke_width(2)))
                .map_err(|e| e.to_string());
        }
        Marker::Square => vec![
            (x - 4, y - 4),
            (x + 4, y - 4),
            (x + 4, y + 4),
            (x - 4, y + 4),
        ],
        Marker::Triangle => vec![(x, y - r), (x + r, y + 4), (x - r, y + 4)],
        Marker::Diamond => vec![(x, y - r), (x + r, y), (x, y + r), (x - r, y)],
        Marker::Down => vec![(x - r, y - 4), (x + r, y - 4), (x, y + r)],
    };
    let fill = if hollow { WHITE } else { c };
    area.draw(&Polygon::new(poly.clone(), fill.filled()))
        .map_err(|e| e.to_string())?;
    let mut closed = poly.clone();
    closed.push(poly[0]);
    area.draw(&PathElement::new(closed, c.stroke_width(2)))
        .map_err(|e| e.to_string())
}

/// One horizontal bar of stacked segments (segment name, value).
#[derive(Debug, Clone)]
pub(crate) struct StackRow {
    pub label: String,
    pub segments: Vec<(String, f64)>,
}

/// Horizontal stacked bars, `kinds` ordering the segments and giving the
/// legend. When the rows' totals span more than [`LOG_SPAN`], each row is
/// drawn as shares of its own total (the total printed beside it), so a
/// small row's split stays visible beside a large one.
pub(crate) fn stacked(x_desc: &str, rows: &[StackRow], kinds: &[&str]) -> Chart {
    let totals: Vec<f64> = rows
        .iter()
        .map(|r| r.segments.iter().map(|s| s.1.max(0.0)).sum())
        .collect();
    let per_row = Axis::fit(totals.iter().copied()).is_log();
    let label_w = rows
        .iter()
        .map(|r| text_w(&r.label) + 12)
        .max()
        .unwrap_or(60)
        .clamp(60, W * 45 / 100);
    let bar_h = 22;
    let h = 20 + rows.len() as u32 * (bar_h + 8) + 44;
    let xmax = if per_row {
        100.0
    } else {
        nice_ceiling(totals.iter().copied().fold(0.0, f64::max) * 1.05)
    };
    // Every kind keeps its colour across charts; the legend names those
    // drawn.
    let colour = |name: &str| style(kinds.iter().position(|k| *k == name).unwrap_or(0)).0;
    let legend: Vec<Entry> = kinds
        .iter()
        .filter(|k| {
            rows.iter()
                .flat_map(|r| &r.segments)
                .any(|(n, v)| n == *k && *v > 0.0)
        })
        .map(|k| Entry {
            name: k.to_string(),
            colour: colour(k),
            marker: None,
        })
        .collect();
    let svg = svg(h, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .margin_right(90)
            .x_label_area_size(40)
            .y_label_area_size(label_w)
            .build_cartesian_2d(0.0..xmax, 0.0..rows.len().max(1) as f64)
            .map_err(|e| e.to_string())?;
        let fx = |v: &f64| short(*v);
        let desc = if per_row {
            format!("% of each row's total ({x_desc} at the right)")
        } else {
            x_desc.to_string()
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(6)
            .x_label_formatter(&fx)
            .x_desc(desc)
            .label_style(text(12.0))
            .axis_desc_style(text(12.0))
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
            .draw()
            .map_err(|e| e.to_string())?;
        for (j, (r, &total)) in rows.iter().zip(&totals).enumerate() {
            let y = rows.len() as f64 - j as f64 - 0.5;
            let scale = if per_row && total > 0.0 {
                100.0 / total
            } else {
                1.0
            };
            let mut at = 0.0;
            let mid = chart.backend_coord(&(0.0, y));
            let (top, bottom) = (mid.1 - bar_h as i32 / 2, mid.1 + bar_h as i32 / 2);
            let mut x_px = mid.0;
            for (name, v) in &r.segments {
                let v = v.max(0.0) * scale;
                if v <= 0.0 {
                    continue;
                }
                at += v;
                let end = chart.backend_coord(&(at, y)).0.max(x_px + MIN_PX);
                rect(root, (x_px, top), (end, bottom), colour(name).filled())?;
                x_px = end;
            }
            label(
                root,
                &r.label,
                (mid.0 - 6, mid.1),
                Pos::new(HPos::Right, VPos::Center),
                12.0,
            )?;
            label(
                root,
                &fmt_num(total),
                (x_px + 4, mid.1),
                Pos::new(HPos::Left, VPos::Center),
                12.0,
            )?;
        }
        Ok(())
    });
    Chart {
        svg,
        legend,
        kind: "stacked",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_turn_log_past_the_span() {
        assert_eq!(Axis::fit([1.0, 10.0]), Axis::Linear { max: 20.0 });
        let a = Axis::fit([0.03, 4.0]);
        assert!(
            matches!(a, Axis::Log { lo, hi } if lo == 0.01 && hi == 10.0),
            "{a:?}"
        );
        assert_eq!(Axis::fit([]), Axis::Linear { max: 1.0 });
    }

    #[test]
    fn significant_figures() {
        assert_eq!(sig(323.583, 3), "324");
        assert_eq!(sig(15659.9253, 3), "15700");
        assert_eq!(sig(0.0412, 3), "0.0412");
        assert_eq!(sig(1.2296, 3), "1.23");
    }

    #[test]
    fn styles_are_distinct_for_many_series() {
        let s: Vec<_> = (0..50).map(style).collect();
        for i in 0..50 {
            for j in i + 1..50 {
                assert_ne!(s[i], s[j], "series {i} and {j}");
            }
        }
    }

    /// Small bars beside the tester's maximum: a log axis, and every bar
    /// at least 3 px high.
    #[test]
    fn small_bars_stand_on_a_log_axis() {
        let legend = vec![Entry {
            name: "a".into(),
            colour: style(0).0,
            marker: None,
        }];
        let bar = |v| {
            Some(Bar {
                value: v,
                ..Bar::default()
            })
        };
        let c = bars(
            "Mpps",
            &["64 v4".into(), "1518 v4".into()],
            legend,
            &[BarSeries {
                entry: 0,
                outline: false,
                bars: vec![bar(0.03), bar(0.06)],
            }],
            &[Some(4.0), Some(4.0)],
        );
        assert!(c.svg.contains("Mpps (log)"), "{}", c.svg);
        let heights: Vec<f64> = c
            .svg
            .split("<rect")
            .skip(2)
            .filter(|r| r.contains("#1F77B4"))
            .filter_map(|r| r.split("height=\"").nth(1)?.split('"').next()?.parse().ok())
            .collect();
        assert_eq!(heights.len(), 2, "{}", c.svg);
        assert!(heights.iter().all(|&h| h >= 20.0), "{heights:?}");
    }
}
