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
                config: serde_json::json!({}),
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
    assert!(page.contains("≥ 1.2000 (tester-limited)"));

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
