//! `softrouter report`: one self-contained HTML page from one or more
//! results files (issue 11).
//!
//! Why HTML: the terminal tables ([`crate::tables`]) and the SVG chart
//! ([`crate::plot`]) each show part of a run; a reader comparing a run
//! with a paper wants everything in one document that opens anywhere.
//! The page is a single file with its CSS and SVG charts inline and no
//! script, image or font from elsewhere, so it works offline, can be
//! mailed or archived with the results, and a strict Content Security
//! Policy (`default-src 'none'`) holds. Every text taken from a results
//! file (DUT names, notes, configuration) is untrusted and goes through
//! [`esc`].
//!
//! Per experiment (results file): its settings and metadata, throughput
//! per frame size with the tester's maximum and lower bounds marked,
//! latency percentiles, loss curves, CPU and cycles per packet by stage,
//! interrupt and softirq rates, softrouter's drops and control-plane
//! answer times, the comparison of the runs, and the
//! published figures of papers beside the measured ones ([`papers`]).

mod papers;
mod sections;
mod summary;

use std::fmt::Write as _;

use crate::results::BenchResults;
use crate::settings::PaperValue;

pub use papers::{measured, PaperRow};

/// One results file of the report.
#[derive(Debug, Clone)]
pub struct Experiment {
    /// Its name in the page (the file name).
    pub name: String,
    /// What it holds.
    pub results: BenchResults,
}

/// The whole page. `papers`: published figures from outside the results
/// files (`--papers`), shown with each experiment after those its own
/// settings carry.
pub fn page(title: &str, experiments: &[Experiment], papers: &[PaperValue]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(title),
        esc(title)
    );
    // Each experiment's sections, then the table of contents above them
    // all: every experiment and its sections (`<h3>`), linked.
    let mut toc = String::from("<nav class=\"toc\"><b>Contents</b><ul>\n");
    let mut body = String::new();
    for (i, e) in experiments.iter().enumerate() {
        let mut sec = String::new();
        let r = &e.results;
        sections::header(&mut sec, r);
        summary::summary(&mut sec, r);
        sections::throughput(&mut sec, &r.runs);
        sections::latency(&mut sec, &r.runs);
        sections::loss(&mut sec, &r.runs);
        sections::bursts_and_recovery(&mut sec, &r.runs);
        sections::cpu(&mut sec, &r.runs);
        sections::interrupts(&mut sec, &r.runs);
        sections::dut_own(&mut sec, &r.runs);
        sections::comparison(&mut sec, r);
        papers::section(&mut sec, r, papers);
        let _ = write!(
            toc,
            "<li><a href=\"#exp{i}\">{}</a><ul class=\"sub\">",
            esc(&e.name)
        );
        let mut parts = sec.split("<h3>");
        let _ = writeln!(
            body,
            "<section class=\"experiment\" id=\"exp{i}\">\n<h2>{}</h2>",
            esc(&e.name)
        );
        body.push_str(parts.next().unwrap_or_default());
        for (k, part) in parts.enumerate() {
            let title = part.split("</h3>").next().unwrap_or_default();
            // The title is already escaped HTML text.
            let _ = write!(toc, "<li><a href=\"#exp{i}s{k}\">{title}</a></li>");
            let _ = write!(body, "<h3 id=\"exp{i}s{k}\">{part}");
        }
        toc.push_str("</ul></li>\n");
        body.push_str("</section>\n");
    }
    toc.push_str("</ul></nav>\n");
    out.push_str(&toc);
    out.push_str(&body);
    out.push_str("</body>\n</html>\n");
    out
}

/// Text as HTML text or attribute value: `&`, `<`, `>`, `"` and `'`
/// escaped, so no results file can open a tag or leave an attribute.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// One table cell: text (escaped when written) and an optional class
/// (`lb`: a lower bound, `n`: a number, `pj`: a projection).
#[derive(Debug, Clone, Default)]
pub(crate) struct Cell {
    text: String,
    class: &'static str,
}

impl Cell {
    fn text(t: impl Into<String>) -> Cell {
        Cell {
            text: t.into(),
            class: "",
        }
    }

    /// Long text that may wrap (options, lists).
    fn wrap(t: impl Into<String>) -> Cell {
        Cell {
            text: t.into(),
            class: "w",
        }
    }

