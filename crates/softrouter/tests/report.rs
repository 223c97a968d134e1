//! `softrouter report` as users meet it: a results file in, one HTML page
//! out; bad input named with exit 2; and the page rendered by a real
//! browser (headless Chromium) with no network, without errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use bench::results::{BenchResults, DutInfo, RunMeta, RunResults, TestResult};
use bench::search::{LatencyResult, LossPoint, LossSeriesResult};
use bench::settings::Settings;
use bench::sizes::FrameSize;
use bench::throughput::{GoalResult, ThroughputResult};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_softrouter"))
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sr-report-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A run of `name` at 64 B and IMIX: throughput (a lower bound when
/// `limited`), latency and a loss series.
fn run(name: &str, ndr: f64, limited: bool) -> RunResults {
    let mut tests = Vec::new();
    for (i, size) in [FrameSize::Fixed(64), "imix".parse().unwrap()]
        .into_iter()
        .enumerate()
    {
        let f = ndr / (i as f64 * 2.0 + 1.0);
        let goal = |name: &str, fps: f64| GoalResult {
            goal: bench::settings::SearchGoal::builtin(name, bench::settings::Preset::Quick),
            fps: Some(fps),
            lower_fps: Some(fps),
            lower_bound: limited,
            tester_limited: limited,
            pct_of_max: Some(fps / 2e4),
            ..GoalResult::default()
        };
        tests.push(TestResult::throughput(
            size.clone(),
            4,
            ThroughputResult {
                max_rate_fps: 2e6,
                goals: vec![goal("ndr", f), goal("pdr", f * 1.1)],
                ..ThroughputResult::default()
            },
        ));
        let mut lat = LatencyResult::default();
        lat.mean.count = 100;
        lat.mean.min_ns = 4_000;
        lat.mean.median_ns = 9_000 + i as u64 * 1_000;
        lat.mean.p99_ns = 30_000;
        lat.mean.p999_ns = 45_000;
        lat.mean.max_ns = 80_000;
        lat.repetitions = vec![lat.mean];
        tests.push(TestResult::latency(size.clone(), 4, lat));
        let points = (1..=10)
            .map(|k| LossPoint {
                load_pct: f64::from(k) * 10.0,
                rate_fps: f64::from(k) * 2e5,
                loss_pct: (f64::from(k) * 2e5 - f * 1.1).max(0.0) / (f64::from(k) * 2e5) * 100.0,
                tester_limited: limited && k == 10,
            })
            .collect();
        tests.push(TestResult::loss(
            size,
            4,
            LossSeriesResult {
                points,
                trials: Vec::new(),
            },
        ));
    }
    RunResults {
        meta: RunMeta {
            started: "2026-11-25T17:00:00Z".into(),
            host: "test-host".into(),
            kernel: "6.1.0".into(),
            dut: DutInfo {
                kind: "softrouter".into(),
                name: name.into(),
                version: "0.1.0".into(),
                config: None,
            },
            notes: vec!["written by tests/report.rs".into()],
            ..RunMeta::default()
        },
        settings: Settings::default().resolved(),
        tests,
    }
}

fn results_file(dir: &Path) -> PathBuf {
    let r = BenchResults::new(vec![
        run("softrouter <script>alert(1)</script>", 1.2e6, true),
        run("linux", 0.6e6, false),
        // Bars 1-3 px on a linear axis up to the tester's 2 Mpps, and a
        // long name for the legends.
        run(
            "linux with NAPI budget 2, threaded NAPI at SCHED_FIFO 40",
            3e4,
            false,
        ),
    ]);
    let p = dir.join("r.json");
    r.write_json(&p).unwrap();
    p
}

fn report(args: &[&Path]) -> Output {
    bin().arg("report").args(args).output().unwrap()
}

#[test]
fn report_writes_one_page_and_names_bad_input() {
    let dir = tmpdir("cli");
    let r = results_file(&dir);
    let papers = dir.join("papers.toml");
    std::fs::write(
        &papers,
        "[[paper]]\npaper = \"000\"\nfigure = \"Fig. 4\"\nmetric = \"ndr_mpps\"\nsize = \"64\"\ndut = \"linux\"\npublished = 1.2\nunit = \"Mpps\"\n",
    )
    .unwrap();
    let out = dir.join("report.html");
    let o = report(&[
        &r,
        &r,
        Path::new("--papers"),
        &papers,
        Path::new("-o"),
        &out,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(page.matches("<section class=\"experiment\"").count(), 2);
    assert!(page.contains("<td>Fig. 4</td>"));
    assert!(page.contains("<td class=\"n\">0.50</td>"), "0.6 / 1.2 Mpps");
    assert!(!page.contains("<script"));
    assert!(page.contains("≥ 1.20 (tester-limited)"));

    // Bad input: exit 2, the file named.
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"schema_version\": 2, \"runs\": 7}").unwrap();
    let missing = dir.join("missing.json");
    let bad_papers = dir.join("bad.toml");
    std::fs::write(&bad_papers, "[[paper]]\npaper = \"x\"\n").unwrap();
    let cases: [(Vec<&Path>, &Path); 3] = [
        (vec![&bad], &bad),
        (vec![&r, &missing], &missing),
        (vec![&r, Path::new("--papers"), &bad_papers], &bad_papers),
    ];
    for (args, named) in cases {
        let out2 = dir.join("never.html");
        let mut a = args.clone();
        a.extend([Path::new("-o"), &out2]);
        let o = report(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&named.display().to_string()),
            "{args:?}: {err}"
        );
        assert!(!out2.exists(), "no page from bad input");
    }
    // No output named: a usage error.
    assert_eq!(report(&[&r]).status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Chromium, if installed (scripts/setup.sh installs it).
fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|n| {
            std::env::var_os("PATH")?
                .to_str()?
                .split(':')
                .map(|d| Path::new(d).join(n))
                .find(|p| p.is_file())
        })
}

/// A page rendered by headless Chromium in a network namespace of its own
/// (nothing but `lo`, down): the screenshot and the log lines that
/// complain about the page (console messages, blocked loads).
fn render(chromium: &Path, dir: &Path, page: &Path, tag: &str) -> (Vec<u8>, Vec<String>) {
    let shot = dir.join(format!("{tag}.png"));
    // Root makes the namespace directly; anyone else through a user
    // namespace. SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let started = std::time::Instant::now();
    let o = Command::new("timeout")
        .arg("25")
        .arg("unshare")
        .arg(if root { "-n" } else { "-rn" })
        .arg(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1366,900",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .env("HOME", dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "chromium took {:?}",
        started.elapsed()
    );
    assert!(o.status.success(), "chromium: {:?}\n{err}", o.status);
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("{}: {e}\n{err}", shot.display()));
    let complaints = err
        .lines()
        // Chromium's own UI pages (`chrome://...`) log to the console
        // too (e.g. "Slow network is detected" offline): not the page's.
        .filter(|l| !l.contains("source: chrome://"))
        .filter(|l| {
            l.contains("CONSOLE")
                || l.contains("Refused to")
                || l.contains("Content Security Policy")
                || l.contains("Uncaught")
        })
        .map(str::to_string)
        .collect();
    eprintln!(
        "{tag}: rendered in {:.1} s, {} byte screenshot",
        started.elapsed().as_secs_f64(),
        png.len()
    );
    (png, complaints)
}

