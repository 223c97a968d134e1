//! Every results file kept in the tree (`experiments/results/`,
//! `bench/repeat/results/`, `bench/floor/results/`) of the current schema
//! reads into the typed results, and each run's DUT description
//! (`meta.dut.config`, `schema::dut_description::DutDescription`) and each
//! trial's DUT figures (`schema::dut_sample::DutStats`) written again are
//! the JSON the file holds: the typed form reads what the launchers wrote
//! before it and writes the same shape (`docs/bench-results.md`).
//!
//! Files of an older schema (`softrouter report` refuses them) and the
//! `--repeat` summaries (no trials) are named and left out.

use std::path::{Path, PathBuf};

use bench::results::{BenchResults, SCHEMA_VERSION};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `.json` files under `dir`, at any depth, sorted.
fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    out.sort();
}

/// Each run's `meta.dut.config`, then each trial's `outcome.dut_stats`,
/// in file order, `Null` where absent.
fn raw_dut_records(v: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for run in v["runs"].as_array().into_iter().flatten() {
        out.push(run["meta"]["dut"]["config"].clone());
        for test in run["tests"].as_array().into_iter().flatten() {
            for tr in test["trials"].as_array().into_iter().flatten() {
                out.push(tr["outcome"]["dut_stats"].clone());
            }
        }
    }
    out
}

#[test]
fn every_kept_results_file_reads_typed_and_writes_the_same_dut_records() {
    let mut files = Vec::new();
    for dir in [
        "experiments/results",
        "bench/repeat/results",
        "bench/floor/results",
    ] {
        json_files(&root().join(dir), &mut files);
    }
    let (mut read, mut samples) = (0, 0);
    let mut problems = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let raw: Value = serde_json::from_str(&text).unwrap();
        if raw["schema_version"] != SCHEMA_VERSION || raw.get("runs").is_none() {
            eprintln!(
                "{}: not a schema {SCHEMA_VERSION} results file, left out",
                f.display()
            );
            continue;
        }
        let typed = match BenchResults::read_json(f) {
            Ok(t) => t,
            Err(e) => {
                problems.push(format!("{}: {e:#}", f.display()));
                continue;
            }
        };
        read += 1;
        let mut again = Vec::new();
        for r in &typed.runs {
            again.push(serde_json::to_value(&r.meta.dut.config).unwrap());
            let trials = r.tests.iter().flat_map(|t| &t.trials);
            again.extend(trials.map(|tr| serde_json::to_value(&tr.outcome.dut_stats).unwrap()));
        }
        let before = raw_dut_records(&raw);
        assert_eq!(again.len(), before.len(), "{}", f.display());
        for (i, (a, b)) in again.iter().zip(&before).enumerate() {
            samples += usize::from(!b.is_null());
            if a != b {
                problems.push(format!(
                    "{} record {i}: written again as\n{a:#}\nthe file holds\n{b:#}",
                    f.display()
                ));
                break;
            }
        }
    }
    eprintln!("{read} files, {samples} DUT records");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The tree holds softrouter, linux, bridge, ovs and floor runs.
    assert!(
        read >= 10 && samples >= 1000,
        "{read} files, {samples} samples"
    );
}
