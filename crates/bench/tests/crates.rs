//! The workspace's crate layering, read from the `Cargo.toml` files (issue
//! 20): what cargo allows between crates is what each manifest lists, so
//! these checks read the manifests rather than run `cargo tree` (no
//! network, no lock on the build directory).
//!
//! - The bench core (`softrouter-bench`) builds without clang: no crate in
//!   its dependency closure compiles BPF programs (has a build script, or
//!   the `bpf-build` build dependency).
//! - The picture of the crates in `docs/architecture.md` (its ```` ```crates ````
//!   block) is the manifests': every member once, each line's arrows its
//!   `[dependencies]`, each arrow pointing further down.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn manifest(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One workspace crate as its manifest describes it.
#[derive(Debug)]
struct Crate {
    /// Its folder under `crates/`.
    dir: String,
    /// The workspace crates (by folder) in `[dependencies]`.
    deps: BTreeSet<String>,
    /// Whether building it runs clang: a build script or `bpf-build`.
    builds_bpf: bool,
}

/// Every workspace member, by its folder under `crates/`.
fn workspace() -> BTreeMap<String, Crate> {
    let ws = manifest(&root().join("Cargo.toml"));
    let ws = ws["workspace"].as_table().unwrap();
    // Workspace dependency name -> member folder.
    let mut alias: BTreeMap<String, String> = BTreeMap::new();
    for (name, spec) in ws["dependencies"].as_table().unwrap() {
        if let Some(p) = spec.get("path").and_then(|p| p.as_str()) {
            alias.insert(name.clone(), p.trim_start_matches("crates/").to_string());
        }
    }
    let section = |m: &toml::Table, key: &str| -> BTreeSet<String> {
        m.get(key)
            .and_then(|d| d.as_table())
            .map(|d| {
                d.keys()
                    .filter_map(|k| alias.get(k).cloned())
                    .collect::<BTreeSet<_>>()
            })
            .unwrap_or_default()
    };
    let mut out = BTreeMap::new();
    for member in ws["members"].as_array().unwrap() {
        let path = member.as_str().unwrap();
        let dir = path.trim_start_matches("crates/").to_string();
        let m = manifest(&root().join(path).join("Cargo.toml"));
        let builds_bpf = root().join(path).join("build.rs").exists()
            || m["package"].get("build").is_some()
            || section(&m, "build-dependencies").contains("bpf-build");
        let deps = section(&m, "dependencies");
        out.insert(
            dir.clone(),
            Crate {
                dir,
                deps,
                builds_bpf,
            },
        );
    }
    out
}

/// The crates `start` depends on, directly or not (itself excluded).
fn closure(ws: &BTreeMap<String, Crate>, start: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![start.to_string()];
    while let Some(c) = todo.pop() {
        for d in &ws[&c].deps {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

#[test]
fn the_bench_core_builds_without_clang() {
    let ws = workspace();
    let bpf: Vec<&str> = closure(&ws, "bench")
        .iter()
        .filter(|c| ws[*c].builds_bpf)
        .map(|c| ws[c].dir.as_str())
        .collect();
    assert!(
        bpf.is_empty(),
        "softrouter-bench depends on {bpf:?}, which compile BPF programs with clang"
    );
}

/// The check can fail: the tester (BPF programs) and the fast path are
/// seen as crates that build with clang, and the engine (`traffic`)
/// reaches one.
#[test]
fn the_clang_check_sees_the_bpf_crates() {
    let ws = workspace();
    assert!(ws["tester"].builds_bpf && ws["fastpath"].builds_bpf);
    assert!(!ws["packet"].builds_bpf);
    assert!(closure(&ws, "traffic").contains("tester"));
}

/// The ```` ```crates ```` block of docs/architecture.md: each line's crate and
/// the crates it points to, in order.
fn picture() -> Vec<(String, BTreeSet<String>)> {
    let path = root().join("docs/architecture.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find("```crates\n").expect("a ```crates block") + 10;
    let end = start + text[start..].find("```").expect("the block ends");
    text[start..end]
        .lines()
        .map(|l| {
            let (name, deps) = l.split_once("──>").unwrap_or((l, ""));
            let deps = deps.split_whitespace().map(str::to_string).collect();
            (name.trim().to_string(), deps)
        })
        .collect()
}

/// What is wrong with `picture` against the manifests (empty: nothing).
fn picture_errors(
    ws: &BTreeMap<String, Crate>,
    picture: &[(String, BTreeSet<String>)],
) -> Vec<String> {
    let mut errors = Vec::new();
    let drawn: Vec<&str> = picture.iter().map(|(n, _)| n.as_str()).collect();
    for c in ws.keys() {
        if drawn.iter().filter(|d| **d == c).count() != 1 {
            errors.push(format!(
                "{c} is drawn {} times",
                drawn.iter().filter(|d| **d == c).count()
            ));
        }
    }
    for (i, (name, deps)) in picture.iter().enumerate() {
        let Some(c) = ws.get(name) else {
            errors.push(format!("{name} is not a workspace member"));
            continue;
        };
        if *deps != c.deps {
            errors.push(format!(
                "{name}: drawn -> {deps:?}, Cargo.toml -> {:?}",
                c.deps
            ));
        }
        for d in deps {
            if !drawn[i + 1..].contains(&d.as_str()) {
                errors.push(format!("{name} -> {d} does not point down"));
            }
        }
    }
    errors
}

#[test]
fn the_architecture_picture_is_the_manifests() {
    let errors = picture_errors(&workspace(), &picture());
    assert!(
        errors.is_empty(),
        "docs/architecture.md:\n{}",
        errors.join("\n")
    );
}

/// The picture check can fail: a missing arrow, a crate drawn twice and an
/// arrow pointing up are each found.
#[test]
fn the_picture_check_finds_errors() {
    let ws = workspace();
    let good = picture();
    let mut missing = good.clone();
    let bench = missing.iter_mut().find(|(n, _)| n == "bench").unwrap();
    bench.1.clear();
    assert_eq!(picture_errors(&ws, &missing).len(), 1, "{missing:?}");
    let mut twice = good.clone();
    twice.push(("packet".to_string(), BTreeSet::new()));
    assert!(!picture_errors(&ws, &twice).is_empty());
    let mut up = good.clone();
    up.reverse();
    assert!(picture_errors(&ws, &up)
        .iter()
        .any(|e| e.contains("does not point down")));
}