/// The report in headless Chromium with no network: it renders from the
/// file alone, to a screenshot with content, and Chromium reports no
/// console error or refused load for it (a page with both shows that
/// such complaints are seen).
#[test]
fn the_page_renders_offline_in_chromium() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: chromium is not installed (scripts/setup.sh installs it)");
        return;
    };
    let dir = tmpdir("chromium");
    let r = results_file(&dir);
    let page = dir.join("report.html");
    let o = report(&[&r, Path::new("-o"), &page]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (png, complaints) = render(&chromium, &dir, &page, "report");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let (w, h) = (
        u32::from_be_bytes(png[16..20].try_into().unwrap()),
        u32::from_be_bytes(png[20..24].try_into().unwrap()),
    );
    assert_eq!((w, h), (1366, 900), "the window's size");
    // A blank page compresses to a few kB; text, tables and charts do not.
    assert!(png.len() > 30_000, "{} bytes: a blank page?", png.len());
    assert!(complaints.is_empty(), "{complaints:#?}");

    let bad = dir.join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">\
         <p>x</p><script>console.error('boom')</script>",
    )
    .unwrap();
    let (_, complaints) = render(&chromium, &dir, &bad, "bad");
    assert!(!complaints.is_empty(), "a blocked script goes unnoticed");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The geometry check run inside the page: what Chromium lays out at