    fn num(t: impl Into<String>) -> Cell {
        Cell {
            text: t.into(),
            class: "n",
        }
    }

    fn lower_bound(t: impl Into<String>) -> Cell {
        Cell {
            text: t.into(),
            class: "n lb",
        }
    }

    /// A projected figure (never a measured one): italic, marked `~`.
    fn projected(t: impl Into<String>) -> Cell {
        Cell {
            text: format!("~{} (projected)", t.into()),
            class: "n pj",
        }
    }
}

/// A table in a scrolling box (wide tables scroll instead of widening the
/// page).
fn table(out: &mut String, caption: &str, headers: &[&str], rows: &[Vec<Cell>]) {
    if rows.is_empty() {
        return;
    }
    out.push_str("<div class=\"tbl\"><table>\n");
    if !caption.is_empty() {
        let _ = writeln!(out, "<caption>{}</caption>", esc(caption));
    }
    out.push_str("<thead><tr>");
    for h in headers {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        out.push_str("<tr>");
        for c in r {
            if c.class.is_empty() {
                let _ = write!(out, "<td>{}</td>", esc(&c.text));
            } else {
                let _ = write!(out, "<td class=\"{}\">{}</td>", c.class, esc(&c.text));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// A chart inline, its legend an HTML list below it that wraps (so every
/// entry shows, however long the names), each entry's colour in
/// `data-colour` for the layout test. The SVG's namespace attribute (a
/// URL) is not needed in HTML and is dropped, so the page names no
/// address at all.
fn figure(out: &mut String, chart: &crate::chart::Chart, caption: &str) {
    let svg = chart
        .svg
        .replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1);
    let _ = write!(out, "<figure data-chart=\"{}\">\n{svg}", chart.kind);
    if !chart.legend.is_empty() {
        out.push_str("<ul class=\"legend\">");
        for e in &chart.legend {
            let c = crate::chart::hex(e.colour);
            let _ = write!(
                out,
                "<li data-colour=\"{c}\"><span style=\"color:{c}\">{}</span> {}</li>",
                e.glyph(),
                esc(&e.name)
            );
        }
        out.push_str("</ul>\n");
    }
    let _ = writeln!(out, "<figcaption>{}</figcaption>\n</figure>", esc(caption));
}

/// Fits a laptop screen: a readable measure, tables whose headers and
/// text cells wrap so none is wider than the page (issue 19: no
/// horizontal scroll at 1280 px), charts that shrink with the window.
const CSS: &str = "
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;color:#1b1b1b;max-width:1100px;margin:0 auto;padding:0 16px 48px}
h1{font-size:1.6em;margin:.8em 0 .3em}h2{font-size:1.35em;border-bottom:2px solid #ccc;margin-top:1.6em}h3{font-size:1.1em;margin:1.4em 0 .4em}
.tbl{overflow-x:auto;margin:.4em 0 1em}
table{border-collapse:collapse;font-size:13px;max-width:100%}
caption{text-align:left;font-weight:600;padding:2px 0}
th,td{padding:3px 7px;border-bottom:1px solid #e3e3e3;text-align:left;vertical-align:top;overflow-wrap:anywhere}
td.w{min-width:12em}
th{background:#f3f3f3}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.lb{color:#9a4a00;font-weight:700;white-space:normal}td.pj{color:#5a3d8a;font-style:italic;white-space:normal}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;font-size:14px}
dl.meta dt{font-weight:600}dl.meta dd{margin:0;overflow-wrap:anywhere}
figure{margin:.6em 0 1.2em}figure svg{max-width:100%;height:auto;display:block}
figcaption{font-size:13px;color:#555}
nav.toc{font-size:14px}nav.toc ul.sub{display:flex;flex-wrap:wrap;gap:0 14px;list-style:none;padding-left:1em}
ul.legend{display:flex;flex-wrap:wrap;gap:2px 18px;list-style:none;padding:0;margin:.3em 0;font-size:13px}
ul.legend li{overflow-wrap:anywhere;max-width:100%}
.note{font-size:13px;color:#555}
ul.notes{font-size:13px}
";

#[cfg(test)]
mod tests;
