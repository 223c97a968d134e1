//! A paper experiment file end to end through the real command line, as
//! the README gives it (issue 11): `softrouter bench -e
//! experiments/002-bolla-smp.toml --quick --report ...`. Experiment 002
//! because it is the shortest (four DUT runs, one of them from a router
//! config next to the file, about 35 s with `--quick`) and covers what the
//! others add to a plain bench run: `[[duts]]`, runs named by their
//! options, `[[paper]]` rows looked up in the results, and rows this
//! testbed cannot measure listed with their reason. Needs root; skipped
//! otherwise. (`experiments/run.sh` runs and times all of them.)

use std::path::Path;

mod common;

#[test]
fn experiment_002_runs_end_to_end_with_quick() {
    if !testbed::require_root("experiment 002") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let file = root.join("experiments/002-bolla-smp.toml");
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("002.json"), dir.path().join("002.html"));
    common::run_bench(&[
        "-e",
        file.to_str().unwrap(),
        "--quick",
        "--quiet",
        "--json",
        json.to_str().unwrap(),
        "--report",
        html.to_str().unwrap(),
    ]);

    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let names: Vec<&str> = r["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["meta"]["dut"]["name"].as_str().unwrap())
        .collect();
    // The three softrouter runs differ in the options that set them
    // apart, and only in those (all run mode=interrupt).
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(
        names[0].contains("workers=1") && names[1].contains("workers=2"),
        "{names:?}"
    );
    assert!(names[2].contains("config=shared-tx.toml"), "{names:?}");
    assert!(names.iter().all(|n| !n.contains("mode=")), "{names:?}");
    assert_eq!(names[3], "linux");
    // --quick: the file's first size only, short trials.
    for run in r["runs"].as_array().unwrap() {
        assert_eq!(run["settings"]["trial_seconds"], 0.5);
        let sizes: Vec<&str> = run["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["size"].as_str().unwrap())
            .collect();
        assert!(sizes.iter().all(|s| *s == "64"), "{sizes:?}");
    }

    // The report: the published figures with a measured value beside each
    // one this testbed can measure, and the others listed with a reason.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(">Published figures</h3>"));
    assert!(page.contains("Fig. 12, 2 CPUs, per-CPU TxRings"));
    assert!(page.contains("Fig. 5, uni-processor kernel, Xeon"));
    let published = &page[page.find(">Published figures</h3>").unwrap()..];
    let table = &published[..published.find("</table>").unwrap()];
    assert!(
        !table.contains(">n/a<"),
        "a measurable row without a value:\n{table}"
    );
    let unmeasurable = &published[published
        .find("<h4>Not measurable on this testbed</h4>")
        .expect("the unmeasurable list")..];
    assert!(unmeasurable.contains("four DUT CPUs"), "{unmeasurable}");
    assert!(unmeasurable.contains("no PMU"), "{unmeasurable}");
}