/// 1280 px, as a list of problems (one per line) after a line `checked N`
/// (the number of elements looked at, so a script that did not run or
/// found nothing cannot pass).
///
/// - the page and every table fit the window: no horizontal scroll;
/// - every text of a chart lies inside its chart (a clipped legend or
///   label) and no two texts of a chart overlap;
/// - every legend entry is inside its figure, unclipped, and its series
///   is drawn: some mark in its colour at least 3 px in both dimensions,
///   and in a bar chart (`data-chart="bars"`) every bar is.
const GEOMETRY_JS: &str = r#"
(function () {
  const bad = [];
  let checked = 0;
  const W = window.innerWidth;
  const doc = document.documentElement;
  if (doc.scrollWidth > W + 1) bad.push(`page ${doc.scrollWidth} px wide in a ${W} px window`);
  const name = (el) => {
    const f = el.closest('figure, div.tbl, section');
    const cap = f && f.querySelector('figcaption, caption, h2');
    return (cap ? cap.textContent : '').slice(0, 60);
  };
  for (const t of document.querySelectorAll('table')) {
    checked++;
    const r = t.getBoundingClientRect();
    if (r.right > W + 1) bad.push(`table "${name(t)}" ends at ${Math.round(r.right)} px`);
    const box = t.parentElement;
    if (box.scrollWidth > box.clientWidth + 1)
      bad.push(`table "${name(t)}" scrolls: ${box.scrollWidth} px in ${box.clientWidth}`);
  }
  const inside = (a, b) => a.left >= b.left - 1 && a.right <= b.right + 1 && a.top >= b.top - 1 && a.bottom <= b.bottom + 1;
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  for (const fig of document.querySelectorAll('figure')) {
    const svg = fig.querySelector('svg');
    if (!svg) continue;
    const sr = svg.getBoundingClientRect();
    if (sr.right > W + 1) bad.push(`chart "${name(fig)}" ends at ${Math.round(sr.right)} px`);
    const texts = [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim() !== '').map((t) => [t, t.getBoundingClientRect()]);
    const txt = (t) => t.textContent.trim();
    for (const [t, r] of texts) {
      checked++;
      if (!inside(r, sr)) bad.push(`chart "${name(fig)}": text "${txt(t)}" clipped`);
    }
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++)
        if (overlap(texts[i][1], texts[j][1]))
          bad.push(`chart "${name(fig)}": "${txt(texts[i][0])}" overlaps "${txt(texts[j][0])}"`);
    const fr = fig.getBoundingClientRect();
    const bars = fig.dataset.chart === 'bars';
    const marks = [...svg.querySelectorAll('rect, circle, polyline, path, line')];
    const colour = (m) => [(m.getAttribute('fill') || '').toLowerCase(), (m.getAttribute('stroke') || '').toLowerCase()];
    for (const e of fig.querySelectorAll('.legend li')) {
      checked++;
      const r = e.getBoundingClientRect();
      if (!inside(r, fr) || r.width < 1 || e.scrollWidth > e.clientWidth + 1)
        bad.push(`chart "${name(fig)}": legend entry "${e.textContent.trim()}" clipped`);
      const c = (e.dataset.colour || '').toLowerCase();
      const mine = marks.filter((m) => colour(m).includes(c)).map((m) => m.getBoundingClientRect());
      const big = mine.filter((r) => r.width >= 3 && r.height >= 3);
      if (big.length === 0) bad.push(`chart "${name(fig)}": series "${e.textContent}" (${c}) not drawn or under 3 px`);
      if (bars && big.length < mine.length) bad.push(`chart "${name(fig)}": ${mine.length - big.length} bar(s) of "${e.textContent}" under 3 px`);
    }
  }
  const pre = document.createElement('pre');
  pre.id = 'geometry';
  pre.textContent = `checked ${checked}\n` + bad.join('\n');
  document.body.appendChild(pre);
})();
"#;

/// The problems [`GEOMETRY_JS`] finds in `page` laid out by headless
/// Chromium at 1280 px (no network); the number of elements checked.
fn geometry(chromium: &Path, dir: &Path, page: &Path, tag: &str) -> (usize, Vec<String>) {
    // A copy of the page that runs the check: the page itself allows no
    // script.
    let html = std::fs::read_to_string(page).unwrap();
    let html = html
        .replacen(
            "default-src 'none'; style-src 'unsafe-inline'",
            "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'",
            1,
        )
        .replacen(
            "</body>",
            &format!("<script>{GEOMETRY_JS}</script>\n</body>"),
            1,
        );
    let probe = dir.join(format!("{tag}-geometry.html"));
    std::fs::write(&probe, html).unwrap();
    let root = unsafe { libc::geteuid() } == 0;
    let o = Command::new("timeout")
        .arg("40")
        .arg("unshare")
        .arg(if root { "-n" } else { "-rn" })
        .arg(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            "--window-size=1280,900",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("file://{}", probe.display()))
        .env("HOME", dir)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "chromium: {:?}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let text = dom
        .split("<pre id=\"geometry\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("{tag}: the check did not run"))
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let mut lines = text.lines();
    let checked = lines
        .next()
        .and_then(|l| l.strip_prefix("checked "))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    (checked, lines.map(|l| format!("{tag}: {l}")).collect())
}

/// Issue 19's target: the pages of the test results, of every results file
/// of schema 3 in `experiments/results/`, of a quick suite run and of a
/// `--repeat 3` run (`bench/repeat`), regenerated and laid out by Chromium
/// at 1280 px: every legend entry inside its figure and its series drawn
/// at 3 px or more, no chart text clipped or overlapping, no table or
/// page wider than the window.
#[test]
fn legends_series_and_tables_fit_1280_px() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: chromium is not installed (scripts/setup.sh installs it)");
        return;
    };
    let dir = tmpdir("geometry");
    let mut inputs = vec![("test".to_string(), results_file(&dir))];
    // The experiments' results and a repeated quick suite's; files of an
    // older schema (experiments/results/ holds schema 2 runs, which
    // `softrouter report` refuses) are named and left out.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("experiments/results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files.push(root.join("bench/repeat/results/quick-3runs-run1.json"));
    // A `--repeat 3` run: ranges on the charts, medians on the first screen.
    files.push(root.join("bench/repeat/results/rep3-a-run1.json"));
    for f in files {
        let head: String = std::fs::read_to_string(&f)
            .unwrap()
            .chars()
            .take(200)
            .collect();
        if !head.contains("\"schema_version\": 3") {
            eprintln!("{}: not schema 3, left out", f.display());
            continue;
        }
        let tag = f.file_stem().unwrap().to_string_lossy().into_owned();
        inputs.push((tag, f));
    }
    assert!(inputs.len() > 1, "no results file of schema 3");
    let mut problems = Vec::new();
    for (tag, json) in &inputs {
        let page = dir.join(format!("{tag}.html"));
        let o = report(&[json, Path::new("-o"), &page]);
        assert!(
            o.status.success(),
            "{tag}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let (checked, p) = geometry(&chromium, &dir, &page, tag);
        eprintln!("{tag}: {checked} elements checked, {} problem(s)", p.len());
        assert!(checked > 20, "{tag}: only {checked} elements checked");
        problems.extend(p);
    }
    // The check sees a clipped legend, a thin bar and a wide table.
    let bad = dir.join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" \
         content=\"default-src 'none'; style-src 'unsafe-inline'\"></head><body>\
         <figure data-chart=\"bars\"><svg width=\"200\" height=\"100\">\
         <text x=\"150\" y=\"20\">a legend cut off at the edge</text>\
         <rect x=\"10\" y=\"10\" width=\"20\" height=\"2\" fill=\"#1F77B4\"/></svg>\
         <ul class=\"legend\"><li data-colour=\"#1f77b4\">thin</li></ul></figure>\
         <div class=\"tbl\"><table><tr>"
            .to_string()
            + &"<td>wide</td>".repeat(400)
            + "</tr></table></div></body></html>",
    )
    .unwrap();
    let (_, seen) = geometry(&chromium, &dir, &bad, "bad");
    let _ = std::fs::remove_dir_all(&dir);
    for want in ["clipped", "under 3 px", "scrolls", "ends at"] {
        assert!(
            seen.iter().any(|l| l.contains(want)),
            "{want} unnoticed: {seen:#?}"
        );
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}
